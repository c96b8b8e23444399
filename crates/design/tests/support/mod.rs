//! Shared helpers of the design tests.
pub mod cqlcheck;
pub mod pipeline;
