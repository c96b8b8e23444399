//! Per-test schemas and keyspaces are distinct, usable in parallel, and gone afterwards,
//! whether dropped explicitly or by `Drop`. Needs the databases of `scripts/db up`.

use std::time::Duration;

use remodel_testdb::{connect_cql, connect_pg, cql_node, pg_url, CqlKeyspace, PgSchema};

fn ok<T>(result: remodel_testdb::Result<T>) -> T {
    result.unwrap_or_else(|e| panic!("{e}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_pg_schemas_do_not_see_each_other() {
    remodel_testdb::live!(Postgres);
    let schemas: Vec<PgSchema> =
        futures_join((0..6).map(|_| PgSchema::create("isolation_pg")).collect())
            .await
            .into_iter()
            .map(ok)
            .collect();
    let mut names: Vec<&str> = schemas.iter().map(PgSchema::name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), 6, "schema names collide: {names:?}");

    // The same table name in every schema, each holding its own value.
    for (i, schema) in schemas.iter().enumerate() {
        let i = i as i32;
        schema
            .client()
            .batch_execute(&format!(
                "CREATE TABLE t (v int); INSERT INTO t VALUES ({i})"
            ))
            .await
            .expect("create + insert");
    }
    for (i, schema) in schemas.iter().enumerate() {
        let v: i32 = schema
            .client()
            .query_one("SELECT v FROM t", &[])
            .await
            .expect("select")
            .get(0);
        assert_eq!(v, i as i32);
    }

    // Half are dropped explicitly, half by Drop: none is left.
    let all: Vec<String> = schemas.iter().map(|s| s.name().to_owned()).collect();
    for (i, schema) in schemas.into_iter().enumerate() {
        if i % 2 == 0 {
            ok(schema.cleanup().await);
        } else {
            drop(schema);
        }
    }
    let check = ok(connect_pg(&ok(pg_url())).await);
    let left: i64 = check
        .query_one(
            "SELECT count(*) FROM pg_namespace WHERE nspname = ANY($1)",
            &[&all],
        )
        .await
        .expect("pg_namespace")
        .get(0);
    assert_eq!(left, 0, "schemas left behind among {all:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_cql_keyspaces_do_not_see_each_other() {
    remodel_testdb::live!(Cassandra);
    let keyspaces: Vec<CqlKeyspace> = futures_join(
        (0..3)
            .map(|_| CqlKeyspace::create("isolation_cql"))
            .collect(),
    )
    .await
    .into_iter()
    .map(ok)
    .collect();
    for (i, ks) in keyspaces.iter().enumerate() {
        ks.session()
            .query_unpaged("CREATE TABLE t (k int PRIMARY KEY, v int)", &[])
            .await
            .expect("create table");
        ks.session()
            .query_unpaged("INSERT INTO t (k, v) VALUES (1, ?)", (i as i32,))
            .await
            .expect("insert");
    }
    for (i, ks) in keyspaces.iter().enumerate() {
        let (v,): (i32,) = ks
            .session()
            .query_unpaged("SELECT v FROM t WHERE k = 1", &[])
            .await
            .expect("select")
            .into_rows_result()
            .expect("rows")
            .single_row()
            .expect("one row");
        assert_eq!(v, i as i32);
    }

    let all: Vec<String> = keyspaces.iter().map(|k| k.name().to_owned()).collect();
    for (i, ks) in keyspaces.into_iter().enumerate() {
        if i % 2 == 0 {
            ok(ks.cleanup().await);
        } else {
            drop(ks);
        }
    }
    let node = ok(cql_node());
    let check = ok(connect_cql(&node, Duration::from_secs(30)).await);
    let rows = check
        .query_unpaged("SELECT keyspace_name FROM system_schema.keyspaces", &[])
        .await
        .expect("system_schema")
        .into_rows_result()
        .expect("rows");
    let left: Vec<String> = rows
        .rows::<(String,)>()
        .expect("typed rows")
        .map(|r| r.expect("row").0)
        .filter(|name| all.contains(name))
        .collect();
    assert!(left.is_empty(), "keyspaces left behind: {left:?}");
}

/// Runs the futures concurrently on the runtime and collects their outputs in order.
async fn futures_join<F>(futures: Vec<F>) -> Vec<F::Output>
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    let handles: Vec<_> = futures.into_iter().map(tokio::spawn).collect();
    let mut out = Vec::with_capacity(handles.len());
    for handle in handles {
        out.push(handle.await.expect("task panicked"));
    }
    out
}
