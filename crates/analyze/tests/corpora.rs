//! Every corpus workload with its schema: no panic, and every pattern either analyzed or marked
//! unmodelled with a reason that is also reported as a diagnostic.

mod common;

use common::*;
use remodel_sql::workload::Format;

#[test]
fn every_corpus_pattern_is_analyzed_or_explained() {
    let cases = [
        ("tpcc", "ddl-postgres.sql"),
        ("auctionmark", "ddl-postgres.sql"),
        ("seats", "ddl-postgres.sql"),
        ("twitter", "ddl-postgres.sql"),
        ("wikipedia", "ddl-postgres.sql"),
        ("smallbank", "ddl-postgres.sql"),
        ("voter", "ddl-postgres.sql"),
        ("pagila", "pagila-schema.sql"),
    ];
    for (corpus, ddl) in cases {
        let dir = format!("fixtures/corpora/{corpus}");
        let a = load_and_analyze(
            &[&format!("{dir}/{ddl}")],
            &[&format!("{dir}/queries.sql")],
            Format::Sql,
        );
        let mut unmodeled = Vec::new();
        for p in &a.workload.patterns {
            match &p.analysis.unmodeled {
                Some(r) => {
                    assert!(
                        a.diagnostics
                            .iter()
                            .any(|d| d.message.starts_with(&format!("{}: not modelled", p.id))),
                        "{corpus} {}",
                        p.id
                    );
                    unmodeled.push(format!("{}: {r}", p.id));
                }
                None => assert!(
                    !p.analysis.tables.is_empty(),
                    "{corpus} {}: no table in {}",
                    p.id,
                    p.sql
                ),
            }
        }
        println!(
            "{corpus}: {} patterns, {} unmodelled {unmodeled:?}, {} relationships",
            a.workload.patterns.len(),
            unmodeled.len(),
            a.relationships.len()
        );
    }
}
