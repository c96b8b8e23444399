//! One module per subcommand.

pub mod analyze;
pub mod plan;
pub mod schema;
pub mod workload;
