//! The statements a write makes on the counter tables counting its table's rows: `+ 1` per row
//! inserted, `- 1` per row deleted (each row read first: only rows that existed are
//! subtracted), `- 1` on the old group and `+ 1` on the new for an UPDATE of a group or summed
//! column (sums move by the old and new values alike).

use super::{Planner, Version};
use crate::checklist::counters::{counter_type, Spec};
use remodel_model::ident::cql_quote;
use remodel_model::{
    Bind, BindValue, ColumnRef, CounterChange, Literal, StatementKind, WriteAction, WriteTarget,
};

impl Planner<'_> {
    /// True when a counter counts the written table and the statement removes rows or moves
    /// them between groups or changes a sum: it must read the rows first.
    pub(super) fn counted(&self) -> bool {
        self.counters.iter().any(|spec| match self.stmt.kind {
            StatementKind::Delete => true,
            StatementKind::Update => spec
                .group
                .iter()
                .chain(&spec.sums)
                .any(|c| self.stmt.sets(c)),
            _ => false,
        })
    }

    /// The counter columns and source columns a counter statement reads.
    pub(super) fn counter_columns(&self) -> Vec<ColumnRef> {
        let mut out: Vec<ColumnRef> = Vec::new();
        for c in self
            .counters
            .iter()
            .flat_map(|s| s.group.iter().chain(&s.sums))
        {
            if !out.contains(c) {
                out.push(c.clone());
            }
        }
        out
    }

    /// Plans the statements of `spec` for this write.
    pub(super) fn counter_targets(&mut self, spec: &Spec) {
        let cols: Vec<ColumnRef> = spec.group.iter().chain(&spec.sums).cloned().collect();
        match self.stmt.kind {
            StatementKind::Insert => {
                self.ensure(&cols, Version::New, "the group the new row is counted in");
                let t = self.counter_statement(spec, false, Version::New);
                self.push_counter(t);
            }
            StatementKind::Delete => {
                self.ensure(
                    &cols,
                    Version::Current,
                    "the group the deleted row was counted in",
                );
                let t = self.counter_statement(spec, true, Version::Current);
                self.push_counter(t);
            }
            StatementKind::Update => {
                if !cols.iter().any(|c| self.stmt.sets(c)) {
                    return;
                }
                self.ensure(&cols, Version::Current, "the group the row leaves");
                self.ensure(&cols, Version::New, "the group the row joins");
                let old = self.counter_statement(spec, true, Version::Current);
                self.push_counter(old);
                let new = self.counter_statement(spec, false, Version::New);
                self.push_counter(new);
            }
            StatementKind::Select => {}
        }
    }

    fn push_counter(&mut self, mut t: WriteTarget) {
        self.bytes += 16.0 + 8.0 * t.binds.len() as f64;
        if self.stmt.kind != StatementKind::Insert {
            t.for_each = self.rows;
        }
        self.targets.push(t);
    }

    /// `UPDATE ks.t SET n = n ± ?, sum_x = sum_x ± ? WHERE g = ?` for the rows' `version`.
    fn counter_statement(&self, spec: &Spec, subtract: bool, v: Version) -> WriteTarget {
        let op = if subtract { "-" } else { "+" };
        let mut sets = Vec::new();
        let mut binds = Vec::new();
        let mut changed = Vec::new();
        let one = BindValue::Literal {
            value: Literal::Integer { value: 1 },
        };
        let amounts = std::iter::once((spec.count_column.clone(), one)).chain(
            spec.sums
                .iter()
                .map(|c| (Spec::sum_column(c), self.bind_of(c, v))),
        );
        for (col, value) in amounts {
            let q = cql_quote(&col);
            sets.push(format!("{q} = {q} {op} ?"));
            binds.push(Bind {
                column: col.clone(),
                cql_type: counter_type(),
                value,
            });
            changed.push((col, subtract));
        }
        let mut conds = Vec::new();
        for g in &spec.group {
            conds.push(format!("{} = ?", cql_quote(&g.column)));
            binds.push(Bind {
                column: g.column.clone(),
                cql_type: spec.group_type(self.schema, g),
                value: self.bind_of(g, v),
            });
        }
        WriteTarget {
            table: spec.name.clone(),
            cql: format!(
                "UPDATE {}.{} SET {} WHERE {}",
                self.ks,
                cql_quote(&spec.name),
                sets.join(", "),
                conds.join(" AND ")
            ),
            action: WriteAction::Update,
            binds,
            for_each: None,
            // A group that may be NULL is guarded by `null_keys`, as every key is.
            guard: None,
            counter: Some(CounterChange { columns: changed }),
        }
    }
}
