//! Issue 20, classes 3–5 (write paths that did something else than their SQL), against real
//! Postgres and Cassandra: `remodel replay --writes` of the plans of `fixtures/plan/defaults`,
//! `upserts` and `write_filters` on generated rows, each write followed by the reads it affects.
//! Replay's samplers draw what catches each class: INSERTs that leave defaulted and generated
//! columns out, read back (`now()` is one instant per execution on both sides); every upsert run
//! a second time on the same conflict key with other values; a self-join's two rows different
//! (`$1 <> $2`); users whose sessions a DELETE's extra condition splits, and conditions drawn
//! from another row half the time. Each write pattern must be replayed with no difference.
//! Needs `REMODEL_PG_URL` and `REMODEL_CQL_URL`.

mod support;

use serde_json::Value;
use support::live::Case;

/// `remodel replay --writes` of fixture `case`'s plan on generated rows; returns replay.json and
/// what the command printed.
fn replay(case: &Case, fixture: &str) -> (Value, String) {
    let plan = case.plan(&format!("fixtures/plan/{fixture}"));
    case.replay_writes(&plan, 8, 400, 3)
}

/// Asserts that write pattern `id` was replayed, compared reads after it, and found nothing.
fn replayed_clean(report: &Value, id: &str, shown: &str) {
    let p = report["patterns"]
        .as_array()
        .and_then(|ps| {
            ps.iter()
                .find(|p| p["pattern"] == id && p["kind"] != "select")
        })
        .unwrap_or_else(|| panic!("{id} is not in replay.json:\n{shown}"));
    support::live::assert_write_clean(p, id, shown);
}

/// Asserts that pattern `id` is stated not modelled (replay does not run it) with a reason
/// naming `why`.
fn not_modelled(report: &Value, id: &str, why: &str) {
    let p = report["patterns"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["pattern"] == id))
        .unwrap_or_else(|| panic!("{id} is not in replay.json"));
    assert_eq!(p["outcome"], "exception", "{id}: {p:#}");
    let reason = p["reason"].as_str().unwrap_or_default();
    assert!(reason.contains(why), "{id}: {reason}");
}

#[tokio::test(flavor = "multi_thread")]
async fn class3_defaults_and_generated_columns_reach_every_copy() {
    remodel_testdb::live!(Postgres, Cassandra);
    let case = Case::new("replay_defaults").await;
    let (report, shown) = replay(&case, "defaults");
    // INSERT INTO tickets (id, title): opened_at now(), ref gen_random_uuid(), status, priority,
    // title_upper generated; read back by id and by status.
    replayed_clean(&report, "q1", &shown);
    // UPDATE tickets SET title: title_upper follows.
    replayed_clean(&report, "q2", &shown);
    // INSERT INTO ticket_notes (ticket_id, body): a bigserial key and a now() default.
    replayed_clean(&report, "q5", &shown);
    // INSERT INTO ticket_audit: `DEFAULT current_user` has no typed form.
    not_modelled(&report, "q7", "current_user");
    case.cleanup().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn class4_upserts_and_self_joins_do_what_postgres_does() {
    remodel_testdb::live!(Postgres, Cassandra);
    let case = Case::new("replay_upserts").await;
    let (report, shown) = replay(&case, "upserts");
    // ON CONFLICT (cart_id, sku) DO UPDATE SET qty = cart_items.qty + EXCLUDED.qty.
    replayed_clean(&report, "q1", &shown);
    // ON CONFLICT (email) DO NOTHING, on a unique key that is not the primary key.
    replayed_clean(&report, "q3", &shown);
    // ON CONFLICT (email) DO UPDATE … WHERE subscribers.name <> EXCLUDED.name.
    replayed_clean(&report, "q4", &shown);
    // UPDATE accounts SET balance = s.balance FROM accounts s WHERE accounts.id = $1 AND s.id = $2.
    replayed_clean(&report, "q6", &shown);
    case.cleanup().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn class5_every_condition_of_a_write_is_applied() {
    remodel_testdb::live!(Postgres, Cassandra);
    let case = Case::new("replay_write_filters").await;
    let (report, shown) = replay(&case, "write_filters");
    // DELETE FROM sessions WHERE user_id = $1 AND revoked_at IS NULL.
    replayed_clean(&report, "q1", &shown);
    // UPDATE sessions SET revoked_at = $2 WHERE user_id = $1 AND device = $3 AND revoked_at IS NULL.
    replayed_clean(&report, "q2", &shown);
    // DELETE FROM sessions WHERE user_id = $1 AND created_at < $2.
    replayed_clean(&report, "q3", &shown);
    // UPDATE documents … WHERE id = $2 AND version = $3 (optimistic locking).
    replayed_clean(&report, "q6", &shown);
    case.cleanup().await;
}
