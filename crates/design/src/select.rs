//! Pass 3, selection: the set of tables that minimises the workload's weighted cost with every
//! read served — an integer program, as NoSE showed (Mior et al., ICDE 2016), solved with the
//! pure-Rust `microlp` (no native solver to install). One binary per way of serving a read and per
//! table layout; a table's write cost counts once however many reads share it; a read of a row
//! before writing counts once per write however many tables need it. When the program is too
//! large or the solver gives up, a greedy pass chooses instead and says so.

use crate::candidates::{Candidates, ReadOption};
use crate::costs::sizing::Sizer;
use crate::costs::{self, ReadCost, WriteTerm};
use microlp::{ComparisonOp, OptimizationDirection, Problem, Variable};
use remodel_model::{Relationship, Selection, Workload};
use std::collections::BTreeMap;
use std::time::Duration;

/// Programs with more variables than this are solved greedily.
const MAX_VARIABLES: usize = 20_000;

/// How long the solver may search before the best solution found is taken.
const TIME_LIMIT: Duration = Duration::from_secs(2);

/// The weights of the objective (set by `--objective`).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Weights {
    /// Per partition read.
    pub read: f64,
    /// Per table write (a read before write counts as a partition read).
    pub write: f64,
    /// Per GiB stored (one replica).
    pub storage_per_gib: f64,
    /// Per row a read scans: 0.01 (a hundred rows merged and sent cost about what finding a
    /// partition does: the coordinator's round trip, the bloom filters and partition index).
    #[serde(default = "Weights::default_row")]
    pub row: f64,
    /// Per KiB a read returns: 0.01.
    #[serde(default = "Weights::default_kib")]
    pub kib_read: f64,
    /// Per KiB a write sends: 0.01.
    #[serde(default = "Weights::default_kib")]
    pub kib_written: f64,
}

impl Weights {
    /// `balanced` (the default) counts a table write as half a partition read: a Cassandra
    /// write appends to the commit log and a memtable, a read may merge several SSTables.
    /// `reads` makes writes cheaper still (copy more, read less), `writes` makes them as dear
    /// as two reads (copy less, look up more). A read before a write counts as a read.
    pub fn named(name: &str) -> Option<Weights> {
        let (read, write) = match name {
            "reads" => (1.0, 0.125),
            "balanced" => (1.0, 0.5),
            "writes" => (1.0, 2.0),
            _ => return None,
        };
        Some(Weights {
            read,
            write,
            storage_per_gib: 0.01,
            row: Self::default_row(),
            kib_read: Self::default_kib(),
            kib_written: Self::default_kib(),
        })
    }

    fn default_row() -> f64 {
        0.01
    }

    fn default_kib() -> f64 {
        0.01
    }

    /// A read's weighted cost per call: partitions, rows scanned and KiB returned.
    pub fn read_terms(&self, partitions: f64, rows_scanned: f64, bytes_returned: f64) -> f64 {
        self.read * partitions + self.row * rows_scanned + self.kib_read * bytes_returned / 1024.0
    }
}

impl Default for Weights {
    fn default() -> Self {
        Weights::named("balanced").unwrap_or(Weights {
            read: 1.0,
            write: 1.0,
            storage_per_gib: 0.01,
            row: Weights::default_row(),
            kib_read: Weights::default_kib(),
            kib_written: Weights::default_kib(),
        })
    }
}

/// The costs of every option and layout, per 100 calls of the workload.
pub struct Costs {
    /// Per option: its read cost per call.
    pub reads: Vec<ReadCost>,
    /// Per layout: the writes that touch it whatever its columns.
    pub always: Vec<Vec<WriteTerm>>,
    /// Per option: the writes that touch its layout because of its columns.
    pub needs: Vec<Vec<WriteTerm>>,
    /// Per pattern: calls per 100 calls of the workload.
    pub share: Vec<f64>,
}

