//! The checklist: the rules of a sound Cassandra design that are not a choice of table, each
//! applied to the design the passes made (or to the reads and keys it is made of).
//!
//! In: the schema, the workload and the design (its tables, query mappings and write paths);
//! out: the same design with what each rule adds — counter tables ([`counters`]), rows written
//! with a TTL ([`expiry`]), `tombstones` warnings on queues ([`tombstones`]), key columns whose
//! NULL rows a table leaves out or warns about ([`null_keys`]), the buckets a window read reads
//! ([`buckets`]), `timestamp_millis` warnings ([`precision`]) and `collation_order` warnings
//! ([`collations`]).

pub mod buckets;
pub mod collations;
pub mod counters;
pub mod expiry;
pub mod null_keys;
pub mod precision;
pub mod tombstones;
