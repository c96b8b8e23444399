//! The analysis as text for a reviewer: patterns by weight, relationships with their reasons,
//! inferred foreign keys and diagnostics. Pure formatting; the CLI prints it.

use remodel_model::text::thousands;
use remodel_model::{
    AccessPattern, Analysis, Cardinality, Decision, EqualityOp, FkOrigin, PatternAnalysis,
    RangeBound, Severity, WriteInfo,
};
use std::fmt::Write;

/// Renders the whole analysis.
pub fn text(a: &Analysis) -> String {
    let mut out = String::new();
    let total = a.workload.total_calls().max(1);
    let mut ps: Vec<&AccessPattern> = a.workload.patterns.iter().collect();
    ps.sort_by_key(|p| std::cmp::Reverse(p.calls));
    let _ = writeln!(
        out,
        "Access patterns: {} ({} calls), heaviest first",
        ps.len(),
        thousands(a.workload.total_calls())
    );
    for p in ps {
        out.push('\n');
        pattern(&mut out, p, total);
    }
    let _ = writeln!(out, "\nRelationships: {}", a.relationships.len());
    for r in &a.relationships {
        let card = match &r.cardinality {
            Cardinality::OneToOne => "1-1".to_string(),
            Cardinality::OneToMany => "1-N".to_string(),
            Cardinality::ManyToMany { via } => format!("M-N via {via}"),
        };
        let decision = match r.decision {
            Decision::Embed => "embed",
            Decision::Reference => "reference",
            Decision::DuplicateColumns => "duplicate-columns",
        };
        let cols = enclosed_list(&r.rationale.columns, '[', ']');
        let _ = writeln!(
            out,
            "\n  {} {card} {} ({}): {decision}{cols}",
            r.from,
            r.to,
            r.columns.join(", ")
        );
        let _ = writeln!(out, "    rule: {}", r.rationale.rule);
        let bounded = match r.rationale.bounded {
            Some(true) => "bounded",
            Some(false) => "unbounded",
            None => "N unknown",
        };
        let fanout = r
            .rationale
            .fanout
            .map(|f| format!(" (N ≈ {f:.1})"))
            .unwrap_or_default();
        let via = enclosed_list(&r.rationale.co_access_patterns, '(', ')');
        let _ = writeln!(
            out,
            "    evidence: co-access {:.0}%{via}, attributes: {}, {bounded}{fanout}",
            r.rationale.co_access_share * 100.0,
            r.rationale.attribute_count
        );
        let _ = writeln!(out, "    {}", r.rationale.text);
    }
    let inferred: Vec<String> = a
        .schema
        .foreign_keys()
        .filter_map(|(t, fk)| match &fk.origin {
            FkOrigin::Inferred { evidence } => Some(format!(
                "  {}({}) -> {}({}): {evidence}",
                t.name,
                fk.columns.join(", "),
                fk.ref_table,
                fk.ref_columns.join(", ")
            )),
            FkOrigin::Declared => None,
        })
        .collect();
    if !inferred.is_empty() {
        let _ = writeln!(out, "\nInferred foreign keys: {}", inferred.len());
        for l in inferred {
            let _ = writeln!(out, "{l}");
        }
    }
    let shown: Vec<_> = a
        .diagnostics
        .iter()
        .filter(|d| d.severity >= Severity::Warning)
        .collect();
    let notes = a
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Note)
        .count();
    let _ = writeln!(
        out,
        "\nDiagnostics: {} warnings or errors, {notes} notes (notes with --verbose)",
        shown.len()
    );
    for d in shown {
        let _ = writeln!(out, "  {d}");
    }
    out
}

fn pattern(out: &mut String, p: &AccessPattern, total: u64) {
    let a = &p.analysis;
    header(out, p, total);
    joins(out, a);
    let filters = filters(a);
    if !filters.is_empty() {
        let _ = writeln!(out, "    filter:    {}", filters.join("; "));
    }
    rewrites(out, a);
    result_shape(out, p);
    if let Some(w) = &a.write {
        write_line(out, w);
    }
}

/// The pattern's first lines: id, kind, calls, rows, label, SQL, what is not modelled, tables.
fn header(out: &mut String, p: &AccessPattern, total: u64) {
    let a = &p.analysis;
    let kind = format!("{:?}", p.kind).to_lowercase();
    let rows = match (a.rows_expected, a.limit) {
        (Some(r), _) => format!(", rows {}", trim_float(r)),
        (None, Some(l)) => format!(", rows ≤ {l}"),
        _ => String::new(),
    };
    let share = p.calls as f64 * 100.0 / total as f64;
    let _ = writeln!(
        out,
        "{}  {kind}  {} calls ({share:.1}%){rows}",
        p.id,
        thousands(p.calls)
    );
    if let Some(l) = &p.label {
        let _ = writeln!(out, "    label:     {l}");
    }
    let _ = writeln!(out, "    sql:       {}", one_line(&p.sql));
    if let Some(u) = &a.unmodeled {
        let _ = writeln!(out, "    NOT MODELLED: {u}");
    }
    if !a.tables.is_empty() {
        let _ = writeln!(out, "    tables:    {}", a.tables.join(", "));
    }
}

/// A line per join: its condition and the foreign key it follows.
fn joins(out: &mut String, a: &PatternAnalysis) {
    for j in &a.join_path {
        let on: Vec<String> = j
            .left_columns
            .iter()
            .zip(&j.right_columns)
            .map(|(l, r)| format!("{}.{l} = {}.{r}", j.left_table, j.right_table))
            .collect();
        let fk = j
            .foreign_key
            .as_deref()
            .map(|f| format!("  (along {f})"))
            .unwrap_or_else(|| "  (no foreign key)".into());
        let _ = writeln!(out, "    join:      {}{fk}", on.join(" AND "));
    }
}

