//! `remodel plan --check FILE` and `remodel plan --schema-out FILE`: the contract as a JSON
//! Schema, and a plan.json written or edited by hand checked against it and the validator.

use anyhow::Context;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// Most schema errors printed (the first ones say what is wrong; the rest usually follow).
const MAX_SCHEMA_ERRORS: usize = 20;

/// The JSON Schema of `plan.json`, as pretty JSON.
pub fn schema_text() -> anyhow::Result<String> {
    let schema = remodel_model::json_schema();
    Ok(serde_json::to_string_pretty(&schema)? + "\n")
}

/// Writes the JSON Schema of `plan.json` to `path`.
pub fn write_schema(path: &Path) -> anyhow::Result<()> {
    crate::files::write_atomic(path, schema_text()?.as_bytes())
}

/// Checks a plan.json: its format (exit 2 for another one), the JSON Schema (each error with
/// its JSON path), then the designer's validator; exit 0 when clean, 3 otherwise.
pub fn run(file: &Path) -> anyhow::Result<ExitCode> {
    let name = file.display().to_string();
    let text = std::fs::read_to_string(file).with_context(|| format!("cannot read {name}"))?;
    let value: serde_json::Value = serde_json::from_str(&text)
        .with_context(|| format!("{name} is not JSON (expected a plan.json of remodel)"))?;
    let header: remodel_model::PlanHeader = serde_json::from_value(value.clone())
        .with_context(|| format!("{name}: format_version is not a number"))?;
    if let Err(e) = remodel_model::check_format(header) {
        anyhow::bail!("{}", e.message(&name));
    }
    let mut out = std::io::stdout().lock();
    let problems = schema_errors(&value)?;
    if !problems.is_empty() {
        for p in problems.iter().take(MAX_SCHEMA_ERRORS) {
            writeln!(out, "{name}: schema: {p}")?;
        }
        if problems.len() > MAX_SCHEMA_ERRORS {
            writeln!(
                out,
                "{name}: … and {} more",
                problems.len() - MAX_SCHEMA_ERRORS
            )?;
        }
        writeln!(
            out,
            "{name} does not follow the plan.json schema ({}; `remodel plan --schema-out FILE` writes the schema)",
            crate::diagnostics::count(problems.len() as u64, "error", None)
        )?;
        return Ok(ExitCode::from(crate::EXIT_PLAN_FAILS_CHECKS));
    }
    let plan: remodel_model::Plan = serde_json::from_value(value)
        .with_context(|| format!("{name}: follows the schema but is not a plan"))?;
    let violations = remodel_design::validate::validate_plan(&plan);
    for v in &violations {
        writeln!(out, "{name}: plan check ({}): {}", v.check, v.message)?;
    }
    if violations.is_empty() {
        writeln!(
            out,
            "{name}: follows the plan.json schema and passes every plan check"
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(
        out,
        "{name} fails {} (it would lose or corrupt data; `remodel backfill` refuses it)",
        crate::diagnostics::count(violations.len() as u64, "plan check", None)
    )?;
    Ok(ExitCode::from(crate::EXIT_PLAN_FAILS_CHECKS))
}

/// Where `value` breaks the JSON Schema of plan.json: `JSON path: what is wrong`.
pub fn schema_errors(value: &serde_json::Value) -> anyhow::Result<Vec<String>> {
    let schema = serde_json::to_value(remodel_model::json_schema())?;
    let validator = jsonschema::validator_for(&schema)
        .map_err(|e| anyhow::anyhow!("the plan.json schema does not compile: {e}"))?;
    Ok(validator
        .iter_errors(value)
        .map(|e| {
            let path = e.instance_path().to_string();
            format!("{}: {e}", if path.is_empty() { "/".into() } else { path })
        })
        .collect())
}
