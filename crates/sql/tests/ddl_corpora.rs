//! Every schema of the corpora loads, with the table and foreign-key counts written in its
//! SOURCE.txt (counted there with pglast = libpg_query, the real Postgres grammar) and without
//! parse errors.

use remodel_model::{FkOrigin, Identity, IndexKey, Severity};
use remodel_sql::ddl::{load_files, DdlLoad};
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn corpora() -> PathBuf {
    repo().join("fixtures/corpora")
}

/// Counts from a SOURCE.txt line such as
/// `  ddl-postgres.sql: 420 lines, 17 tables, 25 foreign keys; 3 indexes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Counts {
    tables: usize,
    foreign_keys: usize,
    indexes: Option<usize>,
}

fn source_counts(corpus: &str, file: &str) -> Counts {
    let source = std::fs::read_to_string(corpora().join(corpus).join("SOURCE.txt"))
        .expect("SOURCE.txt is readable");
    let prefix = format!("{file}: ");
    let line = source
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no counts line for {file} in {corpus}/SOURCE.txt"));
    let number_before = |what: &str| -> Option<usize> {
        let words: Vec<&str> = line
            .split([' ', ',', ';'])
            .filter(|w| !w.is_empty())
            .collect();
        words
            .windows(2)
            .find(|w| w[1] == what)
            .and_then(|w| w[0].parse().ok())
    };
    Counts {
        tables: number_before("tables").expect("a table count"),
        foreign_keys: number_before("foreign").expect("a foreign-key count"),
        indexes: number_before("indexes"),
    }
}

fn load(corpus: &str, file: &str) -> DdlLoad {
    load_files(&[corpora().join(corpus).join(file)]).expect("corpus file is readable")
}

fn declared_fks(l: &DdlLoad) -> usize {
    l.schema
        .foreign_keys()
        .filter(|(_, fk)| fk.origin == FkOrigin::Declared)
        .count()
}

fn assert_no_errors(l: &DdlLoad, what: &str) {
    let errors: Vec<String> = l.errors().map(ToString::to_string).collect();
    assert!(
        errors.is_empty(),
        "{what}: parse errors:\n{}",
        errors.join("\n")
    );
    assert!(
        !l.schema
            .skipped
            .iter()
            .any(|s| s.kind == "unparsed (error)"),
        "{what}: statements failed to parse"
    );
    let warnings: Vec<String> = l
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Warning)
        .map(ToString::to_string)
        .collect();
    assert!(
        warnings.is_empty(),
        "{what}: warnings:\n{}",
        warnings.join("\n")
    );
}

/// Loads one corpus file and checks it against its SOURCE.txt counts.
fn check(corpus: &str, file: &str) -> DdlLoad {
    let expected = source_counts(corpus, file);
    let l = load(corpus, file);
    assert_no_errors(&l, file);
    assert_eq!(
        l.schema.tables.len(),
        expected.tables,
        "{corpus}/{file}: tables"
    );
    assert_eq!(
        declared_fks(&l),
        expected.foreign_keys,
        "{corpus}/{file}: declared foreign keys"
    );
    l
}

#[test]
fn benchbase_schemas() {
    for corpus in [
        "tpcc",
        "auctionmark",
        "seats",
        "twitter",
        "wikipedia",
        "smallbank",
        "voter",
    ] {
        let l = check(corpus, "ddl-postgres.sql");
        // BenchBase DDL declares no FK only by inference: every FK here is declared.
        assert_eq!(
            l.schema.foreign_keys().count(),
            declared_fks(&l),
            "{corpus}"
        );
    }
}

#[test]
fn tpcc_composite_keys() {
    let l = check("tpcc", "ddl-postgres.sql");
    let order_line = l.schema.table("order_line").expect("order_line");
    assert_eq!(
        order_line.primary_key,
        ["ol_w_id", "ol_d_id", "ol_o_id", "ol_number"]
    );
    let fk = order_line
        .foreign_keys
        .iter()
        .find(|fk| fk.ref_table == "oorder")
        .expect("FK to oorder");
    assert_eq!(fk.columns, ["ol_w_id", "ol_d_id", "ol_o_id"]);
    assert_eq!(fk.ref_columns, ["o_w_id", "o_d_id", "o_id"]);
}

