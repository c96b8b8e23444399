//! The name of each pattern's function in a generated access layer (`design.queries[].function`,
//! `design.writes[].function`), decided once when the plan is made so every language, the report
//! and any other program use the same names.
//!
//! A function is named by the pattern's `name` (a sqlc-style `-- name: TripsOfDriver :many`
//! annotation of the workload file) when it has one, else from its table and predicate:
//! `trips_by_driver_id`, `count_likes_by_post_id`, `insert_trips`, `update_trips_status_by_trip_id`.
//! Names that would collide all take `q` and the first eight hex digits of their statement's
//! fingerprint (`trips_by_driver_id_q3f2a9c01`), so a name depends on the statements only, never
//! on their order nor on the other statements of the workload: stable across runs, and across
//! edits of the workload that keep the statement.

use remodel_model::text::snake;
use remodel_model::{AccessPattern, Design, StatementKind, Workload};
use std::collections::{BTreeMap, BTreeSet};

/// Names the function of every read and write of `design` that is not one-off.
pub fn name(design: &mut Design, workload: &Workload) {
    let base = |id: &str| workload.pattern(id).map(base_name);
    let mut count: BTreeMap<String, usize> = BTreeMap::new();
    let reads = design.queries.iter().filter(|q| !q.one_off);
    let writes = design.writes.iter().filter(|w| !w.one_off);
    for id in reads
        .map(|q| q.pattern.as_str())
        .chain(writes.map(|w| w.pattern.as_str()))
    {
        if let Some(n) = base(id) {
            *count.entry(n).or_default() += 1;
        }
    }
    let mut taken: BTreeSet<String> = BTreeSet::new();
    let mut named = |id: &str| {
        let p = workload.pattern(id)?;
        let n = base_name(p);
        if count.get(&n).copied().unwrap_or(0) < 2 {
            return Some(n);
        }
        // The fingerprint, not the id (a SQL file's `q3` is its place in the file), so adding
        // a statement renames no other function; the whole one in the unlikely case its first
        // eight digits are another's.
        let short = p.fingerprint.get(..8).unwrap_or(&p.fingerprint);
        let mut name = format!("{n}_q{short}");
        if !taken.insert(name.clone()) {
            name = format!("{n}_q{}", p.fingerprint);
            taken.insert(name.clone());
        }
        Some(name)
    };
    for q in design.queries.iter_mut() {
        q.function = if q.one_off { None } else { named(&q.pattern) };
    }
    for w in design.writes.iter_mut() {
        w.function = if w.one_off { None } else { named(&w.pattern) };
    }
}

/// The name a pattern's function takes before collisions are settled.
fn base_name(p: &AccessPattern) -> String {
    if let Some(n) = &p.name {
        return snake(n);
    }
    let a = &p.analysis;
    let table = a
        .write
        .as_ref()
        .map(|w| w.table.as_str())
        .or(a.tables.first().map(String::as_str))
        .unwrap_or("rows");
    let table = snake(table);
    let by = |cols: Vec<String>| -> String {
        if cols.is_empty() {
            String::new()
        } else {
            format!("_by_{}", cols.join("_and_"))
        }
    };
    let mut keys: Vec<String> = Vec::new();
    for c in a
        .equality
        .iter()
        .map(|e| &e.column)
        .chain(a.ranges.iter().map(|r| &r.column))
    {
        let c = snake(&c.column);
        if !keys.contains(&c) {
            keys.push(c);
        }
    }
    match p.kind {
        StatementKind::Select => {
            let verb = a
                .aggregates
                .first()
                .map(|g| format!("{}_", snake(&g.function)))
                .unwrap_or_default();
            let all = if keys.is_empty() { "all_" } else { "" };
            format!("{verb}{all}{table}{}", by(keys))
        }
        StatementKind::Insert => {
            let upsert = a.write.as_ref().is_some_and(|w| w.on_conflict);
            format!("{}_{table}", if upsert { "upsert" } else { "insert" })
        }
        StatementKind::Update => {
            let set: Vec<String> = a
                .write
                .as_ref()
                .map(|w| w.columns_written.iter().map(|c| snake(c)).collect())
                .unwrap_or_default();
            let set = match set.len() {
                0 => String::new(),
                1..=3 => format!("_{}", set.join("_and_")),
                _ => format!("_{}_etc", set[..3].join("_and_")),
            };
            format!("update_{table}{set}{}", by(keys))
        }
        StatementKind::Delete => format!("delete_{table}{}", by(keys)),
    }
}
