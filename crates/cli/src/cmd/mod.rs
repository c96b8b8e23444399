//! One module per subcommand.

pub mod schema;
