//! Every write right (issue "every write right"): write paths that succeed on any row Postgres
//! accepts and keep every copy, on the classes of statements that used to lose data. The live
//! replays are `tests/writes_right_live.rs`.

mod support;

use support::pipeline::{
    mapping_text, plan_files, plan_fixture, root, strict_violations, write_path,
};

/// Class 2: `INSERT INTO app.items …` (a table of schema `app`) binds every column of every
/// copy, and `UPDATE app.items SET qty = …` writes the copy that holds `qty`: the plan passes its
/// own checks (it used to drop every column but the key and fail check (h)).
#[test]
fn schema_qualified_writes_keep_every_column() {
    let plan = plan_fixture("qualified");
    let violations = strict_violations(&plan);
    assert!(violations.is_empty(), "{violations:#?}");
    let insert = write_path(&plan, "INSERT INTO app.items");
    let cql = &insert.targets[0].cql;
    assert!(
        cql.contains("(id, name, qty)") || cql.contains("id, name, qty"),
        "{cql}"
    );
    let update = write_path(&plan, "UPDATE app.items");
    assert_eq!(update.targets.len(), 1, "{update:#?}");
    assert!(
        update.targets[0].cql.contains("qty = ?"),
        "{}",
        update.targets[0].cql
    );
}

/// Class 3: the designer checks itself. On keyless many-to-many tables (reviews of items by
/// users, a trust graph between users) a table joining two keyless tables without a key that
/// identifies the other side, and a lookup table holding copies no write can keep, used to make
/// `remodel plan` end with four plan check errors; now the read and the write behind them are
/// stated unserved with the check they failed, and the plan passes its checks.
#[test]
fn the_designer_never_emits_a_plan_its_validator_refuses() {
    let plan = plan_fixture("reviews_trust");
    let violations = strict_violations(&plan);
    assert!(violations.is_empty(), "{violations:#?}");
    assert!(plan.design.violations.is_empty());
    let c = plan.design.coverage.as_ref().expect("coverage");
    let gaps: Vec<(&str, &str)> = c
        .gaps
        .iter()
        .map(|g| (g.pattern.as_str(), g.class.name()))
        .collect();
    assert_eq!(
        gaps,
        [("q1", "no_table"), ("q9", "no_write_path")],
        "{c:#?}"
    );
    for g in &c.gaps {
        assert!(g.reason.contains("failed the plan's own check"), "{g:?}");
    }
    assert_eq!(c.reads.served, 5);
}

/// Class 1: a listing ordered by a timestamp new rows leave NULL (`shipped_at`) keeps every row:
/// the clustering column stores NULL as the largest bigint (`epoch_micros_null_last`), where SQL
/// sorts NULLs by default, every write binds NULL so, and a read with only a lower bound reads
/// below the NULL rows; the expected mapping is `fixtures/plan/null_sort_keys/mapping.txt`.
#[test]
fn null_in_a_listing_key_is_stored_where_sql_sorts_it() {
    let plan = plan_fixture("null_sort_keys");
    let violations = strict_violations(&plan);
    assert!(violations.is_empty(), "{violations:#?}");
    let t = plan
        .design
        .tables
        .iter()
        .find(|t| t.clustering.iter().any(|k| k.column == "shipped_at"))
        .expect("the listing");
    let k = t
        .clustering
        .iter()
        .find(|k| k.column == "shipped_at")
        .expect("key");
    assert_eq!(
        k.encoding,
        Some(remodel_model::Encoding::EpochMicrosNullLast)
    );
    assert!(
        t.warnings.iter().all(|w| w.code != "nullable_key"),
        "{:?}",
        t.warnings
    );
    assert!(
        t.source_sql.contains("IS NULL THEN 9223372036854775807"),
        "{}",
        t.source_sql
    );
    let ranged = support::pipeline::read_mapping(
        &plan,
        "SELECT id, total, shipped_at FROM orders WHERE user_id = $1 AND shipped_at >",
    );
    assert!(
        ranged
            .cql
            .as_deref()
            .unwrap_or_default()
            .contains("shipped_at > ? AND shipped_at < ?"),
        "{ranged:?}"
    );
    let dir = support::pipeline::root().join("fixtures/plan/null_sort_keys");
    expect_test::expect_file![dir.join("mapping.txt")]
        .assert_eq(&support::pipeline::mapping_text(&plan));
}

