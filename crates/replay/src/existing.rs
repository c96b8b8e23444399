//! Replay on the rows already there (`remodel replay --existing`): checks that both sides hold
//! the plan's tables before anything runs, each refusal one line naming what is missing.

use crate::Error;
use remodel_model::{Plan, TableRows};
use scylla::client::session::Session;

/// Refuses a target whose keyspace lacks one of the plan's tables (the backfill has not run, or
/// ran another plan).
pub async fn check_target(plan: &Plan, session: &Session) -> Result<(), Error> {
    let ks = &plan.design.keyspace.name;
    let cql = "SELECT table_name FROM system_schema.tables WHERE keyspace_name = ?";
    let rows = session
        .query_unpaged(cql, (ks.as_str(),))
        .await
        .map_err(Error::cql(format!("list the tables of keyspace {ks}")))?
        .into_rows_result()
        .map_err(Error::cql(format!("list the tables of keyspace {ks}")))?;
    let mut have = Vec::new();
    for row in rows
        .rows::<(String,)>()
        .map_err(Error::cql(format!("list the tables of keyspace {ks}")))?
    {
        have.push(row.map_err(Error::cql("a table name"))?.0);
    }
    let missing: Vec<&str> = plan
        .design
        .tables
        .iter()
        .map(|t| t.name.as_str())
        .filter(|t| !have.iter().any(|h| h == t))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(Error::Refused(if have.is_empty() {
        format!(
            "keyspace {ks} holds none of the plan's tables: --existing replays the rows \
             `remodel backfill` wrote there (run it first)"
        )
    } else {
        format!(
            "keyspace {ks} lacks the plan's table(s) {}: --existing replays the rows \
             `remodel backfill` wrote with this plan (run it first)",
            missing.join(", ")
        )
    }))
}

/// The planner's estimate of the rows of each source table the plan reads (`reltuples`; a table
/// never analysed counts -1 there and is shown as 0); refuses a source that lacks one.
pub async fn source_rows(
    plan: &Plan,
    pg: &tokio_postgres::Client,
) -> Result<Vec<TableRows>, Error> {
    let mut out = Vec::new();
    let mut missing = Vec::new();
    for t in &plan.schema.tables {
        let name = t.pg_name();
        let row = pg
            .query_one(
                "SELECT c.reltuples::int8 FROM pg_class c WHERE c.oid = to_regclass($1)",
                &[&name],
            )
            .await;
        match row {
            Ok(r) => out.push(TableRows {
                table: t.key(),
                rows: u64::try_from(r.get::<_, i64>(0)).unwrap_or(0),
            }),
            Err(_) => missing.push(t.key()),
        }
    }
    if !missing.is_empty() {
        return Err(Error::Refused(format!(
            "the source lacks the plan's table(s) {} (check the URL's database and search_path)",
            missing.join(", ")
        )));
    }
    Ok(out)
}
