//! Replay on scratch ground: the plan's tables in a keyspace of their own (`--keyspace`), so the
//! generated rows never land in the plan's keyspace (the production one, once the plan is
//! reviewed), and what a replay generated dropped when it ends (`--cleanup`).
//!
//! The plan's statements name their tables with the keyspace (`rideshare.trips_by_id`), as
//! `schema.cql` does: another keyspace is the same statements with that name replaced where a
//! statement names a keyspace (after `FROM`, `INTO`, `UPDATE`, `TABLE`, `TYPE`, `KEYSPACE`,
//! `IF NOT EXISTS`, `ON`, `USE`), never inside a string literal, a quoted name or a comment.

use crate::Error;
use remodel_backfill::{CqlTarget, PgSource};
use remodel_model::ident::{cql_quote, quote};
use remodel_model::Plan;

/// `plan` with every table in keyspace `to`: `design.keyspace` and every CQL statement.
pub fn rename_keyspace(plan: &mut Plan, to: &str) {
    let from = plan.design.keyspace.name.clone();
    let design = &mut plan.design;
    let mut texts: Vec<&mut String> = Vec::new();
    for q in &mut design.queries {
        texts.extend(q.cql.as_mut());
        texts.extend(q.then.iter_mut().map(|s| &mut s.cql));
    }
    for w in &mut design.writes {
        texts.extend(w.read_before_write.iter_mut().map(|r| &mut r.cql));
        texts.extend(w.targets.iter_mut().map(|t| &mut t.cql));
    }
    for text in texts {
        *text = rename_in_cql(text, &from, to);
    }
    design.keyspace.name = to.to_string();
}

/// Words after which a CQL statement names a keyspace (alone, or before `.` and a table).
const BEFORE_KEYSPACE: [&str; 9] = [
    "from", "into", "update", "table", "type", "keyspace", "exists", "on", "use",
];

/// `cql` (statements, comments) with keyspace `from` named `to` wherever a statement names it.
pub fn rename_in_cql(cql: &str, from: &str, to: &str) -> String {
    let mut out = String::with_capacity(cql.len());
    let mut previous = String::new();
    let mut rest = cql;
    while let Some(c) = rest.chars().next() {
        let len = token_len(rest);
        let token = &rest[..len];
        if c.is_alphanumeric() || c == '_' || c == '"' {
            let name = if c == '"' {
                token.trim_matches('"').replace("\"\"", "\"")
            } else {
                token.to_ascii_lowercase()
            };
            if name == from && BEFORE_KEYSPACE.contains(&previous.as_str()) {
                out.push_str(&cql_quote(to));
            } else {
                out.push_str(token);
            }
            previous = if c == '"' { String::new() } else { name };
        } else {
            out.push_str(token);
            if !c.is_whitespace() && !token.starts_with("--") && !token.starts_with("/*") {
                previous.clear();
            }
        }
        rest = &rest[len..];
    }
    out
}

/// The length in bytes of the token `text` starts with: a word, a quoted name, a string
/// literal, a comment, or one other character.
fn token_len(text: &str) -> usize {
    let closing = |open: &str, close: &str| {
        text[open.len()..]
            .find(close)
            .map_or(text.len(), |i| open.len() + i + close.len())
    };
    let c = text.chars().next().map_or(0, char::len_utf8);
    if text.starts_with("--") || text.starts_with("//") {
        return closing("--", "\n");
    }
    if text.starts_with("/*") {
        return closing("/*", "*/");
    }
    match text.chars().next() {
        // A doubled quote inside is the quote itself: the token goes on after it.
        Some(q @ ('\'' | '"')) => {
            let mut end = 1;
            while let Some(i) = text[end..].find(q) {
                end += i + 1;
                if !text[end..].starts_with(q) {
                    return end;
                }
                end += 1;
            }
            text.len()
        }
        Some(ch) if ch.is_alphanumeric() || ch == '_' => text
            .find(|ch: char| !(ch.is_alphanumeric() || ch == '_'))
            .unwrap_or(text.len()),
        _ => c,
    }
}

