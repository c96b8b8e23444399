//! Property tests of normalization: the same statement with different literals, `IN` list
//! lengths, spacing and keyword case has one fingerprint; different statements have different
//! fingerprints; arbitrary input gives a consistent result or an error with a position. Each
//! property counts the cases that reached its assertion and fails when too few did.

mod reached;

use proptest::prelude::*;
use reached::Reached;
use remodel_model::text::fnv1a64;
use remodel_sql::normalize::{literal_mask, normalize, shape, shape_checked, Normalizer};

/// A statement shape with holes for literals and an IN list.
#[derive(Debug, Clone)]
struct Template {
    table: &'static str,
    column: &'static str,
    op: &'static str,
}

const TABLES: &[&str] = &["trips", "drivers", "cities", "orders"];
const COLUMNS: &[&str] = &["driver_id", "city", "status", "rating"];
const OPS: &[&str] = &["=", "<", ">=", "<>"];

fn template() -> impl Strategy<Value = Template> {
    (0..TABLES.len(), 0..COLUMNS.len(), 0..OPS.len()).prop_map(|(t, c, o)| Template {
        table: TABLES[t],
        column: COLUMNS[c],
        op: OPS[o],
    })
}

/// A literal of some kind: integer, negative number, decimal, string, typed literal, placeholder.
fn literal() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<u32>().prop_map(|n| n.to_string()),
        any::<i32>().prop_map(|n| n.to_string()),
        (0u32..10_000, 0u32..100).prop_map(|(a, b)| format!("{a}.{b}")),
        "[a-zA-Z0-9 _'-]{0,12}".prop_map(|s| format!("'{}'", s.replace('\'', "''"))),
        "[a-z0-9 ]{0,8}".prop_map(|s| format!("E'{s}'")),
        (1u32..28).prop_map(|d| format!("date '2025-01-{d:02}'")),
        (1u32..9).prop_map(|n| format!("${n}")),
        Just("?".to_string()),
    ]
}

/// Random spacing: one or more spaces, tabs or newlines.
fn space() -> impl Strategy<Value = String> {
    "[ \t\n]{1,3}"
}

fn render(
    t: &Template,
    lit: &str,
    list: &[String],
    sp: &[String],
    upper: bool,
    limit: &str,
) -> String {
    let kw = |k: &str| {
        if upper {
            k.to_uppercase()
        } else {
            k.to_lowercase()
        }
    };
    format!(
        "{select}{s0}*{s1}{from}{s2}{table}{s3}{where_}{s4}{col}{s5}{op}{s6}{lit}{s7}{and}{s8}id{s9}{in_}{s10}({items}){s11}{limit_kw}{s12}{limit}",
        select = kw("select"),
        from = kw("from"),
        where_ = kw("where"),
        and = kw("and"),
        in_ = kw("in"),
        limit_kw = kw("limit"),
        table = t.table,
        col = t.column,
        op = t.op,
        items = list.join(&format!(",{}", sp[0])),
        s0 = sp[0], s1 = sp[1], s2 = sp[2], s3 = sp[3], s4 = sp[4], s5 = sp[5], s6 = sp[6],
        s7 = sp[7], s8 = sp[8], s9 = sp[9], s10 = sp[10], s11 = sp[11], s12 = sp[12],
    )
}

/// Cases per property.
fn config() -> ProptestConfig {
    reached::cases(256)
}

/// Normalizing is idempotent: the canonical form is its own canonical form, fingerprint
/// included, whatever literals (E'' strings with quotes and backslashes too) were in it.
#[test]
fn normalization_is_idempotent() {
    let reached = Reached::default();
    proptest!(config(), |(t in template(), lits in prop::collection::vec(literal(), 1..5), tricky in "[a-z' \\\\;-]{0,10}")| {
        let escaped = tricky.replace('\\', "\\\\").replace('\'', "\\'");
        let list = lits.join(", ");
        let sql = format!(
            "SELECT * FROM {} WHERE {} {} {} AND x IN ({list}) AND y = E'{escaped}' LIMIT 5",
            t.table, t.column, t.op, lits[0]
        );
        let once = shape(&sql).expect("normalizes");
        let twice = shape(&once.sql).expect("the canonical form normalizes");
        reached.hit();
        prop_assert_eq!(&twice.sql, &once.sql);
        prop_assert_eq!(twice.fingerprint, once.fingerprint);
        // The example (one literal instance) is an instance of the same shape: an E'' string
        // never ends early and adds no SQL of its own.
        let ex = remodel_sql::normalize::example(&sql, &[]).expect("an example");
        prop_assert_eq!(shape(&ex).expect("the example normalizes").sql, once.sql);
    });
    reached.assert_share("normalization_is_idempotent", &config(), 1.0);
}

