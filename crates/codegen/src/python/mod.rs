//! The Python backend: a package for the DataStax `cassandra-driver` (3.x), Python 3.10 or
//! newer, clean under `ruff` and `mypy --strict`.
//!
//! ```text
//! DIR/pyproject.toml        ruff and mypy settings, the driver as the one dependency
//! DIR/PACKAGE/__init__.py   Queries, Hooks and the row classes
//! DIR/PACKAGE/queries.py    one method per pattern, a frozen dataclass per read's rows
//! DIR/PACKAGE/hooks.py      what the plan leaves to the application (the clock, sequences, …)
//! DIR/PACKAGE/executor.py   `python -m PACKAGE.executor`: the functions behind `replay --executor`
//! DIR/PACKAGE/_runtime.py   SQL's semantics (NULLs, buckets, sorts) and value conversions
//! DIR/PACKAGE/_driver.py    prepared statements, paging, batches
//! DIR/PACKAGE/_hooks.py     the hooks' defaults
//! DIR/PACKAGE/_executor.py  the protocol of `replay --executor`
//! ```
//!
//! The `_` modules are the same for every plan (the templates of this crate).
//! ```text
//! ```

mod executor;
mod expr;
mod module;
mod read;
mod write;

use crate::shape::{self, Param, Ty};
use crate::{File, Generated, NotGenerated};
use remodel_model::{
    AccessPattern, BindValue, ConsistencyLevel, CqlType, Encoding, NativeType, Plan, ScalarType,
};
use std::collections::{BTreeMap, BTreeSet};

/// The runtime every package carries (the same text for every plan).
const RUNTIME: &str = include_str!("../../templates/python/_runtime.py");
/// The driver calls every package carries.
const DRIVER: &str = include_str!("../../templates/python/_driver.py");
/// The hooks' base class every package carries.
const HOOKS: &str = include_str!("../../templates/python/_hooks.py");
/// The protocol of `replay --executor` every package carries.
const EXECUTOR: &str = include_str!("../../templates/python/_executor.py");

/// Why a pattern's function raises instead of running: what the plan does not state, or what
/// this generator does not translate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Skip(pub String);

/// A hook of an application-computed value.
struct Hook {
    name: String,
    sql: String,
    pattern: String,
    params: Vec<(String, String)>,
    returns: String,
}

/// The state of one package being generated.
pub(crate) struct Gen<'p> {
    plan: &'p Plan,
    tables: Vec<&'p str>,
    imports: BTreeSet<&'static str>,
    zones: BTreeMap<String, String>,
    statements: Vec<(String, String, String)>,
    specs: BTreeSet<String>,
    hooks: Vec<Hook>,
    rows: Vec<String>,
    row_classes: Vec<String>,
    methods: Vec<String>,
    calls: Vec<executor::Call>,
}

/// The package of `plan` named `package`.
pub(crate) fn generate(plan: &Plan, package: &str) -> Result<Generated, crate::Error> {
    let mut g = Gen {
        plan,
        tables: plan.design.tables.iter().map(|t| t.name.as_str()).collect(),
        imports: BTreeSet::new(),
        zones: BTreeMap::new(),
        statements: Vec::new(),
        specs: BTreeSet::new(),
        hooks: Vec::new(),
        rows: Vec::new(),
        row_classes: Vec::new(),
        methods: Vec::new(),
        calls: Vec::new(),
    };
    let names = crate::names::functions(plan);
    let mut functions = Vec::new();
    let mut not_generated = Vec::new();
    let patterns = plan
        .design
        .queries
        .iter()
        .filter(|q| !q.one_off)
        .map(|q| q.pattern.as_str())
        .chain(
            plan.design
                .writes
                .iter()
                .filter(|w| !w.one_off)
                .map(|w| w.pattern.as_str()),
        );
    for id in patterns {
        let (Some(p), Some(name)) = (plan.workload.pattern(id), names.get(id)) else {
            continue;
        };
        functions.push((id.to_string(), name.clone()));
        if let Err(Skip(reason)) = g.function(p, name) {
            not_generated.push(NotGenerated {
                pattern: id.to_string(),
                reason,
            });
        }
    }
    let dir = package.replace('.', "/");
    let files = vec![
        file("pyproject.toml", pyproject(plan, package)),
        file(&format!("{dir}/__init__.py"), init(plan, &g)),
        file(&format!("{dir}/queries.py"), g.queries_module()),
        file(&format!("{dir}/hooks.py"), g.hooks_module()),
        file(&format!("{dir}/executor.py"), executor::module(&g)),
        file(&format!("{dir}/_runtime.py"), RUNTIME.to_string()),
        file(&format!("{dir}/_driver.py"), DRIVER.to_string()),
        file(&format!("{dir}/_hooks.py"), HOOKS.to_string()),
        file(&format!("{dir}/_executor.py"), EXECUTOR.to_string()),
        file(&format!("{dir}/py.typed"), String::new()),
    ];
    Ok(Generated {
        files,
        functions,
        not_generated,
    })
}

