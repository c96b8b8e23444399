//! Which target rows a source row feeds, read from the plan.
//!
//! A target table holds rows of its driving table (`entity`), with columns copied from tables its
//! `source_sql` joins. A change of a driving row gives the target row(s) that row makes: Postgres
//! computes them with the table's own `source_sql`, the changed row (as the WAL gave it) in place
//! of the driving table, so they are exactly what a backfill of that row would write. A change of
//! a joined table gives the driving rows its foreign key links, computed again from the source
//! as it is.
//!
//! What the old row image must hold follows: a target key made of columns outside the driving
//! table's primary key needs them (`REPLICA IDENTITY FULL`) to delete the row a change moves away
//! from; a joined table's old row must hold the columns its foreign key names.

use crate::Error;
use remodel_backfill::target::TargetTable;
use remodel_model::ident::quote;
use remodel_model::{Plan, SourceEdit, Table};
use std::collections::{BTreeMap, BTreeSet};

/// How a source table feeds one target table.
#[derive(Debug, Clone, PartialEq)]
pub enum Feed {
    /// It is the target's driving table: one changed row, its own target rows.
    Driving,
    /// The target copies its columns: the driving rows whose `driving` columns equal the changed
    /// row's `row` columns are computed again.
    Linked {
        /// Columns of the driving table.
        driving: Vec<String>,
        /// Columns of the changed table, in the same order.
        row: Vec<String>,
    },
}

/// A source table the plan reads.
#[derive(Debug, Clone)]
pub struct Source {
    /// Its key in the plan (`trips`, `app.trips`).
    pub key: String,
    /// Its name as SQL (`"trips"`, `"app"."trips"`), resolved along the session's search path.
    pub sql: String,
    /// Its columns, in the schema's order.
    pub columns: Vec<String>,
    /// Its primary key.
    pub primary_key: Vec<String>,
    /// The target tables it feeds (index into the plan's target tables) and how.
    pub feeds: Vec<(usize, Feed)>,
    /// Why the old row must hold every column (`REPLICA IDENTITY FULL`); empty: the primary key
    /// is enough.
    pub needs_full: Vec<String>,
}

/// Every source table of the plan with the target tables it feeds.
pub fn sources(plan: &Plan, targets: &[TargetTable]) -> Result<Vec<Source>, Error> {
    let mut out: BTreeMap<String, Source> = BTreeMap::new();
    for (ti, t) in targets.iter().enumerate() {
        let dt = plan
            .design
            .tables
            .iter()
            .find(|d| d.name == t.name)
            .ok_or_else(|| Error::Input(format!("target table {} is not in the plan", t.name)))?;
        let entity = table(plan, &dt.entity, &t.name)?;
        if t.driving.is_none() {
            return Err(Error::Input(format!(
                "target table {}: its source query numbers the rows of a table without a key (it reads the whole table): sync cannot put a changed row in place of it",
                t.name
            )));
        }
        let key_columns: Vec<&str> = dt
            .partition_key
            .iter()
            .chain(&dt.clustering)
            .map(|k| k.column.as_str())
            .collect();
        let mut linked: BTreeSet<String> = BTreeSet::new();
        // Key columns holding a driving-table column outside its primary key.
        let mut moved: Vec<String> = Vec::new();
        for c in &dt.columns {
            let Some(src) = &c.source else { continue };
            if src.table != entity.key() {
                linked.insert(src.table.clone());
            } else if key_columns.contains(&c.name.as_str())
                && !entity.primary_key.contains(&src.column)
            {
                moved.push(src.column.clone());
            }
        }
        for k in dt.partition_key.iter().chain(&dt.clustering) {
            match &k.derived_from {
                Some(from) if !entity.primary_key.contains(from) && !moved.contains(from) => {
                    moved.push(from.clone())
                }
                _ => {}
            }
        }
        let full = (!moved.is_empty()).then(|| {
            format!(
                "{} is keyed by {} (outside the primary key): a change of them deletes the row at the old values",
                t.name,
                moved.join(", ")
            )
        });
        entry(&mut out, entity).feeds.push((ti, Feed::Driving));
        entry(&mut out, entity).needs_full.extend(full);
        for other in linked {
            let s = table(plan, &other, &t.name)?;
            let feed = link(entity, s).ok_or_else(|| {
                Error::Input(format!(
                    "target table {} copies columns of {other}, but no foreign key links {other} and {}: sync cannot find the rows a change of {other} feeds",
                    t.name,
                    entity.key()
                ))
            })?;
            let src = entry(&mut out, s);
            if let Feed::Linked { row, .. } = &feed {
                if row.iter().any(|c| !s.primary_key.contains(c)) {
                    src.needs_full.push(format!(
                        "{} finds the rows a change of {other} feeds by {} (not its primary key)",
                        t.name,
                        row.join(", ")
                    ));
                }
            }
            src.feeds.push((ti, feed));
        }
    }
    Ok(out.into_values().collect())
}

