//! The live reader against real data: foreign keys found in the data (and naming guesses
//! refuted), statistics of a skewed rideshare (hot driver, low-cardinality city, the hot
//! partition's size), and the workload from pg_stat_statements ranked like the file's.

use expect_test::expect;
use remodel_catalog::{pgss, probes, schema, stats, Options, Source};
use remodel_model::FkOrigin;
use remodel_testdb::PgSchema;

async fn open(pg: &PgSchema) -> Source {
    let url = remodel_testdb::pg_url().expect("REMODEL_PG_URL");
    let options = Options {
        schemas: vec![pg.name().to_string()],
        ..Options::default()
    };
    Source::open(&url, "test", &options).await.expect("open")
}

/// The analysis (no workload) of `schema` with the probes' findings applied, and the key
/// evidence of the relationship of `table.column`.
fn analyzed(
    schema: &remodel_model::Schema,
    found: &probes::ProbeResult,
    table: &str,
    column: &str,
) -> (remodel_model::Analysis, String) {
    let mut s = schema.clone();
    found.apply(&mut s);
    let analysis = remodel_analyze::analyze(
        &s,
        &remodel_model::Workload::default(),
        &remodel_analyze::AnalyzeConfig::default(),
    );
    let evidence = analysis
        .relationships
        .iter()
        .find(|r| r.to == table && r.columns == [column])
        .unwrap_or_else(|| panic!("no relationship of {table}.{column}"))
        .rationale
        .key_evidence
        .clone()
        .unwrap_or_default();
    (analysis, evidence)
}

/// Users, documents whose `owner` and `approver_id` reference users (undeclared; no name points
/// to `users`), and a counters table whose columns are named after the tables but hold counts.
const UNDECLARED: &str = "
CREATE TABLE users (id bigint PRIMARY KEY, name text NOT NULL);
CREATE TABLE documents (
    id bigint PRIMARY KEY, owner bigint NOT NULL, approver_id bigint, pages int NOT NULL,
    title text NOT NULL);
CREATE TABLE counters (id int PRIMARY KEY, users bigint NOT NULL, documents bigint NOT NULL);
INSERT INTO users SELECT i, 'user ' || i FROM generate_series(1, 500) i;
INSERT INTO documents SELECT i, 1 + (hashint4(i) & 1023) % 500,
    CASE WHEN i % 3 = 0 THEN NULL ELSE 1 + (hashint4(i + 7) & 1023) % 500 END,
    1 + i % 40, 'doc ' || i FROM generate_series(1, 3000) i;
INSERT INTO counters SELECT i, 100000 + i * 37, 200000 + i * 11 FROM generate_series(1, 50) i;
ANALYZE users; ANALYZE documents; ANALYZE counters;
";

#[tokio::test]
async fn probes_recover_undeclared_keys_and_refute_a_naming_guess() {
    remodel_testdb::live!(Postgres);
    let pg = PgSchema::create("cat_probes").await.expect("schema");
    pg.client().batch_execute(UNDECLARED).await.expect("load");
    let src = open(&pg).await;
    let read = schema::read(&src).await.expect("schema");
    let st = stats::read(&src, &read.schema).await.expect("stats");
    let found = probes::probe(&src, &read.schema, Some(&st.stats), &Default::default())
        .await
        .expect("probes");
    src.close().await.expect("close");
    let keys: Vec<String> = found
        .confirmed
        .iter()
        .map(|(t, fk)| {
            format!(
                "{t}.{} -> {}.{}",
                fk.columns[0], fk.ref_table, fk.ref_columns[0]
            )
        })
        .collect();
    assert_eq!(
        keys,
        [
            "documents.owner -> users.id",
            "documents.approver_id -> users.id"
        ],
        "{:#?}",
        found
    );
    for (_, fk) in &found.confirmed {
        let FkOrigin::Inferred { evidence } = &fk.origin else {
            panic!("a found key is inferred")
        };
        assert!(evidence.starts_with("data: all "), "{evidence}");
        assert!(evidence.contains("sampled values"), "{evidence}");
    }
    let refuted: Vec<String> = found
        .rejected
        .iter()
        .map(|r| format!("{}.{} -> {}", r.table, r.columns[0], r.ref_table))
        .collect();
    assert_eq!(
        refuted,
        ["counters.users -> users", "counters.documents -> documents"]
    );
    assert!(
        found.rejected[0].evidence.contains("0.0% found"),
        "{:?}",
        found.rejected[0]
    );

    // Naming inference leaves the refuted pairs alone, and the relationship carries the data's
    // evidence.
    let (analysis, ev) = analyzed(&read.schema, &found, "documents", "approver_id");
    let counters = analysis.schema.table("counters").expect("counters");
    assert!(
        counters.foreign_keys.is_empty(),
        "{:?}",
        counters.foreign_keys
    );
    assert!(ev.starts_with("data: all "), "{ev}");
    pg.cleanup().await.expect("cleanup");
}