/// Class 1 beyond microsecond timestamps (`fixtures/plan/null_sort_keys_typed/`): every
/// nullable clustering column with a bigint form stores NULL where the table's reads put it — a
/// date with `NULLS FIRST` ascending (`epoch_days_null_first`), a millisecond timestamp with
/// `NULLS FIRST` (`epoch_micros_null_first`), an integer descending and a smallint ascending by
/// SQL's default (`integer_null_last`) — and a one-sided range reads beside the NULL rows.
#[test]
fn null_in_a_listing_key_of_any_ordered_type_is_stored_where_sql_sorts_it() {
    use remodel_model::Encoding as E;
    let plan = plan_fixture("null_sort_keys_typed");
    let violations = strict_violations(&plan);
    assert!(violations.is_empty(), "{violations:#?}");
    let key = |table: &str, column: &str| {
        let t = plan
            .design
            .tables
            .iter()
            .find(|t| t.name == table)
            .unwrap_or_else(|| panic!("no table {table}"));
        let k = t.clustering.iter().find(|k| k.column == column);
        (
            k.and_then(|k| k.encoding),
            t.warnings.iter().any(|w| w.code == "nullable_key"),
        )
    };
    assert_eq!(
        key("tasks_by_project", "due_date"),
        (Some(E::EpochDaysNullFirst), false)
    );
    assert_eq!(
        key("events_by_stream", "happened_at"),
        (Some(E::EpochMicrosNullFirst), false)
    );
    assert_eq!(
        key("tasks_by_project_priority", "priority"),
        (Some(E::IntegerNullLast), false)
    );
    assert_eq!(
        key("runs_by_pipeline", "batch"),
        (Some(E::IntegerNullLast), false)
    );
    let before = support::pipeline::read_mapping(
        &plan,
        "SELECT id, title, due_date FROM tasks WHERE project_id = $1 AND due_date <",
    );
    assert!(
        before
            .cql
            .as_deref()
            .unwrap_or_default()
            .contains("due_date < ? AND due_date > ?"),
        "{before:?}"
    );
    let dir = support::pipeline::root().join("fixtures/plan/null_sort_keys_typed");
    expect_test::expect_file![dir.join("mapping.txt")]
        .assert_eq(&support::pipeline::mapping_text(&plan));
}

