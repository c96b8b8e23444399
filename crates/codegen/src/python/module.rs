//! The texts of `queries.py`'s parts (the tables' column constants, the `Queries` class) and of
//! `hooks.py`.

use super::{decoder, expr, spec_name, Gen};
use crate::shape::{self, Ty};

impl Gen<'_> {
    /// The constant describing design table `table`'s columns: each CQL column's target key,
    /// the source column it holds and how its stored value is decoded.
    pub(super) fn spec_constant(&mut self, table: &str) -> String {
        let Some(t) = self.plan.design.tables.iter().find(|t| t.name == table) else {
            return String::new();
        };
        let mut out = format!(
            "# {table}: CQL column -> (key of the target column, of the source column, decoder).\n{}: rt.Columns = {{\n",
            spec_name(table)
        );
        for c in &t.columns {
            let aware = match &c.source {
                Some(s) => shape::column_ty(self.plan, s).is_none_or(|(ty, _)| ty != Ty::Timestamp),
                None => true,
            };
            let source = match (&c.source, &c.row_id) {
                (Some(s), _) => expr::string(&shape::row_key(s)),
                (None, Some(r)) => expr::string(&format!("rowid:{}", r.table)),
                (None, None) => "None".into(),
            };
            let dec = decoder(&c.cql_type, c.encoding, aware).unwrap_or_else(|| "None".into());
            out.push_str(&format!(
                "    {}: ({}, {source}, {dec}),\n",
                expr::string(&c.name),
                expr::string(&shape::target_key(&t.name, &c.name)),
            ));
        }
        out.push_str("}\n");
        out
    }

    /// The `Queries` class: the statements prepared once, then one method per pattern.
    pub(super) fn class_text(&self) -> String {
        let mut out = String::from(
            "class Queries:\n    \"\"\"One method per pattern of the workload, on a session connected to the keyspace.\n\n    \
             Every statement is prepared once, here, at the consistency level the plan states.\n    \
             \"\"\"\n\n    def __init__(self, session: object, hooks: Hooks | None = None) -> None:\n        \
             self._db = Driver(session)\n        self._hooks = hooks if hooks is not None else Hooks()\n",
        );
        for (attr, cql, level) in &self.statements {
            out.push_str(&format!(
                "        self.{attr} = self._db.prepare(\n            {},\n            {},\n        )\n",
                expr::string(cql),
                expr::string(level)
            ));
        }
        for m in &self.methods {
            out.push('\n');
            out.push_str(m);
        }
        out
    }

    /// `hooks.py`: what the plan leaves to the application, each with a default where the plan
    /// states one and an error where only the application can say.
    pub(super) fn hooks_module(&self) -> String {
        let mut methods = String::new();
        for h in &self.hooks {
            let params: Vec<String> = h.params.iter().map(|(n, t)| format!("{n}: {t}")).collect();
            let args: Vec<String> = h.params.iter().map(|(n, _)| n.clone()).collect();
            let sig = std::iter::once("self".to_string())
                .chain(params)
                .collect::<Vec<_>>()
                .join(", ");
            methods.push_str(&format!("\n    def {}({sig}) -> {}:\n", h.name, h.returns));
            methods.push_str(&super::docstring(
                &format!(
                    "The value {} computes in the application, as Postgres computes it.",
                    h.pattern
                ),
                &[("SQL", h.sql.as_str())],
                8,
            ));
            let tuple = match args.len() {
                0 => "()".to_string(),
                1 => format!("({},)", args[0]),
                _ => format!("({})", args.join(", ")),
            };
            // Typed through a variable: the generic hook's `Any` is not returned as is.
            methods.push_str(&format!(
                "        value: {} = self.computed({}, {tuple})\n        return value\n",
                h.returns,
                expr::string(&h.sql)
            ));
        }
        // Only the imports the methods' hints use (ruff refuses an unused one).
        let mut imports = String::new();
        for (used, line) in [
            ("dt.", "import datetime as dt\n"),
            ("decimal.", "import decimal\n"),
            ("uuid.", "import uuid\n"),
            ("Any", "from typing import Any\n"),
        ] {
            if methods.contains(used) {
                imports.push_str(line);
            }
        }
        if !imports.is_empty() {
            imports.push('\n');
        }
        if methods.contains("rt.") {
            imports.push_str("from . import _runtime as rt\n");
        }
        HOOKS_HEAD.replace("{imports}", &imports) + &methods
    }
}

/// The head of `hooks.py` (the class's own methods are `_hooks.py`'s).
const HOOKS_HEAD: &str = r#""""What plan.json leaves to the application (generated by `remodel codegen`).

Subclass `Hooks` and give the instance to `Queries(session, hooks)`; `BaseHooks` documents
what each hook is. One `computed_…` method per application-computed value of the plan (Postgres
SQL over the statement's parameters that the application computes itself) asks `computed`.
"""

from __future__ import annotations

{imports}from ._hooks import BaseHooks


class Hooks(BaseHooks):
    """The application's side of this plan: the clock, sequences, computed values."""
"#;
