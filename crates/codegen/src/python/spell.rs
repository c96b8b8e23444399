//! How Python spells what the walk decides: the runtime's calls (`rt.compare("eq", a, b)`),
//! lists, dicts and lambdas, `if`/`for` blocks by indentation, a method of `Queries`.

use super::{docstring, ident, marker, Python};
use crate::names;
use crate::shape::{Field, Param, Ty};
use crate::walk::{Local, Returns, Spell, Stmt};
use remodel_model::{CqlType, Literal, ScalarType};

/// The runtime's functions named after a Python keyword or builtin take a trailing `_`.
const RENAMED: &[&str] = &["not", "and", "or", "abs", "round"];

/// `s` as a Python string literal.
pub(super) fn string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `True` / `False`.
fn py_bool(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}

/// `{k: v, …}`.
fn dict(pairs: &[(String, String)]) -> String {
    let items: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}: {v}")).collect();
    format!("{{{}}}", items.join(", "))
}

/// `text` at `pad`, each of its lines (a blank line stays blank).
fn lines(out: &mut String, pad: usize, text: &str) {
    for line in text.split('\n') {
        if !line.is_empty() {
            out.push_str(&" ".repeat(pad));
            out.push_str(line);
        }
        out.push('\n');
    }
}

impl Python {
    /// `stmts` at indentation `pad`.
    fn render(&mut self, stmts: &[Stmt], pad: usize, out: &mut String) {
        for s in stmts {
            match s {
                Stmt::Let {
                    name,
                    value: Some(v),
                    ..
                } => lines(out, pad, &format!("{name} = {v}")),
                Stmt::Let {
                    ty,
                    name,
                    value: None,
                } => {
                    let hint = match ty {
                        Local::Bounds => {
                            self.import("Any");
                            "list[tuple[Any, list[Any]]]"
                        }
                        _ => "list[rt.Row]",
                    };
                    lines(out, pad, &format!("{name}: {hint} = []"));
                }
                Stmt::Set(name, v) => lines(out, pad, &format!("{name} = {v}")),
                Stmt::Expr(e) => lines(out, pad, e),
                Stmt::Comment(c) => lines(out, pad, &format!("# {c}")),
                Stmt::If(cond, body) => {
                    lines(out, pad, &format!("if {cond}:"));
                    self.render(body, pad + 4, out);
                }
                Stmt::For {
                    var, iter, body, ..
                } => {
                    lines(out, pad, &format!("for {var} in {iter}:"));
                    self.render(body, pad + 4, out);
                }
                Stmt::Continue => lines(out, pad, "continue"),
                Stmt::Return | Stmt::Done => lines(out, pad, "return None"),
                Stmt::Raise(m) => {
                    // The method of a pattern that raises is typed with `Any`.
                    self.import("Any");
                    lines(out, pad, &format!("raise rt.NotExecutable({m})"));
                }
            }
        }
    }
}

impl Spell for Python {
    const HOOKS: &'static str = "self._hooks";
    const ZONE: &'static str = "_ZONE";
    const NULL: &'static str = "None";
    const AND: &'static str = " and ";
    const OR: &'static str = " or ";
    const EMPTY_ROW: &'static str = "{}";
    const EMPTY_ROWS: &'static str = "[]";
    const NEW_VALUE: &'static str = "new";

    fn function_name(snake: &str) -> String {
        snake.to_string()
    }
    fn row_class_name(function: &str) -> String {
        format!("{}Row", names::pascal(function))
    }
    fn member(snake: &str) -> String {
        snake.to_string()
    }
    fn runtime(f: &str) -> String {
        let tail = if RENAMED.contains(&f) { "_" } else { "" };
        format!("rt.{f}{tail}")
    }
    fn statement_name(n: usize) -> String {
        format!("_s{n}")
    }
    fn statement_ref(name: &str) -> String {
        format!("self.{name}")
    }
    fn zone_name(n: usize) -> String {
        format!("_TZ_{n}")
    }
    fn spec_name(table: &str) -> String {
        super::spec_name(table)
    }
    fn hook_name(pattern: &str, k: usize) -> String {
        format!("computed_{pattern}_{k}")
    }
    fn joined(k: usize) -> String {
        format!("joined_{k}")
    }

