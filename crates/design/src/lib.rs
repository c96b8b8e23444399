//! The query-first designer: Cassandra tables, keys, buckets, sizing, write paths and CQL.
//!
//! Architecture invariant: no I/O; reads and returns plan-model values only.
