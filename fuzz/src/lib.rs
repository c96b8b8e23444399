//! The bodies of remodel's fuzz targets, one function per target of `fuzz/fuzz_targets/` (each
//! target is one line that calls its function here).
//!
//! The fuzz targets build with cargo-fuzz on nightly, outside the workspace; this file is also
//! compiled into the workspace's stable test suite (`crates/sql/tests/fuzz_regressions.rs`
//! includes it), which runs every function over the seeds and the inputs that once broke a target
//! (`fixtures/fuzz/<target>/`). So a change of the front end's API breaks `cargo test`, not only a
//! fuzz build nobody runs, and the properties checked here are the ones fuzzing checks.

use remodel_sql::normalize::{example, literal_mask, shape, shape_checked};
use remodel_sql::split::{split_reader, split_statements, StreamItem};
use remodel_sql::workload::{read_str, Format};

/// The function a fuzz target runs on one input.
pub type Target = fn(&[u8]);

/// Every target: its name (the file `fuzz/fuzz_targets/<name>.rs` and the folder
/// `fixtures/fuzz/<name>/`) and the function it runs.
pub const TARGETS: &[(&str, Target)] = &[
    ("split", split),
    ("ddl", ddl),
    ("workload_sql", workload_sql),
    ("workload_pglog", workload_pglog),
    ("workload_csvlog", workload_csvlog),
    ("workload_jsonlog", workload_jsonlog),
    ("workload_pgss", workload_pgss),
    ("normalize", normalize),
    ("plan_json", plan_json),
];

/// The statement splitter, on text and on a stream with a tiny size limit (oversized statements
/// and comments are skipped across reads): no panic, and a stream within the limit gives the same
/// statements as the whole text.
pub fn split(data: &[u8]) {
    let mut streamed = Vec::new();
    split_reader(data, 1 << 20, |item| {
        if let StreamItem::Chunk(c) = item {
            streamed.push((c.text.to_string(), c.line, c.column, c.offset));
        }
    })
    .expect("reading from memory cannot fail");
    split_reader(data, 48, |_| {}).expect("reading from memory cannot fail");
    if let Ok(text) = std::str::from_utf8(data) {
        let whole: Vec<_> = split_statements(text)
            .into_iter()
            .map(|c| (c.text.to_string(), c.line, c.column, c.offset))
            .collect();
        assert_eq!(streamed, whole, "the stream and the whole text split apart");
    }
}

/// The DDL front end on any text: never panics, always returns a schema and diagnostics.
pub fn ddl(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let _load = remodel_sql::ddl::load_str("fuzz.sql", &text);
}

/// A workload reader on any text: never panics (what it cannot read it counts as skipped).
fn workload(data: &[u8], format: Format) {
    let text = String::from_utf8_lossy(data);
    // An `Err` (an unreadable input) is an answer too; only a panic fails.
    let _load = read_str("fuzz", &text, format);
}

/// The SQL-file workload reader.
pub fn workload_sql(data: &[u8]) {
    workload(data, Format::Sql);
}

/// The Postgres stderr-log workload reader.
pub fn workload_pglog(data: &[u8]) {
    workload(data, Format::PgLog);
}

/// The csvlog workload reader.
pub fn workload_csvlog(data: &[u8]) {
    workload(data, Format::Csvlog);
}

/// The jsonlog workload reader.
pub fn workload_jsonlog(data: &[u8]) {
    workload(data, Format::Jsonlog);
}

/// The `pg_stat_statements` CSV workload reader.
pub fn workload_pgss(data: &[u8]) {
    workload(data, Format::Pgss);
}

/// Normalization and fingerprints: never panic; the canonical form is a fixed point (normalizing
/// it again gives the same text and fingerprint); an example is an instance of its shape.
pub fn normalize(data: &[u8]) {
    let Ok(sql) = std::str::from_utf8(data) else {
        return;
    };
    let mut mask = String::new();
    let _masked = literal_mask(sql, &mut mask);
    let _normalized = remodel_sql::normalize::normalize(sql);
    let Ok((s, _)) = shape_checked(sql) else {
        return;
    };
    if let Ok(again) = shape(&s.sql) {
        assert_eq!(
            again.sql, s.sql,
            "normalizing the canonical form changed it"
        );
        assert_eq!(again.fingerprint, s.fingerprint);
    }
    if let Ok(ex) = example(sql, &[]) {
        if let Ok(of_example) = shape(&ex) {
            assert_eq!(
                of_example.sql, s.sql,
                "the example is not an instance of its shape"
            );
        }
    }
}

/// Loading `plan.json`: any bytes give a plan or an error, never a panic; a plan that loads
/// writes back to JSON that loads to the same plan.
pub fn plan_json(data: &[u8]) {
    if let Ok(plan) = serde_json::from_slice::<remodel_model::Plan>(data) {
        let json = serde_json::to_string(&plan).expect("a loaded plan serializes");
        let again: remodel_model::Plan = serde_json::from_str(&json).expect("a written plan loads");
        assert_eq!(again, plan, "a plan changed through JSON");
    }
}
