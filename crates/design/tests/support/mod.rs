//! Shared helpers of the design tests.
pub mod contract;
pub mod cqlcheck;
pub mod pipeline;
pub mod typed;
