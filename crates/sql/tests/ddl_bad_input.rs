//! Bad input never stops a load: the broken statement is reported at its file:line:column with
//! what the parser expected, and the rest still loads. Garbage and empty files get one clear
//! diagnostic.

use remodel_model::Severity;
use remodel_sql::ddl::{load_files, load_str};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/ddl")
        .join(name)
}

#[test]
fn syntax_error_in_third_of_five_tables() {
    let path = fixture("five-tables-third-bad.sql");
    let l = load_files(&[&path]).expect("readable");
    let errors: Vec<_> = l.errors().collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    let loc = errors[0].location.as_ref().expect("located");
    assert_eq!(loc.file, path.display().to_string());
    // `stars` on line 16, column 5: where the missing comma should have been.
    assert_eq!((loc.line, loc.column), (16, 5), "{}", errors[0]);
    assert!(
        errors[0].message.contains("Expected"),
        "{}",
        errors[0].message
    );
    assert!(
        errors[0].message.contains("found: stars"),
        "{}",
        errors[0].message
    );
    let names: Vec<&str> = l.schema.tables.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["authors", "books", "shelves", "shelf_books"]);
    // The FK without a column list resolved to books' primary key.
    let sb = l.schema.table("shelf_books").expect("shelf_books");
    assert_eq!(sb.primary_key, ["shelf_id", "book_id"]);
    assert!(sb
        .foreign_keys
        .iter()
        .any(|fk| fk.ref_table == "books" && fk.ref_columns == ["id"]));
    assert!(l
        .schema
        .skipped
        .iter()
        .any(|s| s.kind == "unparsed (error)" && s.count == 1));
}

#[test]
fn error_on_first_line_of_an_indented_statement_adds_its_column() {
    let l = load_str("x.sql", "SELECT 1;   CREATE TABLE t (a int b int);");
    let e = l.errors().next().expect("an error");
    let loc = e.location.as_ref().expect("located");
    // The statement starts at column 13; `b` is its 23rd character, so column 13 + 22 = 35.
    assert_eq!((loc.line, loc.column), (1, 35), "{e}");
    assert_eq!(e.to_string().split(": error: ").next(), Some("x.sql:1:35"));
}

#[test]
fn binary_garbage_is_one_clear_error() {
    let path = fixture("garbage.bin");
    let l = load_files(&[&path]).expect("readable");
    assert!(l.schema.tables.is_empty());
    let errors: Vec<_> = l.errors().collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].message.contains("not SQL text"), "{}", errors[0]);
    assert_eq!(
        errors[0].location.as_ref().map(|l| (l.line, l.column)),
        Some((1, 1))
    );
}

#[test]
fn empty_file_is_reported() {
    let l = load_files(&[fixture("empty.sql")]).expect("readable");
    assert!(l.schema.tables.is_empty());
    assert_eq!(l.diagnostics.len(), 1);
    assert_eq!(l.diagnostics[0].severity, Severity::Warning);
    assert!(
        l.diagnostics[0].message.contains("no SQL statements"),
        "{}",
        l.diagnostics[0]
    );
    let only_comments = load_str("c.sql", "-- nothing here\n/* at all */\n");
    assert!(only_comments.diagnostics[0]
        .message
        .contains("no SQL statements"));
}

#[test]
fn invalid_utf8_is_replaced_and_reported() {
    let l = load_files(&[fixture("latin1.sql")]).expect("readable");
    assert_eq!(l.schema.tables.len(), 2);
    let w = l
        .diagnostics
        .iter()
        .find(|d| d.message.contains("not valid UTF-8"))
        .expect("a warning");
    assert_eq!(w.severity, Severity::Warning);
    // The first invalid byte is the Latin-1 `é` of "-- Café" on line 1, column 7.
    assert_eq!(
        w.location.as_ref().map(|l| (l.line, l.column)),
        Some((1, 7))
    );
    // The quoted reference matches the replaced table name, so the FK still resolves.
    let menus = l.schema.table("menus").expect("menus");
    assert_eq!(menus.foreign_keys[0].ref_columns, ["id"]);
}

