//! The catalog reader and the DDL front end agree: each corpus schema is loaded into a fresh
//! Postgres schema, read back from `pg_catalog`, and compared with what the DDL front end reads
//! from the same file.
//!
//! The comparison is exact after these normalisations, each because the catalog cannot know
//! what the DDL wrote (or the DDL what Postgres made of it):
//! - source locations and the DDL's counts of statements not modelled (`skipped`) are dropped;
//! - schema qualifiers are dropped on both sides (the test loads into a schema of its own, the
//!   pg_dump corpora write `public.`);
//! - schema qualifiers in types, expressions and the partition names of a key inferred from
//!   its partitions (`public.mpaa_rating`, `nextval('public.film_film_id_seq'::regclass)`)
//!   are dropped from the DDL's side: the
//!   catalog prints them relative to its search path, the test's schema;
//! - types: the DDL's spelling is mapped to Postgres's canonical name by [`canonical_type`]
//!   (`int` → `integer`, `varchar(10)` → `character varying(10)`, `timestamptz` →
//!   `timestamp with time zone`);
//! - expressions (defaults, generated columns, index predicates and expression keys, partition
//!   keys) are compared by [`canonical_expr`]: Postgres prints the parsed form with explicit
//!   casts (`'active'::account_status`) and parentheses;
//! - constraint names are compared where the DDL wrote one (Postgres generates the others);
//! - an index without `USING` is a `btree` index, and `DEFAULT NULL` is no default;
//! - a column written `serial` has, in the catalog, the default `nextval(…)` and a sequence
//!   owned by it that the DDL does not spell out: both are dropped from the catalog's side.

use remodel_catalog::{schema, Options, Source};
use remodel_model::{IndexKey, Schema};
use remodel_testdb::PgSchema;

fn repo(path: &str) -> String {
    format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"))
}

/// Postgres's canonical name of a type as the DDL may spell it.
fn canonical_type(t: &str) -> String {
    let t = t.trim().to_lowercase();
    if let Some(elem) = t.strip_suffix("[]") {
        return format!("{}[]", canonical_type(elem));
    }
    let (base, modifier) = match t.find('(') {
        Some(i) => (t[..i].trim().to_string(), t[i..].replace(' ', "")),
        None => (t.clone(), String::new()),
    };
    let base = match base.as_str() {
        "int" | "int4" => "integer",
        "int2" => "smallint",
        "int8" => "bigint",
        "float8" | "float" => "double precision",
        "float4" => "real",
        "bool" => "boolean",
        "decimal" => "numeric",
        "varchar" => "character varying",
        "char" | "bpchar" => "character",
        "timestamptz" => "timestamp with time zone",
        "timestamp" => "timestamp without time zone",
        "timetz" => "time with time zone",
        "time" => "time without time zone",
        other => other,
    };
    // `char` without a length is `character(1)`.
    if base == "character" && modifier.is_empty() {
        return "character(1)".into();
    }
    format!("{base}{modifier}")
}

/// An expression with casts of literals, redundant parentheses, quotes of plain identifiers and
/// case removed: `('active'::account_status)` and `'active'` compare equal.
fn canonical_expr(e: &str) -> String {
    let mut s = e.to_lowercase();
    // `'x'::type` and `(expr)::type` casts that Postgres adds to literals and columns.
    while let Some(i) = s.find("::") {
        let end = s[i + 2..]
            .find(|c: char| {
                !(c.is_alphanumeric()
                    || c == '_'
                    || c == ' '
                    || c == '.'
                    || c == '"'
                    || c == '['
                    || c == ']')
            })
            .map_or(s.len(), |j| i + 2 + j);
        // `character varying(200)`: a type modifier belongs to the cast.
        let end = if s[end..].starts_with('(') {
            s[end..].find(')').map_or(end, |j| end + j + 1)
        } else {
            end
        };
        s.replace_range(i..end, "");
    }
    s.retain(|c| !matches!(c, '(' | ')' | '"' | ' '));
    s
}

