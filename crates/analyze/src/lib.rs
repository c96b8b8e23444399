//! Access patterns and relationships: what each statement filters, sorts and reads, and whether
//! related data is embedded or referenced.
//!
//! Architecture invariant: no I/O; reads and returns plan-model values only. Never panics on a
//! statement: what it cannot model is marked `unmodeled` with a reason and reported.

// Functions stay short enough to read as one pass (ARCHITECTURE.md; `cargo clippy` in CI).
#![warn(clippy::too_many_lines)]

mod config;
mod exprs;
pub mod infer_fk;
pub mod joins;
mod lookups;
mod loops;
mod pattern;
mod predicates;
pub mod relationships;
pub mod render;
mod rewrite;
mod timeval;
mod typed;

pub use config::{AnalyzeConfig, ConfigError};

use remodel_model::{
    AccessPattern, Analysis, Diagnostic, PatternAnalysis, Relationship, Schema, Severity,
    TableIndex, Workload,
};

/// Analyzes a workload against a schema.
pub fn analyze(schema: &Schema, workload: &Workload, config: &AnalyzeConfig) -> Analysis {
    analyze_owned(schema, workload.clone(), config)
}

/// [`analyze`], taking the workload: a caller done with it does not hold it twice (100,000
/// patterns are tens of megabytes).
pub fn analyze_owned(schema: &Schema, mut wl: Workload, config: &AnalyzeConfig) -> Analysis {
    let mut diagnostics = Vec::new();
    for p in &mut wl.patterns {
        let (a, mut d) = analyze_pattern_in(schema, config, p);
        p.analysis = a;
        diagnostics.append(&mut d);
    }
    // The lookups the statements use become columns; the statements are read again with them.
    let mut schema = schema.clone();
    let wanted = lookups::wanted(&schema, &wl.patterns);
    if lookups::add(&mut schema, &wanted) > 0 {
        diagnostics.clear();
        for p in &mut wl.patterns {
            let (a, mut d) = analyze_pattern_in(&schema, config, p);
            p.analysis = a;
            diagnostics.append(&mut d);
        }
        for (c, f) in &wanted {
            diagnostics.push(Diagnostic {
                severity: Severity::Note,
                location: None,
                message: format!(
                    "lookup column for {}({c}): the statements look rows up by it; a table may be keyed by it",
                    f.name()
                ),
            });
        }
    }

    mark_one_offs(&mut wl, config);
    let inferred = infer_fk::infer(&schema, &wl.patterns, config);
    let holders: Vec<Option<usize>> = {
        let tables = TableIndex::new(&schema);
        inferred.iter().map(|i| tables.position(&i.table)).collect()
    };
    for (inf, holder) in inferred.into_iter().zip(holders) {
        if let remodel_model::FkOrigin::Inferred { evidence } = &inf.fk.origin {
            diagnostics.push(Diagnostic {
                severity: Severity::Note,
                location: None,
                message: format!(
                    "inferred foreign key {}({}) -> {}({}): {evidence}",
                    inf.table,
                    inf.fk.columns.join(", "),
                    inf.fk.ref_table,
                    inf.fk.ref_columns.join(", ")
                ),
            });
        }
        if let Some(t) = holder.and_then(|i| schema.tables.get_mut(i)) {
            t.foreign_keys.push(inf.fk);
        }
    }
    let tables = TableIndex::new(&schema);
    for p in &mut wl.patterns {
        for step in &mut p.analysis.join_path {
            step.foreign_key = joins::match_fk(&tables, step).map(|(label, _)| label);
        }
    }
    let relationships = relationships::classify(&tables, &wl, config);
    rows_from_fanout(&tables, &mut wl, &relationships);
    let analyse = |p: &AccessPattern| {
        let mut p = p.clone();
        p.analysis = analyze_pattern_in(&schema, config, &p).0;
        for step in &mut p.analysis.join_path {
            step.foreign_key = joins::match_fk(&tables, step).map(|(label, _)| label);
        }
        p
    };
    let (loops, transactions, notes) = loops::find(&tables, &wl, &analyse);
    diagnostics.extend(notes);
    drop(tables);
    Analysis {
        schema,
        workload: wl,
        relationships,
        diagnostics,
        loops,
        transactions,
    }
}

/// Marks the statements run too rarely to shape the design (a data load among thousands of
/// calls), with the numbers that made them one-offs.
fn mark_one_offs(wl: &mut Workload, config: &AnalyzeConfig) {
    let total = wl.total_calls().max(1);
    for p in &mut wl.patterns {
        let share = p.calls as f64 / total as f64;
        if p.calls < config.min_calls && share < config.one_off_share {
            p.analysis.one_off = Some(format!(
                "run {} time{} of {} calls in the workload ({:.3}%, under min_calls {} and one_off_share {}%)",
                p.calls,
                if p.calls == 1 { "" } else { "s" },
                remodel_model::text::thousands(total),
                share * 100.0,
                config.min_calls,
                config.one_off_share * 100.0
            ));
        }
    }
}