/// Costs every option and layout.
pub fn costs(
    sizer: &Sizer<'_>,
    workload: &Workload,
    relationships: &[Relationship],
    c: &Candidates,
) -> Costs {
    let total = workload
        .patterns
        .iter()
        .map(|p| p.calls as f64)
        .sum::<f64>()
        .max(1.0);
    Costs {
        reads: c
            .options
            .iter()
            .map(|o| {
                costs::read_cost(
                    sizer,
                    &workload.patterns[o.pattern],
                    o,
                    &c.layouts[o.layout],
                )
            })
            .collect(),
        always: c
            .layouts
            .iter()
            .map(|l| costs::always_terms(sizer, workload, l))
            .collect(),
        needs: c
            .options
            .iter()
            .map(|o| {
                costs::need_terms(
                    sizer,
                    workload,
                    relationships,
                    &c.layouts[o.layout],
                    &o.needs,
                )
            })
            .collect(),
        share: workload
            .patterns
            .iter()
            .map(|p| p.calls as f64 * 100.0 / total)
            .collect(),
    }
}

impl Costs {
    /// The weighted cost of a write term (its statements, and the reads that find copying rows).
    pub fn term(&self, w: &Weights, t: &WriteTerm) -> f64 {
        self.share[t.write]
            * (w.write * t.statements + w.read * t.many_reads + w.kib_written * t.bytes / 1024.0)
    }

    /// The weighted cost of reading a row first, for one write.
    fn row_read(&self, w: &Weights, write: usize) -> f64 {
        self.share[write] * w.read
    }

    /// The weighted read and storage cost of an option.
    pub fn option(&self, w: &Weights, c: &Candidates, oi: usize) -> f64 {
        let r = &self.reads[oi];
        self.share[c.options[oi].pattern]
            * w.read_terms(r.partitions, r.rows_scanned, r.bytes_returned)
            + w.storage_per_gib * r.stored_bytes / (1024.0 * 1024.0 * 1024.0)
    }

    /// An option's write cost if it were alone on its tables, per 100 calls (for the evidence).
    pub fn write_share(&self, c: &Candidates, oi: usize) -> f64 {
        let (statements, reads_first) = self.write_split(c, oi);
        statements + reads_first
    }

    /// [`Costs::write_share`] as table writes and reads before write (the objective weighs the
    /// second as reads, so a reviewer needs them apart).
    pub fn write_split(&self, c: &Candidates, oi: usize) -> (f64, f64) {
        let o = &c.options[oi];
        let mut rows: Vec<(usize, &str)> = Vec::new();
        let (mut statements, mut reads_first) = (0.0, 0.0);
        for t in self.always[o.layout].iter().chain(&self.needs[oi]) {
            statements += self.share[t.write] * t.statements;
            reads_first += self.share[t.write] * t.many_reads;
            if let Some(e) = &t.reads_row_of {
                if !rows.contains(&(t.write, e.as_str())) {
                    rows.push((t.write, e));
                    reads_first += self.share[t.write];
                }
            }
        }
        (statements, reads_first)
    }
}

/// What the selection chose.
pub struct Chosen {
    /// Per pattern (workload index), the option chosen.
    pub option: BTreeMap<usize, usize>,
    /// How it was chosen.
    pub info: Selection,
}

/// Chooses one option per read.
pub fn select(c: &Candidates, costs: &Costs, weights: &Weights) -> Chosen {
    let mut info = Selection {
        weights: (weights.read, weights.write, weights.storage_per_gib),
        term_weights: Some((weights.row, weights.kib_read, weights.kib_written)),
        ..Selection::default()
    };
    let program = Program::build(c, costs, weights);
    info.variables = program.variables;
    info.constraints = program.constraints;
    if program.variables > MAX_VARIABLES {
        info.method = "greedy".into();
        info.note = Some(format!(
            "the program has {} variables (more than {MAX_VARIABLES})",
            program.variables
        ));
        return Chosen {
            option: greedy(c, costs, weights),
            info,
        };
    }
    match program.solve(c) {
        Ok((option, gap)) => {
            info.method = "ilp".into();
            info.gap = gap;
            Chosen { option, info }
        }
        Err(why) => {
            info.method = "greedy".into();
            info.note = Some(why);
            Chosen {
                option: greedy(c, costs, weights),
                info,
            }
        }
    }
}

/// The integer program.
struct Program {
    problem: Problem,
    y: Vec<Variable>,
    variables: usize,
    constraints: usize,
}

