//! The analysis' typed twins on statements of `fixtures/analyze/typed/` read by the real front
//! end (normalization included): each equality's and bound's typed value, each residual's
//! expression or why it has none, written values, `ON CONFLICT`, the rows of `UPDATE … FROM`
//! and `DELETE … USING`, LIMIT/OFFSET, row locks and the parameters with their types and the
//! literals they replaced — compared with `expected.txt` (`UPDATE_EXPECT=1` rewrites it).

mod common;

use common::{load_and_analyze, root};
use remodel_model::{Expr, PatternAnalysis};
use remodel_sql::workload::Format;
use std::fmt::Write;

const DIR: &str = "fixtures/analyze/typed";

fn show(e: &Option<Expr>) -> String {
    e.as_ref().map_or("(untyped)".into(), ToString::to_string)
}

fn typed_fields(a: &PatternAnalysis, out: &mut String) {
    let params: Vec<String> = a
        .params
        .iter()
        .map(|p| {
            let ty = p.sql_type.map_or("?", |t| t.sql());
            match &p.replaced_literal {
                Some(l) => format!("${} {ty} (was {l})", p.n),
                None => format!("${} {ty}", p.n),
            }
        })
        .collect();
    if !params.is_empty() {
        let _ = writeln!(out, "    params:   {}", params.join(", "));
    }
    for e in &a.equality {
        let _ = writeln!(
            out,
            "    equality: {} {:?} {}",
            e.column,
            e.op,
            show(&e.expr)
        );
    }
    for r in &a.ranges {
        for (side, b) in [("lower", &r.lower), ("upper", &r.upper)] {
            if let Some(b) = b {
                let op = match (side, b.inclusive) {
                    ("lower", true) => ">=",
                    ("lower", false) => ">",
                    (_, true) => "<=",
                    _ => "<",
                };
                let _ = writeln!(out, "    range:    {} {op} {}", r.column, show(&b.expr));
            }
        }
    }
    for r in &a.residual {
        match (&r.expr, &r.reason_untyped) {
            (Some(x), _) => {
                let _ = writeln!(out, "    residual: {x}");
            }
            (None, why) => {
                let why = why.as_deref().unwrap_or("?");
                let _ = writeln!(out, "    residual: {} (untyped: {why})", r.sql);
            }
        }
    }
    for (what, x) in [("limit", &a.limit_expr), ("offset", &a.offset_expr)] {
        if let Some(x) = x {
            let _ = writeln!(out, "    {:<10}{x}", format!("{what}:"));
        }
    }
    if let Some(l) = &a.locking {
        let _ = writeln!(out, "    locking:  {l}");
    }
    let Some(w) = &a.write else { return };
    for v in &w.values {
        let _ = writeln!(out, "    value:    {} = {}", v.column, show(&v.expr));
    }
    if let Some(c) = &w.conflict {
        let action = if c.do_nothing {
            "DO NOTHING"
        } else {
            "DO UPDATE"
        };
        let _ = writeln!(out, "    conflict: ({}) {action}", c.columns.join(", "));
        for v in &c.set {
            let _ = writeln!(out, "      set:    {} = {}", v.column, show(&v.expr));
        }
        if let Some(f) = &c.filter {
            let _ = writeln!(out, "      where:  {f}");
        }
    }
    for f in &w.from_rows {
        let eqs: Vec<String> = f
            .equality
            .iter()
            .map(|(c, x)| format!("{c} = {x}"))
            .collect();
        let _ = writeln!(
            out,
            "    reads:    {} ({}): {}",
            f.alias,
            f.table,
            eqs.join(", ")
        );
    }
    let _ = writeln!(out, "    keys:     {:?}", w.key_columns);
}

#[test]
fn typed_twins_of_statements() {
    let a = load_and_analyze(
        &[&format!("{DIR}/schema.sql")],
        &[&format!("{DIR}/queries.sql")],
        Format::Sql,
    );
    let mut out = String::new();
    for p in &a.workload.patterns {
        let _ = writeln!(out, "{}", p.sql);
        typed_fields(&p.analysis, &mut out);
    }
    let _ = writeln!(
        out,
        "\ncolumns with a typed DEFAULT or GENERATED expression:"
    );
    for t in &a.schema.tables {
        for c in &t.columns {
            for (what, text, x) in [
                ("default", &c.default, &c.default_expr),
                ("generated", &c.generated, &c.generated_expr),
            ] {
                if let Some(text) = text {
                    let _ = writeln!(
                        out,
                        "    {}.{} {what} {text} => {}",
                        t.name,
                        c.name,
                        show(x)
                    );
                }
            }
        }
    }
    expect_test::expect_file![root().join(DIR).join("expected.txt")].assert_eq(&out);
}
