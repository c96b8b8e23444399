//! Pictures drawn at generation time as standalone SVG files: no JavaScript, no network, the same
//! bytes for the same plan. Text is monospace so widths can be computed without font metrics.

use std::fmt::Write;

/// Font size of body text, in pixels.
const FONT: f64 = 12.0;
/// Width of one monospace character at [`FONT`] (0.6 em is what common monospace fonts use).
const CHAR_W: f64 = FONT * 0.6;
const READ_FILL: &str = "#4e79a7";
const WRITE_FILL: &str = "#f28e2b";
const OVER_FILL: &str = "#e15759";
const BASE_FILL: &str = "#9d9d9d";
const INK: &str = "#222222";
const GRID: &str = "#d0d0d0";

/// Escapes text for SVG.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Cuts text to `max` characters with an ellipsis.
fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

fn text_width(s: &str) -> f64 {
    s.chars().count() as f64 * CHAR_W
}

/// Opens an SVG document with a white background and an accessible title.
fn open(width: f64, height: f64, title: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" \
         viewBox=\"0 0 {width:.0} {height:.0}\" role=\"img\" font-family=\"monospace\" font-size=\"{FONT:.0}\">"
    );
    let _ = writeln!(s, "<title>{}</title>", esc(title));
    let _ = writeln!(
        s,
        "<rect width=\"{width:.0}\" height=\"{height:.0}\" fill=\"#ffffff\"/>"
    );
    s
}

/// A legend line at the top: per item, a colour swatch at `x` and its label beside it.
fn legend(s: &mut String, items: &[(f64, &str, &str)]) {
    for (x, label, fill) in items {
        let _ = write!(
            s,
            "<rect x=\"{x:.0}\" y=\"6\" width=\"10\" height=\"10\" fill=\"{fill}\"/>\
             <text x=\"{:.0}\" y=\"15\" fill=\"{INK}\">{}</text>",
            x + 14.0,
            esc(label)
        );
    }
    s.push('\n');
}

/// Whether a bar is a read or a write (its colour).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BarKind {
    /// A read pattern.
    Read,
    /// A write pattern.
    Write,
}

/// One bar of the traffic chart.
#[derive(Debug, Clone)]
pub struct Bar {
    /// Label on the left.
    pub label: String,
    /// Length, as a share 0..1.
    pub share: f64,
    /// Text right of the bar.
    pub caption: String,
    /// Colour.
    pub kind: BarKind,
}

/// A horizontal bar chart of shares, longest bar = largest share, with a read/write legend.
pub fn share_chart(title: &str, bars: &[Bar]) -> String {
    const ROW: f64 = 20.0;
    const BAR_AREA: f64 = 320.0;
    let label_w = bars
        .iter()
        .map(|b| text_width(&clip(&b.label, 44)))
        .fold(0.0, f64::max)
        + 12.0;
    let caption_w = bars
        .iter()
        .map(|b| text_width(&b.caption))
        .fold(0.0, f64::max)
        + 12.0;
    let top = 28.0;
    let width = label_w + BAR_AREA + caption_w + 8.0;
    let height = top + ROW * bars.len() as f64 + 10.0;
    let max = bars.iter().map(|b| b.share).fold(0.0, f64::max).max(1e-9);
    let mut s = open(width, height, title);
    legend(
        &mut s,
        &[
            (label_w, "read", READ_FILL),
            (label_w + 64.0, "write", WRITE_FILL),
        ],
    );
    for (i, b) in bars.iter().enumerate() {
        let y = top + ROW * i as f64;
        let w = (b.share / max * BAR_AREA).max(1.0);
        let fill = match b.kind {
            BarKind::Read => READ_FILL,
            BarKind::Write => WRITE_FILL,
        };
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"{INK}\">{}</text>\
             <rect x=\"{label_w:.1}\" y=\"{:.1}\" width=\"{w:.1}\" height=\"14\" fill=\"{fill}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" fill=\"{INK}\">{}</text>",
            label_w - 6.0,
            y + 11.0,
            esc(&clip(&b.label, 44)),
            y,
            label_w + w + 6.0,
            y + 11.0,
            esc(&b.caption)
        );
    }
    s.push_str("</svg>\n");
    s
}

/// One row of a key diagram: a column with its role in the primary key.
#[derive(Debug, Clone)]
pub struct KeyRow {
    /// Column name.
    pub name: String,
    /// CQL type.
    pub cql_type: String,
    /// `K`, `C↑`, `C↓`, `S` or empty.
    pub marker: String,
    /// Extra text, e.g. `= day(started_at)` for a bucket.
    pub note: String,
}