fn table<'p>(plan: &'p Plan, key: &str, target: &str) -> Result<&'p Table, Error> {
    plan.schema.table(key).ok_or_else(|| {
        Error::Input(format!(
            "target table {target}: its source table {key} is not in the plan's schema"
        ))
    })
}

fn entry<'o>(out: &'o mut BTreeMap<String, Source>, t: &Table) -> &'o mut Source {
    out.entry(t.key()).or_insert_with(|| Source {
        key: t.key(),
        sql: t.pg_name(),
        columns: t.columns.iter().map(|c| c.name.clone()).collect(),
        primary_key: t.primary_key.clone(),
        feeds: Vec::new(),
        needs_full: Vec::new(),
    })
}

/// The foreign key between the driving table and a table whose columns it copies, either way.
fn link(driving: &Table, other: &Table) -> Option<Feed> {
    if let Some(fk) = driving
        .foreign_keys
        .iter()
        .find(|fk| fk.ref_table == other.key())
    {
        let row = if fk.ref_columns.is_empty() {
            other.primary_key.clone()
        } else {
            fk.ref_columns.clone()
        };
        return Some(Feed::Linked {
            driving: fk.columns.clone(),
            row,
        });
    }
    let fk = other
        .foreign_keys
        .iter()
        .find(|fk| fk.ref_table == driving.key())?;
    let driving_cols = if fk.ref_columns.is_empty() {
        driving.primary_key.clone()
    } else {
        fk.ref_columns.clone()
    };
    Some(Feed::Linked {
        driving: driving_cols,
        row: fk.columns.clone(),
    })
}

/// The table's source query with the driving table replaced by the one row of `$1` (a JSON
/// object of the row's columns as text, typed by the table's row type), so Postgres computes the
/// target rows of a row the WAL gave (which may be gone from the table by now).
pub fn with_row(t: &TargetTable, row_type: &str) -> Result<String, Error> {
    t.driving.as_ref().ok_or_else(|| no_driving(t))?;
    let row = format!("(SELECT (jsonb_populate_record(NULL::{row_type}, $1::text::jsonb)).*)");
    Ok(t.source.sql(&SourceEdit {
        driving: Some(&row),
        ..SourceEdit::default()
    }))
}

/// `source_sql` restricted to the driving rows whose `driving` columns equal the `row` columns
/// of the row in `$1` (typed by `row_type`).
pub fn linked_to(
    t: &TargetTable,
    row_type: &str,
    driving: &[String],
    row: &[String],
) -> Result<String, Error> {
    let d = t.driving.as_ref().ok_or_else(|| no_driving(t))?;
    let left: Vec<String> = driving
        .iter()
        .map(|c| format!("{}.{}", d.alias, quote(c)))
        .collect();
    let right: Vec<String> = row.iter().map(|c| format!("r.{}", quote(c))).collect();
    let predicate = format!(
        "({}) IN (SELECT {} FROM jsonb_populate_record(NULL::{row_type}, $1::text::jsonb) r)",
        left.join(", "),
        right.join(", ")
    );
    Ok(t.source.sql(&SourceEdit {
        predicate: Some(&predicate),
        ..SourceEdit::default()
    }))
}

fn no_driving(t: &TargetTable) -> Error {
    Error::Input(format!(
        "target table {}: its source query numbers the rows of a table without a key, which needs the whole table: sync cannot compute the rows of one changed row",
        t.name
    ))
}
