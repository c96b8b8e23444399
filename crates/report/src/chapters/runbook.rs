//! Cut-over runbook for this plan: create the schema, backfill and follow the source with
//! `remodel sync`, verify and replay on the existing rows, switch reads table by table, switch
//! writes, drop the replication slot (`sync --finish`). Exact commands.

use super::{mapping_link, table_link, write_tables, Ctx, REPLAY, RUN, RUNBOOK, WRITES};
use crate::book::Book;
use crate::md;
use remodel_model::DesignTable;
use std::fmt::Write;

/// Renders `runbook.md`.
pub(super) fn render(ctx: &Ctx, book: &mut Book) {
    let mut s = String::from("# Cut-over runbook\n\n");
    let _ = writeln!(
        s,
        "How to move this application to the tables of this plan without stopping it and \
         without losing a write. Postgres stays the source of truth until the last step, so every \
         step before it can be undone by sending reads back to Postgres.\n"
    );
    s.push_str(&setup(ctx));
    s.push_str(&create_schema(ctx));
    s.push_str(&sync(ctx));
    s.push_str(&verify(ctx));
    s.push_str(&switch_reads(ctx));
    s.push_str(&switch_writes(ctx));
    s.push_str(&finish());
    book.page(RUNBOOK, "Cut-over runbook", 0, s);
}

fn setup(ctx: &Ctx) -> String {
    let p = &ctx.input.paths;
    let body = format!(
        "PLAN={}\n\
         SCHEMA={}\n\
         SOURCE='postgres://USER@HOST:5432/DB'   # the application's Postgres\n\
         TARGET='HOST:9042'                      # a Cassandra/ScyllaDB contact point\n\
         RUN=runs/sync                           # sync's run folder (the backfill's: $RUN/backfill)",
        p.plan, p.schema_cql
    );
    format!(
        "## 0. Before you start\n\n\
         Everything in [the overview's decision list](overview.md#needs-a-decision) is accepted \
         or fixed in a new plan. The commands below use these variables:\n\n{}\n\
         Prove the plan on its own workload first, on a scratch Postgres schema and a scratch \
         Cassandra (never the production cluster: replay fills the plan's keyspace with \
         generated rows): every read and write runs on both sides and the results are \
         compared; {}.\n\n{}\n",
        md::block("sh", &body),
        if ctx.input.replay.is_some() {
            format!("the [Replay on the workload]({REPLAY}) chapter shows what it found")
        } else {
            "`--replay replay` adds what it found to this report".to_string()
        },
        md::block(
            "sh",
            "remodel replay --plan \"$PLAN\" --source 'postgres://USER@SCRATCH:5432/DB' \\\n    \
             --target 'SCRATCH:9042' --writes --out replay\n\
             remodel report --plan \"$PLAN\" --replay replay --out report --html"
        )
    )
}

fn create_schema(ctx: &Ctx) -> String {
    let d = &ctx.plan.design;
    format!(
        "## 1. Create the schema\n\n\
         Keyspace `{}` ({}) and {} tables. Review the replication for production first.\n\n{}\n\
         (`remodel sync --create-schema` applies the same file before its backfill starts.)\n\n",
        d.keyspace.name,
        md::code(&d.keyspace.replication.cql_map()),
        d.tables.len(),
        md::block(
            "sh",
            &format!(
                "cqlsh HOST 9042 -f \"$SCHEMA\"\n\
                 cqlsh HOST 9042 -e 'DESCRIBE KEYSPACE {}'",
                d.keyspace.name
            )
        )
    )
}

/// The source tables the plan's tables are made from (their driving tables and the tables they
/// copy columns of), in plan order.
fn source_tables<'a>(ctx: &'a Ctx<'a>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for t in &ctx.plan.design.tables {
        let copied = t.columns.iter().filter_map(|c| c.source.as_ref());
        for name in std::iter::once(t.entity.as_str()).chain(copied.map(|c| c.table.as_str())) {
            if !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out
}

/// The `remodel sync` command with `flags`, on this runbook's variables.
fn sync_command(flags: &str) -> String {
    format!(
        "remodel sync --plan \"$PLAN\" --source \"$SOURCE\" --target \"$TARGET\" \\\n    \
         --run-dir \"$RUN\" {flags}"
    )
}

