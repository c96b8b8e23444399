//! The `remodel` binary: a thin shell over `remodel-cli`.
fn main() -> std::process::ExitCode {
    remodel_cli::main()
}
