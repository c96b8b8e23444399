//! Proposed tables: an index page with the partition-size charts, then one page per table with its
//! key diagram, CQL, the patterns it serves, the writes that maintain it, sizes and warnings.

use super::{
    kind, mapping_link, pattern_link, table_page, up, Ctx, PARTITION_BYTES_LIMIT,
    PARTITION_ROWS_LIMIT, TABLES, WRITES,
};
use crate::book::Book;
use crate::md;
use crate::svg::{self, Axis, KeyRow, SizeBar};
use remodel_model::{Bucket, CqlType, DesignTable, KeyColumn, SortOrder};
use std::fmt::Write;

const BYTES_CHART: &str = "img/partition-bytes.svg";
const ROWS_CHART: &str = "img/partition-rows.svg";

/// Renders `tables.md` and a page per table.
pub(super) fn render(ctx: &Ctx, book: &mut Book) {
    let d = &ctx.plan.design;
    let mut s = String::from("# Proposed tables\n\n");
    let _ = writeln!(
        s,
        "{} tables in keyspace `{}`. In the key column: **K** partition key, **C↑**/**C↓** \
         clustering column ascending/descending, **S** static column.\n",
        d.tables.len(),
        d.keyspace.name
    );
    let rows: Vec<Vec<String>> = d
        .tables
        .iter()
        .map(|t| {
            vec![
                format!("[{}]({})", md::text(&t.name), table_page(&t.name)),
                md::code(&primary_key(t)),
                t.serves
                    .iter()
                    .map(|p| pattern_link(p, 0))
                    .collect::<Vec<_>>()
                    .join(", "),
                md::count(t.estimates.partitions),
                md::bytes(t.estimates.bytes_per_partition_max),
                t.warnings.len().to_string(),
            ]
        })
        .collect();
    s.push_str(&md::table(
        &[
            "table",
            "primary key",
            "serves",
            "partitions",
            "largest partition",
            "warnings",
        ],
        &rows,
    ));
    s.push_str(&renames(&d.renames));
    let _ = writeln!(
        s,
        "\n## Partition sizes against the limits\n\n\
         The largest partition of each table (bar; the tick is the average) on a log scale. Past \
         {} or {} rows a partition slows reads, compaction and repair: the dashed line.\n",
        md::bytes(PARTITION_BYTES_LIMIT),
        md::count(PARTITION_ROWS_LIMIT)
    );
    let _ = writeln!(
        s,
        "![Bytes per partition of each table against the {} limit]({BYTES_CHART})\n",
        md::bytes(PARTITION_BYTES_LIMIT)
    );
    let _ = writeln!(
        s,
        "![Rows per partition of each table against the {} rows limit]({ROWS_CHART})",
        md::count(PARTITION_ROWS_LIMIT)
    );
    book.asset(BYTES_CHART, size_chart(&d.tables, false));
    book.asset(ROWS_CHART, size_chart(&d.tables, true));
    book.page(TABLES, "Proposed tables", 0, s);
    for t in &d.tables {
        let image = format!("img/table-{}.svg", md::file_stem(&t.name));
        book.asset(&image, diagram(t));
        book.page(&table_page(&t.name), &t.name, 1, page(ctx, t, &image));
    }
}

/// The target names that do not spell their source names (`design.renames`), when any.
fn renames(renames: &[remodel_model::Rename]) -> String {
    if renames.is_empty() {
        return String::new();
    }
    let rows: Vec<Vec<String>> = renames
        .iter()
        .map(|r| {
            vec![
                format!("{:?}", r.kind).to_lowercase(),
                md::code(&r.source),
                md::code(&r.target),
                md::cell(&r.reason),
            ]
        })
        .collect();
    format!(
        "\n## Renamed names\n\nTarget names that do not spell their Postgres names, and why (the \
         application reads these under the target name):\n\n{}",
        md::table(&["what", "Postgres", "target", "why"], &rows)
    )
}

