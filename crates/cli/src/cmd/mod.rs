//! One module per subcommand.

pub mod schema;
pub mod workload;
pub mod plan;