fn sync(ctx: &Ctx) -> String {
    let sources: Vec<String> = source_tables(ctx).into_iter().map(md::code).collect();
    format!(
        "## 2. Backfill, then follow the source\n\n\
         `remodel sync` copies the history into the {} tables, then applies every change \
         committed on Postgres since, each turned into the rows of this plan it feeds: the \
         application goes on writing to Postgres only. It first checks what the source must \
         give, one line each: `wal_level = logical`, a role with `REPLICATION`, and for each \
         source table ({}) a `REPLICA IDENTITY` that puts in the WAL the old values the target \
         keys need (it names each table that needs `FULL`, and why, with the `ALTER TABLE` to \
         run).\n\n{}\n\
         It creates a publication and a logical replication slot (`remodel_sync`), backfills \
         inside the slot's snapshot (into `$RUN/backfill`), applies the changes committed \
         meanwhile and stops once caught up. Killed or stopped at any point, the same command \
         resumes: nothing is lost or applied twice. **From now on the slot keeps WAL on the \
         source until step 6 drops it**: watch the source's disk. A DDL change of a source table \
         stops the sync with the LSN and the table: plan again. Then keep following while you \
         check and switch (Ctrl-C stops it; the same command resumes):\n\n{}\n\
         Where the source cannot give a replication slot, the way without sync is dual writes in \
         the application before a backfill with `--write-timestamp` (the book's backfill \
         chapter, \"Live traffic\").\n\n",
        ctx.plan.design.tables.len(),
        sources.join(", "),
        md::block("sh", &sync_command("--until-caught-up")),
        md::block("sh", &format!("{} &", sync_command("--follow")))
    )
}

fn verify(ctx: &Ctx) -> String {
    format!(
        "## 3. Verify, then replay on the existing rows\n\n\
         Compare counts and a sample of rows, looked up by the new tables' keys (exit status 0 \
         only when everything matches), then run every read of the workload on the rows already \
         there, on both sides, and compare the results (read-only on both sides). Run them right \
         after a catch-up: a row changed within the last seconds can differ by the sync's lag; \
         run them again.\n\n{}\n\
         Put the run in this report ({}):\n\n{}\n",
        md::block(
            "sh",
            "remodel verify --plan \"$PLAN\" --source \"$SOURCE\" --target \"$TARGET\" \\\n    \
             --sample 1000 --run-dir \"$RUN/backfill\"\n\
             remodel replay --plan \"$PLAN\" --source \"$SOURCE\" --target \"$TARGET\" \\\n    \
             --existing --out replay-existing"
        ),
        if ctx.input.run.is_some() {
            format!("the [Backfill and verification]({RUN}) chapter")
        } else {
            "it adds a Backfill and verification chapter".to_string()
        },
        md::block(
            "sh",
            "remodel report --plan \"$PLAN\" --run \"$RUN/backfill\" --replay replay-existing \\\n    \
             --out report --html"
        )
    )
}

fn switch_writes(ctx: &Ctx) -> String {
    let mut s = String::from("## 5. Switch writes\n\n");
    let writes: Vec<_> = ctx
        .ranked
        .iter()
        .filter(|p| p.kind.is_write())
        .filter_map(|p| ctx.write(&p.id).map(|w| (*p, w)))
        .filter(|(_, w)| !w.targets.is_empty())
        .collect();
    if writes.is_empty() {
        s.push_str(
            "The workload has no write that reaches a designed table: nothing to move. Once no \
             write reaches Postgres any more, stop the `--follow` of step 2 (Ctrl-C) and apply \
             what is left:\n\n",
        );
    } else {
        let _ = writeln!(
            s,
            "When every table serves its reads, deploy the application change that runs each \
             write as the CQL of its [write path]({WRITES}) instead of on Postgres ({} writes):\n",
            writes.len()
        );
        for (p, w) in &writes {
            let tables: Vec<String> = write_tables(w)
                .into_iter()
                .map(|t| table_link(t, 0))
                .collect();
            let _ = writeln!(
                s,
                "- {} ({} calls) → {}",
                mapping_link(&p.id, 0, &md::text(&p.id)),
                md::thousands(p.calls),
                tables.join(", ")
            );
        }
        s.push_str(
            "\nThe application's writes carry the time they are made, later than the commit time \
             of every Postgres change the sync writes, so none of them is overwritten. Once no \
             write reaches Postgres any more, stop the `--follow` of step 2 (Ctrl-C) and apply \
             what is left:\n\n",
        );
    }
    s.push_str(&md::block("sh", &sync_command("--until-caught-up")));
    s.push('\n');
    s
}