    fn string(s: &str) -> String {
        string(s)
    }
    fn bool(b: bool) -> &'static str {
        py_bool(b)
    }
    fn long(n: u32) -> String {
        n.to_string()
    }
    fn literal(&mut self, l: &Literal) -> String {
        match l {
            Literal::Null => "None".into(),
            Literal::Boolean { value } => py_bool(*value).into(),
            Literal::Integer { value } => value.to_string(),
            Literal::Numeric { value } => {
                self.import("decimal");
                format!("decimal.Decimal({})", string(value))
            }
            Literal::Text { value } => string(value),
            Literal::Date { value } => {
                self.import("dt");
                format!("dt.date.fromisoformat({})", string(value))
            }
            Literal::Timestamp { value } => {
                self.import("dt");
                format!("dt.datetime.fromisoformat({})", string(value))
            }
            Literal::Timestamptz { value } => {
                format!("rt.timestamptz_from_text({}, _ZONE)", string(value))
            }
            Literal::Interval {
                months,
                days,
                micros,
            } => format!("rt.Interval({months}, {days}, {micros})"),
            Literal::Uuid { value } => {
                self.import("uuid");
                format!("uuid.UUID({})", string(value))
            }
            Literal::Bytes { hex } => format!("bytes.fromhex({})", string(hex)),
        }
    }
    fn param(p: &Param) -> String {
        // As the signature names it: a parameter named after a keyword or a module the code
        // uses (`uuid`, `now`) is `uuid_`.
        ident(&p.name)
    }
    fn array(items: &[String]) -> String {
        format!("[{}]", items.join(", "))
    }
    fn list(items: &[String]) -> String {
        format!("[{}]", items.join(", "))
    }
    fn varargs(items: &[String]) -> String {
        items.join(", ")
    }
    fn tuple(items: &[String]) -> String {
        format!("({},)", items.join(", "))
    }
    fn record(_class: &str, items: &[String]) -> String {
        format!("({})", items.join(", "))
    }
    fn new_runtime(class: &str, args: &[String]) -> String {
        format!("rt.{class}({})", args.join(", "))
    }
    fn pairs(pairs: &[(String, String)]) -> String {
        dict(pairs)
    }
    fn map(pairs: &[(String, String)]) -> String {
        dict(pairs)
    }
    fn pair_list(pairs: &[(String, String)]) -> String {
        let items: Vec<String> = pairs.iter().map(|(a, b)| format!("({a}, {b})")).collect();
        format!("[{}]", items.join(", "))
    }
    fn keyed_entry(key: &str, entry: &str) -> String {
        format!("{{{key}: {entry}}}")
    }
    fn case_branch(cond: &str, then: &str, otherwise: &str) -> String {
        format!("({then} if {cond} else {otherwise})")
    }
    fn sequence(call: String) -> String {
        call
    }
    fn bind_marker(t: &CqlType, value: &str) -> String {
        marker(t, value)
    }
    fn epoch_micros_utc(value: &str) -> String {
        format!("rt.epoch_micros({value})")
    }

    fn not(cond: &str) -> String {
        format!("not {cond}")
    }
    fn is_null(value: &str) -> String {
        format!("{value} is None")
    }
    fn is_not_null(value: &str) -> String {
        format!("{value} is not None")
    }
    fn nonzero(count: &str) -> String {
        format!("{count} != 0")
    }
    fn is_empty(rows: &str) -> String {
        format!("not {rows}")
    }
    fn cond_expr(cond: &str, then: &str, otherwise: &str) -> String {
        format!("{then} if {cond} else {otherwise}")
    }

    fn client_column(key: &str) -> String {
        format!("r[{key}]")
    }
    fn map_get(map: &str, key: &str) -> String {
        format!("{map}[{key}]")
    }
    fn map_put(map: &str, key: &str, value: &str) -> String {
        format!("{map}[{key}] = {value}")
    }
    fn first(rows: &str) -> String {
        format!("{rows}[0]")
    }
    fn first_or_null(rows: &str) -> String {
        format!("{rows}[0] if {rows} else None")
    }
    fn filter_rows(rows: &str, cond: &str) -> String {
        format!("[r for r in {rows} if {cond}]")
    }
    fn extend(list: &str, items: &str) -> String {
        format!("{list} += {items}")
    }
    fn push(list: &str, item: &str) -> String {
        format!("{list}.append({item})")
    }
    fn merge(a: &str, b: &str) -> String {
        format!("{{**{a}, **{b}}}")
    }
    fn run(statement: &str, spec: &str, values: &[String]) -> String {
        format!("self._db.run({statement}, [{}], {spec})", values.join(", "))
    }
    fn bound(list: &str, statement: &str, values: &[String]) -> String {
        let values: String = values.iter().map(|v| format!("    {v},\n")).collect();
        format!("{list}.append(({statement}, [\n{values}]))")
    }
    fn send(list: &str, kind: &str, level: &str, chunk: Option<u32>) -> String {
        let chunk = chunk.map_or(String::new(), |n| format!(", max_statements={n}"));
        format!("self._db.send({list}, {kind}, {level}{chunk})")
    }
    fn function_map(map: &str, fresh: bool, entries: &[(String, String)]) -> Vec<Stmt> {
        if entries.is_empty() && !fresh {
            return Vec::new();
        }
        let items: String = entries
            .iter()
            .map(|(k, e)| format!("    {k}: lambda row: {e},\n"))
            .collect();
        vec![Stmt::Expr(format!("{map} = {{\n{items}}}"))]
    }
    fn offset(count: &str) -> Vec<Stmt> {
        vec![
            Stmt::Let {
                ty: Local::Count,
                name: "skip".into(),
                value: Some(count.into()),
            },
            Stmt::If(
                "skip".into(),
                vec![Stmt::Set("rows".into(), "rows[skip:]".into())],
            ),
        ]
    }
    fn limit(count: &str) -> Vec<Stmt> {
        vec![
            Stmt::Let {
                ty: Local::Count,
                name: "keep".into(),
                value: Some(count.into()),
            },
            Stmt::If(
                "keep is not None".into(),
                vec![Stmt::Set("rows".into(), "rows[:keep]".into())],
            ),
        ]
    }
    fn rows_out(class: &str, fields: &[Field]) -> Vec<Stmt> {
        let values: String = fields
            .iter()
            .map(|f| {
                let key = f.key.as_deref().unwrap_or_default();
                format!("        {}=r[{}],\n", ident(&f.name), string(key))
            })
            .collect();
        vec![Stmt::Expr(format!(
            "return [\n    {class}(\n{values}    )\n    for r in rows\n]"
        ))]
    }
    fn row_accessor(f: &Field) -> String {
        ident(&f.name)
    }

    fn signature(&mut self, params: &[Param]) -> String {
        let mut out = vec!["self".to_string()];
        for p in params {
            let h = self.param_hint(p);
            out.push(format!("{}: {h}", ident(&p.name)));
        }
        out.join(", ")
    }
    fn hook_param(&mut self, p: &Param) -> (String, String) {
        (ident(&p.name), self.param_hint(p))
    }
    fn hook_returns(&mut self, ty: Option<ScalarType>) -> String {
        match ty {
            Some(t) => format!("{} | None", self.hint(Ty::of_scalar(t))),
            None => {
                self.import("Any");
                "Any".into()
            }
        }
    }
    fn doc(summary: &str, blocks: &[(&str, &str)]) -> String {
        docstring(summary, blocks, 8)
    }
    fn header(&mut self, name: &str, sig: &str, returns: Returns<'_>) -> String {
        let returns = match returns {
            Returns::Nothing => "None".to_string(),
            Returns::Rows(class) => format!("list[{class}]"),
            Returns::AnyRows => "list[Any]".to_string(),
        };
        format!("def {name}({sig}) -> {returns}")
    }
    fn method(
        &mut self,
        name: &str,
        sig: &str,
        returns: Returns<'_>,
        doc: &str,
        body: &[Stmt],
    ) -> String {
        let header = self.header(name, sig, returns);
        let mut out = format!("    {header}:\n{doc}");
        self.render(body, 8, &mut out);
        out
    }
    fn row_class(
        &mut self,
        class: &str,
        function: &str,
        pattern: &str,
        fields: &[Field],
    ) -> String {
        let mut out = format!(
            "@dataclasses.dataclass(frozen=True, slots=True)\nclass {class}:\n    \"\"\"A row of `{function}` ({pattern}), with the SQL result's columns in its order.\"\"\"\n\n"
        );
        for f in fields {
            let h = self.hint(f.ty);
            let hint = if f.nullable && h != "Any" {
                format!("{h} | None")
            } else {
                h.to_string()
            };
            out.push_str(&format!("    {}: {hint}\n", ident(&f.name)));
        }
        self.rows.push(class.to_string());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::Python;
    use crate::shape::{Param, Ty};
    use crate::walk::Spell;

    #[test]
    fn a_parameter_reads_as_the_signature_names_it() {
        let p = |name: &str| Param {
            n: 1,
            name: name.into(),
            ty: Ty::Uuid,
            list: false,
        };
        // `uuid` is the module, `now` the clock: the parameter is `uuid_`, `now_` everywhere.
        assert_eq!(Python::param(&p("uuid")), "uuid_");
        assert_eq!(Python::param(&p("now")), "now_");
        assert_eq!(Python::param(&p("trip_id")), "trip_id");
        let sig = Python::default().signature(&[p("uuid")]);
        assert_eq!(sig, "self, uuid_: uuid.UUID | None");
    }
}