/// Bytes (`rows == false`) or rows per partition of every table against its limit.
fn size_chart(tables: &[DesignTable], rows: bool) -> String {
    let bars: Vec<SizeBar> = tables
        .iter()
        .map(|t| {
            let e = &t.estimates;
            let (avg, max) = if rows {
                (e.rows_per_partition_avg, e.rows_per_partition_max)
            } else {
                (e.bytes_per_partition_avg, e.bytes_per_partition_max)
            };
            SizeBar {
                label: t.name.clone(),
                avg,
                max,
            }
        })
        .collect();
    if rows {
        let axis = Axis {
            floor: 1.0,
            step: 10.0,
            limit: PARTITION_ROWS_LIMIT,
            limit_label: format!("{} rows limit", md::count(PARTITION_ROWS_LIMIT)),
            unit: md::count,
        };
        svg::size_chart("Rows per partition", &bars, &axis)
    } else {
        let axis = Axis {
            floor: 32.0,
            step: 32.0,
            limit: PARTITION_BYTES_LIMIT,
            limit_label: format!("{} limit", md::bytes(PARTITION_BYTES_LIMIT)),
            unit: md::bytes,
        };
        svg::size_chart("Bytes per partition", &bars, &axis)
    }
}

/// `((a, b), c DESC, d)`.
pub(crate) fn primary_key(t: &DesignTable) -> String {
    let pk: Vec<&str> = t.partition_key.iter().map(|k| k.column.as_str()).collect();
    let mut key = format!("(({})", pk.join(", "));
    for c in &t.clustering {
        let _ = write!(
            key,
            ", {}{}",
            c.column,
            if c.order == Some(SortOrder::Desc) {
                " DESC"
            } else {
                ""
            }
        );
    }
    key.push(')');
    key
}

fn bucket_note(k: &KeyColumn) -> String {
    if let Some(c) = &k.constant {
        return format!("= {c} (one partition)");
    }
    match (&k.derived_from, k.bucket) {
        (Some(src), Some(b)) => format!(
            "= {}({src})",
            match b {
                Bucket::Hour => "hour",
                Bucket::Day => "day",
                Bucket::Month => "month",
            }
        ),
        (Some(src), None) => format!("= f({src})"),
        _ => String::new(),
    }
}

/// K / C↑ / C↓ / S / empty for a column, and a note for a derived bucket.
fn role(t: &DesignTable, column: &str) -> (String, String) {
    if let Some(k) = t.partition_key.iter().find(|k| k.column == column) {
        return ("K".into(), bucket_note(k));
    }
    if let Some(k) = t.clustering.iter().find(|k| k.column == column) {
        let arrow = if k.order == Some(SortOrder::Desc) {
            "C↓"
        } else {
            "C↑"
        };
        return (arrow.into(), bucket_note(k));
    }
    let col = t.columns.iter().find(|c| c.name == column);
    let is_static = col.is_some_and(|c| c.is_static);
    let note = col
        .and_then(|c| c.embeds.as_deref())
        .map(|child| format!("embeds {child} rows"))
        .unwrap_or_default();
    (if is_static { "S" } else { "" }.into(), note)
}

/// The Chebotko diagram: key columns first in key order, then the other columns.
fn diagram(t: &DesignTable) -> String {
    let mut order: Vec<&str> = t
        .partition_key
        .iter()
        .chain(&t.clustering)
        .map(|k| k.column.as_str())
        .collect();
    for c in &t.columns {
        if !order.contains(&c.name.as_str()) {
            order.push(&c.name);
        }
    }
    let rows: Vec<KeyRow> = order
        .iter()
        .map(|name| {
            let (marker, note) = role(t, name);
            let cql_type = t
                .columns
                .iter()
                .find(|c| c.name == *name)
                .map(|c| c.cql_type.to_string())
                .or_else(|| {
                    t.partition_key
                        .iter()
                        .chain(&t.clustering)
                        .find(|k| k.column == *name)
                        .map(|k| k.cql_type.to_string())
                })
                .unwrap_or_default();
            KeyRow {
                name: name.to_string(),
                cql_type,
                marker,
                note,
            }
        })
        .collect();
    svg::key_diagram(&t.name, &rows, &format!("serves {}", t.serves.join(", ")))
}