#[test]
fn same_statement_one_fingerprint() {
    let reached = Reached::default();
    proptest!(config(), |(
        t in template(),
        lit_a in literal(), lit_b in literal(),
        list_a in prop::collection::vec(literal(), 1..12),
        list_b in prop::collection::vec(literal(), 1..12),
        sp_a in prop::collection::vec(space(), 13), sp_b in prop::collection::vec(space(), 13),
        upper_a in any::<bool>(), upper_b in any::<bool>(),
        limit_a in 1u32..1000, limit_b in 1u32..1000,
    )| {
        let a = render(&t, &lit_a, &list_a, &sp_a, upper_a, &limit_a.to_string());
        let b = render(&t, &lit_b, &list_b, &sp_b, upper_b, &limit_b.to_string());
        let (na, nb) = (normalize(&a), normalize(&b));
        let (na, nb) = (na.expect("a normalizes"), nb.expect("b normalizes"));
        reached.hit();
        prop_assert_eq!(&na.sql, &nb.sql);
        prop_assert_eq!(na.fingerprint, nb.fingerprint);
        prop_assert_eq!(na.params, 3);
    });
    reached.assert_share("same_statement_one_fingerprint", &config(), 1.0);
}

#[test]
fn different_statements_different_fingerprints() {
    let reached = Reached::default();
    proptest!(config(), |(
        t1 in template(), t2 in template(), lit in literal(),
        sp in prop::collection::vec(space(), 13),
    )| {
        prop_assume!(t1.table != t2.table || t1.column != t2.column || t1.op != t2.op);
        let one = vec!["1".to_string()];
        let a = render(&t1, &lit, &one, &sp, true, "10");
        let b = render(&t2, &lit, &one, &sp, true, "10");
        reached.hit();
        prop_assert_ne!(shape(&a).expect("a").fingerprint, shape(&b).expect("b").fingerprint);
    });
    reached.assert_share(
        "different_statements_different_fingerprints",
        &config(),
        1.0,
    );
}

/// The log readers skip the tokenizer for a statement whose literal mask was seen before:
/// a statement and its mask (itself a statement) must then have the same shape. Only texts
/// with a mask and a shape the literals determine are asserted on; enough of them must be.
#[test]
fn literal_mask_determines_the_shape() {
    let reached = Reached::default();
    proptest!(config(), |(
        parts in prop::collection::vec(prop_oneof![
            Just("SELECT"), Just("a"), Just("t1"), Just("\"Q 1\""), Just("FROM"), Just("WHERE"),
            Just("="), Just("-"), Just("+"), Just("("), Just(")"), Just(","), Just("IN"),
            Just("ORDER BY"), Just("LIMIT"), Just("::varchar(12)"), Just("date"), Just("'x''y'"),
            Just("'2025-01-15'"), Just("42"), Just("-7"), Just("3.25"), Just("1e5"), Just("$2"),
            Just("?"), Just("E'z'"), Just("AND"), Just("."), Just("[1]"),
        ], 1..24),
        seps in prop::collection::vec(prop_oneof![Just(" "), Just(""), Just("\n\t")], 24),
    )| {
        let text: String = parts.iter().zip(&seps).map(|(p, s)| format!("{p}{s}")).collect();
        let mut mask = String::new();
        if literal_mask(&text, &mut mask) {
            if let Ok((a, determined)) = shape_checked(&text) {
                if determined {
                    let b = shape(&mask).expect("the mask tokenizes like the text");
                    reached.hit();
                    prop_assert_eq!(a, b, "{} / {}", text, mask);
                }
            }
        }
    });
    reached.assert_share("literal_mask_determines_the_shape", &config(), MASK_SHARE);
}

/// Share of the random token sequences of [`literal_mask_determines_the_shape`] that must have a
/// literal mask and a determined shape: 55 to 65% did in five runs of 256 cases.
const MASK_SHARE: f64 = 0.4;

/// Any text: normalizing it gives the same result twice, with and without the cache of
/// [`Normalizer`], a fingerprint that is the hash of its canonical text, whose last
/// placeholder is `$n`; or an error with a reason and a position.
#[test]
fn arbitrary_text_normalizes_consistently_or_fails_with_a_position() {
    let reached = Reached::default();
    proptest!(config(), |(s in "\\PC{0,200}")| {
        let once = normalize(&s);
        let mut cached = Normalizer::new();
        reached.hit();
        prop_assert_eq!(&cached.normalize(&s), &once);
        prop_assert_eq!(&cached.normalize(&s), &once);
        match once {
            Ok(n) => {
                prop_assert_eq!(n.fingerprint, fnv1a64(n.sql.as_bytes()));
                if n.params > 0 {
                    let last = format!("${}", n.params);
                    prop_assert!(n.sql.contains(&last), "{}: no {} in {}", s, last, n.sql);
                }
            }
            Err(e) => {
                prop_assert!(!e.reason.is_empty());
                prop_assert!(e.line >= 1 && e.column >= 1, "{:?}", e);
            }
        }
    });
    reached.assert_share(
        "arbitrary_text_normalizes_consistently_or_fails_with_a_position",
        &config(),
        1.0,
    );
}
