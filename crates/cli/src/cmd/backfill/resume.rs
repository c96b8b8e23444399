//! The command that resumes a backfill run: the same plan, source, target and settings as the
//! run was given, with `--resume DIR`, and no password in it; and the connection flags every
//! command printed for the user to run next repeats (`sync`'s "follow on with:" and "resume
//! with:" lines too).

use super::{Args, SourceArg, TargetTls, TlsMode};
use remodel_model::text::shell_word;
use std::path::Path;

/// `remodel backfill … --resume DIR …` for the run of `args` in `run_dir`, and a note when the
/// source's password had to be left out of it.
pub struct ResumeCommand {
    /// The command, quoted for a POSIX shell.
    pub line: String,
    /// Said under the command when the URL it repeats has lost its password.
    pub note: Option<String>,
}

/// Whether `flag` was given on the command line (rather than through its environment variable).
pub fn on_command_line(flag: &str) -> bool {
    let with_value = format!("{flag}=");
    std::env::args_os().any(|a| {
        let a = a.to_string_lossy();
        a == flag || a.starts_with(&with_value)
    })
}

/// The flags of `args` that change how a resumed run goes, where they differ from the default.
fn settings(args: &Args) -> Vec<Word> {
    let mut out: Vec<Word> = Vec::new();
    let mut flag = |name: &str, value: Option<String>| out.push((name.to_string(), value));
    if !args.tables.is_empty() {
        flag("--tables", Some(args.tables.join(",")));
    }
    let numbers = [
        ("--readers", args.readers.to_string(), "4"),
        ("--concurrency", args.concurrency.to_string(), "auto"),
        ("--max-errors", args.max_errors.to_string(), "100"),
        ("--request-timeout", args.request_timeout.to_string(), "12"),
        ("--retry-for", args.retry_for.to_string(), "300"),
        ("--range-rows", args.range_rows.to_string(), "50000"),
        (
            "--max-row-bytes",
            args.max_row_bytes.to_string(),
            "16777216",
        ),
    ];
    for (name, value, default) in numbers {
        if value != default {
            flag(name, Some(value));
        }
    }
    if let Some(level) = args.consistency {
        flag("--consistency", Some(level.cql_name().to_string()));
    }
    if let Some(n) = args.max_rows_per_second {
        flag("--max-rows-per-second", Some(n.to_string()));
    }
    match args.write_timestamp.as_deref() {
        Some("snapshot") => flag("--write-timestamp", None),
        Some(v) => flag("--write-timestamp", Some(v.to_string())),
        None => {}
    }
    out
}

/// A flag and its value (none for a switch), as a command line repeats it.
pub type Word = (String, Option<String>);

/// What a printed command says under it when the URL it repeats has lost its password.
pub const PASSWORD_NOTE: &str = "the source's password is not repeated: give it in PGPASSWORD \
     (or the whole URL in REMODEL_SOURCE)";

/// The connection flags a command printed for the user to run next repeats: the source as
/// shown (`shown`: its password dropped) unless it came from REMODEL_SOURCE, the target unless it
/// came from REMODEL_TARGET, the target's user and TLS files; and the note to print under the
/// command when the source's password had to be left out. `given` tells whether a flag was on
/// the command line ([`on_command_line`]).
pub fn connection_words(
    source: &SourceArg,
    shown: &str,
    target: Option<&str>,
    target_user: Option<&String>,
    tls: &TargetTls,
    given: &dyn Fn(&str) -> bool,
) -> (Vec<Word>, Option<String>) {
    let mut words: Vec<Word> = Vec::new();
    let mut note = None;
    // A source or target given in REMODEL_SOURCE / REMODEL_TARGET is found there again.
    if given("--source") {
        words.push(("--source".into(), Some(shown.to_string())));
        if shown != source.source {
            note = Some(PASSWORD_NOTE.to_string());
        }
    }
    if let Some(t) = target.filter(|_| given("--target")) {
        words.push(("--target".into(), Some(t.to_string())));
    }
    if let Some(user) = target_user {
        words.push(("--target-user".into(), Some(user.clone())));
    }
    if let Some(mode) = tls.target_tls {
        let mode = match mode {
            TlsMode::Off => "off",
            TlsMode::Require => "require",
            TlsMode::VerifyCa => "verify-ca",
            TlsMode::VerifyFull => "verify-full",
        };
        words.push(("--target-tls".into(), Some(mode.into())));
    }
    for (name, file) in [
        ("--target-ca", &tls.target_ca),
        ("--target-cert", &tls.target_cert),
        ("--target-key", &tls.target_key),
    ] {
        if let Some(f) = file {
            words.push((name.into(), Some(f.display().to_string())));
        }
    }
    (words, note)
}

/// `head` followed by `words`, each value quoted for a POSIX shell where it needs it.
pub fn render(head: &str, words: Vec<Word>) -> String {
    let mut line = String::from(head);
    for (name, value) in words {
        line.push(' ');
        line.push_str(&name);
        if let Some(v) = value {
            line.push(' ');
            line.push_str(&shell_word(&v));
        }
    }
    line
}

/// The resume command of `args`'s run in `run_dir`; `source` is the source as shown (its
/// password dropped).
pub fn command(args: &Args, run_dir: &Path, source: &str) -> ResumeCommand {
    let e = &args.endpoints;
    let mut words: Vec<Word> = vec![("--plan".into(), Some(e.plan.display().to_string()))];
    let (connection, note) = connection_words(
        &e.source,
        source,
        Some(&e.target),
        e.target_user.as_ref(),
        &e.target_tls,
        &on_command_line,
    );
    words.extend(connection);
    words.push(("--resume".into(), Some(run_dir.display().to_string())));
    words.extend(settings(args));
    ResumeCommand {
        line: render("remodel backfill", words),
        note,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &[&str]) -> Args {
        super::super::super::parse_args(line)
    }

    #[test]
    fn words_are_quoted_only_when_the_shell_needs_it() {
        assert_eq!(
            shell_word("out/rideshare/plan.json"),
            "out/rideshare/plan.json"
        );
        assert_eq!(
            shell_word("postgres://app@db:5432/x?sslmode=require&a=b"),
            "'postgres://app@db:5432/x?sslmode=require&a=b'"
        );
        assert_eq!(shell_word("it's"), r"'it'\''s'");
    }

    #[test]
    fn settings_other_than_the_defaults_are_repeated() {
        let a = args(&[
            "--plan",
            "p.json",
            "--source",
            "postgres://u:pw@h/db",
            "--target",
            "h:9042",
            "--readers",
            "2",
            "--tables",
            "a,b",
            "--write-timestamp",
            "--max-errors",
            "1%",
        ]);
        let s: Vec<String> = settings(&a)
            .into_iter()
            .map(|(n, v)| format!("{n} {}", v.unwrap_or_default()))
            .collect();
        assert_eq!(
            s,
            [
                "--tables a,b",
                "--readers 2",
                "--max-errors 1%",
                "--write-timestamp "
            ]
        );
        let plain = args(&["--plan", "p.json", "--source", "x", "--target", "h:1"]);
        assert!(settings(&plain).is_empty());
    }
}