fn file(path: &str, contents: String) -> File {
    File {
        path: path.to_string(),
        contents,
    }
}

/// The package's `pyproject.toml`: its one dependency and the checks it passes.
fn pyproject(plan: &Plan, package: &str) -> String {
    format!(
        r#"# The data-access layer of keyspace {ks}, generated by `remodel codegen` from plan.json.
[project]
name = "{name}"
version = "0.1.0"
requires-python = ">=3.10"
dependencies = ["cassandra-driver>=3.29,<4"]

[tool.ruff]
line-length = 100
target-version = "py310"

[tool.ruff.lint]
select = ["E", "F", "W", "I", "UP", "B"]
# Docstrings quote the plan's SQL and CQL as written, whatever their length.
ignore = ["E501"]

[tool.mypy]
strict = true
python_version = "3.10"

[[tool.mypy.overrides]]
# The driver ships no type information.
module = ["cassandra", "cassandra.*"]
ignore_missing_imports = true
"#,
        ks = plan.design.keyspace.name,
        name = package.replace(['.', '_'], "-"),
    )
}

/// `__init__.py`: what an application imports.
fn init(plan: &Plan, g: &Gen<'_>) -> String {
    let mut names: Vec<&str> = vec!["Hooks", "Queries"];
    names.extend(g.rows.iter().map(|r| r.as_str()));
    names.sort_unstable_by(|a, b| natural(a, b));
    let mut out = format!(
        "\"\"\"The data-access layer of keyspace {ks}, generated by `remodel codegen` from \
         plan.json.\n\nConnect a `cassandra.cluster.Session` to the keyspace and call the \
         methods of `Queries(session)`: one per pattern of the workload.\n\"\"\"\n\n",
        ks = plan.design.keyspace.name
    );
    out.push_str("from .hooks import Hooks\nfrom .queries import (\n");
    for n in names.iter().filter(|n| **n != "Hooks") {
        out.push_str(&format!("    {n},\n"));
    }
    out.push_str(")\n\n__all__ = [\n");
    for n in &names {
        out.push_str(&format!("    \"{n}\",\n"));
    }
    out.push_str("]\n");
    out
}

