//! The chapters, in reading order. Each module renders one chapter from the shared [`Ctx`].
//!
//! To add a chapter: a module with a `render(ctx, book)` that calls `book.page(…)`, and one line
//! in [`render`].

mod checklist;
mod cost;
mod mapping;
mod overview;
mod patterns;
mod relationships;
mod replay;
mod run;
mod runbook;
mod schema;
mod sessions;
mod tables;
mod writes;

use crate::book::Book;
use crate::md;
use crate::ReportInput;
use remodel_model::{AccessPattern, DesignTable, Plan, QueryMapping, WritePath};
use std::collections::BTreeMap;

/// File names of the top-level chapters (links between chapters use them).
pub(crate) const OVERVIEW: &str = "overview.md";
pub(crate) const SCHEMA: &str = "source-schema.md";
pub(crate) const PATTERNS: &str = "access-patterns.md";
pub(crate) const RELATIONSHIPS: &str = "relationships.md";
pub(crate) const TABLES: &str = "tables.md";
pub(crate) const MAPPING: &str = "query-mapping.md";
pub(crate) const WRITES: &str = "write-paths.md";
pub(crate) const SESSIONS: &str = "sessions.md";
pub(crate) const COST: &str = "cost.md";
pub(crate) const REPLAY: &str = "replay.md";
pub(crate) const RUN: &str = "backfill.md";
pub(crate) const RUNBOOK: &str = "runbook.md";

/// Limits partition estimates are judged against: the designer's default warning thresholds
/// (`DesignConfig::thresholds`), which follow Cassandra's guidance. `plan.json` does not record
/// the thresholds a plan was made with, so the report states these.
pub(crate) const PARTITION_BYTES_LIMIT: f64 = 100.0 * 1024.0 * 1024.0;
/// See [`PARTITION_BYTES_LIMIT`].
pub(crate) const PARTITION_ROWS_LIMIT: f64 = 100_000.0;

/// Renders every chapter.
pub(crate) fn render(input: &ReportInput) -> Book {
    let ctx = Ctx::new(input);
    let mut book = Book::new(format!(
        "Migration report: {}",
        input.plan.design.keyspace.name
    ));
    overview::render(&ctx, &mut book);
    schema::render(&ctx, &mut book);
    patterns::render(&ctx, &mut book);
    relationships::render(&ctx, &mut book);
    tables::render(&ctx, &mut book);
    mapping::render(&ctx, &mut book);
    writes::render(&ctx, &mut book);
    sessions::render(&ctx, &mut book);
    cost::render(&ctx, &mut book);
    if let Some(replay) = input.replay {
        replay::render(&ctx, replay, &mut book);
    }
    if let Some(run) = input.run {
        run::render(&ctx, run, &mut book);
    }
    runbook::render(&ctx, &mut book);
    book
}

/// What every chapter needs: the input and indexes over the plan.
pub(crate) struct Ctx<'a> {
    /// The input.
    pub input: &'a ReportInput<'a>,
    /// The plan.
    pub plan: &'a Plan,
    /// Sum of calls over all patterns.
    pub total_calls: u64,
    /// Patterns, heaviest first (ties in plan order).
    pub ranked: Vec<&'a AccessPattern>,
    queries: BTreeMap<&'a str, &'a QueryMapping>,
    writes: BTreeMap<&'a str, &'a WritePath>,
}

impl<'a> Ctx<'a> {
    fn new(input: &'a ReportInput<'a>) -> Self {
        let plan = input.plan;
        let mut ranked: Vec<&AccessPattern> = plan.workload.patterns.iter().collect();
        // A stable sort keeps plan order among equal call counts: deterministic.
        ranked.sort_by_key(|p| std::cmp::Reverse(p.calls));
        Ctx {
            input,
            plan,
            total_calls: plan.workload.total_calls(),
            ranked,
            queries: plan
                .design
                .queries
                .iter()
                .map(|q| (q.pattern.as_str(), q))
                .collect(),
            writes: plan
                .design
                .writes
                .iter()
                .map(|w| (w.pattern.as_str(), w))
                .collect(),
        }
    }

