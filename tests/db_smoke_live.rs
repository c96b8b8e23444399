//! Smoke test of the real databases started by `scripts/db up` (or `scripts/test`):
//! each answers a query, and a fresh schema / keyspace per test takes a write and gives
//! it back. Needs `REMODEL_PG_URL` and `REMODEL_CQL_URL` (`eval "$(scripts/db env)"`).

use remodel_testdb::{release_version, CqlKeyspace, PgSchema};

/// Turns a helper error into a test failure that carries the helper's instructions.
fn ok<T>(result: remodel_testdb::Result<T>) -> T {
    result.unwrap_or_else(|e| panic!("{e}"))
}

#[tokio::test]
async fn postgres_answers_and_round_trips_a_row() {
    remodel_testdb::live!(Postgres);
    let schema = ok(PgSchema::create("db_smoke_pg").await);
    let db = schema.client();

    let version: String = db
        .query_one("SELECT version()", &[])
        .await
        .expect("SELECT version()")
        .get(0);
    assert!(version.starts_with("PostgreSQL "), "{version}");

    db.batch_execute("CREATE TABLE rider (id bigint PRIMARY KEY, name text NOT NULL)")
        .await
        .expect("create table");
    db.execute(
        "INSERT INTO rider (id, name) VALUES ($1, $2)",
        &[&7_i64, &"Ada"],
    )
    .await
    .expect("insert");
    let name: String = db
        .query_one("SELECT name FROM rider WHERE id = $1", &[&7_i64])
        .await
        .expect("select")
        .get(0);
    assert_eq!(name, "Ada");

    // The table went into the test's own schema, not `public`.
    let table_schema: String = db
        .query_one(
            "SELECT table_schema::text FROM information_schema.tables WHERE table_name = 'rider'",
            &[],
        )
        .await
        .expect("catalog")
        .get(0);
    assert_eq!(table_schema, schema.name());

    // A second connection through `url()` lands in the same schema.
    let other = ok(remodel_testdb::connect_pg(&schema.url()).await);
    let count: i64 = other
        .query_one("SELECT count(*) FROM rider", &[])
        .await
        .expect("count through url()")
        .get(0);
    assert_eq!(count, 1);

    // pg_stat_statements is loaded for the workload features.
    let loaded: bool = db
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_stat_statements')",
            &[],
        )
        .await
        .expect("pg_extension")
        .get(0);
    assert!(
        loaded,
        "pg_stat_statements is not installed in the test database"
    );

    let name = schema.name().to_owned();
    ok(schema.cleanup().await);
    let left: i64 = other
        .query_one(
            "SELECT count(*) FROM pg_namespace WHERE nspname = $1",
            &[&name],
        )
        .await
        .expect("pg_namespace")
        .get(0);
    assert_eq!(left, 0, "schema {name} was not dropped");
}

#[tokio::test]
async fn cassandra_answers_and_round_trips_a_row() {
    remodel_testdb::live!(Cassandra);
    let keyspace = ok(CqlKeyspace::create("db_smoke_cql").await);
    let session = keyspace.session();

    let version = ok(release_version(session, keyspace.node()).await);
    assert!(version.starts_with("5.0."), "release_version {version}");

    session
        .query_unpaged(
            "CREATE TABLE trips_by_rider (rider_id bigint, started_at timestamp, trip_id bigint, \
             PRIMARY KEY ((rider_id), started_at)) WITH CLUSTERING ORDER BY (started_at DESC)",
            &[],
        )
        .await
        .expect("create table");
    let insert = session
        .prepare("INSERT INTO trips_by_rider (rider_id, started_at, trip_id) VALUES (?, ?, ?)")
        .await
        .expect("prepare insert");
    for (at, trip) in [(1_000_i64, 10_i64), (2_000, 11)] {
        session
            .execute_unpaged(
                &insert,
                (7_i64, remodel_testdb::scylla::value::CqlTimestamp(at), trip),
            )
            .await
            .expect("insert");
    }
    let rows = session
        .query_unpaged(
            "SELECT trip_id FROM trips_by_rider WHERE rider_id = ?",
            (7_i64,),
        )
        .await
        .expect("select")
        .into_rows_result()
        .expect("rows");
    let trips: Vec<i64> = rows
        .rows::<(i64,)>()
        .expect("typed rows")
        .map(|row| row.expect("row").0)
        .collect();
    // Newest first, as the clustering order says.
    assert_eq!(trips, vec![11, 10]);

    let name = keyspace.name().to_owned();
    let node = keyspace.node().to_owned();
    ok(keyspace.cleanup().await);
    let check = ok(remodel_testdb::connect_cql(&node, std::time::Duration::from_secs(30)).await);
    let left = check
        .query_unpaged(
            "SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name = ?",
            (name.as_str(),),
        )
        .await
        .expect("system_schema")
        .into_rows_result()
        .expect("rows")
        .rows_num();
    assert_eq!(left, 0, "keyspace {name} was not dropped");
}