/// Natural order, as ruff's isort sorts imported names: runs of digits compared as numbers
/// (`Q9` before `Q17`), letters without regard to case.
fn natural(a: &str, b: &str) -> std::cmp::Ordering {
    let (mut x, mut y) = (a.chars().peekable(), b.chars().peekable());
    loop {
        match (x.peek().copied(), y.peek().copied()) {
            (None, None) => return a.cmp(b),
            (None, Some(_)) => return std::cmp::Ordering::Less,
            (Some(_), None) => return std::cmp::Ordering::Greater,
            (Some(c), Some(d)) if c.is_ascii_digit() && d.is_ascii_digit() => {
                let run = |it: &mut std::iter::Peekable<std::str::Chars<'_>>| {
                    let mut digits = String::new();
                    while let Some(c) = it.next_if(char::is_ascii_digit) {
                        digits.push(c);
                    }
                    digits.trim_start_matches('0').to_string()
                };
                let (m, n) = (run(&mut x), run(&mut y));
                let o = m.len().cmp(&n.len()).then_with(|| m.cmp(&n));
                if o.is_ne() {
                    return o;
                }
            }
            (Some(c), Some(d)) => {
                let o = c.to_ascii_lowercase().cmp(&d.to_ascii_lowercase());
                if o.is_ne() {
                    return o;
                }
                x.next();
                y.next();
            }
        }
    }
}

/// Python's reserved words: a parameter or field named so takes a trailing `_`.
const KEYWORDS: &[&str] = &[
    "False",
    "None",
    "True",
    "and",
    "as",
    "assert",
    "async",
    "await",
    "break",
    "class",
    "continue",
    "def",
    "del",
    "elif",
    "else",
    "except",
    "finally",
    "for",
    "from",
    "global",
    "if",
    "import",
    "in",
    "is",
    "lambda",
    "nonlocal",
    "not",
    "or",
    "pass",
    "raise",
    "return",
    "try",
    "while",
    "with",
    "yield",
    "self",
    "now",
    "rt",
    "dt",
    "decimal",
    "uuid",
    "dataclasses",
    "Any",
];

/// `name`, or `name_` when it is a reserved word (or a name the generated code uses itself).
pub(crate) fn ident(name: &str) -> String {
    if KEYWORDS.contains(&name) {
        format!("{name}_")
    } else {
        name.to_string()
    }
}

impl<'p> Gen<'p> {
    /// Notes that the module uses an import (`dt`, `decimal`, `uuid`, `Any`).
    pub(super) fn import(&mut self, what: &'static str) {
        self.imports.insert(what);
    }

    /// The module constant of time zone `zone`.
    pub(super) fn zone(&mut self, zone: &str) -> String {
        if let Some(c) = self.zones.get(zone) {
            return c.clone();
        }
        let c = format!("_TZ_{}", self.zones.len());
        self.zones.insert(zone.to_string(), c.clone());
        c
    }

    /// The attribute of the statement `cql` (without the keyspace) prepared at `level`.
    pub(super) fn statement(&mut self, cql: &str, level: ConsistencyLevel) -> String {
        let ks = &self.plan.design.keyspace.name;
        let text = shape::unqualified(cql, ks, &self.tables);
        let level = level.cql_name().to_string();
        if let Some(i) = self
            .statements
            .iter()
            .position(|(_, c, l)| *c == text && *l == level)
        {
            return self.statements[i].0.clone();
        }
        let attr = format!("_s{}", self.statements.len());
        self.statements.push((attr.clone(), text, level));
        attr
    }

    /// The module constant describing design table `table`'s columns for decoding.
    pub(super) fn spec(&mut self, table: &str) -> String {
        self.specs.insert(table.to_string());
        spec_name(table)
    }

