//! Relationships: 1-1 / 1-N / M-N, embed or reference or copy columns, and the evidence.

use super::{mapping_link, pattern_link, Ctx, COST, RELATIONSHIPS};
use crate::book::Book;
use crate::md;
use remodel_model::{Cardinality, Decision, Relationship};
use std::fmt::Write;

/// Renders `relationships.md`.
pub(super) fn render(ctx: &Ctx, book: &mut Book) {
    let rels = &ctx.plan.relationships;
    let mut s = String::from("# Relationships\n\n");
    if rels.is_empty() {
        s.push_str("No foreign key, declared or inferred, links two tables of the workload.\n");
        book.page(RELATIONSHIPS, "Relationships", 0, s);
        return;
    }
    let _ = writeln!(
        s,
        "For each foreign key the design decides how the related rows are placed: **embed** them \
         in the reader's rows, keep a **reference** (its own table, read by key), or **copy a few \
         columns** of the parent into the child rows. Where a read could either copy the \
         parent's columns or read the parent by key, the designer weighed both on the workload \
         and the decision is **by cost**, with its numbers quoted. The others follow the \
         analyzer's rules on the numbers below: how often both sides are read together, how many \
         attributes, and whether the number of children per parent is bounded.\n"
    );
    let rows: Vec<Vec<String>> = rels
        .iter()
        .map(|r| {
            vec![
                format!("[{}](#{})", md::text(&title(r)), md::anchor(&id(r))),
                cardinality(&r.cardinality),
                decision(r.decision).into(),
                md::percent(r.rationale.co_access_share),
                if by_cost(r) {
                    "**cost**".into()
                } else {
                    format!("rule: {}", md::cell(&r.rationale.rule))
                },
            ]
        })
        .collect();
    s.push_str(&md::table(
        &[
            "relationship",
            "cardinality",
            "decision",
            "read together",
            "decided by",
        ],
        &rows,
    ));
    s.push('\n');
    for r in rels {
        s.push_str(&section(ctx, r));
    }
    book.page(RELATIONSHIPS, "Relationships", 0, s);
}

/// Where the ways behind a decision by cost are laid out: the reads of both sides that weighed
/// more than one way, and the cost chapter.
fn weighed(ctx: &Ctx, r: &Relationship) -> String {
    let reads: Vec<String> = r
        .rationale
        .co_access_patterns
        .iter()
        .filter(|p| ctx.query(p).is_some_and(|q| q.candidates.len() > 1))
        .map(|p| mapping_link(p, 0, &md::text(p)))
        .collect();
    let mut s = String::new();
    if !reads.is_empty() {
        let _ = write!(
            s,
            "The ways weighed, with their costs: {} in the query mapping. ",
            reads.join(", ")
        );
    }
    if ctx.plan.design.cost.is_some() {
        let _ = write!(s, "The whole design's cost: [Cost]({COST}).");
    }
    if !s.is_empty() {
        s = format!("{}\n\n", s.trim_end());
    }
    s
}

fn id(r: &Relationship) -> String {
    format!("rel-{}-{}-{}", r.from, r.to, r.columns.join("-"))
}

fn title(r: &Relationship) -> String {
    format!("{} → {} ({})", r.from, r.to, r.columns.join(", "))
}

fn cardinality(c: &Cardinality) -> String {
    match c {
        Cardinality::OneToOne => "1-1".into(),
        Cardinality::OneToMany => "1-N".into(),
        Cardinality::ManyToMany { via } => format!("M-N via {}", md::code(via)),
    }
}

fn decision(d: Decision) -> &'static str {
    match d {
        Decision::Embed => "embed",
        Decision::Reference => "reference",
        Decision::DuplicateColumns => "copy columns",
    }
}

/// True when the designer's costs made the decision (not one of the analyzer's rules).
fn by_cost(r: &Relationship) -> bool {
    r.rationale.rule == "by cost"
}

fn section(ctx: &Ctx, r: &Relationship) -> String {
    let mut s = md::target(&id(r));
    let _ = writeln!(s, "## {}\n", md::text(&title(r)));
    if by_cost(r) {
        let _ = writeln!(
            s,
            "**{}** ({}), decided **by cost** on this workload's numbers:\n\n> {}\n",
            decision(r.decision),
            cardinality(&r.cardinality),
            md::text(&r.rationale.text)
        );
        s.push_str(&weighed(ctx, r));
    } else {
        let _ = writeln!(
            s,
            "**{}** ({}), by the rule *{}*.\n",
            decision(r.decision),
            cardinality(&r.cardinality),
            md::text(&r.rationale.rule)
        );
        let _ = writeln!(s, "{}\n", md::text(&r.rationale.text));
    }
    let x = &r.rationale;
    let mut facts = vec![
        // A key the schema does not declare is as good as what it was found by: the data's
        // inclusion test (sample, share found), the workload's joins or the names.
        vec![
            "foreign key".into(),
            match &x.key_evidence {
                Some(e) => format!("not declared; found by {}", md::cell(e)),
                None => "declared in the schema".into(),
            },
        ],
        vec![
            "attributes on the embedded side".into(),
            x.attribute_count.to_string(),
        ],
        vec![
            "share of reads that read both sides".into(),
            md::percent(x.co_access_share),
        ],
        vec![
            "children per parent bounded".into(),
            match x.bounded {
                Some(true) => "yes".into(),
                Some(false) => "no".into(),
                None => "unknown".into(),
            },
        ],
    ];
    if let Some(n) = x.fanout {
        facts.push(vec!["children per parent (N)".into(), format!("{n:.1}")]);
    }
    if !x.columns.is_empty() {
        facts.push(vec![
            "columns copied".into(),
            md::cell(&x.columns.join(", ")),
        ]);
    }
    if !x.co_access_patterns.is_empty() {
        let links: Vec<String> = x
            .co_access_patterns
            .iter()
            .map(|p| pattern_link(p, 0))
            .collect();
        facts.push(vec!["read together by".into(), links.join(", ")]);
    }
    s.push_str(&md::table(&["evidence", "value"], &facts));
    s.push('\n');
    s
}