fn page(ctx: &Ctx, t: &DesignTable, image: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# {}\n", md::text(&t.name));
    let _ = writeln!(s, "Primary key {}.\n", md::code(&primary_key(t)));
    let _ = writeln!(
        s,
        "![Key diagram of {}: K partition key, C clustering (arrow: order), S static]({}{image})\n",
        md::text(&t.name),
        up(1)
    );
    s.push_str(&columns(t));
    s.push_str("\n## CQL\n\n");
    let keyspace = &ctx.plan.design.keyspace.name;
    for (name, ty) in &ctx.input.cql.types {
        if t.columns.iter().any(|c| mentions(&c.cql_type, name)) {
            s.push_str(&md::block("sql", ty));
            s.push('\n');
        }
    }
    match ctx.input.cql.tables.get(&t.name) {
        Some(cql) => s.push_str(&md::block("sql", cql)),
        None => {
            let _ = writeln!(
                s,
                "Not given to the report: see `CREATE TABLE {keyspace}.{}` in `schema.cql`.",
                t.name
            );
        }
    }
    s.push_str(&served(ctx, t));
    s.push_str(&maintained(ctx, t));
    s.push_str(&sizes(t));
    s.push_str(&super::checklist::section(ctx, t));
    if !t.warnings.is_empty() {
        s.push_str("\n## Warnings\n\n");
        for w in &t.warnings {
            let _ = writeln!(s, "- `{}`: {}", w.code, md::text(&w.message));
        }
    }
    s.push_str("\n## How the backfill fills it\n\n");
    s.push_str(
        "`remodel backfill` runs this query on Postgres (in one snapshot, split into key ranges) \
         and writes each row:\n\n",
    );
    s.push_str(&md::block("sql", &t.source_sql));
    s
}

/// True when a CQL type names the user type `name` (`frozen<address>`, `map<int, frozen<address>>`).
fn mentions(cql_type: &CqlType, name: &str) -> bool {
    cql_type.user_types().contains(&name)
}

fn columns(t: &DesignTable) -> String {
    let rows: Vec<Vec<String>> = t
        .columns
        .iter()
        .map(|c| {
            let (marker, note) = role(t, &c.name);
            let from = match (&c.source, note.strip_prefix("= ")) {
                (Some(src), _) => md::code(&src.to_string()),
                (None, Some(expr)) => md::code(expr),
                (None, None) if !note.is_empty() => md::cell(&note),
                (None, None) => "-".into(),
            };
            vec![
                md::cell(&c.name),
                md::code(&c.cql_type.to_string()),
                marker,
                from,
            ]
        })
        .collect();
    md::table(&["column", "CQL type", "key", "from (Postgres)"], &rows)
}

fn served(ctx: &Ctx, t: &DesignTable) -> String {
    let mut s = String::from("\n## Patterns it serves\n\n");
    if t.serves.is_empty() {
        s.push_str("None directly: writes keep it for lookups other tables need.\n");
        return s;
    }
    let rows: Vec<Vec<String>> = t
        .serves
        .iter()
        .map(|id| {
            let p = ctx.pattern(id);
            let q = ctx.query(id);
            vec![
                pattern_link(id, 1),
                p.map(|p| md::thousands(p.calls)).unwrap_or_default(),
                p.map(|p| md::percent(ctx.share(p))).unwrap_or_default(),
                q.and_then(|q| q.cql.as_deref())
                    .map(md::code)
                    .unwrap_or_else(|| "-".into()),
                match q {
                    Some(q) if q.single_partition => "yes".into(),
                    Some(_) => mapping_link(id, 1, "no"),
                    None => "-".into(),
                },
            ]
        })
        .collect();
    s.push_str(&md::table(
        &["pattern", "calls", "share", "CQL", "one partition"],
        &rows,
    ));
    s
}

