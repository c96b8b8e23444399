//! Every BenchBase `queries.sql` of the corpora ingests with zero parse failures, and the number
//! of distinct patterns equals the distinct count in its SOURCE.txt.
//!
//! SOURCE.txt counts distinct texts with runs of white space collapsed; normalization merges
//! more: spacing around punctuation (`t(a` / `t (a`), literal versus placeholder (`= 3` / `= ?`)
//! and `IN` lists of different lengths. Each such merge is listed per corpus below, and the test
//! checks that the two texts really are in the file and get one fingerprint.

use remodel_sql::normalize::shape;
use remodel_sql::workload::{read_files, Format};
use std::path::PathBuf;

fn corpus(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/corpora")
        .join(name)
}

/// `queries.sql: 40 statements (37 distinct texts)` → (40, 37).
fn source_counts(name: &str) -> (u64, usize) {
    let text = std::fs::read_to_string(corpus(name).join("SOURCE.txt")).expect("SOURCE.txt");
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("queries.sql:"))
        .expect("queries.sql line");
    let nums: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .filter_map(|s| s.parse().ok())
        .collect();
    (nums[0], nums[1] as usize)
}

fn check(name: &str, merges: &[(&str, &str)]) {
    let l = read_files(&[corpus(name).join("queries.sql")], Format::Sql).expect("readable");
    let w = &l.workload;
    assert!(w.skipped.is_empty(), "{name}: {:?}", w.skipped);
    assert!(w.utility.is_empty(), "{name}: {:?}", w.utility);
    let (statements, distinct) = source_counts(name);
    assert_eq!(w.sources[0].statements, statements, "{name}: statements");
    let text = std::fs::read_to_string(corpus(name).join("queries.sql")).expect("queries.sql");
    for (a, b) in merges {
        assert!(
            text.contains(a) && text.contains(b),
            "{name}: merged texts are in the file"
        );
        let (fa, fb) = (
            shape(a).expect("a").fingerprint,
            shape(b).expect("b").fingerprint,
        );
        assert_eq!(fa, fb, "{name}: {a} / {b}");
    }
    assert_eq!(
        w.patterns.len() + merges.len(),
        distinct,
        "{name}: distinct patterns"
    );
    // The analyzer re-parses the normalized SQL and the examples: both must be valid.
    for p in &w.patterns {
        for text in [Some(p.sql.as_str()), p.example.as_deref()]
            .into_iter()
            .flatten()
        {
            let parsed = sqlparser::parser::Parser::parse_sql(
                &sqlparser::dialect::PostgreSqlDialect {},
                text,
            );
            assert!(parsed.is_ok(), "{name}: {text}: {parsed:?}");
        }
    }
    // BenchBase weights became calls (per 10,000 transactions); every pattern has a label.
    assert!(w.patterns.iter().all(|p| p.label.is_some()), "{name}");
    assert!(w.patterns.iter().any(|p| p.calls > 0), "{name}");
}

#[test]
fn tpcc() {
    check("tpcc", &[]);
    let l = read_files(&[corpus("tpcc").join("queries.sql")], Format::Sql).expect("readable");
    // NewOrder (45%) runs stmtGetItemSQL o_ol_cnt times (mean 10): 45 × 100 × 10.
    let item = l
        .workload
        .patterns
        .iter()
        .find(|p| p.label.as_deref() == Some("NewOrder.stmtGetItemSQL"))
        .expect("item");
    assert_eq!(item.calls, 45_000);
    assert_eq!(
        item.sql,
        "SELECT i_price, i_name, i_data FROM item WHERE i_id = $1"
    );
}

#[test]
fn auctionmark() {
    check(
        "auctionmark",
        &[
            (
                "INSERT INTO item_attribute(ia_id,ia_i_id,ia_u_id,ia_gav_id,ia_gag_id) VALUES(?, ?, ?, ?, ?)",
                "INSERT INTO item_attribute(ia_id,ia_i_id,ia_u_id,ia_gav_id,ia_gag_id) VALUES (?, ?, ?, ?, ?)",
            ),
            (
                "UPDATE item SET i_status = 3, i_updated = ? WHERE i_id = ? AND i_u_id = ?",
                "UPDATE item SET i_status = ?, i_updated = ? WHERE i_id = ? AND i_u_id = ?",
            ),
            (
                "INSERT INTO item_max_bid(imb_i_id, imb_u_id, imb_ib_id, imb_ib_i_id, imb_ib_u_id, imb_created, imb_updated ) VALUES (?, ?, ?, ?, ?, ?, ? )",
                "INSERT INTO item_max_bid (imb_i_id, imb_u_id, imb_ib_id, imb_ib_i_id, imb_ib_u_id, imb_created, imb_updated ) VALUES (?, ?, ?, ?, ?, ?, ? )",
            ),
        ],
    );
}

/// FindFlights.GetFlights1/2/3 differ only in the length of `F_ARRIVE_AP_ID IN (?, …)`: three
/// distinct texts, one pattern.
#[test]
fn seats() {
    check(
        "seats",
        &[
            (
                "AND F_ARRIVE_AP_ID IN (?);",
                "AND F_ARRIVE_AP_ID IN (?, ?);",
            ),
            (
                "AND F_ARRIVE_AP_ID IN (?);",
                "AND F_ARRIVE_AP_ID IN (?, ?, ?);",
            ),
        ],
    );
}

#[test]
fn twitter() {
    check("twitter", &[]);
}

#[test]
fn wikipedia() {
    check(
        "wikipedia",
        &[(
            "SELECT old_text, old_flags FROM text WHERE old_id = ? LIMIT 1",
            "SELECT old_text,old_flags FROM text WHERE old_id = ? LIMIT 1",
        )],
    );
}

#[test]
fn smallbank() {
    check("smallbank", &[]);
}

#[test]
fn voter() {
    check("voter", &[]);
}