/// Rideshare with one driver holding 30% of the trips and four cities.
const SKEWED: &str = "
INSERT INTO cities VALUES ('nyc', 'US', 'America/New_York'), ('sf', 'US', 'America/Los_Angeles'),
    ('london', 'GB', 'Europe/London'), ('paris', 'FR', 'Europe/Paris');
INSERT INTO drivers SELECT 'drv_' || i, 'Driver ' || i, 'nyc', 4.5, now() FROM generate_series(1, 400) i;
INSERT INTO trips SELECT md5('t' || i)::uuid,
    CASE WHEN i % 10 < 3 THEN 'drv_1' ELSE 'drv_' || (2 + (hashint4(i) & 65535) % 399) END,
    (ARRAY['nyc', 'sf', 'london', 'paris'])[1 + i % 4],
    timestamptz '2024-01-01' + i * interval '1 minute', 5, 10, 'completed'
  FROM generate_series(1, 30000) i;
ANALYZE cities; ANALYZE drivers; ANALYZE trips;
";

#[tokio::test]
async fn skewed_statistics_flag_the_hot_driver_and_size_its_partition() {
    remodel_testdb::live!(Postgres);
    let pg = PgSchema::create("cat_skew").await.expect("schema");
    let ddl = std::fs::read_to_string(format!(
        "{}/../../examples/rideshare/schema.sql",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("schema.sql");
    pg.client().batch_execute(&ddl).await.expect("ddl");
    pg.client().batch_execute(SKEWED).await.expect("rows");
    let truth: i64 = pg
        .client()
        .query_one("SELECT count(*) FROM trips WHERE driver_id = 'drv_1'", &[])
        .await
        .expect("count")
        .get(0);
    let src = open(&pg).await;
    let read = schema::read(&src).await.expect("schema");
    let st = stats::read(&src, &read.schema).await.expect("stats");
    src.close().await.expect("close");
    let trips = st.stats.table("trips").expect("trips stats");
    assert_eq!(trips.rows, 30000.0);
    let driver = trips.column("driver_id").expect("driver_id stats");
    assert_eq!(
        driver.most_common_vals.first().map(String::as_str),
        Some("drv_1")
    );

    let workload = remodel_sql::workload::read_files(
        &[format!(
            "{}/../../examples/rideshare/queries.sql",
            env!("CARGO_MANIFEST_DIR")
        )],
        remodel_sql::workload::Format::Auto,
    )
    .expect("queries");
    let analysis = remodel_analyze::analyze(
        &read.schema,
        &workload.workload,
        &remodel_analyze::AnalyzeConfig::default(),
    );
    let (plan, _) = remodel_design::plan(
        analysis,
        Some(&st.stats),
        &remodel_design::DesignConfig::default(),
    );
    let by_driver = plan
        .design
        .tables
        .iter()
        .find(|t| t.name == "trips_by_driver")
        .expect("trips_by_driver");
    let hot = by_driver.warnings.iter().find(|w| w.code == "hot_key");
    assert!(
        hot.is_some_and(|w| w.message.contains("driver_id") && w.message.contains("drv_1")),
        "{:?}",
        by_driver.warnings
    );
    let est = by_driver.estimates.rows_per_partition_max;
    let err = (est - truth as f64).abs() / truth as f64;
    assert!(
        err <= 0.2,
        "estimated {est} rows for the hot driver, true {truth}"
    );
    let by_city = plan
        .design
        .tables
        .iter()
        .find(|t| t.name == "trips_by_city_date")
        .expect("trips_by_city_date");
    let city_distinct = trips.column("city").and_then(|c| c.distinct(trips.rows));
    assert_eq!(city_distinct, Some(4.0));
    assert!(
        by_city
            .warnings
            .iter()
            .any(|w| w.code == "hot_key" || w.code == "low_cardinality_key"),
        "{:?}",
        by_city.warnings
    );
    pg.cleanup().await.expect("cleanup");
}

/// `pg_stat_statements_info`: evictions so far and the last reset. pg_stat_statements keeps at
/// most `pg_stat_statements.max` statements; on a shared server other sessions' new statements
/// evict the least used ones (a statement run once or twice, like the mix's rarest), and an
/// evicted statement counts its calls again from zero.
async fn pgss_epoch(c: &tokio_postgres::Client) -> (i64, String) {
    let nsp: String = c
        .query_one(
            "SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = 'pg_stat_statements'",
            &[],
        )
        .await
        .expect("pg_stat_statements is created")
        .get(0);
    let row = c
        .query_one(
            &format!("SELECT dealloc, stats_reset::text FROM {nsp}.pg_stat_statements_info"),
            &[],
        )
        .await
        .expect("pg_stat_statements_info");
    (row.get(0), row.get(1))
}

/// Loads the skewed rideshare into `pg`, runs the documented mix (queries.sql's `-- calls: N`
/// divided by 1000, each statement naming the test's schema so that its pg_stat_statements rows
/// are its own on the shared server), reads pg_stat_statements and keeps this schema's
/// statements, with the schema's name taken out.
async fn run_the_mix(pg: &PgSchema) -> Vec<(String, pgss::Statement)> {
    let ddl = std::fs::read_to_string(format!(
        "{}/../../examples/rideshare/schema.sql",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("schema.sql");
    pg.client().batch_execute(&ddl).await.expect("ddl");
    pg.client().batch_execute(SKEWED).await.expect("rows");
    let s = pg.name();
    let mix: [(u32, String); 7] = [
        (1200, format!("SELECT started_at, city, distance_km, fare_usd FROM {s}.trips WHERE driver_id = $1 ORDER BY started_at DESC LIMIT 10")),
        (86, format!("SELECT started_at, driver_id, fare_usd FROM {s}.trips WHERE city = $1 AND started_at >= $2::text::timestamptz AND started_at < $3::text::timestamptz ORDER BY started_at DESC LIMIT 100")),
        (300, format!("SELECT * FROM {s}.trips WHERE trip_id = $1::text::uuid")),
        (150, format!("SELECT d.full_name, d.rating, c.country FROM {s}.drivers d JOIN {s}.cities c ON c.city = d.home_city WHERE d.driver_id = $1")),
        (400, format!("INSERT INTO {s}.trips (trip_id, driver_id, city, started_at, distance_km, fare_usd, status) VALUES (gen_random_uuid(), $1, 'nyc', now(), 8.4, 14.50, 'completed')")),
        (2, format!("UPDATE {s}.trips SET status = 'disputed' WHERE trip_id = $1::text::uuid")),
        (1, format!("UPDATE {s}.drivers SET rating = 4.87 WHERE driver_id = $1")),
    ];
    let c = pg.client();
    for (i, (n, sql)) in mix.iter().enumerate() {
        let st = c.prepare(sql).await.expect("prepare");
        for k in 0..*n {
            let driver = format!("drv_{}", 1 + k % 400);
            let id = "1b4e28ba-2fa1-11d2-883f-0016d3cca427";
            match i {
                1 => {
                    c.execute(&st, &[&"nyc", &"2024-01-02", &"2024-01-03"])
                        .await
                }
                2 | 5 => c.execute(&st, &[&id]).await,
                _ => c.execute(&st, &[&driver]).await,
            }
            .expect("run the mix");
        }
    }
    let src = open(pg).await;
    let read = pgss::read(&src).await.expect("pg_stat_statements");
    src.close().await.expect("close");
    // The schema's name followed by a dot: only this test's statements name it so (its
    // setup names it quoted, as `"t_…"`).
    let prefix = format!("{s}.");
    read.statements
        .iter()
        .filter(|st| st.query.contains(&prefix))
        .map(|st| (st.query.replace(&prefix, ""), st.clone()))
        .collect()
}

/// Whether the workload read from pg_stat_statements ranks the patterns as the file does: the
/// same statements, heaviest first (compared by kind and table), with the mix's calls.
fn ranks_like_the_file(ours: &[(String, pgss::Statement)]) -> Result<(), String> {
    let live = remodel_sql::workload::read_server_statements(
        "pg_stat_statements",
        ours.iter()
            .map(|(q, st)| remodel_sql::workload::ServerStatement {
                query: q,
                calls: st.calls,
                total_ms: Some(st.total_ms),
                rows: Some(st.rows),
            }),
    );
    let file = remodel_sql::workload::read_files(
        &[format!(
            "{}/../../examples/rideshare/queries.sql",
            env!("CARGO_MANIFEST_DIR")
        )],
        remodel_sql::workload::Format::Auto,
    )
    .expect("queries");
    let shape = |w: &remodel_model::Workload| -> Vec<String> {
        w.patterns
            .iter()
            .map(|p| {
                let first = p
                    .sql
                    .split_whitespace()
                    .next()
                    .unwrap_or_default()
                    .to_string();
                let table = ["trips", "drivers", "cities"]
                    .into_iter()
                    .find(|t| p.sql.contains(t))
                    .unwrap_or_default();
                format!("{first} {table}")
            })
            .collect()
    };
    let (got, want) = (shape(&live.workload), shape(&file.workload));
    if got != want {
        return Err(format!("ranked {got:?}, the file {want:?}"));
    }
    let calls: Vec<u64> = live.workload.patterns.iter().map(|p| p.calls).collect();
    if calls != [1200, 400, 300, 150, 86, 2, 1] {
        return Err(format!(
            "calls {calls:?}, the mix [1200, 400, 300, 150, 86, 2, 1]"
        ));
    }
    Ok(())
}

/// The ranking must hold exactly. Other sessions of the shared server can evict this test's
/// rarest statements from pg_stat_statements while it runs (or reset it); then, and only then,
/// the mix is run again in a fresh schema, a few times at most.
#[tokio::test]
async fn pg_stat_statements_ranks_the_rideshare_mix_like_the_file() {
    remodel_testdb::live!(Postgres);
    const ATTEMPTS: usize = 3;
    for attempt in 1..=ATTEMPTS {
        let pg = PgSchema::create("cat_pgss").await.expect("schema");
        let before = pgss_epoch(pg.client()).await;
        let ours = run_the_mix(&pg).await;
        let after = pgss_epoch(pg.client()).await;
        let verdict = ranks_like_the_file(&ours);
        pg.cleanup().await.expect("cleanup");
        match verdict {
            Ok(()) => return,
            Err(why) if before != after && attempt < ATTEMPTS => eprintln!(
                "attempt {attempt}: {why}; pg_stat_statements evicted or reset statements meanwhile ({} -> {} deallocations): running the mix again",
                before.0, after.0
            ),
            Err(why) if before != after => panic!(
                "{why}; pg_stat_statements evicted or reset statements during each of {ATTEMPTS} runs (pg_stat_statements.max too small for the server's traffic?)"
            ),
            Err(why) => panic!("{why} (nothing was evicted meanwhile)"),
        }
    }
}

/// A decoy for the AuctionMark test: a column named like a region id (`i_region_id` →
/// `region`) that holds the shipping carrier's zone numbers, 40..99, of which only 40..62 are
/// also region ids.
const AUCTIONMARK_DECOY: &str = "
ALTER TABLE item ADD COLUMN i_region_id bigint;
UPDATE item SET i_region_id = 40 + (hashint4(substr(i_id, 3)::int * 19) & 2147483647) % 60;
";

/// Drops every foreign key of the current schema.
const DROP_FOREIGN_KEYS: &str = "
DO $$
DECLARE r record;
BEGIN
  FOR r IN SELECT conrelid::regclass AS t, conname FROM pg_constraint
            WHERE contype = 'f' AND connamespace = current_schema()::regnamespace LOOP
    EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', r.t, r.conname);
  END LOOP;
END $$;
";

/// AuctionMark loaded with rows that respect its foreign keys, the keys then dropped: the
/// probes find every single-column key again — among them the role-named `ib_buyer_id`,
/// `ic_buyer_id` and `uf_from_id` (users in the role of buyer and rater; no name points to
/// `useracct`) and the self-reference `category.c_parent_id` — and refute the decoy.
#[tokio::test]
async fn probes_recover_auctionmark_keys_dropped_from_its_schema() {
    remodel_testdb::live!(Postgres);
    let root = format!("{}/../..", env!("CARGO_MANIFEST_DIR"));
    let ddl_file = "fixtures/corpora/auctionmark/ddl-postgres.sql";
    let ddl = std::fs::read_to_string(format!("{root}/{ddl_file}")).expect("ddl");
    let rows = std::fs::read_to_string(format!("{root}/fixtures/catalog/auctionmark/rows.sql"))
        .expect("rows");
    let pg = PgSchema::create("cat_auctionmark").await.expect("schema");
    let c = pg.client();
    c.batch_execute(&ddl).await.expect("ddl");
    // With the keys declared: Postgres checks that the rows respect them.
    c.batch_execute(&rows).await.expect("rows");
    c.batch_execute(AUCTIONMARK_DECOY).await.expect("decoy");
    c.batch_execute(DROP_FOREIGN_KEYS).await.expect("drop keys");
    pg.analyze().await.expect("analyze");

    let src = open(&pg).await;
    let read = schema::read(&src).await.expect("schema");
    assert!(read.schema.tables.iter().all(|t| t.foreign_keys.is_empty()));
    let st = stats::read(&src, &read.schema).await.expect("stats");
    let found = probes::probe(&src, &read.schema, Some(&st.stats), &Default::default())
        .await
        .expect("probes");
    src.close().await.expect("close");
    let evidence = |fk: &remodel_model::ForeignKey| match &fk.origin {
        FkOrigin::Inferred { evidence } => evidence.clone(),
        other => panic!("a found key is inferred: {other:?}"),
    };
    let pair = |t: &str, fk: &remodel_model::ForeignKey| {
        format!(
            "{t}.{} -> {}.{}",
            fk.columns[0], fk.ref_table, fk.ref_columns[0]
        )
    };
    let confirmed: Vec<String> = found.confirmed.iter().map(|(t, fk)| pair(t, fk)).collect();

    // Every single-column key the corpus declares is found again (the probes test single
    // columns; AuctionMark's composite keys to `item` and `item_bid` are out of their reach).
    let declared = remodel_sql::ddl::load_str(ddl_file, &ddl).schema;
    let singles: Vec<String> = declared
        .tables
        .iter()
        .flat_map(|t| t.foreign_keys.iter().map(move |fk| (t, fk)))
        .filter(|(_, fk)| fk.columns.len() == 1)
        .map(|(t, fk)| pair(&t.name, fk))
        .collect();
    assert_eq!(singles.len(), 13);
    let missed: Vec<&String> = singles.iter().filter(|k| !confirmed.contains(k)).collect();
    assert!(missed.is_empty(), "not recovered: {missed:?}\n{found:#?}");

    // What was found, with its evidence: the declared keys, and the seller columns of the
    // composite keys (`ib_u_id`: the item's seller, a user — true of every row). The
    // role-named buyer, rater and parent columns are found though no name points to their
    // table. The counter `useracct_attributes.ua_id` (0..1999, every value different) lies in
    // category's id range 1..2000 but is not taken for a reference to it.
    let mut text = String::new();
    for (t, fk) in &found.confirmed {
        text.push_str(&format!("{}\n    {}\n", pair(t, fk), evidence(fk)));
    }
    for r in &found.rejected {
        text.push_str(&format!(
            "rejected {}.{} -> {}.{}\n    {}\n",
            r.table, r.columns[0], r.ref_table, r.ref_columns[0], r.evidence
        ));
    }
    expect![[r#"
        useracct.u_r_id -> region.r_id
            data: all 1000 sampled values (62 distinct) of useracct.u_r_id -> region.r_id are in region.r_id (100% found, chance of that by accident 1.0e0; named like the key region.r_id)
        useracct_attributes.ua_u_id -> useracct.u_id
            data: all 970 sampled values (737 distinct) of useracct_attributes.ua_u_id -> useracct.u_id are in useracct.u_id (100% found; named like the key useracct.u_id)
        global_attribute_group.gag_c_id -> category.c_id
            data: all 100 sampled values (96 distinct) of global_attribute_group.gag_c_id -> category.c_id are in category.c_id (100% found, chance of that by accident 1.0e0; named like the key category.c_id)
        global_attribute_value.gav_gag_id -> global_attribute_group.gag_id
            data: all 500 sampled values (100 distinct) of global_attribute_value.gav_gag_id -> global_attribute_group.gag_id are in global_attribute_group.gag_id (100% found; named like the key global_attribute_group.gag_id)
        item.i_u_id -> useracct.u_id
            data: all 1000 sampled values (623 distinct) of item.i_u_id -> useracct.u_id are in useracct.u_id (100% found; named like the key useracct.u_id)
        item.i_c_id -> category.c_id
            data: all 1000 sampled values (798 distinct) of item.i_c_id -> category.c_id are in category.c_id (100% found, chance of that by accident 1.0e0; named like the key category.c_id)
        item_attribute.ia_u_id -> useracct.u_id
            data: all 988 sampled values (595 distinct) of item_attribute.ia_u_id -> useracct.u_id are in useracct.u_id (100% found; named like the key useracct.u_id)
        item_attribute.ia_gag_id -> global_attribute_group.gag_id
            data: all 988 sampled values (100 distinct) of item_attribute.ia_gag_id -> global_attribute_group.gag_id are in global_attribute_group.gag_id (100% found; named like the key global_attribute_group.gag_id)
        item_image.ii_u_id -> useracct.u_id
            data: all 985 sampled values (578 distinct) of item_image.ii_u_id -> useracct.u_id are in useracct.u_id (100% found; named like the key useracct.u_id)
        item_comment.ic_u_id -> useracct.u_id
            data: all 979 sampled values (573 distinct) of item_comment.ic_u_id -> useracct.u_id are in useracct.u_id (100% found; named like the key useracct.u_id)
        item_bid.ib_u_id -> useracct.u_id
            data: all 964 sampled values (567 distinct) of item_bid.ib_u_id -> useracct.u_id are in useracct.u_id (100% found; named like the key useracct.u_id)
        item_max_bid.imb_u_id -> useracct.u_id
            data: all 964 sampled values (631 distinct) of item_max_bid.imb_u_id -> useracct.u_id are in useracct.u_id (100% found; named like the key useracct.u_id)
        item_max_bid.imb_ib_u_id -> useracct.u_id
            data: all 964 sampled values (631 distinct) of item_max_bid.imb_ib_u_id -> useracct.u_id are in useracct.u_id (100% found; named like the key useracct.u_id)
        item_purchase.ip_ib_u_id -> useracct.u_id
            data: all 800 sampled values (539 distinct) of item_purchase.ip_ib_u_id -> useracct.u_id are in useracct.u_id (100% found; named like the key useracct.u_id)
        useracct_feedback.uf_u_id -> useracct.u_id
            data: all 800 sampled values (539 distinct) of useracct_feedback.uf_u_id -> useracct.u_id are in useracct.u_id (100% found; named like the key useracct.u_id)
        useracct_feedback.uf_i_u_id -> useracct.u_id
            data: all 800 sampled values (539 distinct) of useracct_feedback.uf_i_u_id -> useracct.u_id are in useracct.u_id (100% found; named like the key useracct.u_id)
        useracct_item.ui_u_id -> useracct.u_id
            data: all 800 sampled values (567 distinct) of useracct_item.ui_u_id -> useracct.u_id are in useracct.u_id (100% found; named like the key useracct.u_id)
        useracct_item.ui_i_u_id -> useracct.u_id
            data: all 800 sampled values (539 distinct) of useracct_item.ui_i_u_id -> useracct.u_id are in useracct.u_id (100% found; named like the key useracct.u_id)
        useracct_item.ui_ip_ib_u_id -> useracct.u_id
            data: all 800 sampled values (539 distinct) of useracct_item.ui_ip_ib_u_id -> useracct.u_id are in useracct.u_id (100% found; named like the key useracct.u_id)
        useracct_watch.uw_u_id -> useracct.u_id
            data: all 973 sampled values (611 distinct) of useracct_watch.uw_u_id -> useracct.u_id are in useracct.u_id (100% found; named like the key useracct.u_id)
        useracct_watch.uw_i_u_id -> useracct.u_id
            data: all 973 sampled values (543 distinct) of useracct_watch.uw_i_u_id -> useracct.u_id are in useracct.u_id (100% found; named like the key useracct.u_id)
        category.c_parent_id -> category.c_id
            data: all 980 sampled values (672 distinct) of category.c_parent_id -> category.c_id are in category.c_id (100% found, chance of that by accident 1.0e0; no name points to it; the values spread over 99% of the key range)
        item_comment.ic_buyer_id -> useracct.u_id
            data: all 979 sampled values (624 distinct) of item_comment.ic_buyer_id -> useracct.u_id are in useracct.u_id (100% found; no name points to it)
        item_bid.ib_buyer_id -> useracct.u_id
            data: all 964 sampled values (619 distinct) of item_bid.ib_buyer_id -> useracct.u_id are in useracct.u_id (100% found; no name points to it)
        useracct_feedback.uf_from_id -> useracct.u_id
            data: all 800 sampled values (567 distinct) of useracct_feedback.uf_from_id -> useracct.u_id are in useracct.u_id (100% found; no name points to it)
        rejected item.i_region_id -> region.r_id
            data: 643 of 1000 sampled values (60 distinct) of item.i_region_id -> region.r_id are not in region.r_id (35.7% found); the name (named after the table region) is no reference
    "#]].assert_eq(&text);
    for role in [
        "item_comment.ic_buyer_id -> useracct.u_id",
        "item_bid.ib_buyer_id -> useracct.u_id",
        "useracct_feedback.uf_from_id -> useracct.u_id",
        "category.c_parent_id -> category.c_id",
    ] {
        let (_, fk) = found
            .confirmed
            .iter()
            .find(|(t, fk)| pair(t, fk) == role)
            .unwrap_or_else(|| panic!("{role} not found"));
        assert!(evidence(fk).contains("no name points to it"), "{role}");
    }
    assert!(!confirmed
        .iter()
        .any(|k| k.starts_with("useracct_attributes.ua_id ")));
    assert_eq!(found.rejected.len(), 1);

    // The analyzer's naming inference leaves the refuted guess alone, and a role-named
    // relationship carries the data's evidence.
    let (analysis, ev) = analyzed(&read.schema, &found, "item_bid", "ib_buyer_id");
    let item = analysis.schema.table("item").expect("item");
    assert!(
        !item.foreign_keys.iter().any(|fk| fk.ref_table == "region"),
        "{:?}",
        item.foreign_keys
    );
    assert!(ev.contains("no name points to it"), "{ev}");
    pg.cleanup().await.expect("cleanup");
}