    /// A Python type hint of `ty`.
    pub(super) fn hint(&mut self, ty: Ty) -> &'static str {
        let (hint, import) = match ty {
            Ty::Bool => ("bool", None),
            Ty::Int => ("int", None),
            Ty::Decimal => ("decimal.Decimal", Some("decimal")),
            Ty::Float => ("float", None),
            Ty::Text => ("str", None),
            Ty::Date => ("dt.date", Some("dt")),
            Ty::Time => ("dt.time", Some("dt")),
            Ty::Timestamp | Ty::Timestamptz => ("dt.datetime", Some("dt")),
            Ty::Interval => ("rt.Interval", None),
            Ty::Uuid => ("uuid.UUID", Some("uuid")),
            Ty::Bytes => ("bytes", None),
            Ty::Any => ("Any", Some("Any")),
        };
        if let Some(i) = import {
            self.import(i);
        }
        hint
    }

    /// The hint of a parameter (`str | None`, `list[str] | None`).
    pub(super) fn param_hint(&mut self, p: &Param) -> String {
        let h = self.hint(p.ty);
        if p.list {
            format!("list[{h} | None] | None")
        } else if p.ty == Ty::Any {
            h.to_string()
        } else {
            format!("{h} | None")
        }
    }

    /// Registers a hook computing `sql` for pattern `pattern`; returns its method's name.
    pub(super) fn hook(
        &mut self,
        pattern: &str,
        sql: &str,
        args: &[&Param],
        ty: Option<ScalarType>,
    ) -> String {
        if let Some(h) = self
            .hooks
            .iter()
            .find(|h| h.pattern == pattern && h.sql == sql)
        {
            return h.name.clone();
        }
        let k = self.hooks.iter().filter(|h| h.pattern == pattern).count() + 1;
        let name = format!("computed_{}_{k}", crate::names::snake(pattern));
        let params = args
            .iter()
            .map(|p| (ident(&p.name), self.param_hint(p)))
            .collect();
        let returns = match ty {
            Some(t) => format!("{} | None", self.hint(Ty::of_scalar(t))),
            None => {
                self.import("Any");
                "Any".into()
            }
        };
        self.hooks.push(Hook {
            name: name.clone(),
            sql: sql.to_string(),
            pattern: pattern.to_string(),
            params,
            returns,
        });
        name
    }

    /// The function of pattern `p`, named `name`: its method, and its executor entry.
    fn function(&mut self, p: &'p AccessPattern, name: &str) -> Result<(), Skip> {
        let params = shape::params(self.plan, p);
        let made = if p.kind.is_write() {
            let w = self.plan.design.writes.iter().find(|w| w.pattern == p.id);
            match w {
                Some(w) => self.write_method(p, w, name, &params),
                None => Err(Skip("no write path in the plan".into())),
            }
        } else {
            let q = self.plan.design.queries.iter().find(|q| q.pattern == p.id);
            match q {
                Some(q) => self.read_method(p, q, name, &params),
                None => Err(Skip("no read mapping in the plan".into())),
            }
        };
        let (method, row) = match made {
            Ok(m) => m,
            Err(skip) => {
                let m = self.raising_method(p, name, &params, &skip.0);
                self.methods.push(m);
                self.calls.push(executor::Call::new(p, name, &params, None));
                return Err(skip);
            }
        };
        self.methods.push(method);
        self.calls.push(executor::Call::new(p, name, &params, row));
        Ok(())
    }

    /// The parameter list of a method (`self, driver_id: str | None, limit: int | None`).
    pub(super) fn signature(&mut self, params: &[Param]) -> String {
        let mut out = vec!["self".to_string()];
        for p in params {
            let h = self.param_hint(p);
            out.push(format!("{}: {h}", ident(&p.name)));
        }
        out.join(", ")
    }

    /// A method that raises, for a pattern the plan states no executable way for.
    fn raising_method(
        &mut self,
        p: &AccessPattern,
        name: &str,
        params: &[Param],
        reason: &str,
    ) -> String {
        let sig = self.signature(params);
        let returns = if p.kind.is_write() {
            "None"
        } else {
            "list[Any]"
        };
        self.import("Any");
        let mut out = format!("    def {name}({sig}) -> {returns}:\n");
        out.push_str(&docstring(
            &format!(
                "{} ({} calls): not executable from plan.json: {reason}.",
                p.id,
                remodel_model::text::thousands(p.calls)
            ),
            &[("SQL", p.sql.as_str())],
            8,
        ));
        out.push_str(&format!(
            "        raise rt.NotExecutable({})\n",
            expr::string(&format!("{}: {reason}", p.id))
        ));
        out
    }

    /// `value`, a Python expression of the source's meaning, converted to marker type `t`.
    pub(super) fn marker(&self, t: &CqlType, value: &str) -> String {
        match t.unfrozen() {
            CqlType::List(inner) | CqlType::Set(inner) => format!(
                "rt.cql_list({value}, {})",
                converter(inner).unwrap_or("rt.same")
            ),
            other => match converter(other) {
                Some(c) => format!("{c}({value})"),
                None => value.to_string(),
            },
        }
    }

    /// A bind's value in the source's meaning (a `buckets` bind is the caller's), where
    /// `current`, `new` and a row id read as `place` says.
    fn bind_value(
        &mut self,
        v: &BindValue,
        scope: &expr::Scope<'_>,
        place: &dyn Fn(&BindValue) -> Option<Result<String, Skip>>,
    ) -> Result<String, Skip> {
        if let Some(done) = place(v) {
            return done;
        }
        Ok(match v {
            BindValue::Expr { expr } => self.expr(expr, scope)?,
            BindValue::Literal { value } => expr::literal(self, value),
            BindValue::List { items } => {
                let parts: Result<Vec<String>, Skip> =
                    items.iter().map(|x| self.expr(x, scope)).collect();
                format!("rt.flatten([{}])", parts?.join(", "))
            }
            BindValue::Bucket {
                bucket,
                of,
                time_zone,
            } => {
                let of = self.bind_value(of, scope, place)?;
                let z = self.zone(time_zone);
                format!("rt.bucket({of}, {}, {z})", expr::string(bucket.name()))
            }
            BindValue::EpochMicros { of, null_last } => {
                format!(
                    "rt.{}({}, _ZONE)",
                    if *null_last {
                        "epoch_micros_null_last"
                    } else {
                        "epoch_micros"
                    },
                    self.bind_value(of, scope, place)?
                )
            }
            BindValue::Encoded { of, encoding } => format!(
                "rt.encoded({}, {}, _ZONE)",
                self.bind_value(of, scope, place)?,
                expr::string(encoding.name())
            ),
            BindValue::SecondsUntil { of, min, max, .. } => format!(
                "rt.seconds_until({}, self._hooks.now(), {min}, {max})",
                self.bind_value(of, scope, place)?
            ),
            other => return Err(Skip(format!("a bind of {other} here"))),
        })
    }

    /// `queries.py`.
    fn queries_module(&mut self) -> String {
        let specs: Vec<String> = self.specs.iter().cloned().collect();
        let spec_text: Vec<String> = specs.iter().map(|t| self.spec_constant(t)).collect();
        let mut rest = String::new();
        for (zone, c) in &self.zones {
            rest.push_str(&format!("{c} = ZoneInfo({})\n", expr::string(zone)));
        }
        for s in spec_text {
            rest.push('\n');
            rest.push_str(&s);
        }
        for r in &self.rows_text() {
            rest.push_str("\n\n");
            rest.push_str(r);
        }
        rest.push_str("\n\n");
        rest.push_str(&self.class_text());
        let mut out = String::new();
        out.push_str(&format!(
            "\"\"\"The data-access layer of keyspace {ks} (generated by `remodel codegen` from \
             plan.json; do not edit).\n\nOne method of `Queries` per pattern of the workload, \
             executing what the plan states:\nits prepared statements, buckets, lookups, the \
             client's work, reads before write,\nguards, batches, TTLs and consistency levels. \
             What the plan leaves to the application\n(the clock, sequences, values it computes) \
             is asked of `Hooks`.\n\"\"\"\n\n",
            ks = self.plan.design.keyspace.name
        ));
        out.push_str("from __future__ import annotations\n\n");
        out.push_str("import dataclasses\n");
        // Only the modules the text uses (a type of `hooks.py` only is not imported here).
        let uses = |module: &str| rest.contains(&format!("{module}."));
        if self.imports.contains("dt") && uses("dt") {
            out.push_str("import datetime as dt\n");
        }
        if self.imports.contains("decimal") && uses("decimal") {
            out.push_str("import decimal\n");
        }
        if self.imports.contains("uuid") && uses("uuid") {
            out.push_str("import uuid\n");
        }
        if self.imports.contains("Any") {
            out.push_str("from typing import Any\n");
        }
        out.push_str("from zoneinfo import ZoneInfo\n\n");
        out.push_str("from . import _runtime as rt\nfrom ._driver import Driver\nfrom .hooks import Hooks\n\n");
        out.push_str(&format!(
            "# The plan's semantics.time_zone: what dates, casts and date_trunc of an instant mean.\n_ZONE = ZoneInfo({})\n",
            expr::string(&self.plan.semantics.time_zone)
        ));
        out.push_str(&rest);
        out
    }

    /// The row classes, already rendered by each read.
    fn rows_text(&self) -> Vec<String> {
        self.row_classes.clone()
    }
}