fn maintained(ctx: &Ctx, t: &DesignTable) -> String {
    let mut rows: Vec<Vec<String>> = Vec::new();
    for p in ctx.ranked.iter().filter(|p| p.kind.is_write()) {
        let Some(w) = ctx.write(&p.id) else {
            continue;
        };
        let statements = w.targets.iter().filter(|x| x.table == t.name).count();
        if statements == 0 {
            continue;
        }
        let reads = w
            .read_before_write
            .iter()
            .any(|r| r.for_tables.iter().any(|x| x == &t.name));
        rows.push(vec![
            format!(
                "[{}]({}{WRITES}#{})",
                md::text(&p.id),
                up(1),
                md::anchor(&p.id)
            ),
            kind(p).into(),
            md::thousands(p.calls),
            statements.to_string(),
            if reads { "yes" } else { "no" }.into(),
        ]);
    }
    let mut s = String::from("\n## Writes that keep it up to date\n\n");
    if rows.is_empty() {
        s.push_str(
            "No write pattern of the workload changes it: it is filled by the backfill only.\n",
        );
    } else {
        s.push_str(&md::table(
            &["write", "kind", "calls", "statements", "reads first"],
            &rows,
        ));
    }
    s
}

/// The estimates with the inputs of the sizing formula.
fn sizes(t: &DesignTable) -> String {
    let e = &t.estimates;
    let mut s = String::from("\n## Size estimates\n\n");
    let rows = vec![
        vec![
            "rows".into(),
            md::count(e.rows_per_partition_avg),
            md::count(e.rows_per_partition_max),
            md::count(PARTITION_ROWS_LIMIT),
        ],
        vec![
            "bytes (one replica)".into(),
            md::bytes(e.bytes_per_partition_avg),
            md::bytes(e.bytes_per_partition_max),
            md::bytes(PARTITION_BYTES_LIMIT),
        ],
    ];
    s.push_str(&md::table(
        &["per partition", "average", "largest", "limit"],
        &rows,
    ));
    let n_c = t.columns.len();
    let n_pk = t.partition_key.len();
    let n_s = t.columns.iter().filter(|c| c.is_static).count();
    let n_r = e.rows_per_partition_avg;
    let n_v = n_r * (n_c.saturating_sub(n_pk + n_s)) as f64 + n_s as f64;
    let per_row = if n_r > 0.0 {
        e.bytes_per_partition_avg / n_r
    } else {
        0.0
    };
    let _ = writeln!(
        s,
        "\n{} partitions, {} rows in all; inputs from **{}**{}.\n",
        md::count(e.partitions),
        md::count(e.rows),
        md::text(&e.basis),
        if e.basis == "defaults" {
            " (no `--stats` given: the designer's stated defaults; give statistics for real numbers)"
        } else {
            ""
        }
    );
    let _ = writeln!(
        s,
        "The formula (Cassandra's partition size): values per partition \
         N<sub>v</sub> = N<sub>r</sub>·(N<sub>c</sub> − N<sub>pk</sub> − N<sub>s</sub>) + N<sub>s</sub> \
         = {}·({n_c} − {n_pk} − {n_s}) + {n_s} = {} with N<sub>r</sub> the average rows per \
         partition, N<sub>c</sub> columns, N<sub>pk</sub> partition-key columns, N<sub>s</sub> \
         static columns; size S<sub>t</sub> = Σ key + Σ static + N<sub>r</sub>·Σ row + \
         N<sub>v</sub>·8 = {} on average, about {} a row.",
        md::count(n_r),
        md::count(n_v),
        md::bytes(e.bytes_per_partition_avg),
        md::bytes(per_row)
    );
    s
}
