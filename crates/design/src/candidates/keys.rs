//! Primary keys by the Chebotko mapping rules: equality columns → partition key (MR2), the range
//! column → first clustering column (MR3), ORDER BY → clustering with direction (MR4), then the
//! source keys for uniqueness (MR5, appended when the table is finished); time buckets for ranges
//! over a fixed window.

use crate::candidates::shape::Shape;
use crate::checklist::buckets::{self, Zones};
use remodel_model::{Bucket, ColumnRef, EqualityOp, Schema, SortOrder, Table, TimeWindow};

/// One element of a primary key: a source column or a bucket derived from one.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum KeySrc {
    /// A source column.
    Col(ColumnRef),
    /// A time bucket of a source column.
    Bucket(ColumnRef, Bucket),
    /// A constant: the single partition of a small table read whole.
    Const(String),
    /// The generated id of a row of a source table with no primary or unique key (the table
    /// can hold equal rows, which a key of its columns would merge).
    RowId(String),
}

impl KeySrc {
    /// The source column (the bucketed one for a bucket; none for a constant).
    pub fn source(&self) -> Option<&ColumnRef> {
        match self {
            KeySrc::Col(c) | KeySrc::Bucket(c, _) => Some(c),
            KeySrc::Const(_) | KeySrc::RowId(_) => None,
        }
    }

    /// True when a write knows the element's value without knowing a source column's: a
    /// constant (a row id is generated or read first, never implied).
    pub fn is_const(&self) -> bool {
        matches!(self, KeySrc::Const(_))
    }

    /// The source column when the element is the column itself (not a bucket of it).
    pub fn plain_column(&self) -> Option<&ColumnRef> {
        match self {
            KeySrc::Col(c) => Some(c),
            KeySrc::Bucket(..) | KeySrc::Const(_) | KeySrc::RowId(_) => None,
        }
    }
}

/// The plain source columns of a key, buckets left out.
pub fn plain_columns(key: &[KeySrc]) -> Vec<ColumnRef> {
    key.iter()
        .filter_map(KeySrc::plain_column)
        .cloned()
        .collect()
}

/// True when the key's plain columns of `table` cover its primary key or one of its unique
/// keys: then one partition holds at most one row of `table`.
pub fn pins_unique_key(key: &[KeySrc], table: &Table) -> bool {
    let cols: Vec<&str> = key
        .iter()
        .filter_map(KeySrc::plain_column)
        .filter(|c| c.table == table.key())
        .map(|c| c.column.as_str())
        .collect();
    let covers =
        |unique: &[String]| !unique.is_empty() && unique.iter().all(|k| cols.contains(&k.as_str()));
    covers(&table.primary_key) || table.unique_keys.iter().any(|u| covers(&u.columns))
}

/// The key layout one pattern asks for.
#[derive(Debug, Clone)]
pub struct KeyPlan {
    /// Partition key elements.
    pub partition: Vec<KeySrc>,
    /// Clustering columns the pattern needs, with a direction when it matters.
    pub clustering: Vec<(ColumnRef, Option<SortOrder>)>,
    /// Partitions one read touches (1 unless an IN on the partition key or a window over several buckets).
    pub partitions_read: Option<u32>,
    /// True when an IN restricts the partition key.
    pub partition_in: bool,
    /// The bucket in the partition key, with how many buckets one read is expected to span
    /// (the example window's, else the window's width plus one for a window not aligned to the
    /// buckets; one where the SQL confines the window to one bucket).
    pub bucket: Option<(Bucket, u32)>,
    /// Notes (client-side sort, and so on).
    pub notes: Vec<String>,
    /// True when the requested order is not the clustering order (rows are sorted on the client).
    pub client_sort: bool,
}

/// True when a table has nothing that proves its rows distinct: no primary key, no unique key.
/// Postgres lets such a table hold equal rows; its target tables key each row by a generated
/// id ([`KeySrc::RowId`]).
pub fn is_keyless(table: &Table) -> bool {
    table.primary_key.is_empty() && table.unique_keys.is_empty()
}

/// True for a Postgres timestamp type that keeps more than milliseconds: a key column of it is
/// kept as microseconds ([`remodel_model::Encoding`]).
pub use remodel_model::sub_ms_timestamp;

/// True for SQL time types a bucket can be derived from.
pub fn is_time_type(sql_type: &str) -> bool {
    let t = sql_type.to_ascii_lowercase();
    t.starts_with("timestamp") || t == "date" || t.starts_with("timestamptz")
}

/// The bucket for a fixed window, and how many buckets one read spans.
pub fn bucket_for(window: TimeWindow) -> (Bucket, u32) {
    match window {
        TimeWindow::Hour => (Bucket::Hour, 1),
        TimeWindow::Day => (Bucket::Day, 1),
        TimeWindow::Week => (Bucket::Day, 7),
        TimeWindow::Month => (Bucket::Month, 1),
        TimeWindow::Year => (Bucket::Month, 12),
    }
}

/// The value of the constant partition key of a small table read whole.
pub const ALL: &str = "all";

