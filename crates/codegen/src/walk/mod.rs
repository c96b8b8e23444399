//! The walk of the plan every backend shares: which function each pattern gets, and what it does,
//! in order — its binds, buckets, lookups, the client's work, reads before write, guards,
//! batches — decided once, here, from plan.json. A backend only spells it ([`Spell`]): how its
//! language writes a runtime call, a list, a condition, a loop, a method.
//!
//! The walk builds each method's body as [`Stmt`]s (the statements and blocks of the generated
//! code, their expressions already spelled), which the backend renders with its own
//! indentation and braces.

mod expr;
mod read;
mod spell;
mod write;

pub(crate) use expr::Scope;
pub(crate) use spell::{Local, Returns, Spell, Stmt};

use crate::shape::{self, Param, Ty};
use crate::NotGenerated;
use remodel_model::{
    AccessPattern, BindValue, ConsistencyLevel, CqlType, Encoding, NativeType, Plan, ScalarType,
};
use std::collections::{BTreeMap, BTreeSet};

/// Why a pattern's function raises instead of running: what the plan does not state, or what
/// this generator does not translate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Skip(pub String);

/// A hook of an application-computed value.
pub(crate) struct Hook {
    /// Its method's name.
    pub name: String,
    /// The SQL the application computes.
    pub sql: String,
    /// The pattern it belongs to.
    pub pattern: String,
    /// Its parameters: name and type, spelled.
    pub params: Vec<(String, String)>,
    /// The type it returns, spelled.
    pub returns: String,
}

/// One pattern's entry in the executor's table.
pub(crate) struct Call {
    /// The pattern.
    pub pattern: String,
    /// Its function's name.
    pub function: String,
    /// The function's parameters.
    pub params: Vec<Param>,
    /// The row fields (accessors) of a read; `None` for a write or a function that raises.
    pub fields: Option<Vec<String>>,
    /// True for a read.
    pub read: bool,
    /// The method's declaration as the language writes it (`def trips_by_driver_id(self, …)
    /// -> list[TripsByDriverIdRow]`), for the report.
    pub signature: String,
}

/// A prepared statement of the generated class.
pub(crate) struct Prepared {
    /// Its field's name.
    pub name: String,
    /// Its CQL, without the keyspace.
    pub cql: String,
    /// Its consistency level's CQL name.
    pub level: String,
}

/// A column of a design table as the generated code decodes it.
pub(crate) struct Column {
    /// The CQL column.
    pub name: String,
    /// The key of the target column in the rows read.
    pub key: String,
    /// The key of the source column it holds (`rowid:TABLE` for a generated row id).
    pub source: Option<String>,
    /// The runtime's decoder of its stored value (snake_case), when the driver's value is not
    /// the source's.
    pub decoder: Option<String>,
}

/// The state of one package being generated in the language `L` spells.
pub(crate) struct Gen<'p, L> {
    /// The plan.
    pub plan: &'p Plan,
    tables: Vec<&'p str>,
    /// Each bucket's time zone and its constant.
    pub zones: BTreeMap<String, String>,
    /// The statements prepared once, in order.
    pub statements: Vec<Prepared>,
    /// The design tables whose column constants the code uses.
    pub specs: BTreeSet<String>,
    /// The hooks of application-computed values.
    pub hooks: Vec<Hook>,
    /// The row classes, rendered.
    pub row_classes: Vec<String>,
    /// The methods, rendered.
    pub methods: Vec<String>,
    /// The executor's entries.
    pub calls: Vec<Call>,
    /// The language's own state (the imports a Python module needs).
    pub lang: L,
    /// The declaration of the last method rendered.
    header: String,
}

/// What [`walk`] made: the package's state, each function (pattern, name), those that raise.
pub(crate) type Walked<'p, L> = (Gen<'p, L>, Vec<(String, String)>, Vec<NotGenerated>);