/// A Chebotko-style table diagram: the table name on top, then one row per column with its key
/// role (K partition key, C↑/C↓ clustering ascending/descending, S static), key rows shaded.
pub fn key_diagram(table: &str, rows: &[KeyRow], serves: &str) -> String {
    const ROW: f64 = 20.0;
    const HEAD: f64 = 26.0;
    let name_w = rows
        .iter()
        .map(|r| text_width(&r.name))
        .fold(text_width("column"), f64::max)
        + 16.0;
    let type_w = rows
        .iter()
        .map(|r| text_width(&clip(&r.cql_type, 40)))
        .fold(0.0, f64::max)
        + 16.0;
    let marker_w = 36.0;
    let note_w = rows.iter().map(|r| text_width(&r.note)).fold(0.0, f64::max);
    let box_w = (name_w + type_w + marker_w).max(text_width(table) + 24.0);
    let width = 10.0 + box_w + if note_w > 0.0 { note_w + 16.0 } else { 0.0 } + 10.0;
    let box_h = HEAD + ROW * rows.len() as f64;
    let height = 10.0 + box_h + 28.0;
    let mut s = open(width, height, &format!("Key diagram of {table}"));
    let (x0, y0) = (10.0, 10.0);
    let _ = writeln!(
        s,
        "<rect x=\"{x0:.0}\" y=\"{y0:.0}\" width=\"{box_w:.0}\" height=\"{box_h:.0}\" fill=\"#ffffff\" stroke=\"{INK}\"/>\
         <rect x=\"{x0:.0}\" y=\"{y0:.0}\" width=\"{box_w:.0}\" height=\"{HEAD:.0}\" fill=\"#e8e8e8\" stroke=\"{INK}\"/>\
         <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-weight=\"bold\" font-size=\"13\" fill=\"{INK}\">{}</text>",
        x0 + box_w / 2.0,
        y0 + 17.0,
        esc(table)
    );
    for (i, r) in rows.iter().enumerate() {
        let y = y0 + HEAD + ROW * i as f64;
        let shade = match r.marker.chars().next() {
            Some('K') => Some("#fff2cc"),
            Some('C') => Some("#dae8fc"),
            Some('S') => Some("#e1f0da"),
            _ => None,
        };
        if let Some(fill) = shade {
            let _ = writeln!(
                s,
                "<rect x=\"{:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{ROW:.0}\" fill=\"{fill}\"/>",
                x0 + 0.5,
                box_w - 1.0
            );
        }
        if i > 0 {
            let _ = writeln!(
                s,
                "<line x1=\"{x0:.0}\" y1=\"{y:.1}\" x2=\"{:.0}\" y2=\"{y:.1}\" stroke=\"{GRID}\"/>",
                x0 + box_w
            );
        }
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"{INK}\">{}</text>\
             <text x=\"{:.1}\" y=\"{:.1}\" fill=\"#555555\">{}</text>\
             <text x=\"{:.1}\" y=\"{:.1}\" font-weight=\"bold\" fill=\"{INK}\">{}</text>",
            x0 + 8.0,
            y + 14.0,
            esc(&r.name),
            x0 + name_w,
            y + 14.0,
            esc(&clip(&r.cql_type, 40)),
            x0 + name_w + type_w,
            y + 14.0,
            esc(&r.marker)
        );
        if !r.note.is_empty() {
            let _ = writeln!(
                s,
                "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"#555555\">{}</text>",
                x0 + box_w + 10.0,
                y + 14.0,
                esc(&r.note)
            );
        }
    }
    let _ = writeln!(
        s,
        "<text x=\"{x0:.0}\" y=\"{:.1}\" fill=\"#555555\">{}</text>",
        y0 + box_h + 20.0,
        esc(&clip(serves, ((width - 20.0) / CHAR_W) as usize))
    );
    s.push_str("</svg>\n");
    s
}

/// One table's estimate in a size chart.
#[derive(Debug, Clone)]
pub struct SizeBar {
    /// Table name.
    pub label: String,
    /// Average partition.
    pub avg: f64,
    /// Largest partition.
    pub max: f64,
}

/// The log-scale axis of a size chart and the limit drawn on it.
#[derive(Debug, Clone)]
pub struct Axis {
    /// The left end (and the first grid line).
    pub floor: f64,
    /// Ratio between grid lines (10 for counts, 32 for bytes: 32 B, 1 KiB, 32 KiB, 1 MiB …).
    pub step: f64,
    /// The limit (a dashed line).
    pub limit: f64,
    /// Its label.
    pub limit_label: String,
    /// How values are written.
    pub unit: fn(f64) -> String,
}