/// The converter of a value bound to a native marker of type `t` (`None`: bound as it is).
fn converter(t: &CqlType) -> Option<&'static str> {
    use NativeType as N;
    Some(match t.unfrozen().native()? {
        N::TinyInt | N::SmallInt | N::Int | N::BigInt | N::Varint | N::Counter => "rt.cql_int",
        N::Decimal => "rt.cql_decimal",
        N::Float | N::Double => "rt.cql_float",
        N::Timestamp => "rt.cql_timestamp",
        N::Date => "rt.cql_date",
        N::Uuid | N::Timeuuid => "rt.cql_uuid",
        _ => return None,
    })
}

/// The module constant of table `table`'s columns.
fn spec_name(table: &str) -> String {
    format!(
        "_COLUMNS_{}",
        crate::names::snake(table).to_ascii_uppercase()
    )
}

/// A docstring at `indent`: the summary, then each titled block verbatim (SQL, CQL).
pub(super) fn docstring(summary: &str, blocks: &[(&str, &str)], indent: usize) -> String {
    let pad = " ".repeat(indent);
    let escape = |s: &str| s.replace('\\', "\\\\").replace("\"\"\"", "\\\"\\\"\\\"");
    let mut lines = summary.lines();
    let mut out = format!("{pad}\"\"\"{}\n", escape(lines.next().unwrap_or_default()));
    for line in lines {
        if line.trim().is_empty() {
            out.push('\n');
        } else {
            out.push_str(&format!("{pad}{}\n", escape(line.trim_end())));
        }
    }
    for (title, text) in blocks {
        out.push_str(&format!("\n{pad}{title}:\n"));
        for line in text.lines() {
            let line = escape(line);
            if line.trim().is_empty() {
                out.push('\n');
            } else {
                out.push_str(&format!("{pad}    {}\n", line.trim_end()));
            }
        }
    }
    out.push_str(&format!("{pad}\"\"\"\n"));
    out
}

/// The decoder of a stored column (`None`: as the driver returns it).
fn decoder(t: &CqlType, encoding: Option<Encoding>, aware: bool) -> Option<String> {
    if let Some(e) = encoding {
        return Some(format!("rt.{}", shape::encoded_decoder(e, aware)));
    }
    Some(
        match t.unfrozen().native()? {
            NativeType::Timestamp if aware => "rt.timestamp_tz",
            NativeType::Timestamp => "rt.timestamp_naive",
            NativeType::Date => "rt.stored_date",
            NativeType::Time => "rt.stored_time",
            _ => return None,
        }
        .to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::natural;

    #[test]
    fn imported_names_sort_as_ruff_sorts_them() {
        let mut names = vec![
            "ItemQ17Row",
            "ItemQ1Row",
            "Queries",
            "ItemQ9Row",
            "itemQ2Row",
        ];
        names.sort_unstable_by(|a, b| natural(a, b));
        assert_eq!(
            names,
            [
                "ItemQ1Row",
                "itemQ2Row",
                "ItemQ9Row",
                "ItemQ17Row",
                "Queries"
            ]
        );
    }
}
