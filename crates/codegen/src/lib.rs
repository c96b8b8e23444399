//! `remodel codegen`: the application's new data-access layer, generated from `plan.json` alone.
//!
//! One function per pattern of the workload: a read takes the SQL's parameters (typed, named
//! after what they bind) and returns rows with the SQL result's columns in its order; a write
//! takes the statement's parameters and runs its whole write path. Each function executes what
//! the plan states, as `remodel replay`'s executor does — binds, buckets, partitions, lookups,
//! the client's work, reads before write, guards, batches, TTLs, consistency levels — and
//! nothing the plan does not state: a value the plan leaves to the application (an
//! application-computed expression, a sequence's next value, the clock) is a named hook.
//!
//! Architecture invariant: this crate depends on `model` only (like `report`): it reads the
//! plan, never the SQL's text (it quotes it in docstrings) nor the notes, and does no I/O; the
//! caller writes the files it returns.

// Functions stay short enough to read as one pass (ARCHITECTURE.md; `cargo clippy` in CI).
#![warn(clippy::too_many_lines)]

mod error;
pub mod java;
pub mod names;
pub mod python;
pub mod shape;
mod walk;

pub use error::Error;

use remodel_model::Plan;

/// The language of the generated package.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    /// A Python package for the DataStax `cassandra-driver` (3.x).
    Python,
    /// A Maven module (Java 17) for the DataStax/Apache Java driver 4.x.
    Java,
}

/// What to generate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// The language.
    pub lang: Lang,
    /// The package's name (a Python package; a Java package).
    pub package: String,
}

/// One generated file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct File {
    /// Its path under the output folder (`/`-separated).
    pub path: String,
    /// Its text.
    pub contents: String,
}

impl File {
    /// The file at `path` holding `contents`.
    pub(crate) fn new(path: &str, contents: String) -> File {
        File {
            path: path.to_string(),
            contents,
        }
    }
}

/// A pattern whose function raises instead of running, with why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotGenerated {
    /// The pattern.
    pub pattern: String,
    /// Why the plan's statement of it cannot be executed.
    pub reason: String,
}

/// What [`generate`] made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generated {
    /// The files, in a stable order.
    pub files: Vec<File>,
    /// Each function: pattern id and its name, in plan order.
    pub functions: Vec<(String, String)>,
    /// Each function: pattern id and its declaration as the language writes it
    /// (`def trips_by_driver_id(self, driver_id: str) -> list[TripsByDriverIdRow]`), in plan
    /// order.
    pub signatures: Vec<(String, String)>,
    /// The functions that raise (the plan states no executable way, or one this generator
    /// cannot translate), with why.
    pub not_generated: Vec<NotGenerated>,
}

/// A generated function as the report shows it: its name in the plan and its declaration in
/// each language.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    /// The plan's name of it (`design.queries[].function`).
    pub name: String,
    /// Its Python declaration.
    pub python: String,
    /// Its Java declaration.
    pub java: String,
}

/// The declaration of every function the plan's access layer has, in Python and Java, by
/// pattern id (what `remodel report` shows beside each pattern's SQL and CQL).
pub fn signatures(plan: &Plan) -> Result<std::collections::BTreeMap<String, Signature>, Error> {
    let package = "dal".to_string();
    let python = python::generate(plan, &package)?;
    let java = java::generate(plan, &package)?;
    let named = names::functions(plan)?;
    let of = |g: &Generated, id: &str| {
        let found = g.signatures.iter().find(|(p, _)| p == id);
        found.map(|(_, s)| s.clone()).unwrap_or_default()
    };
    Ok(named
        .into_iter()
        .map(|(id, name)| {
            let s = Signature {
                name,
                python: of(&python, &id),
                java: of(&java, &id),
            };
            (id, s)
        })
        .collect())
}

/// The data-access layer of `plan` in `opts.lang`.
pub fn generate(plan: &Plan, opts: &Options) -> Result<Generated, Error> {
    names::check_package(&opts.package)?;
    match opts.lang {
        Lang::Python => python::generate(plan, &opts.package),
        Lang::Java => java::generate(plan, &opts.package),
    }
}

#[cfg(test)]
mod tests {
    use remodel_model::IdStrategy;

    /// The generated hooks make the time-ordered ids of `IdStrategy::TIME_ORDERED` (the walk
    /// refuses any other layout): the templates spell its epoch, shifts and masks.
    #[test]
    fn the_hooks_make_the_plans_time_ordered_ids() {
        let IdStrategy::TimeOrdered {
            epoch_ms,
            node_bits,
            counter_bits,
        } = IdStrategy::TIME_ORDERED
        else {
            panic!("TIME_ORDERED is time-ordered");
        };
        let grouped = |n: i64| {
            let n = u64::try_from(n).expect("a positive epoch");
            remodel_model::text::thousands(n).replace(',', "_")
        };
        let shift = node_bits + counter_bits;
        let node_mask = format!("0x{:X}", (1u32 << node_bits) - 1);
        let counter_max = format!("0x{:X}", (1u32 << counter_bits) - 1);
        let python = [
            format!("ID_EPOCH_MS = {}", grouped(epoch_ms)),
            format!("ms << {shift} | self.node << {counter_bits} | counter"),
            format!("node & {node_mask}"),
            format!("counter > {counter_max}"),
        ];
        for s in python {
            assert!(crate::python::HOOKS.contains(&s), "_hooks.py lacks {s}");
        }
        let java = [
            format!("ID_EPOCH_MS = {}L", grouped(epoch_ms)),
            format!("ms << {shift} | node << {counter_bits} | counter"),
            format!("node & {node_mask}"),
            format!("counter > {counter_max}"),
        ];
        for s in java {
            assert!(crate::java::HOOKS.contains(&s), "BaseHooks.java lacks {s}");
        }
    }
}
