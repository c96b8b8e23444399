//! The workload as the server counted it: `pg_stat_statements` of the current database.
//!
//! The view keeps one row per normalized statement (per user, per database), with its calls,
//! total execution time and rows. Reading it needs the extension created in the database and its
//! library loaded at server start; when either is missing, [`read`] says which and how to fix it
//! (or to give a log file instead).

use crate::{Error, Source};

/// One statement as `pg_stat_statements` counts it, summed over the users that ran it.
#[derive(Debug, Clone, PartialEq)]
pub struct Statement {
    /// The normalized text (`$1` for each constant).
    pub query: String,
    /// How often it ran.
    pub calls: u64,
    /// Total execution time in milliseconds.
    pub total_ms: f64,
    /// Rows returned or affected, in total.
    pub rows: u64,
}

/// What [`read`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct Statements {
    /// The statements of the current database, most called first.
    pub statements: Vec<Statement>,
    /// The extension's version.
    pub version: String,
    /// Rows whose text the connecting user may not see (`<insufficient privilege>`).
    pub hidden: u64,
}

/// How to get a workload when `pg_stat_statements` cannot give one.
const ENABLE: &str = "to read the workload from the server, add pg_stat_statements to \
shared_preload_libraries in postgresql.conf (shared_preload_libraries = 'pg_stat_statements'; the \
server must restart), run CREATE EXTENSION pg_stat_statements; in this database and let the \
application run a while; or give the workload as a file instead: --queries FILE (a server log with \
log_min_duration_statement = 0, or a pg_stat_statements CSV export)";

/// Reads `pg_stat_statements` for the current database. [`Error::NoWorkload`] says why it
/// cannot be read and how to enable it.
pub async fn read(src: &Source) -> Result<Statements, Error> {
    let ext = src
        .query(
            "SELECT e.extversion::text, n.nspname::text FROM pg_extension e \
             JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_stat_statements'",
            &[],
            "look for pg_stat_statements",
        )
        .await?;
    let Some(row) = ext.first() else {
        return Err(Error::NoWorkload(format!(
            "{}: the extension pg_stat_statements is not created in this database; {ENABLE}",
            src.display()
        )));
    };
    let version: String = row.get(0);
    let nsp: String = row.get(1);
    // 1.8 (Postgres 13) renamed total_time to total_exec_time.
    let total = if version_at_least(&version, 1, 8) {
        "total_exec_time"
    } else {
        "total_time"
    };
    // 1.9 (Postgres 14) tells statements run inside others (`toplevel`): with
    // `pg_stat_statements.track = all` those are functions' and foreign-key triggers' queries
    // (`SELECT 1 FROM ONLY … FOR KEY SHARE`), not the application's.
    let toplevel = if version_at_least(&version, 1, 9) {
        " AND s.toplevel"
    } else {
        ""
    };
    let sql = format!(
        "SELECT s.query, sum(s.calls)::int8, sum(s.{total})::float8, sum(s.rows)::int8 \
         FROM {}.pg_stat_statements s \
         WHERE s.dbid = (SELECT oid FROM pg_database WHERE datname = current_database()){toplevel} \
         GROUP BY s.query ORDER BY 2 DESC, 1",
        remodel_model::ident::quote(&nsp)
    );
    let rows = match src
        .bounded(&sql, src.timeout_ms(), "read pg_stat_statements")
        .await?
    {
        Ok(rows) => rows,
        Err(message) => {
            return Err(Error::NoWorkload(format!(
                "{}: pg_stat_statements cannot be read ({message}); {ENABLE}",
                src.display()
            )))
        }
    };
    let mut out = Statements {
        statements: Vec::with_capacity(rows.len()),
        version,
        hidden: 0,
    };
    for r in &rows {
        let query: Option<String> = r.get(0);
        let calls = r.get::<_, Option<i64>>(1).unwrap_or(0).max(0) as u64;
        match query {
            Some(q) if q != "<insufficient privilege>" => out.statements.push(Statement {
                query: q,
                calls,
                total_ms: r.get::<_, Option<f64>>(2).unwrap_or(0.0),
                rows: r.get::<_, Option<i64>>(3).unwrap_or(0).max(0) as u64,
            }),
            _ => out.hidden += 1,
        }
    }
    if out.statements.is_empty() {
        let why = if out.hidden > 0 {
            format!(
                "its {} statement(s) of this database belong to other users, whose text this user may not see (GRANT pg_read_all_stats TO the user)",
                out.hidden
            )
        } else {
            "it holds no statement of this database yet (reset recently, or the application has not run since the server started)".to_string()
        };
        return Err(Error::NoWorkload(format!(
            "{}: pg_stat_statements {} is installed but {why}; let the application run, or give the workload as a file: --queries FILE",
            src.display(),
            out.version
        )));
    }
    Ok(out)
}

/// `1.10` ≥ `1.8`.
fn version_at_least(version: &str, major: u32, minor: u32) -> bool {
    let mut p = version.split('.').map(|x| x.parse::<u32>().unwrap_or(0));
    let (a, b) = (p.next().unwrap_or(0), p.next().unwrap_or(0));
    (a, b) >= (major, minor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert!(version_at_least("1.10", 1, 8));
        assert!(version_at_least("1.8", 1, 8));
        assert!(!version_at_least("1.7", 1, 8));
        assert!(version_at_least("2.0", 1, 8));
    }
}
