//! Pagila: `film_actor`, keyed by two foreign keys, is many-to-many; the queries that ship with
//! it (views and function bodies) are analyzed or marked unmodelled with a reason.

mod common;

use common::*;
use remodel_model::{Cardinality, Decision};
use remodel_sql::workload::Format;

#[test]
fn film_actor_is_many_to_many() {
    for schema in [
        "fixtures/corpora/pagila/pagila-schema.sql",
        "fixtures/corpora/pagila/classic/pagila-schema.sql",
    ] {
        let a = load_and_analyze(
            &[schema],
            &["fixtures/corpora/pagila/queries.sql"],
            Format::Sql,
        );
        let m = a
            .relationships
            .iter()
            .find(|r| {
                r.cardinality
                    == Cardinality::ManyToMany {
                        via: "film_actor".into(),
                    }
            })
            .unwrap_or_else(|| panic!("{schema}: no M-N via film_actor"));
        assert_eq!((m.from.as_str(), m.to.as_str()), ("actor", "film"));
        assert_eq!(m.decision, Decision::Reference);
        assert!(a.relationships.iter().any(|r| r.cardinality
            == Cardinality::ManyToMany {
                via: "film_category".into()
            }));
        // film_actor's two keys are not also reported as plain one-to-many relationships.
        assert!(!a.relationships.iter().any(|r| r.to == "film_actor"));
    }
}

#[test]
fn pagila_queries_are_analyzed_or_explained() {
    let a = load_and_analyze(
        &["fixtures/corpora/pagila/pagila-schema.sql"],
        &["fixtures/corpora/pagila/queries.sql"],
        Format::Sql,
    );
    assert_eq!(a.workload.patterns.len(), 17);
    let mut unmodeled = 0;
    for p in &a.workload.patterns {
        match &p.analysis.unmodeled {
            Some(reason) => {
                unmodeled += 1;
                assert!(!reason.is_empty());
                assert!(a
                    .diagnostics
                    .iter()
                    .any(|d| d.message.starts_with(&format!("{}: not modelled", p.id))));
            }
            None => assert!(!p.analysis.tables.is_empty(), "{}: {}", p.id, p.sql),
        }
    }
    assert!(
        unmodeled < a.workload.patterns.len() / 2,
        "{unmodeled} unmodelled"
    );
}
