//! Replay: what `remodel replay` found running the plan's own statements on both sides, per
//! pattern: the outcome, the samples, the differences, the latency of each side and the
//! partitions read beside the plan's estimate. Every figure is the replay's own (`replay.json`);
//! the chapter only sums and compares them.

use super::{mapping_link, Ctx, REPLAY, RUNBOOK};
use crate::book::Book;
use crate::md;
use crate::run::{Loaded, ReplayFolder};
use remodel_model::{PatternReplay, ReplayMismatch, ReplayOutcome, ReplayReport, StatementKind};
use std::fmt::Write;

/// Differences shown per pattern at most (the count of the rest is said).
const SHOW_MISMATCHES: usize = 5;

/// A measured partition count differs from the plan's estimate when it is off by more than this
/// share (a lookup per row read, a bucket count the plan guessed).
const PARTITIONS_TOLERANCE: f64 = 0.1;

/// Renders `replay.md`.
pub(super) fn render(ctx: &Ctx, replay: &ReplayFolder, book: &mut Book) {
    let mut s = String::from("# Replay on the workload\n\n");
    match &replay.report {
        Loaded::Found(r) => s.push_str(&found(ctx, &replay.file, r)),
        Loaded::Missing => {
            let _ = writeln!(
                s,
                "No replay at {}: run `remodel replay --plan … --out DIR` (see the \
                 [runbook]({RUNBOOK})), then give DIR to `remodel report --replay`.\n",
                md::code(&replay.file)
            );
        }
        Loaded::Invalid(e) => {
            let _ = writeln!(
                s,
                "{} could not be read: {}\n",
                md::code(&replay.file),
                md::text(e)
            );
        }
    }
    book.page(REPLAY, "Replay on the workload", 0, s);
}

/// What the replay leaves for a person to decide, for the overview: differences, a replay of
/// another keyspace, patterns it could not run, rows its backfill could not store, a file that
/// is not there or not readable.
pub(super) fn decisions(ctx: &Ctx, replay: &ReplayFolder) -> Vec<String> {
    let see = format!("See [Replay on the workload]({REPLAY}).");
    let r = match &replay.report {
        Loaded::Found(r) => r,
        Loaded::Missing => {
            return vec![format!(
                "No replay at {}: the plan's results are not proven. {see}",
                md::code(&replay.file)
            )]
        }
        Loaded::Invalid(e) => {
            return vec![format!(
                "{} could not be read ({}). {see}",
                md::code(&replay.file),
                md::cell(e)
            )]
        }
    };
    let mut items = Vec::new();
    let differing: Vec<String> = r
        .patterns
        .iter()
        .filter(|p| !p.mismatches.is_empty())
        .map(|p| pattern_ref(ctx, &p.pattern))
        .collect();
    if !differing.is_empty() {
        items.push(format!(
            "**Replay found {} difference(s)** in {}: there the plan's CQL does not give what \
             the SQL gives. {see}",
            md::thousands(r.mismatches() as u64),
            differing.join(", ")
        ));
    }
    if let Some(other) = other_keyspace(ctx, r) {
        items.push(format!("{other} {see}"));
    }
    let not_run: Vec<String> = r
        .patterns
        .iter()
        .filter(|p| p.outcome == ReplayOutcome::NotReplayed)
        .map(|p| pattern_ref(ctx, &p.pattern))
        .collect();
    if !not_run.is_empty() {
        items.push(format!(
            "Replay could not run {} pattern(s) ({}): their results are not proven. {see}",
            not_run.len(),
            not_run.join(", ")
        ));
    }
    if r.rejected > 0 {
        items.push(format!(
            "The replay's backfill could not store {} generated rows: reads of them were not \
             compared. {see}",
            md::thousands(r.rejected)
        ));
    }
    items
}

/// The sentence saying the replay is of another keyspace than the plan's, if it is and was
/// not moved there on purpose (`--keyspace`).
fn other_keyspace(ctx: &Ctx, r: &ReplayReport) -> Option<String> {
    let ours = &ctx.plan.design.keyspace.name;
    (r.keyspace != *ours && r.plan_keyspace.as_ref() != Some(ours)).then(|| {
        format!(
            "**This replay ran keyspace {}, not this plan's {}**: it may be of another plan; \
             replay this one.",
            md::code(&r.keyspace),
            md::code(ours)
        )
    })
}

/// The sentence saying the replay ran this plan's tables in a keyspace of its own, if it did.
fn scratch_keyspace(ctx: &Ctx, r: &ReplayReport) -> Option<String> {
    let ours = &ctx.plan.design.keyspace.name;
    (r.keyspace != *ours && r.plan_keyspace.as_ref() == Some(ours)).then(|| {
        format!(
            "The plan's tables were created in keyspace {} (`--keyspace`) in place of {}, so \
             that no generated row reached the plan's own keyspace.",
            md::code(&r.keyspace),
            md::code(ours)
        )
    })
}