/// Drops what a generated replay of `plan` created: the keyspace of its tables (which must not
/// be `plan_keyspace`, the plan's own) and the plan's source tables and enum types in the
/// source. Returns what it dropped, a line each.
pub async fn clean_up(
    plan: &Plan,
    plan_keyspace: &str,
    source: &PgSource,
    target: &CqlTarget,
) -> Result<Vec<String>, Error> {
    let ks = &plan.design.keyspace.name;
    if ks == plan_keyspace {
        return Err(Error::Refused(format!(
            "keyspace {ks} is the plan's own: replay drops only a keyspace given with --keyspace"
        )));
    }
    let (pg, session) = crate::connect(source, target).await?;
    let cql = format!("DROP KEYSPACE IF EXISTS {}", cql_quote(ks));
    session
        .query_unpaged(cql.as_str(), &[])
        .await
        .map_err(Error::cql(cql.clone()))?;
    let tables: Vec<String> = plan.schema.tables.iter().map(|t| quote(&t.name)).collect();
    let mut sql = format!(
        "SET client_min_messages = warning; DROP TABLE IF EXISTS {} CASCADE;",
        tables.join(", ")
    );
    for e in &plan.schema.enums {
        let name = e.name.rsplit('.').next().unwrap_or(&e.name);
        sql.push_str(&format!(" DROP TYPE IF EXISTS {} CASCADE;", quote(name)));
    }
    pg.batch_execute(&sql)
        .await
        .map_err(Error::pg("drop the generated source tables"))?;
    Ok(vec![
        format!("dropped keyspace {ks} on {}", target.node),
        format!(
            "dropped the generated source tables ({}) on {}",
            plan.schema
                .tables
                .iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            source.display
        ),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_keyspace_is_renamed_where_statements_name_it_and_nowhere_else() {
        let cases = [
            (
                "SELECT a FROM rideshare.trips WHERE x = 'rideshare.trips' -- rideshare.x",
                "SELECT a FROM scratch.trips WHERE x = 'rideshare.trips' -- rideshare.x",
            ),
            (
                "CREATE KEYSPACE IF NOT EXISTS rideshare WITH replication = {'class': 'SimpleStrategy'};",
                "CREATE KEYSPACE IF NOT EXISTS scratch WITH replication = {'class': 'SimpleStrategy'};",
            ),
            (
                "CREATE TABLE IF NOT EXISTS rideshare.t (rideshare text, PRIMARY KEY (rideshare));",
                "CREATE TABLE IF NOT EXISTS scratch.t (rideshare text, PRIMARY KEY (rideshare));",
            ),
            (
                "CREATE TYPE IF NOT EXISTS \"rideshare\".addr (city text);",
                "CREATE TYPE IF NOT EXISTS scratch.addr (city text);",
            ),
            (
                "BEGIN BATCH INSERT INTO rideshare.a (k) VALUES (?); UPDATE RideShare.b SET v = 'it''s rideshare.b' WHERE k = ?; DELETE FROM /* c */ rideshare.c WHERE k = ?; APPLY BATCH",
                "BEGIN BATCH INSERT INTO scratch.a (k) VALUES (?); UPDATE scratch.b SET v = 'it''s rideshare.b' WHERE k = ?; DELETE FROM /* c */ scratch.c WHERE k = ?; APPLY BATCH",
            ),
            (
                "SELECT rideshare.city FROM other.t",
                "SELECT rideshare.city FROM other.t",
            ),
        ];
        for (input, want) in cases {
            assert_eq!(
                rename_in_cql(input, "rideshare", "scratch"),
                want,
                "{input}"
            );
        }
        assert_eq!(
            rename_in_cql("SELECT * FROM ks.t", "ks", "Mixed"),
            "SELECT * FROM \"Mixed\".t"
        );
    }
}
