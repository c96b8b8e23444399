//! Access patterns and relationships: what each statement filters, sorts and reads, and whether
//! related data is embedded or referenced.
//!
//! Architecture invariant: no I/O; reads and returns plan-model values only.