/// A pattern as a link to its mapping, or named as not in this plan.
fn pattern_ref(ctx: &Ctx, id: &str) -> String {
    if ctx.pattern(id).is_some() {
        mapping_link(id, 0, &md::text(id))
    } else {
        format!("{} (not in this plan)", md::code(id))
    }
}

fn found(ctx: &Ctx, file: &str, r: &ReplayReport) -> String {
    let mut s = intro(ctx, file, r);
    s.push_str(&verdict(ctx, r));
    s.push_str("## Per pattern\n\n");
    s.push_str(&pattern_table(ctx, r));
    s.push_str(&latency_summary(r));
    s.push_str(&partitions(ctx, r));
    s.push_str(&not_replayed(ctx, r));
    s.push_str(&differences(ctx, r));
    s
}

/// What ran, on what, from which file.
fn intro(ctx: &Ctx, file: &str, r: &ReplayReport) -> String {
    let mut s = String::new();
    let _ =
        writeln!(
        s,
        "`remodel replay` ran this plan's own statements — the reads{} — against {} on Postgres \
         and on Cassandra, and compared the results as the SQL defines them: the same rows, in an \
         order the ORDER BY allows, as many as the LIMIT. Keyspace {}, seed {}, up to {} parameter \
         sets per pattern drawn from the rows (typical and adversarial ones), {} at a time{}. \
         From {}.\n",
        if r.existing {
            " only (on the rows already there replay is read-only)"
        } else if r.writes {
            ", and the writes each followed by the reads of the rows it wrote"
        } else {
            " only (writes were not replayed: `--writes` replays them)"
        },
        if r.existing {
            "the rows already there (the source as it is and the keyspace the backfill filled)"
        } else {
            "the same generated rows"
        },
        md::code(&r.keyspace),
        r.seed,
        r.samples,
        match r.concurrency {
            0 | 1 => "one request".to_string(),
            n => format!("{n} requests"),
        },
        {
            let mut at = String::new();
            if !r.time_zone.is_empty() {
                at.push_str(&format!(", the SQL in session time zone {}", md::code(&r.time_zone)));
            }
            if !r.now.is_empty() {
                at.push_str(&format!(", `now()` {} at the start", md::code(&r.now)));
            }
            at
        },
        md::code(file)
    );
    if let Some(other) = other_keyspace(ctx, r).or_else(|| scratch_keyspace(ctx, r)) {
        let _ = writeln!(s, "{other}\n");
    }
    let rows: Vec<String> = r
        .rows
        .iter()
        .map(|t| format!("{} {}", md::code(&t.table), md::thousands(t.rows)))
        .collect();
    if !rows.is_empty() {
        let what = if r.existing {
            "Rows there (the planner's estimates)"
        } else {
            "Generated rows"
        };
        let _ = writeln!(s, "{what}: {}.\n", rows.join(", "));
    }
    if r.rejected > 0 {
        let _ = writeln!(
            s,
            "The replay's backfill could not store {} of them: they are missing on the Cassandra \
             side (its run folder `replay-backfill/` says why).\n",
            md::thousands(r.rejected)
        );
    }
    s
}

/// The result in one paragraph, and the plan's patterns the replay did not cover.
fn verdict(ctx: &Ctx, r: &ReplayReport) -> String {
    let mut s = String::new();
    let replayed = r
        .patterns
        .iter()
        .filter(|p| p.outcome == ReplayOutcome::Replayed)
        .count();
    let differing = r
        .patterns
        .iter()
        .filter(|p| !p.mismatches.is_empty())
        .count();
    if r.mismatches() == 0 {
        let _ = write!(
            s,
            "**No difference**: every sample of the {replayed} replayed pattern(s) gave on \
             Cassandra what the SQL gives on Postgres{}.",
            if r.writes {
                ", and after every write the reads of the rows it wrote still did"
            } else {
                ""
            }
        );
    } else {
        let _ = write!(
            s,
            "**{} difference(s)** in {differing} of the {replayed} replayed pattern(s): there the \
             plan's CQL does not give what the SQL gives ([listed below](#differences)).",
            md::thousands(r.mismatches() as u64)
        );
    }
    let others = r.patterns.len() - replayed;
    if others > 0 {
        let _ = write!(
            s,
            " {others} pattern(s) were not replayed or are exceptions the plan declares \
             ([below](#not-replayed))."
        );
    }
    s.push_str("\n\n");
    let missing: Vec<String> = ctx
        .plan
        .workload
        .patterns
        .iter()
        .filter(|p| r.writes || !p.kind.is_write())
        .filter(|p| !one_off(ctx, &p.id))
        .filter(|p| !r.patterns.iter().any(|q| q.pattern == p.id))
        .map(|p| mapping_link(&p.id, 0, &md::text(&p.id)))
        .collect();
    if !missing.is_empty() {
        let _ = writeln!(
            s,
            "Patterns of this plan the replay did not run (it ran with `--patterns`, or of \
             another plan): {}.\n",
            missing.join(", ")
        );
    }
    s
}

