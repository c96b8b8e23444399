//! What the source must provide before anything is created, one line each: `wal_level =
//! logical`, a role with REPLICATION, and for each source table a REPLICA IDENTITY that puts in
//! the WAL the old values the target keys need ([`crate::derive::Source::needs_full`]).

use crate::derive::Source;
use crate::Error;
use tokio_postgres::Client;

/// Where a source table lives, as the WAL names it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Resolved {
    /// Its schema (`nspname`).
    pub schema: String,
    /// Its name (`relname`).
    pub name: String,
}

/// Runs every check; `say` gets one line per check passed. The first failure is the error,
/// with what to do about it.
pub async fn check(
    client: &Client,
    display: &str,
    sources: &[Source],
    say: &dyn Fn(&str),
) -> Result<Vec<Resolved>, Error> {
    let row = client
        .query_one("SELECT current_setting('wal_level')", &[])
        .await
        .map_err(Error::pg(display, "SHOW wal_level"))?;
    let level: String = row.get(0);
    if level != "logical" {
        return Err(Error::Check(format!(
            "check: wal_level is {level}; sync reads a logical replication slot: set wal_level = logical (ALTER SYSTEM SET wal_level = logical) and restart Postgres"
        )));
    }
    say("check: wal_level = logical");
    let row = client
        .query_one(
            "SELECT current_user::text, rolreplication OR rolsuper FROM pg_roles WHERE rolname = current_user",
            &[],
        )
        .await
        .map_err(Error::pg(display, "read the role"))?;
    let (role, may): (String, bool) = (row.get(0), row.get(1));
    if !may {
        return Err(Error::Check(format!(
            "check: role {role} lacks REPLICATION; sync creates a replication slot: ALTER ROLE {role} REPLICATION (as a superuser)"
        )));
    }
    say(&format!("check: role {role} has REPLICATION"));
    let mut resolved = Vec::with_capacity(sources.len());
    for s in sources {
        resolved.push(identity(client, display, s, say).await?);
    }
    Ok(resolved)
}

/// The REPLICA IDENTITY check of one table; returns where the table is.
async fn identity(
    client: &Client,
    display: &str,
    s: &Source,
    say: &dyn Fn(&str),
) -> Result<Resolved, Error> {
    let row = client
        .query_opt(
            "SELECT n.nspname::text, c.relname::text, c.relreplident::text, \
                    EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisprimary) \
             FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE c.oid = to_regclass($1)",
            &[&s.sql],
        )
        .await
        .map_err(Error::pg(display, format!("read table {}", s.key)))?
        .ok_or_else(|| {
            Error::Check(format!(
                "check: table {} of the plan is not on the source (search path of the URL)",
                s.key
            ))
        })?;
    let (schema, name, ident, has_pk): (String, String, String, bool) =
        (row.get(0), row.get(1), row.get(2), row.get(3));
    let alter = format!("ALTER TABLE {} REPLICA IDENTITY FULL", s.sql);
    match ident.as_str() {
        "f" => say(&format!(
            "check: {} has REPLICA IDENTITY FULL (old rows whole in the WAL)",
            s.key
        )),
        _ if !s.needs_full.is_empty() => {
            return Err(Error::Check(format!(
                "check: {} has REPLICA IDENTITY {}; it needs FULL because {}: {alter}",
                s.key,
                identity_word(&ident),
                s.needs_full.join("; ")
            )))
        }
        "d" | "i" if has_pk || ident == "i" => {
            let toasted = out_of_line(client, display, s).await?;
            if !toasted.is_empty() {
                return Err(Error::Check(format!(
                    "check: {} has REPLICA IDENTITY {}; it needs FULL because it holds values stored out of line (TOAST, in {}: the columns that can be), which an UPDATE that leaves them unchanged does not send (sync would stop there): {alter}",
                    s.key,
                    identity_word(&ident),
                    toasted.join(", ")
                )));
            }
            say(&format!(
                "check: {} has REPLICA IDENTITY {}, enough: every target row it feeds is found by its key",
                s.key,
                if ident == "d" {
                    "DEFAULT (its primary key)"
                } else {
                    "USING INDEX"
                }
            ))
        }
        _ => {
            return Err(Error::Check(format!(
                "check: {} has REPLICA IDENTITY {}{}: its updates and deletes carry no old key: {alter}",
                s.key,
                identity_word(&ident),
                if has_pk { "" } else { " and no primary key" }
            )))
        }
    }
    Ok(Resolved { schema, name })
}

/// The columns of `s` outside its replica identity whose table holds values stored out of line
/// (its TOAST relation is not empty): an UPDATE that leaves such a value unchanged sends none in
/// the WAL, and the old row (only the identity's columns) has none either.
async fn out_of_line(client: &Client, display: &str, s: &Source) -> Result<Vec<String>, Error> {
    let rows = client
        .query(
            "SELECT a.attname::text FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid \
             WHERE c.oid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped \
               AND a.attstorage IN ('x', 'e') AND c.reltoastrelid <> 0 \
               AND pg_relation_size(c.reltoastrelid) > 0 \
               AND NOT EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid \
                   AND a.attnum = ANY (i.indkey) \
                   AND ((c.relreplident = 'd' AND i.indisprimary) OR (c.relreplident = 'i' AND i.indisreplident))) \
             ORDER BY a.attnum",
            &[&s.sql],
        )
        .await
        .map_err(Error::pg(display, format!("read the columns of table {}", s.key)))?;
    Ok(rows
        .iter()
        .map(|r| r.get::<_, String>(0))
        .filter(|c| s.columns.contains(c))
        .collect())
}

fn identity_word(code: &str) -> &'static str {
    match code {
        "d" => "DEFAULT",
        "f" => "FULL",
        "i" => "USING INDEX",
        _ => "NOTHING",
    }
}