#[test]
fn missing_file_is_an_io_error() {
    let err = load_files(&[fixture("no-such-file.sql")]).expect_err("missing");
    assert!(err.to_string().contains("no-such-file.sql"), "{err}");
}

#[test]
fn unknown_statements_and_references_are_reported() {
    let src = "CREATE TABLE a (id int PRIMARY KEY);\n\
               frobnicate the database;\n\
               ALTER TABLE nowhere ADD CONSTRAINT c PRIMARY KEY (id);\n\
               CREATE TABLE b (a_id int REFERENCES missing);\n\
               CREATE TABLE c (id int";
    let l = load_str("u.sql", src);
    let text: Vec<String> = l.diagnostics.iter().map(ToString::to_string).collect();
    assert!(
        text.iter()
            .any(|d| d.starts_with("u.sql:2:1: error: cannot parse statement")),
        "{text:#?}"
    );
    assert!(
        text.iter()
            .any(|d| d.starts_with("u.sql:3:1: warning: ALTER TABLE on unknown table `nowhere`")),
        "{text:#?}"
    );
    assert!(
        text.iter()
            .any(|d| d.contains("references `missing`, which is not defined")),
        "{text:#?}"
    );
    assert!(
        text.iter()
            .any(|d| d.starts_with("u.sql:5:1: warning: statement not terminated")),
        "{text:#?}"
    );
    assert_eq!(
        l.schema.tables.len(),
        2,
        "the unterminated, incomplete table is an error, not a table"
    );
}

#[test]
fn pg_dump_shapes_sqlparser_rejects_are_understood() {
    let src = r#"
\restrict abc
CREATE TABLE public.t (id integer NOT NULL, "Name" text, v int GENERATED ALWAYS AS (id * 2) VIRTUAL);
ALTER TABLE public.t ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.t_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);
CREATE TYPE public.mood AS ENUM ('sad', 'ok');
ALTER TYPE public.mood OWNER TO postgres;
CREATE TABLE public.p (id integer, at date) PARTITION BY RANGE (at);
CREATE TABLE public.p_2024 (id integer, at date);
ALTER TABLE ONLY public.p ATTACH PARTITION public.p_2024 FOR VALUES FROM ('2024-01-01') TO ('2025-01-01');
CREATE INDEX p_at_idx ON ONLY public.p USING btree (at);
CREATE INDEX p_2024_at_idx ON public.p_2024 USING btree (at);
ALTER INDEX public.p_at_idx ATTACH PARTITION public.p_2024_at_idx;
CREATE MATERIALIZED VIEW public.mv AS SELECT 1 AS one WITH NO DATA;
CREATE UNIQUE INDEX mv_idx ON public.mv (one);
CREATE TABLE Public.Child (extra text) INHERITS (public.t);
\unrestrict abc
"#;
    let l = load_str("d.sql", src);
    let errors: Vec<String> = l.errors().map(ToString::to_string).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let t = l.schema.table("public.t").expect("t");
    assert_eq!(
        t.column("id").and_then(|c| c.identity),
        Some(remodel_model::Identity::ByDefault)
    );
    assert_eq!(
        t.columns[1].name, "Name",
        "quoted identifiers keep their case"
    );
    assert_eq!(
        t.column("v").and_then(|c| c.generated.clone()).as_deref(),
        Some("id * 2")
    );
    let p = l.schema.table("public.p").expect("p");
    assert_eq!(p.partitions, ["public.p_2024"]);
    assert_eq!(p.indexes.len(), 1);
    let child = l
        .schema
        .table("child")
        .expect("unquoted names fold to lower case");
    assert_eq!(child.schema.as_deref(), Some("public"));
    assert_eq!(child.inherits, ["public.t"]);
    assert_eq!(l.schema.tables.len(), 3, "t, p, child");
    let kinds: Vec<(&str, u64)> = l
        .schema
        .skipped
        .iter()
        .map(|s| (s.kind.as_str(), s.count))
        .collect();
    assert_eq!(
        kinds,
        [
            ("psql meta-command", 2),
            ("ALTER … OWNER TO", 1),
            ("ALTER INDEX", 1),
            ("CREATE MATERIALIZED VIEW", 1),
            ("CREATE INDEX (on a materialized view)", 1),
        ]
    );
}