/// True for a pattern the plan leaves out of the design as one-off (replay skips it too).
fn one_off(ctx: &Ctx, id: &str) -> bool {
    ctx.query(id).is_some_and(|q| q.one_off) || ctx.write(id).is_some_and(|w| w.one_off)
}

/// The kind as replay names it (`?` when replay.json does not say).
fn kind(k: Option<StatementKind>) -> &'static str {
    k.map_or("?", StatementKind::action)
}

/// `p50 / p99` in milliseconds.
fn latency(l: &remodel_model::Latency) -> String {
    format!("{:.2} / {:.2}", l.p50_ms, l.p99_ms)
}

/// One row per pattern, in the replay's order (reads first).
fn pattern_table(ctx: &Ctx, r: &ReplayReport) -> String {
    let rows: Vec<Vec<String>> = r
        .patterns
        .iter()
        .map(|p| {
            let mut row = vec![format!("{} {}", pattern_ref(ctx, &p.pattern), kind(p.kind))];
            if p.outcome != ReplayOutcome::Replayed {
                row.push(match p.outcome {
                    ReplayOutcome::Exception => "exception".into(),
                    _ => "**not replayed**".into(),
                });
                row.extend(std::iter::repeat_n("-".to_string(), 5));
                return row;
            }
            row.push("replayed".into());
            let mut samples = p.samples.to_string();
            if p.refused > 0 {
                samples.push_str(&format!(" ({} refused)", p.refused));
            }
            if p.reads_after > 0 {
                samples.push_str(&format!(
                    " + {} reads after",
                    md::thousands(p.reads_after as u64)
                ));
            }
            row.push(samples);
            row.push(if p.mismatches.is_empty() {
                "0".into()
            } else {
                format!("**{}**", md::thousands(p.mismatches.len() as u64))
            });
            row.push(latency(&p.postgres));
            row.push(latency(&p.cassandra));
            row.push(match (p.partitions_read, p.plan_partitions) {
                (Some(m), Some(e)) => format!("{} ({})", md::amount(m), md::amount(e)),
                (Some(m), None) => md::amount(m),
                _ => "-".into(),
            });
            row
        })
        .collect();
    let mut s = md::table(
        &[
            "pattern",
            "outcome",
            "samples",
            "differences",
            "Postgres p50 / p99 ms",
            "Cassandra p50 / p99 ms",
            "partitions (plan)",
        ],
        &rows,
    );
    s.push_str(
        "\n`samples` counts the parameter sets run on both sides (those Postgres refused, a \
         duplicate key or a foreign key, were not run on Cassandra) and, for a write, the reads \
         run again on the rows it wrote. Latency is per statement: for a read the SQL as written \
         against the plan's CQL with its lookups, for a write the statement against the write \
         path with its reads before write. Partitions are those read per sample on Cassandra \
         (each `IN` value and each lookup counts one; for a write, its reads before write), \
         beside the plan's estimate.\n\n",
    );
    s
}

/// The median over patterns of each replayed pattern's p50, per side, for reads and for writes.
fn latency_summary(r: &ReplayReport) -> String {
    let median = |mut v: Vec<f64>| -> Option<f64> {
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        Some(v[v.len() / 2])
    };
    let mut parts = Vec::new();
    for (what, writes) in [("reads", false), ("writes", true)] {
        let timed: Vec<&PatternReplay> = r
            .patterns
            .iter()
            .filter(|p| p.outcome == ReplayOutcome::Replayed && p.samples > 0)
            .filter(|p| p.kind.is_some_and(|k| k.is_write()) == writes)
            .collect();
        let pg = median(timed.iter().map(|p| p.postgres.p50_ms).collect());
        let cql = median(timed.iter().map(|p| p.cassandra.p50_ms).collect());
        if let (Some(pg), Some(cql)) = (pg, cql) {
            parts.push(format!(
                "{what} {pg:.2} ms on Postgres and {cql:.2} ms on Cassandra ({} patterns)",
                timed.len()
            ));
        }
    }
    if parts.is_empty() {
        return String::new();
    }
    format!(
        "The median over patterns of each pattern's p50: {}. These are latencies of an idle \
         machine with one client and small generated tables: they compare the two sides of this \
         replay, they do not predict production.\n\n",
        parts.join("; ")
    )
}

