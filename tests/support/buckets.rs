//! Plans of a time-window read with its bucket bind in both forms issue 20 compares: the bucket
//! of the window's lower bound only (what the designer wrote before the fix; it loses the rows
//! past the first bucket), and every bucket between the bounds (the fix, format 2). A test
//! builds whichever form the designer did not write, so it holds before and after the fix lands.

use serde_json::{json, Value};

/// Read `pattern` of `plan` and the index of its bind of bucket column `column`.
fn read<'p>(plan: &'p mut Value, pattern: &str, column: &str) -> (&'p mut Value, usize) {
    let q = plan["design"]["queries"]
        .as_array_mut()
        .expect("queries")
        .iter_mut()
        .find(|q| q["pattern"] == pattern)
        .unwrap_or_else(|| panic!("no read {pattern}"));
    let i = q["binds"]
        .as_array()
        .expect("binds")
        .iter()
        .position(|b| b["column"] == column)
        .unwrap_or_else(|| panic!("{pattern} binds no {column}"));
    (q, i)
}

/// `plan` with read `pattern` binding `column` to the day bucket (UTC) of `$lower` only.
pub fn lower_bound_only(plan: &Value, pattern: &str, column: &str, lower: u32) -> Value {
    let mut plan = plan.clone();
    let (q, i) = read(&mut plan, pattern, column);
    q["binds"][i]["value"] = json!({"from": "bucket", "bucket": "day", "time_zone": "UTC",
        "of": {"from": "expr", "expr": {"kind": "param", "n": lower}}});
    q["partitions"] = json!({"kind": "one"});
    plan
}

/// `plan` with read `pattern` running once per day bucket (UTC) from `$lower`'s to `$upper`'s;
/// `client` is the client's work over the merged rows (a sort and a LIMIT when the read has
/// them). A plan whose read already binds every bucket (the designer's fix) is returned as it is.
pub fn every_bucket(
    plan: &Value,
    pattern: &str,
    column: &str,
    (lower, upper): (u32, u32),
    client: Value,
) -> Value {
    let mut plan = plan.clone();
    let (q, i) = read(&mut plan, pattern, column);
    if q["binds"][i]["value"]["from"] == "buckets" {
        return plan;
    }
    q["binds"][i]["value"] = json!({"from": "buckets", "bucket": "day", "time_zone": "UTC",
        "lower": {"from": "expr", "expr": {"kind": "param", "n": lower}},
        "upper": {"from": "expr", "expr": {"kind": "param", "n": upper}}});
    q["partitions"] = json!({"kind": "each", "bind": i});
    q["client"] = client;
    plan["format_version"] = json!(plan["format_version"].as_u64().unwrap_or(1).max(2));
    plan
}