#[test]
fn pagila_current() {
    // SOURCE.txt: "pagila-schema.sql: 3035 lines, 16 tables, 19 foreign keys; 55 partitions,
    // 18 FKs on partitions, …". The 18 declarations on partitions are 3 distinct FKs of
    // `payment` (customer, rental, staff) that the parent table itself does not declare: they are
    // kept once on `payment` as inferred (evidence: the partitions), so the relationships are not
    // lost and the declared count stays 19.
    let l = check("pagila", "pagila-schema.sql");
    let payment = l.schema.table("payment").expect("payment");
    assert_eq!(payment.partitions.len(), 55);
    assert_eq!(
        payment.partition_by.as_ref().map(|p| p.strategy.as_str()),
        Some("range")
    );
    let lifted: Vec<&str> = payment
        .foreign_keys
        .iter()
        .filter_map(|fk| match &fk.origin {
            FkOrigin::Inferred { evidence } => {
                assert!(evidence.contains("partitions"), "{evidence}");
                Some(fk.ref_table.as_str())
            }
            FkOrigin::Declared => None,
        })
        .collect();
    assert_eq!(lifted, ["public.customer", "public.rental", "public.staff"]);
    assert!(
        l.schema.table("payment_p2022_01").is_none(),
        "partitions are not tables"
    );

    // PostgreSQL 18 features: a VIRTUAL generated column and an enum.
    let film = l.schema.table("film").expect("film");
    let hours = film.column("length_hours").expect("length_hours");
    assert_eq!(hours.generated.as_deref(), Some("round(length / 60.0, 2)"));
    assert_eq!(
        film.column("film_id").and_then(|c| c.identity),
        Some(Identity::Serial)
    );
    let rating = l
        .schema
        .enums
        .iter()
        .find(|e| e.name == "public.mpaa_rating")
        .expect("enum");
    assert_eq!(rating.values, ["G", "PG", "PG-13", "R", "NC-17"]);
    // What was read but not modelled is counted, with where it first occurred.
    let skipped = |kind: &str| {
        l.schema
            .skipped
            .iter()
            .find(|s| s.kind == kind)
            .map(|s| s.count)
    };
    assert_eq!(skipped("CREATE FUNCTION"), Some(9));
    assert_eq!(skipped("CREATE VIEW"), Some(7));
    assert_eq!(skipped("CREATE MATERIALIZED VIEW"), Some(1));
    assert_eq!(skipped("SELECT set_config"), Some(1));
}

#[test]
fn pagila_classic() {
    // SOURCE.txt: "classic/pagila-schema.sql: 1842 lines, 15 tables, 18 foreign keys; 7 partitions,
    // 18 FKs on partitions" (same lifting of payment's 3 partition-only FKs as above).
    let l = check("pagila", "classic/pagila-schema.sql");
    let payment = l.schema.table("payment").expect("payment");
    assert_eq!(payment.partitions.len(), 7);
    assert_eq!(payment.foreign_keys.len(), 3);
}

#[test]
fn chinook_ddl_with_insert_data() {
    let l = check("chinook", "Chinook_PostgreSql.sql");
    let inserts = l
        .schema
        .skipped
        .iter()
        .find(|s| s.kind == "INSERT")
        .expect("INSERTs counted");
    // SOURCE.txt: "24 INSERT statements (data)".
    assert_eq!(inserts.count, 24);
    assert!(
        l.schema
            .skipped
            .iter()
            .any(|s| s.kind == "psql meta-command"),
        "\\c chinook is counted"
    );
}

#[test]
fn northwind_references_without_column_list() {
    let l = check("northwind", "northwind.sql");
    // SOURCE.txt: FKs are written "FOREIGN KEY (customer_id) REFERENCES customers;" -- resolved to the PK.
    let orders = l.schema.table("orders").expect("orders");
    let fk = orders
        .foreign_keys
        .iter()
        .find(|fk| fk.ref_table == "customers")
        .expect("FK to customers");
    assert_eq!(fk.ref_columns, ["customer_id"]);
    let employees = l.schema.table("employees").expect("employees");
    assert!(employees
        .foreign_keys
        .iter()
        .any(|fk| fk.ref_table == "employees" && fk.ref_columns == ["employee_id"]));
    assert!(l
        .schema
        .foreign_keys()
        .all(|(_, fk)| !fk.ref_columns.is_empty()));
}

#[test]
fn danbooru_rails_structure() {
    let l = check("danbooru", "structure.sql");
    // SOURCE.txt: "391 indexes".
    let indexes: usize = l.schema.tables.iter().map(|t| t.indexes.len()).sum();
    assert_eq!(
        Some(indexes),
        source_counts("danbooru", "structure.sql").indexes
    );
    // Partial and expression indexes are recorded as such.
    let all = || l.schema.tables.iter().flat_map(|t| t.indexes.iter());
    assert!(all().any(|i| i.predicate.is_some()));
    assert!(all().any(|i| i
        .keys
        .iter()
        .any(|k| matches!(k, IndexKey::Expression { .. }))));
    assert!(all().any(|i| i.method.as_deref() == Some("gin")));
    // Serial columns are recognised from `ALTER SEQUENCE … OWNED BY` + `nextval` defaults.
    let posts = l.schema.table("posts").expect("posts");
    assert_eq!(
        posts.column("id").and_then(|c| c.identity),
        Some(Identity::Serial)
    );
    assert!(l
        .schema
        .sequences
        .iter()
        .any(|s| s.owned_by.as_deref() == Some("public.posts.id")));
}

#[test]
fn pgbench_schema() {
    check("pgbadger-logs", "pgbench-schema.sql");
}

#[test]
fn rideshare_example() {
    let l = load_files(&[repo().join("examples/rideshare/schema.sql")]).expect("readable");
    assert_no_errors(&l, "rideshare");
    assert_eq!(l.schema.tables.len(), 3);
    assert_eq!(declared_fks(&l), 3);
}

#[test]
fn several_files_load_as_one_schema() {
    let a = corpora().join("tpcc/ddl-postgres.sql");
    let b = corpora().join("smallbank/ddl-postgres.sql");
    let l = load_files(&[a, b]).expect("readable");
    assert_eq!(l.schema.tables.len(), 9 + 3);
    assert_eq!(declared_fks(&l), 10 + 2);
}