impl Program {
    fn build(c: &Candidates, costs: &Costs, w: &Weights) -> Program {
        let mut problem = Problem::new(OptimizationDirection::Minimize);
        let mut variables = 0;
        let mut constraints = 0;
        // Tables: each pays the writes that touch it whatever it holds.
        let mut rows: BTreeMap<(usize, String), Variable> = BTreeMap::new();
        let mut row_var = |problem: &mut Problem, variables: &mut usize, key: (usize, String)| {
            *rows.entry(key.clone()).or_insert_with(|| {
                *variables += 1;
                problem.add_var(costs.row_read(w, key.0), (0.0, 1.0))
            })
        };
        let x: Vec<Variable> = c
            .layouts
            .iter()
            .enumerate()
            .map(|(li, _)| {
                variables += 1;
                problem.add_binary_var(costs.always[li].iter().map(|t| costs.term(w, t)).sum())
            })
            .collect();
        for (li, terms) in costs.always.iter().enumerate() {
            for t in terms {
                if let Some(e) = &t.reads_row_of {
                    let r = row_var(&mut problem, &mut variables, (t.write, e.clone()));
                    problem.add_constraint([(r, 1.0), (x[li], -1.0)], ComparisonOp::Ge, 0.0);
                    constraints += 1;
                }
            }
        }
        // Ways of serving the reads: exactly one per read, each needing its tables.
        let y: Vec<Variable> = (0..c.options.len())
            .map(|oi| {
                variables += 1;
                problem.add_binary_var(costs.option(w, c, oi))
            })
            .collect();
        let mut per_read: BTreeMap<usize, Vec<Variable>> = BTreeMap::new();
        let mut shared: BTreeMap<(usize, usize, String), Variable> = BTreeMap::new();
        for (oi, o) in c.options.iter().enumerate() {
            per_read.entry(o.pattern).or_default().push(y[oi]);
            for li in required_layouts(c, o) {
                problem.add_constraint([(y[oi], 1.0), (x[li], -1.0)], ComparisonOp::Le, 0.0);
                constraints += 1;
            }
            // A write term on a shared table counts once: z ≥ y of every option needing it.
            for t in &costs.needs[oi] {
                let key = (
                    o.layout,
                    t.write,
                    format!("{}/{}/{:?}", t.statements, t.many_reads, t.reads_row_of),
                );
                let z = *shared.entry(key).or_insert_with(|| {
                    variables += 1;
                    problem.add_var(costs.term(w, t), (0.0, 1.0))
                });
                problem.add_constraint([(z, 1.0), (y[oi], -1.0)], ComparisonOp::Ge, 0.0);
                constraints += 1;
                // The rows copying the written one are listed by a table that must be kept too.
                if let Some(fi) = finder_layout(c, t) {
                    problem.add_constraint([(x[fi], 1.0), (z, -1.0)], ComparisonOp::Ge, 0.0);
                    constraints += 1;
                }
                if let Some(e) = &t.reads_row_of {
                    let r = row_var(&mut problem, &mut variables, (t.write, e.clone()));
                    problem.add_constraint([(r, 1.0), (y[oi], -1.0)], ComparisonOp::Ge, 0.0);
                    constraints += 1;
                }
            }
        }
        for vars in per_read.values() {
            let expr: Vec<(Variable, f64)> = vars.iter().map(|v| (*v, 1.0)).collect();
            problem.add_constraint(expr.as_slice(), ComparisonOp::Eq, 1.0);
            constraints += 1;
        }
        Program {
            problem,
            y,
            variables,
            constraints,
        }
    }

    fn solve(mut self, c: &Candidates) -> Result<(BTreeMap<usize, usize>, Option<f64>), String> {
        self.problem.set_time_limit(TIME_LIMIT);
        let outcome = self
            .problem
            .solve()
            .map_err(|e| format!("the solver failed: {e}"))?;
        let optimal = outcome.is_optimal();
        let solution = outcome
            .into_solution()
            .map_err(|_| "the solver found no solution in its time limit".to_string())?;
        let gap = if optimal { None } else { solution.gap() };
        let mut chosen = BTreeMap::new();
        for (oi, o) in c.options.iter().enumerate() {
            if solution.var_value(self.y[oi]) > 0.5 {
                chosen.entry(o.pattern).or_insert(oi);
            }
        }
        Ok((chosen, gap))
    }
}

/// The layout a write term reads the copying rows from, when it needs one.
fn finder_layout(c: &Candidates, t: &WriteTerm) -> Option<usize> {
    let (root, by) = t.finder.as_ref()?;
    c.finders.iter().find_map(|((r, b), i)| {
        (r == root
            && b.len() == by.len()
            && b.iter().all(|x| by.iter().any(|y| y.column == x.column)))
        .then_some(*i)
    })
}