/// A read of the children of one parent (its foreign key bound by `=`, any other table joined
/// as a lookup on a unique key) returns N rows, or its LIMIT if smaller, where the relationship
/// knows N.
fn rows_from_fanout(tables: &TableIndex<'_>, wl: &mut Workload, relationships: &[Relationship]) {
    for p in &mut wl.patterns {
        let a = &mut p.analysis;
        if a.rows_expected.is_some()
            || a.write.is_some()
            || a.tables.is_empty()
            || !a.aggregates.is_empty()
            || !a.join_path.iter().all(|j| {
                let unique =
                    |t: &str, c: &[String]| tables.table(t).is_some_and(|t| t.is_unique_on(c));
                unique(&j.right_table, &j.right_columns) || unique(&j.left_table, &j.left_columns)
            })
            || a.unmodeled.is_some()
        {
            continue;
        }
        let by_fk = |r: &&Relationship| {
            a.tables.contains(&r.to)
                && !r.columns.is_empty()
                && r.columns.iter().all(|c| {
                    a.equality.iter().any(|e| {
                        e.op == remodel_model::EqualityOp::Eq
                            && e.column.table == r.to
                            && e.column.column == *c
                    })
                })
        };
        let fanout = relationships
            .iter()
            .filter(|r| matches!(r.cardinality, remodel_model::Cardinality::OneToMany))
            .filter(by_fk)
            .find_map(|r| r.rationale.fanout);
        if let Some(n) = fanout {
            a.rows_expected = Some(match a.limit {
                Some(l) => n.min(l as f64),
                None => n,
            });
        }
    }
}

/// Analyzes one pattern with the default configuration (search path `public`, time zone UTC):
/// see [`analyze_pattern_in`].
pub fn analyze_pattern(schema: &Schema, p: &AccessPattern) -> (PatternAnalysis, Vec<Diagnostic>) {
    analyze_pattern_in(schema, &AnalyzeConfig::default(), p)
}

/// Analyzes one pattern: its normalized SQL, then its example for literal values (LIMIT, range
/// bounds, LIKE prefixes); unqualified table names are looked for along the configuration's
/// `search_path`, and a zone-less `timestamptz` constant is read in its `time_zone`. Returns
/// the analysis and the diagnostics about it.
pub fn analyze_pattern_in(
    schema: &Schema,
    config: &AnalyzeConfig,
    p: &AccessPattern,
) -> (PatternAnalysis, Vec<Diagnostic>) {
    let (search_path, zone) = (&config.search_path, config.time_zone.as_str());
    let loc = p.locations.first().cloned();
    let mut diags = Vec::new();
    let stmt = match pattern::parse(&p.sql) {
        Ok(s) => s,
        Err(e) => {
            diags.push(Diagnostic {
                severity: Severity::Error,
                location: loc,
                message: format!(
                    "{}: the statement does not parse with the Postgres dialect: {e}",
                    p.id
                ),
            });
            let a = PatternAnalysis {
                unmodeled: Some(format!("does not parse: {e}")),
                ..Default::default()
            };
            return (a, diags);
        }
    };
    let literals = rewrite::Literals::of_pattern(p);
    let mut res = pattern::analyze_statement(schema, search_path, zone, &stmt, p, literals);
    let ex = example_analysis(schema, config, p, &mut diags);
    let limit_param = res.limit_param;
    merge_example(&mut res, ex.as_ref());
    let mut a = res.analysis;
    if limit_param && a.limit.is_none() {
        limit_from_rows(p, &mut a, &mut diags);
    }
    if let Some(reason) = &a.unmodeled {
        diags.push(Diagnostic {
            severity: Severity::Warning,
            location: loc.clone(),
            message: format!("{}: not modelled: {reason}", p.id),
        });
    }
    for w in res.warnings {
        diags.push(Diagnostic {
            severity: Severity::Warning,
            location: loc.clone(),
            message: format!("{}: {w}", p.id),
        });
    }
    for n in res.notes {
        diags.push(Diagnostic {
            severity: Severity::Note,
            location: loc.clone(),
            message: format!("{}: {n}", p.id),
        });
    }
    a.tables.dedup();
    a.shrink_to_fit();
    (a, diags)
}