    /// A pattern by id.
    pub fn pattern(&self, id: &str) -> Option<&'a AccessPattern> {
        self.plan.workload.pattern(id)
    }

    /// How a read is served.
    pub fn query(&self, id: &str) -> Option<&'a QueryMapping> {
        self.queries.get(id).copied()
    }

    /// How a write is applied.
    pub fn write(&self, id: &str) -> Option<&'a WritePath> {
        self.writes.get(id).copied()
    }

    /// A designed table by name.
    pub fn table(&self, name: &str) -> Option<&'a DesignTable> {
        self.plan.design.tables.iter().find(|t| t.name == name)
    }

    /// A pattern's share of all calls.
    pub fn share(&self, p: &AccessPattern) -> f64 {
        md::share(p.calls, self.total_calls)
    }

    /// Calls of the read patterns, and of those served from one partition.
    pub fn read_calls(&self) -> (u64, u64) {
        let mut all = 0;
        let mut single = 0;
        for p in self
            .plan
            .workload
            .patterns
            .iter()
            .filter(|p| !p.kind.is_write())
        {
            all += p.calls;
            if self.query(&p.id).is_some_and(|q| q.single_partition) {
                single += p.calls;
            }
        }
        (all, single)
    }
}

/// `../` for a page `depth` folders below `src/`.
pub(crate) fn up(depth: usize) -> String {
    "../".repeat(depth)
}

/// A link to a pattern's section in the access-patterns chapter.
pub(crate) fn pattern_link(id: &str, depth: usize) -> String {
    format!(
        "[{}]({}{PATTERNS}#{})",
        md::text(id),
        up(depth),
        md::anchor(id)
    )
}

/// A link to a pattern's entry in the query-mapping chapter.
pub(crate) fn mapping_link(id: &str, depth: usize, text: &str) -> String {
    format!("[{text}]({}{MAPPING}#{})", up(depth), md::anchor(id))
}

/// The page of a designed table, relative to `src/`.
pub(crate) fn table_page(name: &str) -> String {
    format!("tables/{}.md", md::file_stem(name))
}

/// A link to a designed table's page.
pub(crate) fn table_link(name: &str, depth: usize) -> String {
    format!("[{}]({}{})", md::text(name), up(depth), table_page(name))
}

/// A short description of a pattern: its label, else its SQL cut to a line.
pub(crate) fn describe(p: &AccessPattern) -> String {
    match &p.label {
        Some(l) if !l.trim().is_empty() => l.trim().to_string(),
        _ => {
            let sql: String = p.sql.chars().take(80).collect();
            if sql.len() < p.sql.len() {
                format!("{sql}…")
            } else {
                sql
            }
        }
    }
}

/// What each `?` takes, as inline code: `` `city=$1`, `trip_date=day($2)` ``.
pub(crate) fn binds(binds: &[remodel_model::Bind]) -> String {
    let items: Vec<String> = binds.iter().map(|b| md::code(&b.to_string())).collect();
    md::list_or_dash(&items)
}

/// The tables a write reaches, each once, in statement order.
pub(crate) fn write_tables(w: &WritePath) -> Vec<&str> {
    let mut tables: Vec<&str> = Vec::new();
    for t in &w.targets {
        if !tables.contains(&t.table.as_str()) {
            tables.push(&t.table);
        }
    }
    tables
}

/// The anchor and heading of a pattern's entry in a chapter: `## q1 SELECT: what it does`.
pub(crate) fn pattern_heading(p: &AccessPattern) -> String {
    format!(
        "{}## {} {}: {}\n\n",
        md::target(&p.id),
        md::text(&p.id),
        kind(p),
        md::text(&describe(p))
    )
}

/// `select`, `insert`, … in upper case.
pub(crate) fn kind(p: &AccessPattern) -> &'static str {
    match p.kind {
        remodel_model::StatementKind::Select => "SELECT",
        remodel_model::StatementKind::Insert => "INSERT",
        remodel_model::StatementKind::Update => "UPDATE",
        remodel_model::StatementKind::Delete => "DELETE",
    }
}
