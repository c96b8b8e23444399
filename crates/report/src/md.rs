//! Markdown and number formatting shared by the chapters.

use std::fmt::Write;

pub use remodel_model::text::thousands;

/// An estimate (a float count) rounded to a whole number with separators.
pub fn count(x: f64) -> String {
    if !x.is_finite() || x < 0.0 {
        return "?".into();
    }
    thousands(x.round() as u64)
}

/// A share in 0..1 as a percentage with one decimal (`62.3%`); a tiny non-zero share is `<0.1%`.
pub fn percent(share: f64) -> String {
    if !share.is_finite() {
        return "?".into();
    }
    let p = share * 100.0;
    if p > 0.0 && p < 0.05 {
        "<0.1%".into()
    } else {
        format!("{p:.1}%")
    }
}

/// `part / whole` as a share, 0 when `whole` is 0.
pub fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

/// A cost figure (partitions per call, table writes per 100 calls): whole numbers with
/// separators from 100, else at most two decimals (`56.21`, `18.8`, `1`, `0`); `<0.01` for a
/// tiny figure that is not nothing.
pub fn amount(x: f64) -> String {
    if !x.is_finite() {
        return "?".into();
    }
    if x != 0.0 && x.abs() < 0.005 {
        return if x > 0.0 { "<0.01" } else { ">-0.01" }.into();
    }
    if x.abs() >= 100.0 {
        let sign = if x < 0.0 { "-" } else { "" };
        return format!("{sign}{}", thousands(x.abs().round() as u64));
    }
    let s = format!("{x:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.into()
    }
}

/// How `now` compares with `before`, relatively: `+15.4%`, `-7.9%`, `-0.02%`, `×3.0` from double up,
/// `same`, or `new` when `before` is nothing.
pub fn change(now: f64, before: f64) -> String {
    if !now.is_finite() || !before.is_finite() {
        return "?".into();
    }
    if (now - before).abs() < 0.005 {
        return "same".into();
    }
    if before == 0.0 {
        return "new".into();
    }
    let ratio = now / before;
    let pct = (ratio - 1.0) * 100.0;
    // A difference the two decimals shown cannot tell (`+0.00%`) is none to the reader.
    if pct.abs() < 0.005 {
        return "same".into();
    }
    if ratio >= 2.0 {
        format!("×{ratio:.1}")
    } else if pct.abs() < 0.1 {
        format!("{pct:+.2}%")
    } else {
        format!("{pct:+.1}%")
    }
}

/// Bytes in binary units: `512 B`, `11.7 KiB`, `100.0 MiB`, `1.2 GiB`.
pub fn bytes(b: f64) -> String {
    const K: f64 = 1024.0;
    if !b.is_finite() || b < 0.0 {
        return "?".into();
    }
    if b < K {
        format!("{b:.0} B")
    } else if b < K * K {
        format!("{:.1} KiB", b / K)
    } else if b < K * K * K {
        format!("{:.1} MiB", b / (K * K))
    } else {
        format!("{:.1} GiB", b / (K * K * K))
    }
}

/// Text made safe for one markdown table cell: [`text`], on one line, `|` escaped.
pub fn cell(s: &str) -> String {
    text(s)
        .replace('|', "\\|")
        .replace(['\n', '\r'], " ")
        .trim()
        .to_string()
}

/// Text made safe as markdown/HTML text: `<`, `>`, `&` as entities; `*`, `` ` ``, `[`, `]`, `\\`,
/// `#` escaped; `_` escaped only at a word's edge (inside a word it never makes emphasis, and
/// `trips_by_id` stays readable in the source).
pub fn text(s: &str) -> String {
    let chars: Vec<char> = html(s).chars().collect();
    let mut out = String::with_capacity(s.len());
    for (i, &ch) in chars.iter().enumerate() {
        let word = |j: Option<usize>| {
            j.and_then(|j| chars.get(j))
                .is_some_and(|c| c.is_alphanumeric())
        };
        let edge_underscore = ch == '_' && !(word(i.checked_sub(1)) && word(Some(i + 1)));
        if matches!(ch, '*' | '`' | '[' | ']' | '\\' | '#') || edge_underscore {
            out.push('\\');
        }
        out.push(ch);
    }
    out
}