/// Calls a table serves (the sum over its read patterns).
fn served_calls(ctx: &Ctx, t: &DesignTable) -> u64 {
    t.serves
        .iter()
        .filter_map(|id| ctx.pattern(id))
        .map(|p| p.calls)
        .sum()
}

fn switch_reads(ctx: &Ctx) -> String {
    let ks = &ctx.plan.design.keyspace.name;
    let mut s = String::from("## 4. Switch reads, table by table\n\n");
    s.push_str(
        "Least traffic first, so a surprise costs the least. For each table: point the patterns \
         it serves at the CQL of the query mapping, compare latencies and errors for a while, \
         and watch its partitions and tombstones:\n\n",
    );
    let mut tables: Vec<&DesignTable> = ctx.plan.design.tables.iter().collect();
    tables.sort_by_key(|t| served_calls(ctx, t));
    for (i, t) in tables.iter().enumerate() {
        let patterns: Vec<String> = t
            .serves
            .iter()
            .map(|id| mapping_link(id, 0, &md::text(id)))
            .collect();
        let _ = writeln!(
            s,
            "{}. {}: {} ({} calls). Largest partition expected: {}, {} row(s).{}",
            i + 1,
            table_link(&t.name, 0),
            if patterns.is_empty() {
                "no read of its own (kept for write paths)".into()
            } else {
                format!("switch {}", patterns.join(", "))
            },
            md::thousands(served_calls(ctx, t)),
            md::bytes(t.estimates.bytes_per_partition_max),
            md::count(t.estimates.rows_per_partition_max),
            t.warnings
                .iter()
                .map(|w| format!(" Watch `{}`: {}", w.code, md::text(&w.message)))
                .collect::<String>()
        );
    }
    let deletes: Vec<String> = ctx
        .plan
        .design
        .writes
        .iter()
        .flat_map(|w| &w.targets)
        .filter(|t| {
            t.cql
                .trim_start()
                .to_ascii_uppercase()
                .starts_with("DELETE")
        })
        .map(|t| table_link(&t.table, 0))
        .fold(Vec::new(), |mut v, l| {
            if !v.contains(&l) {
                v.push(l);
            }
            v
        });
    let _ = writeln!(
        s,
        "\nWhat to watch, per table (`nodetool` on any node):\n\n{}\n\
         - Partition sizes: the `Partition Size` percentiles of `tablehistograms` against the \
         estimates above; Cassandra logs `Writing large partition` past 100 MiB by default.\n\
         - Tombstones: `Maximum tombstones per slice` in `tablestats`; reads warn past 1,000 and \
         fail past 100,000 by default. {}Binding NULL writes a tombstone: leave unknown values \
         unset instead.\n",
        md::block(
            "sh",
            &format!(
                "nodetool tablehistograms {ks} TABLE   # partition size and cell count percentiles\n\
                 nodetool tablestats {ks}.TABLE        # tombstones per slice, SSTables, latency"
            )
        ),
        if deletes.is_empty() {
            "No write path of this plan deletes rows. ".to_string()
        } else {
            format!(
                "Deletes of this plan write tombstones into {}. ",
                deletes.join(", ")
            )
        }
    );
    s
}

fn finish() -> String {
    format!(
        "## 6. Drop the slot\n\n\
         When every table serves its reads and takes its writes and has run clean for an agreed \
         time: run the verify of step 3 once more, then drop the replication slot and the \
         publication, so that the source keeps no WAL for them any more:\n\n{}\n\
         Keep Postgres read-only (and a last backup) until you are sure you will not go back. \
         Until step 5, going back is sending the reads to Postgres again. See [write paths]({WRITES}) \
         for what the application must keep doing for each write.\n",
        md::block(
            "sh",
            "remodel sync --finish --source \"$SOURCE\" --run-dir \"$RUN\""
        )
    )
}