/// The analysis of the pattern's example instance (its literal values), when it has one that
/// differs from the pattern and parses; a warning when it does not parse.
fn example_analysis(
    schema: &Schema,
    config: &AnalyzeConfig,
    p: &AccessPattern,
    diags: &mut Vec<Diagnostic>,
) -> Option<PatternAnalysis> {
    let (search_path, zone) = (&config.search_path, config.time_zone.as_str());
    let loc = p.locations.first().cloned();
    let example = p
        .example
        .as_deref()
        .filter(|e| *e != p.sql)
        .map(pattern::parse);
    match example {
        Some(Ok(s)) => Some(
            pattern::analyze_statement(
                schema,
                search_path,
                zone,
                &s,
                p,
                rewrite::Literals::default(),
            )
            .analysis,
        ),
        Some(Err(e)) => {
            diags.push(Diagnostic {
                severity: Severity::Warning,
                location: loc,
                message: format!(
                    "{}: the example instance does not parse ({e}); literal values not used",
                    p.id
                ),
            });
            None
        }
        None => None,
    }
}

/// `LIMIT $n` without a literal instance (pg_stat_statements): the rows per call seen are the
/// best evidence of the limit the application passes; a warning when there are none.
fn limit_from_rows(p: &AccessPattern, a: &mut PatternAnalysis, diags: &mut Vec<Diagnostic>) {
    let loc = p.locations.first().cloned();
    if let (Some(rows), true) = (p.rows, p.calls > 0) {
        let per_call = (rows as f64 / p.calls as f64).ceil() as u64;
        a.limit = Some(per_call);
        diags.push(Diagnostic {
            severity: Severity::Note,
            location: loc,
            message: format!(
                "{}: LIMIT is a parameter; {per_call} taken from the rows per call",
                p.id
            ),
        });
    } else {
        diags.push(Diagnostic {
            severity: Severity::Warning,
            location: loc,
            message: format!(
                "{}: LIMIT is a parameter and no example or row count gives its value",
                p.id
            ),
        });
    }
}

/// `$1`, `$23`.
fn is_placeholder(s: &str) -> bool {
    s.strip_prefix('$')
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// `sql` with the numbers of its placeholders dropped (`$2 + $10` → `$ + $`).
fn without_numbers(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut after_dollar = false;
    for ch in sql.chars() {
        if after_dollar && ch.is_ascii_digit() {
            continue;
        }
        after_dollar = ch == '$';
        out.push(ch);
    }
    out
}

/// Takes literal values the normalized SQL lacks from the example's analysis.
fn merge_example(res: &mut pattern::StatementResult, ex: Option<&PatternAnalysis>) {
    let a = &mut res.analysis;
    if let Some(ex) = ex {
        if res.limit_param && a.limit.is_none() {
            a.limit = ex.limit;
        }
        if res.offset_param && a.offset.is_none() {
            a.offset = ex.offset;
        }
        for r in &mut a.ranges {
            let Some(er) = ex.ranges.iter().find(|e| e.column == r.column) else {
                continue;
            };
            for (b, eb) in [
                (r.lower.as_mut(), er.lower.as_ref()),
                (r.upper.as_mut(), er.upper.as_ref()),
            ] {
                if let (Some(b), Some(eb)) = (b, eb) {
                    // An example that is itself a parameter (`$2`), or the same bound with its
                    // parameters numbered otherwise, carries no value.
                    if b.value != eb.value
                        && !is_placeholder(&eb.value)
                        && without_numbers(&b.value) != without_numbers(&eb.value)
                    {
                        b.example = Some(eb.value.clone());
                    }
                }
            }
            if r.window.is_none() {
                r.window = er
                    .window
                    .or_else(|| predicates::window_of(r.lower.as_ref(), r.upper.as_ref()));
            }
        }
    }
    for like in std::mem::take(&mut res.pending_likes) {
        let column = like.column;
        let prefix = ex.and_then(|ex| ex.ranges.iter().find(|e| e.column == column && e.prefix));
        match prefix {
            Some(er) => a.ranges.push(remodel_model::RangePredicate {
                column,
                lower: Some(remodel_model::RangeBound {
                    inclusive: true,
                    value: like.value,
                    example: er.lower.as_ref().map(|b| b.value.clone()),
                    expr: like.value_expr,
                }),
                upper: None,
                prefix: true,
                rewritten_from: Vec::new(),
                window: None,
            }),
            None => a.residual.push(remodel_model::Residual {
                reason: "the LIKE pattern is a parameter and the example shows no fixed prefix"
                    .into(),
                columns: vec![column],
                sql: like.sql,
                expr: like.condition.as_ref().ok().cloned(),
                reason_untyped: like.condition.err(),
            }),
        }
    }
}