/// Replayed patterns whose measured partitions differ from the plan's estimate.
fn partitions(ctx: &Ctx, r: &ReplayReport) -> String {
    let off: Vec<String> = r
        .patterns
        .iter()
        .filter(|p| p.outcome == ReplayOutcome::Replayed && p.samples > 0)
        .filter_map(|p| {
            let (m, e) = (p.partitions_read?, p.plan_partitions?);
            ((m - e).abs() > PARTITIONS_TOLERANCE * e.max(1.0)).then(|| {
                format!(
                    "{} reads {} per call where the plan counts {}",
                    pattern_ref(ctx, &p.pattern),
                    md::amount(m),
                    md::amount(e)
                )
            })
        })
        .collect();
    if off.is_empty() {
        "Every replayed pattern read the partitions the plan estimates.\n\n".into()
    } else {
        format!(
            "Partitions read differ from the plan's estimate: {}. (A lookup runs once per row \
             read before it; the plan counts the rows it expects.)\n\n",
            off.join("; ")
        )
    }
}

/// Exceptions, patterns replay could not run, and samples Postgres refused, with their reasons.
fn not_replayed(ctx: &Ctx, r: &ReplayReport) -> String {
    let mut s = String::new();
    let skipped: Vec<&PatternReplay> = r
        .patterns
        .iter()
        .filter(|p| p.outcome != ReplayOutcome::Replayed)
        .collect();
    if !skipped.is_empty() {
        s.push_str("## Not replayed\n\n");
        for p in skipped {
            let _ = writeln!(
                s,
                "- {} ({}), {}: {}",
                pattern_ref(ctx, &p.pattern),
                kind(p.kind),
                match p.outcome {
                    ReplayOutcome::Exception => "an exception the plan declares",
                    _ => "replay cannot run it",
                },
                md::text(p.reason.as_deref().unwrap_or("no reason recorded"))
            );
        }
        s.push('\n');
    }
    let refused: Vec<String> = r
        .patterns
        .iter()
        .filter(|p| p.outcome == ReplayOutcome::Replayed && p.refused > 0)
        .map(|p| {
            format!(
                "- {}: {} sample(s){}",
                pattern_ref(ctx, &p.pattern),
                p.refused,
                p.refused_because
                    .as_deref()
                    .map(|w| format!(", the first because {}", md::text(w)))
                    .unwrap_or_default()
            )
        })
        .collect();
    if !refused.is_empty() {
        let _ = writeln!(
            s,
            "Samples Postgres refused (dropped without running on Cassandra):\n\n{}\n",
            refused.join("\n")
        );
    }
    s
}

/// Per pattern with differences, the first few with their parameters and both results.
fn differences(ctx: &Ctx, r: &ReplayReport) -> String {
    let with: Vec<&PatternReplay> = r
        .patterns
        .iter()
        .filter(|p| !p.mismatches.is_empty())
        .collect();
    if with.is_empty() {
        return String::new();
    }
    let mut s = String::from("## Differences\n\n");
    for p in with {
        let _ = writeln!(
            s,
            "### {} ({})\n\n[How the plan serves it]({}).\n",
            md::text(&p.pattern),
            kind(p.kind),
            if ctx.pattern(&p.pattern).is_some() {
                format!("{}#{}", super::MAPPING, md::anchor(&p.pattern))
            } else {
                super::MAPPING.to_string()
            }
        );
        for m in p.mismatches.iter().take(SHOW_MISMATCHES) {
            s.push_str(&mismatch(m));
        }
        if p.mismatches.len() > SHOW_MISMATCHES {
            let _ = writeln!(
                s,
                "… and {} more (all in `replay.json`).\n",
                p.mismatches.len() - SHOW_MISMATCHES
            );
        }
    }
    s
}

/// One difference: parameters, the write before it, what differs, both results.
fn mismatch(m: &ReplayMismatch) -> String {
    let mut s = format!(
        "- With {}{}: {}.\n\n",
        md::code(&m.params),
        m.after
            .as_deref()
            .map(|a| format!(", after {}", md::code(a)))
            .unwrap_or_default(),
        md::text(m.reason.trim_end_matches('.'))
    );
    if m.sql.is_empty() && m.cql.is_empty() {
        return s;
    }
    let mut body = format!("SQL ({} rows shown):\n", m.sql.len());
    for row in &m.sql {
        let _ = writeln!(body, "  {row}");
    }
    let _ = write!(body, "Cassandra ({} rows shown):", m.cql.len());
    for row in &m.cql {
        let _ = write!(body, "\n  {row}");
    }
    // Indented under its list item.
    for line in md::block("text", &body).lines() {
        let _ = writeln!(s, "  {line}");
    }
    s.push('\n');
    s
}