/// Every filter: equalities, ranges (with their window), residuals.
fn filters(a: &PatternAnalysis) -> Vec<String> {
    let mut filters: Vec<String> = a
        .equality
        .iter()
        .map(|e| {
            let lhs = e.column.to_string();
            match e.op {
                EqualityOp::Eq => format!("{lhs} = {}", e.value.as_deref().unwrap_or("?")),
                EqualityOp::In => format!("{lhs} IN {}", e.value.as_deref().unwrap_or("?")),
                EqualityOp::IsNull => format!("{lhs} IS NULL"),
            }
        })
        .collect();
    for r in &a.ranges {
        let lhs = r.column.to_string();
        let mut parts = Vec::new();
        if let Some(b) = &r.lower {
            let op = if r.prefix {
                "LIKE"
            } else if b.inclusive {
                ">="
            } else {
                ">"
            };
            parts.push(range_bound(op, b));
        }
        if let Some(b) = &r.upper {
            let op = if b.inclusive { "<=" } else { "<" };
            parts.push(range_bound(op, b));
        }
        let window = r
            .window
            .map(|w| format!("  (window: {})", format!("{w:?}").to_lowercase()))
            .unwrap_or_default();
        filters.push(format!("{lhs} {}{window}", parts.join(" AND ")));
    }
    filters.extend(
        a.residual
            .iter()
            .map(|r| format!("{} (residual: {})", one_line(&r.sql), r.reason)),
    );
    filters
}

/// The predicates the analyzer rewrote, with what each rewrite assumes.
fn rewrites(out: &mut String, a: &PatternAnalysis) {
    let rewrites = a
        .equality
        .iter()
        .filter_map(|e| e.rewritten_from.as_ref())
        .chain(a.ranges.iter().flat_map(|r| &r.rewritten_from));
    for rw in rewrites {
        let _ = writeln!(out, "    rewritten: {} ({})", one_line(&rw.sql), rw.reason);
        for assumption in &rw.assumes {
            let _ = writeln!(out, "      assumes: {assumption}");
        }
    }
}

/// What the result looks like: sort, limit, aggregates, grouping, DISTINCT, columns read, key lookup.
fn result_shape(out: &mut String, p: &AccessPattern) {
    let a = &p.analysis;
    if !a.order_by.is_empty() {
        let o: Vec<String> = a
            .order_by
            .iter()
            .map(|o| format!("{} {}", o.column, if o.desc { "DESC" } else { "ASC" }))
            .collect();
        let _ = writeln!(out, "    sort:      {}", o.join(", "));
    }
    if let Some(l) = a.limit {
        let off = a.offset.map(|o| format!(" offset {o}")).unwrap_or_default();
        let _ = writeln!(out, "    limit:     {l}{off}");
    }
    if !a.aggregates.is_empty() {
        let ag: Vec<String> = a
            .aggregates
            .iter()
            .map(|g| {
                let arg = g
                    .column
                    .as_ref()
                    .map(|c| c.to_string())
                    // count(*) has no column; other aggregates of an expression show `…`.
                    .unwrap_or_else(|| if g.function == "count" { "*" } else { "…" }.into());
                format!(
                    "{}({}{arg})",
                    g.function,
                    if g.distinct { "DISTINCT " } else { "" }
                )
            })
            .collect();
        let _ = writeln!(out, "    aggregate: {}", ag.join(", "));
    }
    if !a.group_by.is_empty() {
        let g: Vec<String> = a.group_by.iter().map(|c| c.to_string()).collect();
        let _ = writeln!(out, "    group by:  {}", g.join(", "));
    }
    if a.distinct {
        let _ = writeln!(out, "    distinct");
    }
    if !a.projection.is_empty() && p.kind == remodel_model::StatementKind::Select {
        let cols: Vec<String> = a.projection.iter().map(|c| c.to_string()).collect();
        let _ = writeln!(out, "    reads:     {}", cols.join(", "));
    }
    if a.key_lookup {
        let _ = writeln!(out, "    key lookup (the whole primary key is bound)");
    }
}

/// What a write writes, and how it finds its rows.
fn write_line(out: &mut String, w: &WriteInfo) {
    let how = if w.by_primary_key {
        "by primary key".to_string()
    } else if w.key_columns.is_empty() {
        "no identifying columns".to_string()
    } else {
        format!("rows identified by {}", w.key_columns.join(", "))
    };
    let written = enclosed_list(&w.columns_written, '(', ')');
    let mut extra = String::new();
    if w.on_conflict {
        extra.push_str(", upsert (ON CONFLICT)");
    }
    if !w.returning.is_empty() {
        let _ = write!(extra, ", returning {}", w.returning.join(", "));
    }
    if !w.reads.is_empty() {
        let _ = write!(extra, ", reads {}", w.reads.join(", "));
    }
    let _ = writeln!(out, "    writes:    {}{written}, {how}{extra}", w.table);
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `>= $1 ['2025-01-01']`: a range bound with its example value when there is one.
fn range_bound(op: &str, b: &RangeBound) -> String {
    match &b.example {
        Some(e) => format!("{op} {} [{e}]", b.value),
        None => format!("{op} {}", b.value),
    }
}

/// `" [a, b]"` (with the given brackets, after a space), or nothing for an empty list.
fn enclosed_list(items: &[String], open: char, close: char) -> String {
    if items.is_empty() {
        String::new()
    } else {
        format!(" {open}{}{close}", items.join(", "))
    }
}

fn trim_float(x: f64) -> String {
    if (x - x.round()).abs() < 1e-9 {
        format!("{}", x.round() as i64)
    } else {
        format!("{x:.1}")
    }
}