/// The layouts an option needs: the one it reads first and the entity tables it reads by key.
pub fn required_layouts(c: &Candidates, o: &ReadOption) -> Vec<usize> {
    let mut out = vec![o.layout];
    for l in &o.shape.lookups {
        if let Some(i) = c.primary.get(&l.table) {
            if !out.contains(i) {
                out.push(*i);
            }
        }
    }
    out
}

/// The weighted cost of a choice (the objective the program minimises), for comparison.
pub fn objective(c: &Candidates, costs: &Costs, w: &Weights, chosen: &Chosen) -> f64 {
    let mut open: Vec<usize> = Vec::new();
    let mut terms: Vec<(usize, usize, String)> = Vec::new();
    let mut rows: Vec<(usize, String)> = Vec::new();
    let mut sum = 0.0;
    let mut row = |sum: &mut f64, key: (usize, String)| {
        if !rows.contains(&key) {
            *sum += costs.row_read(w, key.0);
            rows.push(key);
        }
    };
    for &oi in chosen.option.values() {
        let o = &c.options[oi];
        sum += costs.option(w, c, oi);
        for li in required_layouts(c, o) {
            if !open.contains(&li) {
                open.push(li);
                for t in &costs.always[li] {
                    sum += costs.term(w, t);
                    if let Some(e) = &t.reads_row_of {
                        row(&mut sum, (t.write, e.clone()));
                    }
                }
            }
        }
        for t in &costs.needs[oi] {
            let key = (
                o.layout,
                t.write,
                format!("{}/{}", t.statements, t.many_reads),
            );
            if !terms.contains(&key) {
                sum += costs.term(w, t);
                terms.push(key);
            }
            if let Some(e) = &t.reads_row_of {
                row(&mut sum, (t.write, e.clone()));
            }
        }
    }
    sum
}

/// The greedy pass alone (the fallback of [`select`]), for comparison.
pub fn select_greedy(c: &Candidates, costs: &Costs, weights: &Weights) -> Chosen {
    Chosen {
        option: greedy(c, costs, weights),
        info: Selection {
            method: "greedy".into(),
            weights: (weights.read, weights.write, weights.storage_per_gib),
            term_weights: Some((weights.row, weights.kib_read, weights.kib_written)),
            ..Selection::default()
        },
    }
}

/// Reads in order of weight, each taking the option that adds the least cost to what is chosen.
fn greedy(c: &Candidates, costs: &Costs, w: &Weights) -> BTreeMap<usize, usize> {
    let mut order: Vec<usize> = c.options.iter().map(|o| o.pattern).collect();
    order.dedup();
    order.sort_by(|a, b| costs.share[*b].total_cmp(&costs.share[*a]));
    let mut open: Vec<usize> = Vec::new();
    let mut paid: Vec<(usize, usize, String)> = Vec::new();
    let mut chosen = BTreeMap::new();
    for p in order {
        let mut best: Option<(f64, usize)> = None;
        for (oi, o) in c.options.iter().enumerate().filter(|(_, o)| o.pattern == p) {
            let mut cost = costs.option(w, c, oi);
            for li in required_layouts(c, o) {
                if !open.contains(&li) {
                    cost += costs.always[li]
                        .iter()
                        .map(|t| costs.term(w, t))
                        .sum::<f64>();
                }
            }
            for t in &costs.needs[oi] {
                if !paid.contains(&(o.layout, t.write, format!("{}", t.statements))) {
                    cost += costs.term(w, t);
                }
                if let Some(fi) = finder_layout(c, t).filter(|fi| !open.contains(fi)) {
                    cost += costs.always[fi]
                        .iter()
                        .map(|t| costs.term(w, t))
                        .sum::<f64>();
                }
            }
            if best.is_none_or(|(b, _)| cost < b) {
                best = Some((cost, oi));
            }
        }
        if let Some((_, oi)) = best {
            let o = &c.options[oi];
            for li in required_layouts(c, o) {
                if !open.contains(&li) {
                    open.push(li);
                }
            }
            for t in &costs.needs[oi] {
                paid.push((o.layout, t.write, format!("{}", t.statements)));
                if let Some(fi) = finder_layout(c, t) {
                    if !open.contains(&fi) {
                        open.push(fi);
                    }
                }
            }
            chosen.insert(p, oi);
        }
    }
    chosen
}
