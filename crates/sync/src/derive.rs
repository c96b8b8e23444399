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
        let linked: BTreeSet<String> = dt
            .columns
            .iter()
            .filter_map(|c| c.source.as_ref())
            .filter(|src| src.table != entity.key())
            .map(|src| src.table.clone())
            .collect();
        let full = remodel_model::moved_key_reason(dt, entity);
        entry(&mut out, entity).feeds.push((ti, Feed::Driving));
        entry(&mut out, entity).needs_full.extend(full);
        for other in linked {
            let s = table(plan, &other, &t.name)?;
            let (driving, row) = remodel_model::link_columns(entity, s).ok_or_else(|| {
                Error::Input(format!(
                    "target table {} copies columns of {other}, but no foreign key links {other} and {}: sync cannot find the rows a change of {other} feeds",
                    t.name,
                    entity.key()
                ))
            })?;
            let src = entry(&mut out, s);
            src.needs_full
                .extend(remodel_model::linked_reason(&t.name, s, &row));
            src.feeds.push((ti, Feed::Linked { driving, row }));
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