/// Partition sizes on a log scale against a limit: a bar to the largest partition, a tick at the
/// average, a dashed line at the limit; bars past the limit in red.
pub fn size_chart(title: &str, bars: &[SizeBar], axis: &Axis) -> String {
    let (floor, limit, limit_label, unit) = (axis.floor, axis.limit, &axis.limit_label, axis.unit);
    const ROW: f64 = 22.0;
    const AREA: f64 = 360.0;
    let label_w = bars
        .iter()
        .map(|b| text_width(&clip(&b.label, 40)))
        .fold(0.0, f64::max)
        + 12.0;
    let caption_w = bars
        .iter()
        .map(|b| text_width(&unit(b.max)))
        .fold(text_width(limit_label), f64::max)
        + 16.0;
    let top = 30.0;
    let width = label_w + AREA + caption_w;
    let height = top + ROW * bars.len() as f64 + 24.0;
    let lo = floor.max(1e-9).log10();
    let top_value = bars
        .iter()
        .map(|b| b.max)
        .fold(limit * 10.0, f64::max)
        .max(floor * 10.0);
    let hi = top_value.log10();
    let x = |v: f64| label_w + (v.max(floor).log10() - lo) / (hi - lo) * AREA;
    let mut s = open(width, height, title);
    // Grid lines with their values, so the log scale reads as such.
    let mut decade = floor;
    while decade <= top_value * 1.0001 {
        let gx = x(decade);
        let _ = writeln!(
            s,
            "<line x1=\"{gx:.1}\" y1=\"{:.0}\" x2=\"{gx:.1}\" y2=\"{:.1}\" stroke=\"{GRID}\"/>\
             <text x=\"{gx:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"10\" fill=\"#777777\">{}</text>",
            top - 4.0,
            top + ROW * bars.len() as f64,
            top + ROW * bars.len() as f64 + 14.0,
            esc(&unit(decade))
        );
        decade *= axis.step;
    }
    let lx = x(limit);
    let _ = writeln!(
        s,
        "<line x1=\"{lx:.1}\" y1=\"{:.0}\" x2=\"{lx:.1}\" y2=\"{:.1}\" stroke=\"{OVER_FILL}\" stroke-dasharray=\"4 3\" stroke-width=\"2\"/>\
         <text x=\"{lx:.1}\" y=\"14\" text-anchor=\"middle\" fill=\"{OVER_FILL}\">{}</text>",
        top - 10.0,
        top + ROW * bars.len() as f64,
        esc(limit_label)
    );
    for (i, b) in bars.iter().enumerate() {
        let y = top + ROW * i as f64;
        let fill = if b.max > limit { OVER_FILL } else { READ_FILL };
        let w = (x(b.max) - label_w).max(1.0);
        let ax = x(b.avg);
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"{INK}\">{}</text>\
             <rect x=\"{label_w:.1}\" y=\"{:.1}\" width=\"{w:.1}\" height=\"14\" fill=\"{fill}\"/>\
             <line x1=\"{ax:.1}\" y1=\"{:.1}\" x2=\"{ax:.1}\" y2=\"{:.1}\" stroke=\"{INK}\" stroke-width=\"2\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" fill=\"{INK}\">{}</text>",
            label_w - 6.0,
            y + 12.0,
            esc(&clip(&b.label, 40)),
            y + 1.0,
            y - 1.0,
            y + 17.0,
            label_w + AREA + 8.0,
            y + 12.0,
            esc(&unit(b.max))
        );
    }
    s.push_str("</svg>\n");
    s
}

/// One measure of a comparison chart: the design's figure beside the baseline's.
#[derive(Debug, Clone)]
pub struct Pair {
    /// The measure, e.g. `partition reads per 100 calls`.
    pub label: String,
    /// The design's figure.
    pub design: f64,
    /// The baseline's figure.
    pub baseline: f64,
    /// How figures are written.
    pub unit: fn(f64) -> String,
}