/// `<`, `>`, `&`, `"` as entities.
pub fn html(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Inline code that survives any backticks in `s` (and sits safely in a table cell).
pub fn code(s: &str) -> String {
    let s = s.replace(['\n', '\r'], " ");
    let longest = s.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{}{pad}{fence}", s.replace('|', "\\|"))
}

/// A fenced code block with a language tag.
pub fn block(lang: &str, body: &str) -> String {
    let longest = body
        .lines()
        .filter(|l| l.trim_start().starts_with("```"))
        .map(|l| l.trim_start().chars().take_while(|c| *c == '`').count())
        .max()
        .unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}{lang}\n{}\n{fence}\n", body.trim_end())
}

/// An anchor id for a pattern, table or other item: lower case, `[a-z0-9_-]` only.
pub fn anchor(s: &str) -> String {
    s.chars()
        .map(|c| {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// An empty HTML anchor that links can target (`<a id="q1"></a>`), on its own line.
pub fn target(id: &str) -> String {
    format!("<a id=\"{}\"></a>\n\n", anchor(id))
}

/// A markdown table from a header and rows (cells already escaped).
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "| {} |", header.join(" | "));
    let _ = writeln!(
        out,
        "|{}",
        header.iter().map(|_| "---|").collect::<String>()
    );
    for r in rows {
        let _ = writeln!(out, "| {} |", r.join(" | "));
    }
    out
}

/// A list joined with commas, or `-` when empty.
pub fn list_or_dash(items: &[String]) -> String {
    if items.is_empty() {
        "-".into()
    } else {
        items.join(", ")
    }
}

/// A file-name-safe form of a table name (CQL names already are; quoted ones may not be).
pub fn file_stem(name: &str) -> String {
    anchor(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(count(9_999.6), "10,000");
        assert_eq!(percent(0.6234), "62.3%");
        assert_eq!(percent(0.0001), "<0.1%");
        assert_eq!(percent(0.0), "0.0%");
        assert_eq!(bytes(512.0), "512 B");
        assert_eq!(bytes(12_024.0), "11.7 KiB");
        assert_eq!(bytes(100.0 * 1024.0 * 1024.0), "100.0 MiB");
        assert_eq!(amount(0.0), "0");
        assert_eq!(amount(0.844), "0.84");
        assert_eq!(amount(56.21), "56.21");
        assert_eq!(amount(18.8), "18.8");
        assert_eq!(amount(1.0), "1");
        assert_eq!(amount(0.0023), "<0.01");
        assert_eq!(amount(0.0), "0");
        assert_eq!(amount(-1_054_914.35), "-1,054,914");
        assert_eq!(change(56.21, 18.8), "×3.0");
        assert_eq!(change(81.2, 88.21), "-7.9%");
        assert_eq!(change(1.0, 1.001), "same");
        assert_eq!(change(586.01, 586.0), "same");
        assert_eq!(change(1_054_914.35, 1_055_142.19), "-0.02%");
        assert_eq!(change(2.0, 0.0), "new");
    }

    #[test]
    fn escaping() {
        assert_eq!(cell("a | b\nc"), "a \\| b c");
        assert_eq!(code("x = `y`"), "`` x = `y` ``");
        assert_eq!(code("a|b"), "`a\\|b`");
        assert_eq!(text("<b> *x*"), "&lt;b&gt; \\*x\\*");
        assert_eq!(text("trips_by_id _x_"), "trips_by_id \\_x\\_");
        assert_eq!(anchor("Q1 x.y"), "q1-x-y");
        assert!(block("sql", "SELECT 1").starts_with("```sql\nSELECT 1\n```"));
        assert!(block("", "```\nx\n```").starts_with("````\n"));
    }
}