/// The DDL's schema, normalised.
fn normal_ddl(mut s: Schema) -> Schema {
    for t in &mut s.tables {
        // The catalog prints names in expressions and types relative to its search path (the
        // test's schema): `public.mpaa_rating` and `'public.film_film_id_seq'::regclass` read
        // back bare.
        let qualifier = t.schema.as_ref().map(|q| format!("{q}."));
        let bare = |text: &str| match &qualifier {
            Some(q) => text.replace(q.as_str(), ""),
            None => text.to_string(),
        };
        for c in &mut t.columns {
            c.sql_type = canonical_type(&bare(&c.sql_type));
            c.domain = c.domain.as_deref().map(bare);
            c.default = c.default.as_deref().map(bare);
            c.generated = c.generated.as_deref().map(bare);
            // `DEFAULT NULL` is no default: Postgres stores none.
            if c.default
                .as_deref()
                .is_some_and(|d| d.eq_ignore_ascii_case("null"))
            {
                c.default = None;
            }
        }
        for f in &mut t.foreign_keys {
            // A key found on partitions names them.
            if let remodel_model::FkOrigin::Inferred { evidence } = &mut f.origin {
                *evidence = bare(evidence);
            }
        }
        for i in &mut t.indexes {
            i.method.get_or_insert_with(|| "btree".into());
        }
    }
    // Domains are named as the tables are (the catalog relative to the schemas it reads).
    let qualifiers: Vec<String> = s.tables.iter().filter_map(|t| t.schema.clone()).collect();
    let bare = |text: &str| {
        qualifiers
            .iter()
            .fold(text.to_string(), |t, q| t.replace(&format!("{q}."), ""))
    };
    for d in &mut s.domains {
        d.name = bare(&d.name);
        d.base = canonical_type(&bare(&d.base));
    }
    for f in &mut s.functions {
        f.name = bare(&f.name);
    }
    common(s)
}

/// The catalog's schema, normalised against the DDL's (`ddl` says which names were written).
fn normal_catalog(mut s: Schema, ddl: &Schema) -> Schema {
    // The database's default collation: the catalog knows it, a DDL file does not.
    assert!(
        s.collation.as_deref().is_some_and(|c| !c.is_empty()),
        "the database's collation"
    );
    s.collation = None;
    let mut serial_owned: Vec<String> = Vec::new();
    for t in &mut s.tables {
        let Some(dt) = ddl.table(&t.name) else {
            continue;
        };
        for c in &mut t.columns {
            let written_serial = dt.column(&c.name).is_some_and(|d| {
                d.identity == Some(remodel_model::Identity::Serial) && d.default.is_none()
            });
            if written_serial {
                c.default = None;
                serial_owned.push(format!("{}.{}", t.name, c.name));
            }
        }
        let named = |ddl_name: Option<&String>, name: &mut Option<String>| {
            if ddl_name.is_none() {
                *name = None;
            }
        };
        for (u, d) in t.unique_keys.iter_mut().zip(&dt.unique_keys) {
            named(d.name.as_ref(), &mut u.name);
        }
        for (f, d) in t.foreign_keys.iter_mut().zip(&dt.foreign_keys) {
            named(d.name.as_ref(), &mut f.name);
        }
    }
    // The stand-in for Postgres 18's `uuidv7()` is the test's, not the file's (see `pagila_for`).
    s.functions
        .retain(|f| f.name != "uuidv7" || ddl.functions.iter().any(|d| d.name.ends_with("uuidv7")));
    s.sequences.retain(|q| {
        !q.owned_by
            .as_deref()
            .is_some_and(|o| serial_owned.iter().any(|x| o.ends_with(x.as_str())))
    });
    common(s)
}

/// What both sides get: no locations, no skip counts, no schema qualifiers, canonical
/// expressions.
fn common(mut s: Schema) -> Schema {
    let bare = |n: &str| n.rsplit('.').next().unwrap_or(n).to_string();
    let bare_col = |n: &str| {
        let mut p: Vec<&str> = n.split('.').collect();
        let col = p.pop().unwrap_or_default();
        let table = p.pop().unwrap_or_default();
        format!("{table}.{col}")
    };
    s.skipped.clear();
    for t in &mut s.tables {
        t.location = None;
        t.schema = None;
        t.partitions = t.partitions.iter().map(|p| bare(p)).collect();
        t.inherits = t.inherits.iter().map(|p| bare(p)).collect();
        if let Some(p) = &mut t.partition_by {
            p.keys = p.keys.iter().map(|k| canonical_expr(k)).collect();
        }
        for c in &mut t.columns {
            c.location = None;
            // The typed forms are one function of these texts on both paths
            // (`remodel_sql::typed_expr::schema::fill_schema`): the texts are what is compared.
            c.default_expr = None;
            c.generated_expr = None;
            c.default = c.default.as_deref().map(canonical_expr);
            c.generated = c.generated.as_deref().map(canonical_expr);
        }
        for f in &mut t.foreign_keys {
            f.location = None;
            f.ref_table = bare(&f.ref_table);
        }
        for i in &mut t.indexes {
            i.location = None;
            i.predicate = i.predicate.as_deref().map(canonical_expr);
            for k in &mut i.keys {
                if let IndexKey::Expression { sql } = k {
                    *sql = canonical_expr(sql);
                }
            }
        }
    }
    for d in &mut s.domains {
        d.location = None;
    }
    for f in &mut s.functions {
        f.location = None;
    }
    for e in &mut s.enums {
        e.location = None;
        e.name = bare(&e.name);
    }
    for q in &mut s.sequences {
        q.location = None;
        q.name = bare(&q.name);
        q.owned_by = q.owned_by.as_deref().map(bare_col);
    }
    s
}