/// Walks every pattern of `plan` (reads, then writes; not the one-off ones) into a method named
/// as the plan names its function.
pub(crate) fn walk<L: Spell>(plan: &Plan, lang: L) -> Result<Walked<'_, L>, crate::Error> {
    let names = crate::names::functions(plan)?;
    let mut g = Gen {
        plan,
        tables: plan.design.tables.iter().map(|t| t.name.as_str()).collect(),
        zones: BTreeMap::new(),
        statements: Vec::new(),
        specs: BTreeSet::new(),
        hooks: Vec::new(),
        row_classes: Vec::new(),
        methods: Vec::new(),
        calls: Vec::new(),
        header: String::new(),
        lang,
    };
    let mut functions = Vec::new();
    let mut not_generated = Vec::new();
    for (id, name) in names {
        let Some(p) = plan.workload.pattern(&id) else {
            continue;
        };
        let name = L::function_name(&name);
        if let Err(Skip(reason)) = g.function(p, &name) {
            not_generated.push(NotGenerated {
                pattern: id.clone(),
                reason,
            });
        }
        functions.push((id, name));
    }
    Ok((g, functions, not_generated))
}

impl<'p, L: Spell> Gen<'p, L> {
    /// The constant of time zone `zone`.
    pub(crate) fn zone(&mut self, zone: &str) -> String {
        if let Some(c) = self.zones.get(zone) {
            return c.clone();
        }
        let c = L::zone_name(self.zones.len());
        self.zones.insert(zone.to_string(), c.clone());
        c
    }

    /// How the code refers to the statement `cql` (with the keyspace) prepared at `level`.
    pub(crate) fn statement(&mut self, cql: &str, level: ConsistencyLevel) -> String {
        let ks = &self.plan.design.keyspace.name;
        let text = shape::unqualified(cql, ks, &self.tables);
        let level = level.cql_name().to_string();
        let found = self
            .statements
            .iter()
            .position(|s| s.cql == text && s.level == level);
        let i = found.unwrap_or_else(|| {
            let name = L::statement_name(self.statements.len());
            self.statements.push(Prepared {
                name,
                cql: text,
                level,
            });
            self.statements.len() - 1
        });
        L::statement_ref(&self.statements[i].name)
    }

    /// The constant describing design table `table`'s columns for decoding.
    pub(crate) fn spec(&mut self, table: &str) -> String {
        self.specs.insert(table.to_string());
        L::spec_name(table)
    }

    /// The columns of design table `table` (`None`: the design has no such table).
    pub(crate) fn columns(&self, table: &str) -> Option<Vec<Column>> {
        let t = self.plan.design.tables.iter().find(|t| t.name == table)?;
        let columns = t.columns.iter().map(|c| {
            // A wall clock (`timestamp`) is decoded naive, anything else as an instant.
            let aware = match &c.source {
                Some(s) => shape::column_ty(self.plan, s).is_none_or(|(ty, _)| ty != Ty::Timestamp),
                None => true,
            };
            let source = match (&c.source, &c.row_id) {
                (Some(s), _) => Some(shape::row_key(s)),
                (None, Some(r)) => Some(format!("rowid:{}", r.table)),
                (None, None) => None,
            };
            Column {
                name: c.name.clone(),
                key: shape::target_key(&t.name, &c.name),
                source,
                decoder: decoder(&c.cql_type, c.encoding, aware),
            }
        });
        Some(columns.collect())
    }

    /// Registers a hook computing `sql` for pattern `pattern`; returns its method's name.
    pub(crate) fn hook(
        &mut self,
        pattern: &str,
        sql: &str,
        args: &[&Param],
        ty: Option<ScalarType>,
    ) -> String {
        let same = |h: &&Hook| h.pattern == pattern && h.sql == sql;
        if let Some(h) = self.hooks.iter().find(same) {
            return h.name.clone();
        }
        let k = self.hooks.iter().filter(|h| h.pattern == pattern).count() + 1;
        let name = L::hook_name(&crate::names::snake(pattern), k);
        let params = args.iter().map(|p| self.lang.hook_param(p)).collect();
        let returns = self.lang.hook_returns(ty);
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
        let (method, fields, skipped) = match made {
            Ok((m, fields)) => (m, fields, None),
            Err(skip) => (
                self.raising_method(p, name, &params, &skip.0),
                None,
                Some(skip),
            ),
        };
        self.methods.push(method);
        self.calls.push(Call {
            pattern: p.id.clone(),
            function: name.to_string(),
            params,
            fields,
            read: !p.kind.is_write(),
            signature: std::mem::take(&mut self.header),
        });
        skipped.map_or(Ok(()), Err)
    }

