//! Unit tests of the rewrite rules (the whole table, proven against Postgres, is in
//! `tests/rewrites.rs` and `tests/rewrites_pg_live.rs`).

use super::layers::Unit;
use super::rules::Decimal;
use super::*;
use crate::timeval::parse_expr;

fn expr(sql: &str) -> Expr {
    parse_expr(sql).expect("test SQL parses")
}

/// The bounds as SQL text.
fn text(s: &Solved) -> Vec<(Cmp, String)> {
    s.bounds.iter().map(|(c, e)| (*c, e.to_string())).collect()
}

fn solve_one(col: &str, ty: Ty, cmp: Cmp, value: &str) -> Result<Solved, String> {
    solve(&expr(col), ty, &[(cmp, &expr(value))], &Literals::default())
}

#[test]
fn subtracting_the_column_flips_the_comparison() {
    let s = solve_one("now() - due_at", Ty::TsTz, Cmp::Lt, "interval '14 days'").unwrap();
    assert_eq!(
        text(&s),
        [(Cmp::Gt, "now() - INTERVAL '14 days'".to_string())]
    );
    assert_eq!(s.assumes.len(), 1, "UTC for a day part: {:?}", s.assumes);
    // Hours only: exact in any time zone, nothing assumed.
    let s = solve_one("now() - due_at", Ty::TsTz, Cmp::Ge, "interval '36 hours'").unwrap();
    assert_eq!(s.bounds[0].0, Cmp::Le);
    assert!(s.assumes.is_empty());
}

#[test]
fn month_parts_and_parameters_are_refused() {
    let e = solve_one("due_at + interval '1 month'", Ty::TsTz, Cmp::Gt, "now()").unwrap_err();
    assert!(e.contains("month part"), "{e}");
    let e = solve_one("now() - due_at", Ty::TsTz, Cmp::Lt, "$1").unwrap_err();
    assert!(e.contains("may have a month part"), "{e}");
}

#[test]
fn negative_factors_flip_and_keep_their_sign() {
    let s = solve_one("i * -4", Ty::Int(4), Cmp::Ge, "$1").unwrap();
    assert_eq!(text(&s), [(Cmp::Le, "$1 * (-0.25)".to_string())]);
    assert!(solve_one("i * 3", Ty::Int(4), Cmp::Gt, "$1").is_err());
    assert!(solve_one("f * 2", Ty::Float, Cmp::Gt, "$1").is_err());
}

#[test]
fn a_floor_equality_is_one_unit() {
    let s = solve_one(
        "date_trunc('day', ts)",
        Ty::Ts,
        Cmp::Eq,
        "date_trunc('day', $1)",
    )
    .unwrap();
    assert_eq!(s.window, Some(remodel_model::TimeWindow::Day));
    assert_eq!(text(&s)[0], (Cmp::Ge, "date_trunc('day', $1)".to_string()));
    assert_eq!(
        text(&s)[1],
        (
            Cmp::Lt,
            "date_trunc('day', $1) + INTERVAL '1 day'".to_string()
        )
    );
}

#[test]
fn exact_reciprocals() {
    let r = |k: &str| Decimal::of(&expr(k)).and_then(|d| d.reciprocal());
    assert_eq!(r("2").as_deref(), Some("0.5"));
    assert_eq!(r("-4").as_deref(), Some("0.25"));
    assert_eq!(r("0.25").as_deref(), Some("4"));
    assert_eq!(r("0.2").as_deref(), Some("5"));
    assert_eq!(r("40").as_deref(), Some("0.025"));
    assert_eq!(r("1.6").as_deref(), Some("0.625"));
    assert_eq!(r("3"), None);
    assert_eq!(r("0"), None);
    assert_eq!(r("1e3"), None, "exponents are not read");
}

#[test]
fn units_cover_finer_units() {
    assert!(Unit::Month.covers(Unit::Day));
    assert!(Unit::Year.covers(Unit::Quarter));
    assert!(Unit::Week.covers(Unit::Hour));
    assert!(!Unit::Month.covers(Unit::Week));
    assert!(!Unit::Week.covers(Unit::Month));
    assert!(!Unit::Day.covers(Unit::Month));
}

#[test]
fn is_null_needs_non_null_operands() {
    let lits = Literals::default();
    assert!(solve_is_null(&expr("c + 1"), &lits).is_ok());
    assert!(solve_is_null(&expr("date_trunc('day', c)"), &lits).is_ok());
    assert!(solve_is_null(&expr("c + $1"), &lits).is_err());
    assert!(solve_is_null(&expr("coalesce(c, 0)"), &lits).is_err());
}