/// Loads `ddl_file` into a fresh schema, reads it back, compares; returns the table count.
async fn agree(label: &str, ddl_file: &str) -> usize {
    let text = std::fs::read_to_string(repo(ddl_file)).expect("corpus file");
    let pg = PgSchema::create(label).await.expect("test schema");
    pg.client()
        .batch_execute(&text)
        .await
        .unwrap_or_else(|e| panic!("loading {ddl_file}: {e:?}"));
    agree_loaded(pg, ddl_file, &text, &[]).await
}

/// Reads back the schema `pg` holds and compares it with the DDL front end's reading of `text`
/// (the file as published), less the tables in `not_loaded`; returns the table count.
async fn agree_loaded(pg: PgSchema, ddl_file: &str, text: &str, not_loaded: &[&str]) -> usize {
    let mut ddl = remodel_sql::ddl::load_str(ddl_file, text);
    let before = ddl.schema.tables.len();
    ddl.schema
        .tables
        .retain(|t| !not_loaded.contains(&t.name.as_str()));
    assert_eq!(
        before - ddl.schema.tables.len(),
        not_loaded.len(),
        "tables left out"
    );
    let url = remodel_testdb::pg_url().expect("REMODEL_PG_URL");
    let options = Options {
        schemas: vec![pg.name().to_string()],
        ..Options::default()
    };
    let src = Source::open(&url, "test", &options).await.expect("open");
    let read = schema::read(&src).await.expect("catalog read");
    src.close().await.expect("close");
    let want = normal_ddl(ddl.schema.clone());
    let got = normal_catalog(read.schema, &ddl.schema);
    let json = |s: &Schema| serde_json::to_string_pretty(s).expect("json");
    pretty_assertions_eq(&json(&want), &json(&got), ddl_file);
    pg.cleanup().await.expect("cleanup");
    want.tables.len()
}

/// Equality of two JSON texts, failing with the first differing lines.
fn pretty_assertions_eq(want: &str, got: &str, what: &str) {
    if want == got {
        return;
    }
    let w: Vec<&str> = want.lines().collect();
    let g: Vec<&str> = got.lines().collect();
    let first = w
        .iter()
        .zip(&g)
        .position(|(a, b)| a != b)
        .unwrap_or(w.len().min(g.len()));
    let from = first.saturating_sub(12);
    panic!(
        "{what}: the catalog's schema differs from the DDL's at line {first}\n--- DDL\n{}\n--- catalog\n{}",
        w[from..(first + 8).min(w.len())].join("\n"),
        g[from..(first + 8).min(g.len())].join("\n")
    );
}

#[tokio::test]
async fn rideshare_agrees() {
    remodel_testdb::live!(Postgres);
    assert_eq!(
        agree("cat_rideshare", "examples/rideshare/schema.sql").await,
        3
    );
}

#[tokio::test]
async fn tpcc_agrees() {
    remodel_testdb::live!(Postgres);
    assert_eq!(
        agree("cat_tpcc", "fixtures/corpora/tpcc/ddl-postgres.sql").await,
        9
    );
}

#[tokio::test]
async fn seats_agrees() {
    remodel_testdb::live!(Postgres);
    assert!(agree("cat_seats", "fixtures/corpora/seats/ddl-postgres.sql").await >= 8);
}

#[tokio::test]
async fn features_agree() {
    remodel_testdb::live!(Postgres);
    assert_eq!(
        agree("cat_features", "fixtures/catalog/features/schema.sql").await,
        4
    );
}