/// Class 1 for the types no key form holds NULL in (`fixtures/plan/null_sort_keys_client/`): a
/// listing ordered by a nullable `text`, `numeric` or `bigint` is not clustered by it (a CQL key
/// cannot hold the NULL rows, and the application's INSERT of a contact without a last name
/// would fail): the read takes the owner's partition and sorts it on the client in SQL's order,
/// NULLs where SQL puts them, then applies the LIMIT. A page with a bound on the column
/// (`last_name > $2`, which no NULL meets) keeps its clustering, the NULL rows left out there.
/// Two listings that put a nullable integer's NULLs on different sides get a table each.
#[test]
fn null_in_a_listing_key_without_a_key_form_is_sorted_on_the_client() {
    use remodel_model::SortBy;
    let plan = plan_fixture("null_sort_keys_client");
    let violations = strict_violations(&plan);
    assert!(violations.is_empty(), "{violations:#?}");
    for t in &plan.design.tables {
        assert!(
            t.warnings.iter().all(|w| w.code != "nullable_key"),
            "{}: {:?}",
            t.name,
            t.warnings
        );
    }
    let sorted = |sql: &str, column: &str| {
        let (q, t) = support::pipeline::read_and_table(&plan, sql);
        assert!(
            t.clustering.iter().all(|k| k.column != column),
            "{} clusters by {column}",
            t.name
        );
        q.client
            .sort
            .iter()
            .map(|k| match &k.by {
                SortBy::Column { column } => (column.column.clone(), k.desc, k.nulls_first),
                other => panic!("{other:?}"),
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        sorted("SELECT id, last_name, note FROM contacts", "last_name"),
        [("last_name".to_string(), false, false)]
    );
    assert_eq!(
        sorted("SELECT id, balance FROM contacts", "balance"),
        [("balance".to_string(), true, false)]
    );
    assert_eq!(
        sorted("SELECT id, company_id FROM contacts", "company_id"),
        [
            ("company_id".to_string(), false, true),
            ("id".to_string(), false, false)
        ]
    );
    let page = support::pipeline::read_mapping(
        &plan,
        "SELECT id, last_name FROM contacts WHERE owner_id = $1 AND last_name >",
    );
    let cql = page.cql.as_deref().unwrap_or_default();
    assert!(cql.contains("last_name > ?"), "{page:?}");
    assert!(page.client.sort.is_empty(), "{page:?}");
    // Two listings by a nullable integer, one with NULLs last (SQL's default), one first: each
    // is served by a table storing NULL on its side.
    let rank_key = |sql: &str| {
        let (q, t) = support::pipeline::read_and_table(&plan, sql);
        let k = t.clustering.iter().find(|k| k.column == "rank");
        (q.client.sort.is_empty(), k.and_then(|k| k.encoding))
    };
    assert_eq!(
        rank_key("SELECT id, rank FROM contacts"),
        (true, Some(remodel_model::Encoding::IntegerNullLast))
    );
    assert_eq!(
        rank_key("SELECT id, rank, note FROM contacts"),
        (true, Some(remodel_model::Encoding::IntegerNullFirst))
    );
    let dir = root().join("fixtures/plan/null_sort_keys_client");
    expect_test::expect_file![dir.join("mapping.txt")].assert_eq(&mapping_text(&plan));
}

/// Class 5: folds and copies take the parent row their own foreign key names. A comment names
/// two users (author, recipient) and an item whose seller is a user too
/// (`fixtures/plan/fold_parents/`, a session log with two N+1 loops):
/// - the loop after `… WHERE to_user_id = $1` folds the author (`from_user_id`: the recipient
///   is pinned, the same in every row), and copies only the nickname it looks up (`SELECT *` of
///   the list no longer brings in every users column: e-mail, password, rating);
/// - the loop after `… WHERE item_id = $1` is not folded: two columns of its rows refer to
///   users, and the log does not say which one it looks up;
/// - a new comment's copy of its author's nickname is read from `users_by_id` by
///   `from_user_id`, never from `items_by_id` by `item_id` (the item's seller), which check (s)
///   refuses.
#[test]
fn folds_and_copies_take_the_row_their_own_key_names() {
    let dir = root().join("fixtures/plan/fold_parents");
    let (plan, _) = plan_files(
        &[dir.join("schema.sql")],
        &[dir.join("app.log")],
        None,
        "fold_parents",
    );
    let violations = strict_violations(&plan);
    assert!(violations.is_empty(), "{violations:#?}");
    let text = mapping_text(&plan);
    expect_test::expect_file![dir.join("plan.txt")].assert_eq(&text);
    let folded: Vec<&remodel_model::AccessPattern> = plan
        .workload
        .patterns
        .iter()
        .filter(|p| p.id.contains('+'))
        .collect();
    assert_eq!(folded.len(), 1, "{text}");
    let sql = &folded[0].sql;
    assert!(
        sql.contains("ON remodel_loop.id = comments.from_user_id"),
        "{sql}"
    );
    assert!(
        sql.starts_with("SELECT comments.*, remodel_loop.nickname AS users_nickname FROM"),
        "{sql}"
    );
    let list = plan
        .design
        .tables
        .iter()
        .find(|t| t.serves.contains(&folded[0].id))
        .expect("the folded read's table");
    for secret in ["email", "password"] {
        assert!(!list.columns.iter().any(|c| c.name == secret), "{list:#?}");
    }
    let item_loop = plan
        .design
        .loops
        .iter()
        .find(|l| l.pattern.is_none())
        .expect("the loop after the item's comments");
    assert!(
        item_loop
            .reason
            .contains("comments.from_user_id, comments.to_user_id"),
        "{item_loop:?}"
    );
    let insert = write_path(&plan, "INSERT INTO comments");
    let reads: Vec<String> = insert
        .read_before_write
        .iter()
        .map(|r| {
            format!(
                "{} {:?}",
                r.cql,
                r.binds.iter().map(|b| &b.value).collect::<Vec<_>>()
            )
        })
        .collect();
    assert_eq!(reads.len(), 1, "{reads:#?}");
    assert!(
        reads[0].contains("FROM fold_parents.users_by_id WHERE id = ?"),
        "{reads:#?}"
    );
    assert!(reads[0].contains("from_user_id"), "{reads:#?}");
}

/// Class 5, batches that fit: a nickname change rewrites the author's copy in every comment
/// they wrote, one statement per comment. Sized by its rows (statistics: 2,000 comments for the
/// author with the most), the logged batch would pass Cassandra's `batch_size_fail_threshold`
/// (50 KiB), which refuses it: the plan sends it in chunks under the warning threshold and says
/// so. Without statistics (a few comments per author) it stays one batch.
#[test]
fn a_batch_that_could_pass_the_size_limit_is_sent_in_chunks() {
    let dir = root().join("fixtures/plan/fold_parents");
    let stats: remodel_model::Statistics =
        serde_json::from_str(&std::fs::read_to_string(dir.join("stats.json")).expect("stats.json"))
            .expect("stats");
    let (plan, _) = plan_files(
        &[dir.join("schema.sql")],
        &[dir.join("app.log")],
        Some(&stats),
        "fold_parents",
    );
    let violations = strict_violations(&plan);
    assert!(violations.is_empty(), "{violations:#?}");
    let rename = write_path(&plan, "UPDATE users SET nickname");
    let batch = rename.batch.as_ref().expect("a batch plan");
    let chunk = batch.max_statements.expect("sent in chunks") as u64;
    let per_statement = rename.batch_bytes / rename.targets.len() as u64;
    assert!(chunk * per_statement <= 5 * 1024, "{batch:?}");
    assert!(
        batch.reason.contains("batch_size_fail_threshold"),
        "{}",
        batch.reason
    );
    // A path of a few statements stays one batch.
    let insert = write_path(&plan, "INSERT INTO comments");
    assert_eq!(insert.batch.as_ref().and_then(|b| b.max_statements), None);
}