    /// A method that raises, for a pattern the plan states no executable way for.
    fn raising_method(
        &mut self,
        p: &AccessPattern,
        name: &str,
        params: &[Param],
        reason: &str,
    ) -> String {
        let sig = self.lang.signature(params);
        let returns = if p.kind.is_write() {
            Returns::Nothing
        } else {
            Returns::AnyRows
        };
        let summary = format!(
            "{} ({} calls): not executable from plan.json: {reason}.",
            p.id,
            remodel_model::text::thousands(p.calls)
        );
        let doc = L::doc(&summary, &[("SQL", p.sql.as_str())]);
        let body = [Stmt::Raise(L::string(&format!("{}: {reason}", p.id)))];
        self.method(name, &sig, returns, &doc, &body)
    }

    /// A method (its declaration kept for [`Call::signature`]).
    pub(crate) fn method(
        &mut self,
        name: &str,
        sig: &str,
        returns: Returns<'_>,
        doc: &str,
        body: &[Stmt],
    ) -> String {
        self.header = self.lang.header(name, sig, returns);
        self.lang.method(name, sig, returns, doc, body)
    }

    /// A bind's value in the source's meaning (a `buckets` bind is the caller's), where
    /// `current`, `new` and a row id read as `place` says.
    pub(crate) fn bind_value(
        &mut self,
        v: &BindValue,
        scope: &Scope<'_>,
        place: &dyn Fn(&BindValue) -> Option<Result<String, Skip>>,
    ) -> Result<String, Skip> {
        if let Some(done) = place(v) {
            return done;
        }
        Ok(match v {
            BindValue::Expr { expr } => self.expr(expr, scope)?,
            BindValue::Literal { value } => self.lang.literal(value),
            BindValue::List { items } => {
                let parts = self.exprs(items, scope)?;
                L::rt("flatten", &[L::array(&parts)])
            }
            BindValue::Bucket {
                bucket,
                of,
                time_zone,
            } => {
                let of = self.bind_value(of, scope, place)?;
                let z = self.zone(time_zone);
                L::rt("bucket", &[of, L::string(bucket.name()), z])
            }
            BindValue::EpochMicros { of, null_last } => {
                let f = if *null_last {
                    "epoch_micros_null_last"
                } else {
                    "epoch_micros"
                };
                L::rt(f, &[self.bind_value(of, scope, place)?, L::ZONE.into()])
            }
            BindValue::Encoded { of, encoding } => {
                let of = self.bind_value(of, scope, place)?;
                L::rt("encoded", &[of, L::string(encoding.name()), L::ZONE.into()])
            }
            BindValue::SecondsUntil { of, min, max, .. } => {
                let of = self.bind_value(of, scope, place)?;
                let now = format!("{}.now()", L::HOOKS);
                L::rt("seconds_until", &[of, now, L::long(*min), L::long(*max)])
            }
            other => return Err(Skip(format!("a bind of {other} here"))),
        })
    }
}

/// The decoder of a stored column (`None`: as the driver returns it).
fn decoder(t: &CqlType, encoding: Option<Encoding>, aware: bool) -> Option<String> {
    if let Some(e) = encoding {
        return Some(shape::encoded_decoder(e, aware));
    }
    let name = match t.unfrozen().native()? {
        NativeType::Timestamp if aware => "timestamp_tz",
        NativeType::Timestamp => "timestamp_naive",
        NativeType::Date => "stored_date",
        NativeType::Time => "stored_time",
        _ => return None,
    };
    Some(name.to_string())
}
