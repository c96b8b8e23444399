//! The dialect-neutral expression table: every expression of `fixtures/analyze/neutral/cases.txt`
//! with what `remodel_sql::typed_expr` makes of it — the SQL rendering of the typed expression, its
//! JSON and its parameters' types, or the reason it is refused — compared with `expected.txt`
//! (`UPDATE_EXPECT=1` rewrites it; review the diff). `neutral_pg_live.rs` proves every conversion
//! against Postgres.

mod common;

use common::neutral_cases::*;
use common::root;
use remodel_model::{BinaryOp, Expr, Function, Literal, UnaryOp};
use std::collections::BTreeSet;
use std::fmt::Write;

/// The kinds of node, operators, functions and literal types an expression uses.
fn coverage(e: &Expr, seen: &mut BTreeSet<String>) {
    e.walk(&mut |x| {
        let name = match x {
            Expr::Binary { op, .. } => format!("op {op:?}"),
            Expr::Unary { op, .. } => format!("unary {op:?}"),
            Expr::Call { function, .. } => format!("fn {function:?}"),
            Expr::Literal { value } => {
                let json = serde_json::to_value(value).unwrap_or_default();
                format!("literal {}", json["type"].as_str().unwrap_or("?"))
            }
            other => {
                let json = serde_json::to_value(other).unwrap_or_default();
                format!("node {}", json["kind"].as_str().unwrap_or("?"))
            }
        };
        seen.insert(name);
    });
}

#[test]
fn neutral_expression_table() {
    let schema = schema();
    let mut out = String::new();
    let (mut converted, mut refused) = (0, 0);
    let mut seen = BTreeSet::new();
    for c in cases() {
        let _ = writeln!(out, "{}", c.sql);
        let (utc, params) = convert(&schema, &c, "UTC");
        match &utc {
            Ok(e) => {
                converted += 1;
                coverage(e, &mut seen);
                let _ = writeln!(out, "    sql:    {e}");
                let _ = writeln!(
                    out,
                    "    json:   {}",
                    serde_json::to_string(e).expect("json")
                );
                if !params.is_empty() {
                    let p: Vec<String> = params
                        .iter()
                        .map(|(n, t)| format!("${n} {}", t.sql()))
                        .collect();
                    let _ = writeln!(out, "    params: {}", p.join(", "));
                }
                if let (Ok(berlin), _) = convert(&schema, &c, "Europe/Berlin") {
                    if berlin != *e {
                        let _ = writeln!(out, "    in Europe/Berlin: {berlin}");
                    }
                }
            }
            Err(why) => {
                refused += 1;
                let _ = writeln!(out, "    refused: {why}");
            }
        }
    }
    let _ = writeln!(out, "\n{converted} converted, {refused} refused");
    expect_test::expect_file![root().join(DIR).join("expected.txt")].assert_eq(&out);
    // Every function, operator and literal kind of the model appears in a converted case.
    let mut missing = Vec::new();
    for f in Function::ALL {
        if !seen.contains(&format!("fn {f:?}")) {
            missing.push(format!("fn {f:?}"));
        }
    }
    for op in [
        BinaryOp::Add,
        BinaryOp::Sub,
        BinaryOp::Mul,
        BinaryOp::Div,
        BinaryOp::Mod,
        BinaryOp::Concat,
        BinaryOp::Eq,
        BinaryOp::Ne,
        BinaryOp::Lt,
        BinaryOp::Le,
        BinaryOp::Gt,
        BinaryOp::Ge,
        BinaryOp::And,
        BinaryOp::Or,
    ] {
        if !seen.contains(&format!("op {op:?}")) {
            missing.push(format!("op {op:?}"));
        }
    }
    for u in [UnaryOp::Not, UnaryOp::Neg] {
        if !seen.contains(&format!("unary {u:?}")) {
            missing.push(format!("unary {u:?}"));
        }
    }
    let literals = [
        Literal::Null,
        Literal::Boolean { value: true },
        Literal::Integer { value: 0 },
        Literal::Numeric { value: "0".into() },
        Literal::Text { value: "".into() },
        Literal::Date { value: "".into() },
        Literal::Timestamp { value: "".into() },
        Literal::Timestamptz { value: "".into() },
        Literal::Interval {
            months: 0,
            days: 0,
            micros: 0,
        },
        Literal::Uuid { value: "".into() },
        Literal::Bytes { hex: "".into() },
    ];
    for l in literals {
        let json = serde_json::to_value(&l).expect("json");
        let name = format!("literal {}", json["type"].as_str().unwrap_or("?"));
        if !seen.contains(&name) {
            missing.push(name);
        }
    }
    for node in [
        "param",
        "column",
        "now",
        "current_date",
        "is_null",
        "in_list",
        "like",
        "cast",
        "case",
    ] {
        if !seen.contains(&format!("node {node}")) {
            missing.push(format!("node {node}"));
        }
    }
    assert!(
        missing.is_empty(),
        "not covered by a converted case: {missing:?}"
    );
    assert!(
        converted >= 150 && refused >= 40,
        "{converted} converted, {refused} refused"
    );
}
