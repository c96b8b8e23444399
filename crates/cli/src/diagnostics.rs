//! What every subcommand prints the same way: diagnostics (one format, on stderr), their counts
//! with plurals, and the end of a closed pipe.

use remodel_conn::redact_text;
use remodel_model::{Diagnostic, Severity};
use std::io::{self, Write};

/// `1 note`, `2 notes`, `0 notes` (`many` is the plural when it is not `one` + `s`).
pub fn count(n: impl Into<u128>, one: &str, many: Option<&str>) -> String {
    let n: u128 = n.into();
    match (n, many) {
        (1, _) => format!("1 {one}"),
        (_, Some(many)) => format!("{n} {many}"),
        (_, None) => format!("{n} {one}s"),
    }
}

/// `2 errors, 1 warning, 0 notes`: the diagnostics by severity.
pub fn severity_counts(diagnostics: &[Diagnostic]) -> String {
    let n = |s: Severity| diagnostics.iter().filter(|d| d.severity == s).count() as u64;
    format!(
        "{}, {}, {}",
        count(n(Severity::Error), "error", None),
        count(n(Severity::Warning), "warning", None),
        count(n(Severity::Note), "note", None)
    )
}

/// The summary line that closes a subcommand's output: the counts, and where the list is.
pub fn diagnostics_line(diagnostics: &[Diagnostic], verbose: bool) -> String {
    let hidden = !verbose && diagnostics.iter().any(|d| d.severity == Severity::Note);
    let listed = diagnostics
        .iter()
        .any(|d| verbose || d.severity != Severity::Note);
    let mut line = format!("diagnostics: {}", severity_counts(diagnostics));
    match (listed, hidden) {
        (true, true) => line.push_str(" (listed on stderr; --verbose adds the notes)"),
        (true, false) => line.push_str(" (listed on stderr)"),
        (false, true) => line.push_str(" (--verbose lists the notes)"),
        (false, false) => {}
    }
    line
}

/// Prints diagnostics on stderr, `file:line:column: severity: message`, errors and warnings
/// always and notes with `verbose`. A closed stderr is ignored: there is nowhere left to say it.
pub fn print_diagnostics(diagnostics: &[Diagnostic], verbose: bool) {
    let mut err = io::stderr().lock();
    for d in diagnostics
        .iter()
        .filter(|d| verbose || d.severity != Severity::Note)
    {
        let _ = writeln!(err, "{}", redact_text(&d.to_string()));
    }
}

/// True when `err` (or what caused it) is output into a closed pipe (`remodel … | head -1`):
/// the reader has all it wanted, so the run ends quietly and successfully, as ripgrep does.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
            || cause
                .downcast_ref::<serde_json::Error>()
                .and_then(|e| e.io_error_kind())
                .is_some_and(|k| k == io::ErrorKind::BrokenPipe)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use remodel_model::Location;

    fn diag(severity: Severity) -> Diagnostic {
        Diagnostic {
            severity,
            location: Some(Location::new("q.sql", 3, 1)),
            message: "m".into(),
        }
    }

    #[test]
    fn plurals() {
        assert_eq!(count(1u64, "note", None), "1 note");
        assert_eq!(count(0u64, "note", None), "0 notes");
        assert_eq!(count(2u64, "index", Some("indexes")), "2 indexes");
        let d = [
            diag(Severity::Note),
            diag(Severity::Warning),
            diag(Severity::Warning),
        ];
        assert_eq!(severity_counts(&d), "0 errors, 2 warnings, 1 note");
        assert_eq!(
            diagnostics_line(&d, false),
            "diagnostics: 0 errors, 2 warnings, 1 note (listed on stderr; --verbose adds the notes)"
        );
        assert_eq!(
            diagnostics_line(&d[..1], false),
            "diagnostics: 0 errors, 0 warnings, 1 note (--verbose lists the notes)"
        );
    }

    #[test]
    fn broken_pipes_are_recognised_through_context() {
        let e = anyhow::Error::from(io::Error::from(io::ErrorKind::BrokenPipe)).context("printing");
        assert!(is_broken_pipe(&e));
        assert!(!is_broken_pipe(&anyhow::anyhow!("no such file")));
    }
}
