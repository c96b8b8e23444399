//! The predicate rewrite cases of `fixtures/analyze/rewrites/` (`rewrites.rs` prints what the
//! analyzer makes of them, `rewrites_pg_live.rs` checks them against Postgres).

use super::{pattern, root};
use remodel_analyze::analyze_pattern;
use remodel_model::{AccessPattern, EqualityOp, PatternAnalysis, RangeBound, Schema};

/// Where the cases, the schema and the expected table live.
pub const DIR: &str = "fixtures/analyze/rewrites";

/// One predicate shape and the parameter values of a few calls.
#[derive(Debug, Clone)]
pub struct Case {
    /// Line in `cases.txt`.
    pub line: usize,
    /// The column of `r` the predicate is on.
    pub column: String,
    /// The predicate as an application writes it.
    pub predicate: String,
    /// Per call, the values of `$1`, `$2`, … as SQL literals.
    pub calls: Vec<Vec<String>>,
}

/// The cases of `cases.txt`, in order.
pub fn cases() -> Vec<Case> {
    let path = root().join(DIR).join("cases.txt");
    let text = std::fs::read_to_string(&path).expect("cases.txt readable");
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split(" | ").collect();
        assert!(
            fields.len() == 3 || (fields.len() == 2 && line.ends_with(" |")),
            "cases.txt:{}: want `column | predicate | calls`",
            i + 1
        );
        let calls = fields
            .get(2)
            .map(|c| c.trim())
            .filter(|c| !c.is_empty())
            .map(|c| {
                c.split(';')
                    .map(|call| call.split(',').map(|v| v.trim().to_string()).collect())
                    .collect()
            })
            .unwrap_or_default();
        out.push(Case {
            line: i + 1,
            column: fields[0].trim().to_string(),
            predicate: fields[1].trim().trim_end_matches(" |").to_string(),
            calls,
        });
    }
    out
}

/// The schema of `schema.sql` (table `r`).
pub fn schema() -> Schema {
    let path = root().join(DIR).join("schema.sql");
    remodel_sql::ddl::load_files(&[path])
        .expect("schema.sql readable")
        .schema
}

/// The DDL of `schema.sql`, to create the same table in Postgres.
pub fn schema_sql() -> String {
    std::fs::read_to_string(root().join(DIR).join("schema.sql")).expect("schema.sql readable")
}

/// The statement of a case.
pub fn statement(c: &Case) -> String {
    format!("SELECT id FROM r WHERE {}", c.predicate)
}

/// The pattern the workload reader makes of the statement: normalized SQL (literals become
/// `$n`) with the statement itself as its example.
pub fn workload_pattern(c: &Case) -> AccessPattern {
    let stmt = statement(c);
    let n = remodel_sql::normalize::normalize(&stmt).expect("case normalizes");
    let ex = remodel_sql::normalize::example(&stmt, &[]).expect("case renders");
    pattern("q1", &n.sql, Some(&ex), 1)
}

/// The analysis of the pattern as the workload reader makes it.
pub fn analyze_workload(s: &Schema, c: &Case) -> PatternAnalysis {
    analyze_pattern(s, &workload_pattern(c)).0
}

/// The analysis of the statement as written (constants inline, `$n` are the calls' values).
pub fn analyze_instance(s: &Schema, c: &Case) -> PatternAnalysis {
    analyze_pattern(s, &pattern("q1", &statement(c), None, 1)).0
}

fn bound_sql(col: &str, op: &str, b: &RangeBound) -> String {
    format!("{col} {op} {}", b.example.as_deref().unwrap_or(&b.value))
}

/// The analysis' restrictions as one predicate on bare columns (equalities, then ranges, then
/// residual filters), each in parentheses; `TRUE` when there are none.
pub fn restrictions_sql(a: &PatternAnalysis) -> String {
    let mut parts = Vec::new();
    for e in &a.equality {
        let col = &e.column.column;
        let v = e.value.as_deref().unwrap_or("NULL");
        parts.push(match e.op {
            EqualityOp::Eq => format!("{col} = {v}"),
            EqualityOp::In => format!("{col} IN {v}"),
            EqualityOp::IsNull => format!("{col} IS NULL"),
        });
    }
    for r in &a.ranges {
        let col = &r.column.column;
        if let Some(b) = &r.lower {
            parts.push(bound_sql(col, if b.inclusive { ">=" } else { ">" }, b));
        }
        if let Some(b) = &r.upper {
            parts.push(bound_sql(col, if b.inclusive { "<=" } else { "<" }, b));
        }
    }
    parts.extend(a.residual.iter().map(|r| r.sql.clone()));
    if parts.is_empty() {
        return "TRUE".into();
    }
    parts
        .iter()
        .map(|p| format!("({p})"))
        .collect::<Vec<_>>()
        .join(" AND ")
}

/// `sql` with `$1`, `$2`, … replaced by the call's values (highest number first, so `$1` does
/// not eat the start of `$12`); a negative number goes in parentheses, as a bound parameter
/// would (`-$1` must not become the comment `--2`).
pub fn substitute(sql: &str, values: &[String]) -> String {
    let mut out = sql.to_string();
    for (i, v) in values.iter().enumerate().rev() {
        let v = if v.starts_with('-') {
            format!("({v})")
        } else {
            v.clone()
        };
        out = out.replace(&format!("${}", i + 1), &v);
    }
    out
}
