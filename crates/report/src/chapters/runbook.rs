//! Cut-over runbook for this plan: create the schema, dual writes, backfill with a write timestamp
//! so live writes win, verify, switch reads table by table, stop dual writes. Exact commands.

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
    s.push_str(&dual_writes(ctx));
    s.push_str(&backfill(ctx));
    s.push_str(&switch_reads(ctx));
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
         RUN=runs/cutover                        # the backfill's run folder",
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
         (`remodel backfill --create-schema` applies the same file before it starts.)\n\n",
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

fn dual_writes(ctx: &Ctx) -> String {
    let mut s = String::from("## 2. Start dual writes\n\n");
    let writes: Vec<_> = ctx
        .ranked
        .iter()
        .filter(|p| p.kind.is_write())
        .filter_map(|p| ctx.write(&p.id).map(|w| (*p, w)))
        .filter(|(_, w)| !w.targets.is_empty())
        .collect();
    if writes.is_empty() {
        s.push_str(
            "The workload has no write that reaches a designed table: nothing to dual-write. \
             Note the time anyway, for the backfill:\n\n",
        );
    } else {
        let _ = writeln!(
            s,
            "Deploy the application change that runs, after each Postgres write, the CQL of its \
             [write path]({WRITES}) ({} writes):\n",
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
        s.push('\n');
        let rbw: Vec<String> = writes
            .iter()
            .filter(|(_, w)| !w.read_before_write.is_empty())
            .map(|(p, _)| md::text(&p.id))
            .collect();
        if !rbw.is_empty() {
            let _ = writeln!(
                s,
                "{} {} before {} write{}. Until the backfill has finished, rows older than the \
                 dual writes are not in Cassandra yet: take those values from Postgres (the same \
                 values) during this window, or the write finds nothing to update.\n",
                rbw.join(", "),
                if rbw.len() == 1 { "reads" } else { "read" },
                if rbw.len() == 1 { "it" } else { "they" },
                if rbw.len() == 1 { "s" } else { "" },
            );
        }
        s.push_str(
            "Just before the change goes live, note the time in microseconds since the epoch \
             (CQL's write-time unit): every live write made after it carries a later write time \
             than the backfill will use, so a backfilled copy never overwrites a newer live write.\n\n",
        );
    }
    s.push_str(&md::block(
        "sh",
        "T0=$(date +%s%6N)   # keep it: the backfill needs it",
    ));
    s.push('\n');
    s
}

fn backfill(ctx: &Ctx) -> String {
    let n = ctx.plan.design.tables.len();
    format!(
        "## 3. Backfill, then verify\n\n\
         Copies the history into the {n} tables with the write time `T0` (`USING TIMESTAMP`), \
         from one consistent Postgres snapshot, resumable:\n\n{}\n\
         If it stops, run the same command with `--resume \"$RUN\"` instead of `--run-dir`: \
         finished ranges are skipped. Rows it cannot store go to the rejects files in `$RUN` \
         with their key and reason. Then compare counts and a sample of rows, looked up by the \
         new tables' keys (exit status 0 only when everything matches):\n\n{}\n\
         Put the run in this report ({}):\n\n{}\n",
        md::block(
            "sh",
            "remodel backfill --plan \"$PLAN\" --source \"$SOURCE\" --target \"$TARGET\" \\\n    \
             --write-timestamp \"$T0\" --run-dir \"$RUN\""
        ),
        md::block(
            "sh",
            "remodel verify --plan \"$PLAN\" --source \"$SOURCE\" --target \"$TARGET\" \\\n    \
             --sample 1000 --run-dir \"$RUN\""
        ),
        if ctx.input.run.is_some() {
            format!("the [Backfill and verification]({RUN}) chapter")
        } else {
            "it adds a Backfill and verification chapter".to_string()
        },
        md::block(
            "sh",
            "remodel report --plan \"$PLAN\" --run \"$RUN\" --out report --html"
        )
    )
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
        "## 5. Stop dual writes\n\n\
         When every table serves its reads and has run clean for an agreed time: run the verify \
         of step 3 once more, make Cassandra the only write target, and keep Postgres read-only \
         (and a last backup) until you are sure you will not go back. Until this step, going back \
         is sending the reads to Postgres again. See [write paths]({WRITES}) for what the \
         application must keep doing for each write.\n"
    )
}