/// Measures of different units side by side: per measure, a bar for the design and one for the
/// baseline, the longer of the two drawn full length (each measure has its own scale), values
/// written at the bars' ends.
pub fn compare_chart(title: &str, pairs: &[Pair]) -> String {
    const ROW: f64 = 18.0;
    const GROUP: f64 = ROW * 2.0 + 22.0;
    const AREA: f64 = 320.0;
    const LABEL_W: f64 = 84.0;
    let caption_w = pairs
        .iter()
        .flat_map(|p| [(p.unit)(p.design), (p.unit)(p.baseline)])
        .map(|c| text_width(&c))
        .fold(0.0, f64::max)
        + 16.0;
    let top = 30.0;
    let width = (LABEL_W + AREA + caption_w).max(text_width(title) + 20.0);
    let height = top + GROUP * pairs.len() as f64;
    let mut s = open(width, height, title);
    legend(
        &mut s,
        &[
            (LABEL_W, "this design", READ_FILL),
            (LABEL_W + 130.0, "normalized baseline", BASE_FILL),
        ],
    );
    for (i, p) in pairs.iter().enumerate() {
        let y = top + GROUP * i as f64;
        let max = p.design.max(p.baseline).max(1e-9);
        let _ = writeln!(
            s,
            "<text x=\"8\" y=\"{:.1}\" font-weight=\"bold\" fill=\"{INK}\">{}</text>",
            y + 12.0,
            esc(&p.label)
        );
        let bars = [
            ("design", p.design, READ_FILL),
            ("baseline", p.baseline, BASE_FILL),
        ];
        for (j, (name, value, fill)) in bars.into_iter().enumerate() {
            let by = y + 18.0 + ROW * j as f64;
            let w = (value.max(0.0) / max * AREA).max(1.0);
            let _ = writeln!(
                s,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"#555555\">{name}</text>\
                 <rect x=\"{LABEL_W:.1}\" y=\"{by:.1}\" width=\"{w:.1}\" height=\"14\" fill=\"{fill}\"/>\
                 <text x=\"{:.1}\" y=\"{:.1}\" fill=\"{INK}\">{}</text>",
                LABEL_W - 6.0,
                by + 11.0,
                LABEL_W + w + 6.0,
                by + 11.0,
                esc(&(p.unit)(value))
            );
        }
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charts_are_well_formed_and_escaped() {
        let bars = [Bar {
            label: "q1 <select>".into(),
            share: 0.5,
            caption: "50.0%".into(),
            kind: BarKind::Read,
        }];
        let svg = share_chart("traffic & share", &bars);
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(svg.contains("q1 &lt;select&gt;") && svg.contains("traffic &amp; share"));
        assert!(svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("<svg").count(), 1);
    }

    #[test]
    fn size_chart_marks_bars_over_the_limit() {
        let bars = [
            SizeBar {
                label: "small".into(),
                avg: 1e3,
                max: 2e3,
            },
            SizeBar {
                label: "huge".into(),
                avg: 1e8,
                max: 1e9,
            },
        ];
        let axis = Axis {
            floor: 1e2,
            step: 10.0,
            limit: 1e8,
            limit_label: "limit".into(),
            unit: |v| format!("{v:.0}"),
        };
        let svg = size_chart("sizes", &bars, &axis);
        assert!(
            svg.contains(">100<") && svg.contains(">1000000000<"),
            "{svg}"
        );
        assert_eq!(svg.matches(OVER_FILL).count(), 3, "{svg}");
    }

    #[test]
    fn compare_chart_scales_each_measure_to_its_longer_bar() {
        let pairs = [
            Pair {
                label: "reads".into(),
                design: 50.0,
                baseline: 100.0,
                unit: |v| format!("{v:.0}"),
            },
            Pair {
                label: "bytes <x>".into(),
                design: 3e9,
                baseline: 1e9,
                unit: |v| format!("{v:.0}"),
            },
        ];
        let svg = compare_chart("design & baseline", &pairs);
        // The longer bar of each measure spans the whole area; the other is in proportion.
        assert_eq!(svg.matches("width=\"320.0\"").count(), 2, "{svg}");
        assert!(
            svg.contains("width=\"160.0\"") && svg.contains("width=\"106.7\""),
            "{svg}"
        );
        assert!(svg.contains("bytes &lt;x&gt;") && svg.contains("design &amp; baseline"));
        assert!(svg.contains(">3000000000<") && svg.trim_end().ends_with("</svg>"));
    }

    #[test]
    fn key_diagram_shades_key_rows() {
        let rows = [
            KeyRow {
                name: "k".into(),
                cql_type: "text".into(),
                marker: "K".into(),
                note: String::new(),
            },
            KeyRow {
                name: "c".into(),
                cql_type: "int".into(),
                marker: "C↓".into(),
                note: "= day(x)".into(),
            },
        ];
        let svg = key_diagram("t", &rows, "serves q1");
        assert!(svg.contains("#fff2cc") && svg.contains("#dae8fc") && svg.contains("C↓"));
        assert!(svg.contains("= day(x)") && svg.contains("serves q1"));
    }
}