/// Orders the clustering by the read's ORDER BY: each column not in the partition gets its
/// direction, and a first one behind the range column is noted as sorted on the client.
fn order_clustering(
    shape: &Shape,
    partition: &[KeySrc],
    clustering: &mut Vec<(ColumnRef, Option<SortOrder>)>,
    notes: &mut Vec<String>,
) {
    let in_partition =
        |c: &ColumnRef, p: &[KeySrc]| p.iter().any(|k| matches!(k, KeySrc::Col(x) if x == c));
    for (i, (c, desc)) in shape.order.iter().enumerate() {
        if in_partition(c, partition) {
            continue;
        }
        let dir = Some(if *desc {
            SortOrder::Desc
        } else {
            SortOrder::Asc
        });
        if let Some(pos) = clustering.iter().position(|(x, _)| x == c) {
            if clustering[pos].1.is_none() {
                clustering[pos].1 = dir;
            }
            continue;
        }
        if i == 0 {
            if let Some((rc, _)) = &shape.range {
                notes.push(format!(
                    "rows come ordered by {rc} (the range column); ORDER BY {c} is sorted on the client"
                ));
            }
        }
        clustering.push((c.clone(), dir));
    }
}

/// Lays out the key of one pattern's table. `small_entity`: the root is a small table (reference
/// data), so a read with nothing to partition by gets one constant partition instead of a scan.
/// `zones`: where buckets are cut and instants without an offset are read.
pub fn plan(schema: &Schema, shape: &Shape, small_entity: bool, zones: &Zones) -> KeyPlan {
    let mut notes = Vec::new();
    let all_in = !shape.eq.is_empty() && shape.eq.iter().all(|e| e.op == EqualityOp::In);
    let mut partition: Vec<KeySrc> = Vec::new();
    let mut clustering: Vec<(ColumnRef, Option<SortOrder>)> = Vec::new();
    for e in &shape.eq {
        let c = &e.column;
        if e.op == EqualityOp::In && !all_in {
            // An IN next to equalities stays inside one partition as a clustering restriction.
            clustering.push((c.clone(), None));
        } else {
            partition.push(KeySrc::Col(c.clone()));
        }
    }

    let col_type = |c: &ColumnRef| {
        schema
            .table(&c.table)
            .and_then(|t| t.column(&c.column))
            .map(|c| c.sql_type.clone())
            .unwrap_or_default()
    };
    // The partition grows without bound unless the equalities pin a unique key of the root.
    let pinned_unique = schema
        .table(&shape.root)
        .is_some_and(|t| pins_unique_key(&partition, t));

    let mut bucket = None;
    if let Some((rc, rp)) = &shape.range {
        // Both bounds limit the buckets read: an open bound would leave them unbounded (the
        // designer never guesses "until today").
        let bounded = !rp.prefix && rp.lower.is_some() && rp.upper.is_some();
        if let Some(w) = rp.window.filter(|_| bounded) {
            if is_time_type(&col_type(rc)) && !pinned_unique {
                let (b, n) = bucket_for(w);
                let count = if buckets::one_bucket(rp, b, zones, &shape.params) {
                    1
                } else {
                    buckets::example_count(rp, b, zones, &shape.params).unwrap_or(n + 1)
                };
                partition.push(KeySrc::Bucket(rc.clone(), b));
                bucket = Some((b, count));
            }
        }
        let dir = shape.order.first().filter(|(c, _)| c == rc).map(|(_, d)| {
            if *d {
                SortOrder::Desc
            } else {
                SortOrder::Asc
            }
        });
        clustering.push((rc.clone(), dir));
    }
    order_clustering(shape, &partition, &mut clustering, &mut notes);
    if clustering.first().is_some_and(|(c, _)| {
        shape
            .eq
            .iter()
            .any(|e| e.column == *c && e.op == EqualityOp::In)
    }) && !shape.order.is_empty()
    {
        notes.push(
            "rows come grouped by the IN column; the requested order is merged on the client"
                .into(),
        );
    }

    if partition.is_empty() && small_entity {
        partition.push(KeySrc::Const(ALL.to_string()));
    }
    let partition_in = all_in;
    let partitions_read = if partition.is_empty() {
        None
    } else if partition_in {
        Some(u32::MAX)
    } else {
        Some(bucket.map(|(_, n)| n).unwrap_or(1))
    };
    // The shape leaves the order to the client (a column read by a lookup, a NULL no key
    // holds): every row of the partition is read before the LIMIT can apply.
    let left_to_client = shape.order.is_empty() && !shape.sort.is_empty();
    let client_sort =
        !notes.is_empty() || (partition.is_empty() && !shape.order.is_empty()) || left_to_client;
    if partition.is_empty() && !shape.order.is_empty() {
        notes.push(
            "a scan returns rows in token order: the requested order is sorted on the client"
                .into(),
        );
    }
    KeyPlan {
        partition,
        clustering,
        partitions_read,
        partition_in,
        bucket,
        notes,
        client_sort,
    }
}