/// Why a statement of the pagila dump is not run on this server, if it is not.
///
/// The dump is made by `pg_dump` of Postgres 18 as the superuser `postgres`, into `public`;
/// the test loads it as an ordinary user into a schema of its own on Postgres 15. Left out are
/// only statements that cannot run here or would touch what is not the test's, none of which
/// the schema model holds:
/// - `ALTER … OWNER TO postgres`: the test's user cannot give objects away; owners are not
///   modelled;
/// - statements on `SCHEMA public` (its owner, `REVOKE`/`GRANT` on it): they would change the
///   server's shared `public` schema; privileges are not modelled;
/// - `set_config('search_path', '', false)`: pg_dump empties the search path because it
///   qualifies every name; here every name is qualified with the test schema, which must stay
///   on the path for the stand-in `uuidv7()` (see [`pagila_for`]);
/// - the `vector` extension (pgvector), not installed on this server, and the statements on
///   the one table whose column has its type (`film_embedding`): that table is left out of
///   both sides of the comparison.
fn pagila_unrunnable(sql: &str) -> Option<&'static str> {
    let flat = sql.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.contains("EXTENSION IF NOT EXISTS vector ")
        || flat.starts_with("COMMENT ON EXTENSION vector ")
        || flat.contains("public.film_embedding")
    {
        Some("extension vector")
    } else if flat.contains("SCHEMA public ") || flat.ends_with("SCHEMA public") {
        Some("shared schema public")
    } else if flat.starts_with("ALTER ") && flat.contains(" OWNER TO ") {
        Some("owner")
    } else if flat.starts_with("SELECT pg_catalog.set_config('search_path', ''") {
        Some("empty search path")
    } else {
        None
    }
}

/// The pagila dump made runnable in `schema` on this server: the statements
/// [`pagila_unrunnable`] names are left out (the count of each reason is returned, so nothing
/// else is dropped unseen), and in the others
/// - `public.` is the test schema (pg_dump qualifies every name);
/// - `VIRTUAL` generated columns (Postgres 18) are `STORED`: Postgres 15 has only those, and
///   the model holds the expression only;
/// - `uuidv7()`, built into Postgres 18, is a function of the test schema created first with
///   the same name, so the defaults read back as the dump wrote them.
fn pagila_for(schema: &str, dump: &str) -> (String, Vec<(&'static str, usize)>) {
    let mut out = format!(
        "CREATE FUNCTION \"{schema}\".uuidv7() RETURNS uuid LANGUAGE sql AS 'SELECT gen_random_uuid()';\n"
    );
    let mut left_out: Vec<(&'static str, usize)> = Vec::new();
    for st in remodel_sql::split::split_statements(dump) {
        if let Some(why) = pagila_unrunnable(st.text) {
            match left_out.iter_mut().find(|(w, _)| *w == why) {
                Some((_, n)) => *n += 1,
                None => left_out.push((why, 1)),
            }
            continue;
        }
        let sql = st
            .text
            .replace("public.", &format!("\"{schema}\"."))
            .replace(") VIRTUAL", ") STORED");
        out.push_str(&sql);
        out.push_str(";\n");
    }
    (out, left_out)
}

async fn pagila_agrees(label: &str, dump_file: &str) -> (usize, Vec<(&'static str, usize)>) {
    let dump = std::fs::read_to_string(repo(dump_file)).expect("pagila dump");
    let pg = PgSchema::create(label).await.expect("test schema");
    let (sql, left_out) = pagila_for(pg.name(), &dump);
    pg.client()
        .batch_execute(&sql)
        .await
        .unwrap_or_else(|e| panic!("loading {dump_file}: {e:?}"));
    let not_loaded: &[&str] = if left_out.iter().any(|(w, _)| *w == "extension vector") {
        &["film_embedding"]
    } else {
        &[]
    };
    (
        agree_loaded(pg, dump_file, &dump, not_loaded).await,
        left_out,
    )
}

#[tokio::test]
async fn pagila_agrees_without_its_pgvector_table() {
    remodel_testdb::live!(Postgres);
    let (tables, left_out) =
        pagila_agrees("cat_pagila", "fixtures/corpora/pagila/pagila-schema.sql").await;
    assert_eq!(tables, 15);
    assert_eq!(
        left_out,
        [
            ("empty search path", 1),
            ("shared schema public", 3),
            ("owner", 104),
            ("extension vector", 8),
        ]
    );
}

#[tokio::test]
async fn pagila_classic_agrees() {
    remodel_testdb::live!(Postgres);
    let (tables, left_out) = pagila_agrees(
        "cat_pagila_classic",
        "fixtures/corpora/pagila/classic/pagila-schema.sql",
    )
    .await;
    assert_eq!(tables, 15);
    assert_eq!(
        left_out,
        [
            ("empty search path", 1),
            ("shared schema public", 3),
            ("owner", 56),
        ]
    );
}
