//! Partition sizes by the Cassandra formulas (`Nv = Nr·(Nc − Npk − Ns) + Ns` and
//! `St = Σ key + Σ static + Nr·Σ row + Nv·8`), from statistics when given and stated defaults
//! otherwise; warnings for large partitions, low-cardinality and hot keys, and unbounded growth.

use crate::candidates::keys::{is_time_type, pins_unique_key, plain_columns, KeySrc};
use crate::candidates::tables::TableBuild;
use crate::candidates::type_mapping;
use crate::DesignConfig;
use remodel_model::{Bucket, ColumnRef, Estimates, Schema, Statistics, Warning};

/// Per-cell metadata in bytes (since Cassandra 3.0).
const CELL_OVERHEAD: f64 = 8.0;

/// Sizing inputs resolved from statistics or defaults.
pub struct Sizer<'a> {
    /// The source schema.
    pub schema: &'a Schema,
    /// Statistics, when given.
    pub stats: Option<&'a Statistics>,
    /// Thresholds and defaults.
    pub config: &'a DesignConfig,
}

impl Sizer<'_> {
    /// Rows of a source table.
    pub fn rows(&self, table: &str) -> f64 {
        self.stats
            .and_then(|s| s.table(table))
            .map(|t| t.rows)
            .filter(|r| *r >= 0.0)
            .unwrap_or(self.config.defaults.rows)
            .max(1.0)
    }

    fn has_stats(&self, table: &str) -> bool {
        self.stats.and_then(|s| s.table(table)).is_some()
    }

    /// Distinct values of a column.
    pub fn distinct(&self, c: &ColumnRef) -> f64 {
        let rows = self.rows(&c.table);
        if let Some(d) = self
            .stats
            .and_then(|s| s.table(&c.table))
            .and_then(|t| t.column(&c.column))
            .and_then(|cs| cs.distinct(rows))
        {
            return d.clamp(1.0, rows);
        }
        let Some(t) = self.schema.table(&c.table) else {
            return rows;
        };
        if t.is_unique_on(std::slice::from_ref(&c.column)) {
            return rows;
        }
        if let Some(col) = t.column(&c.column) {
            if let Some(n) = type_mapping::enum_labels(&col.sql_type, self.schema) {
                return (n as f64).clamp(1.0, rows);
            }
            if matches!(col.sql_type.as_str(), "boolean" | "bool") {
                return 2.0f64.min(rows);
            }
        }
        (rows / self.config.defaults.rows_per_key).max(1.0)
    }

    /// Most common value's share of the rows, and the value when statistics name it.
    fn top_share(&self, c: &ColumnRef) -> Option<(f64, Option<&str>)> {
        let cs = self
            .stats
            .and_then(|s| s.table(&c.table))
            .and_then(|t| t.column(&c.column))?;
        let (i, share) = cs.most_common_freqs.iter().copied().enumerate().fold(
            None,
            |m: Option<(usize, f64)>, (i, f)| match m {
                Some((_, x)) if x >= f => m,
                _ => Some((i, f)),
            },
        )?;
        Some((share, cs.most_common_vals.get(i).map(String::as_str)))
    }

    fn width(&self, k: &KeySrc) -> f64 {
        match k {
            KeySrc::Const(v) => v.len() as f64,
            KeySrc::RowId(_) => 16.0,
            KeySrc::Bucket(_, Bucket::Day) => 4.0,
            KeySrc::Bucket(..) => 8.0,
            KeySrc::Col(c) => {
                let st = self
                    .stats
                    .and_then(|s| s.table(&c.table))
                    .and_then(|t| t.column(&c.column));
                if let Some(w) = st.and_then(|s| s.avg_width) {
                    return w * (1.0 - st.and_then(|s| s.null_frac).unwrap_or(0.0));
                }
                self.schema
                    .table(&c.table)
                    .and_then(|t| t.column(&c.column))
                    .map(|col| type_mapping::default_width(&col.sql_type))
                    .unwrap_or(24.0)
            }
        }
    }

    fn span_days(&self, c: &ColumnRef) -> f64 {
        self.stats
            .and_then(|s| s.table(&c.table))
            .and_then(|t| t.column(&c.column))
            .and_then(|cs| cs.span_days)
            .unwrap_or(self.config.defaults.history_days)
            .max(1.0)
    }

    /// Bytes of one row of the table (all its columns, with cell overhead): for batch sizes.
    pub fn row_bytes(&self, t: &TableBuild, only: Option<&[String]>) -> f64 {
        t.columns
            .iter()
            .filter(|(_, n, ..)| only.is_none_or(|o| o.contains(n)))
            .map(|(k, ..)| self.width(k) + CELL_OVERHEAD)
            .sum()
    }

    /// Estimates and warnings of a finished table.
    pub fn estimate(&self, t: &TableBuild) -> (Estimates, Vec<Warning>) {
        let th = &self.config.thresholds;
        let mut rows = self.rows(&t.root);
        // A table read whole from one partition is reference data: without statistics it is
        // assumed as large as that is allowed to be (its warning says so), not a million rows.
        let one_partition = t.partition.iter().any(|k| matches!(k, KeySrc::Const(_)));
        if one_partition && !self.has_stats(&t.root) {
            rows = rows.min(th.one_partition_rows as f64);
        }
        for k in &t.extra_keys {
            rows = rows.max(self.rows(&k.table));
        }
        for c in &t.null_filter {
            if let Some(f) = self
                .stats
                .and_then(|s| s.table(&c.table))
                .and_then(|ts| ts.column(&c.column))
                .and_then(|cs| cs.null_frac)
            {
                rows = (rows * f).max(1.0);
            }
        }
        let root = self.schema.table(&t.root);
        let pcols = plain_columns(&t.partition);
        let pins_unique =
            root.is_some_and(|rt| pins_unique_key(&t.partition, rt)) && t.extra_keys.is_empty();
        let key_distinct: f64 = if pins_unique {
            rows
        } else if pcols.is_empty() {
            1.0
        } else {
            pcols
                .iter()
                .map(|c| self.distinct(c))
                .product::<f64>()
                .min(rows)
        };
        let bucket = t.partition.iter().find_map(|k| {
            if let KeySrc::Bucket(c, b) = k {
                Some((c.clone(), *b))
            } else {
                None
            }
        });
        let buckets = match &bucket {
            Some((c, b)) => {
                let days = self.span_days(c);
                match b {
                    Bucket::Hour => days * 24.0,
                    Bucket::Day => days,
                    Bucket::Month => (days / 30.44).ceil(),
                }
                .max(1.0)
            }
            None => 1.0,
        };
        let partitions = (key_distinct * buckets).min(rows).max(1.0);
        let avg = rows / partitions;
        let mut max = avg * self.config.defaults.skew.max(1.0);
        let mut hot: Option<(ColumnRef, f64, Option<&str>)> = None;
        for c in &pcols {
            if let Some((share, value)) = self.top_share(c) {
                let others = (partitions / self.distinct(c)).max(1.0);
                max = max.max(rows * share / others);
                if share >= th.hot_key_share && hot.as_ref().is_none_or(|(_, s, _)| share > *s) {
                    hot = Some((c.clone(), share, value));
                }
            }
        }
        if pins_unique {
            max = 1.0;
        }
        let max = max.max(avg);

        let key_len = t.partition.len() + t.clustering.len();
        let pk_bytes: f64 = t.partition.iter().map(|k| self.width(k)).sum();
        let mut static_bytes = 0.0;
        let mut row_bytes = 0.0;
        let mut ns = 0.0;
        for (i, (k, _, _, st)) in t.columns.iter().enumerate() {
            if i < t.partition.len() {
                continue;
            }
            if *st {
                static_bytes += self.width(k);
                ns += 1.0;
            } else {
                row_bytes += self.width(k);
            }
        }
        let nc = t.columns.len() as f64;
        let regular = (nc - key_len as f64 - ns).max(0.0);
        let bytes = |nr: f64| {
            let nv = nr * regular + ns;
            pk_bytes + static_bytes + nr * row_bytes + nv * CELL_OVERHEAD
        };
        let basis = if self.has_stats(&t.root) {
            "statistics"
        } else {
            "defaults"
        }
        .to_string();
        let est = Estimates {
            rows_per_partition_avg: round2(avg),
            rows_per_partition_max: round2(max),
            bytes_per_partition_avg: bytes(avg).round(),
            bytes_per_partition_max: bytes(max).round(),
            partitions: partitions.round(),
            rows: rows.round(),
            basis,
        };

        let mut warnings: Vec<Warning> = t
            .warnings
            .iter()
            .map(|(c, m)| Warning {
                code: c.clone(),
                message: m.clone(),
            })
            .collect();
        if est.bytes_per_partition_max > th.max_partition_bytes as f64
            || est.rows_per_partition_max > th.max_partition_rows as f64
        {
            warnings.push(Warning {
                code: "large_partition".into(),
                message: format!(
                    "the largest partition holds about {} rows / {} (limits {} rows / {}): add a time bucket or another partition-key column",
                    human_count(est.rows_per_partition_max),
                    human_bytes(est.bytes_per_partition_max),
                    human_count(th.max_partition_rows as f64),
                    human_bytes(th.max_partition_bytes as f64)
                ),
            });
        }
        if !pins_unique
            && !pcols.is_empty()
            && bucket.is_none()
            && key_distinct < th.low_cardinality_limit
        {
            let names: Vec<String> = pcols.iter().map(|c| c.column.clone()).collect();
            warnings.push(Warning {
                code: "low_cardinality_key".into(),
                message: format!(
                    "the partition key ({}) has only about {} distinct values: few, large partitions that concentrate load; add a higher-cardinality column or a bucket",
                    names.join(", "),
                    human_count(key_distinct)
                ),
            });
        }
        if let Some((c, share, value)) = hot {
            // The value itself where the statistics name it (`driver_id 'drv_1'`).
            let which = match value {
                Some(v) => format!("{} ({})", c.column, remodel_model::ident::literal(v)),
                None => format!("one value of {}", c.column),
            };
            let which = if value.is_some() {
                format!("the value of {which}")
            } else {
                which
            };
            warnings.push(Warning {
                code: "hot_key".into(),
                message: if bucket.is_some() {
                    format!(
                        "{which} holds {:.0}% of the rows: its partition of each bucket takes that share of the reads and writes of the bucket; add a sub-key (e.g. a hash of the row key modulo N) if one node cannot carry it",
                        share * 100.0
                    )
                } else {
                    format!(
                        "{which} holds {:.0}% of the rows: its partition takes that share of reads and writes; split it with a time bucket or a sub-key",
                        share * 100.0
                    )
                },
            });
        }
        if let Some((c, b)) = &bucket {
            if pcols.is_empty() {
                warnings.push(Warning {
                    code: "hot_key".into(),
                    message: format!(
                        "the partition key is only the {} bucket of {}: every write of the current {} lands in one partition",
                        match b { Bucket::Hour => "hour", Bucket::Day => "day", Bucket::Month => "month" },
                        c.column,
                        match b { Bucket::Hour => "hour", Bucket::Day => "day", Bucket::Month => "month" },
                    ),
                });
            }
        }
        let time_clustered = t
            .clustering
            .iter()
            .filter_map(|(k, _)| k.source())
            .any(|c| {
                self.schema
                    .table(&c.table)
                    .and_then(|tt| tt.column(&c.column))
                    .is_some_and(|c| is_time_type(&c.sql_type))
            });
        if !pins_unique && bucket.is_none() && time_clustered && !pcols.is_empty() {
            warnings.push(Warning {
                code: "unbounded_growth".into(),
                message: format!(
                    "partitions grow with time and have no bucket (now about {} rows, {} at the largest): fine while under the limits; add a month bucket to the partition key if one key can pass {} rows",
                    human_count(est.rows_per_partition_avg),
                    human_bytes(est.bytes_per_partition_max),
                    human_count(th.max_partition_rows as f64)
                ),
            });
        }
        (est, warnings)
    }
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// `1.2k`, `3.4M`: counts for messages.
pub fn human_count(x: f64) -> String {
    if x >= 1e9 {
        format!("{:.1}G", x / 1e9)
    } else if x >= 1e6 {
        format!("{:.1}M", x / 1e6)
    } else if x >= 1e4 {
        format!("{:.1}k", x / 1e3)
    } else {
        format!("{}", x.round())
    }
}

/// `12.3 KiB`, `100 MiB`: sizes for messages.
pub fn human_bytes(x: f64) -> String {
    const K: f64 = 1024.0;
    if x >= K * K * K {
        format!("{:.1} GiB", x / (K * K * K))
    } else if x >= K * K {
        format!("{:.1} MiB", x / (K * K))
    } else if x >= K {
        format!("{:.1} KiB", x / K)
    } else {
        format!("{} B", x.round())
    }
}
