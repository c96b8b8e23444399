//! How Java spells what the walk decides: the runtime's calls (`Rt.compare("eq", a, b)`), every
//! value an `Object` (a literal boxed, arrays `new Object[] {…}`), typed locals, braces, a
//! method of `Queries`.

use super::{capitalized, java_name, javadoc, jtype, param_type, typed, Java};
use crate::names;
use crate::shape::{Field, Param, Ty};
use crate::walk::{Local, Returns, Spell, Stmt};
use remodel_model::{CqlType, Literal, ScalarType};

/// The Java type of a list of rows read.
pub(super) const ROWS: &str = "List<Map<String, Object>>";

/// `s` as a Java string literal.
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
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The Java type of a local.
fn local(ty: Local) -> &'static str {
    match ty {
        Local::Clock => "Instant",
        Local::Object => "Object",
        Local::Count => "Long",
        Local::Buckets => "List<Object>",
        Local::Row => "Map<String, Object>",
        Local::Rows => ROWS,
        Local::State => "Rt.WriteState",
        Local::Bounds => "List<Driver.Bound>",
    }
}

/// `new Object[] {a, b}`.
fn objects(items: &[String]) -> String {
    format!("new Object[] {{{}}}", items.join(", "))
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

/// `stmts` at indentation `pad`.
fn render(stmts: &[Stmt], pad: usize, out: &mut String) {
    let block = |out: &mut String, head: String, body: &[Stmt]| {
        lines(out, pad, &format!("{head} {{"));
        render(body, pad + 4, out);
        lines(out, pad, "}");
    };
    for s in stmts {
        match s {
            Stmt::Let { ty, name, value } => {
                let value = value.as_deref().unwrap_or("new ArrayList<>()");
                lines(out, pad, &format!("{} {name} = {value};", local(*ty)));
            }
            Stmt::Set(name, v) => lines(out, pad, &format!("{name} = {v};")),
            Stmt::Expr(e) => lines(out, pad, &format!("{e};")),
            Stmt::Comment(c) => lines(out, pad, &format!("// {c}")),
            Stmt::If(cond, body) => block(out, format!("if ({cond})"), body),
            Stmt::For {
                ty,
                var,
                iter,
                body,
            } => block(out, format!("for ({} {var} : {iter})", local(*ty)), body),
            Stmt::Continue => lines(out, pad, "continue;"),
            Stmt::Return => lines(out, pad, "return;"),
            Stmt::Done => {}
            Stmt::Raise(m) => lines(out, pad, &format!("throw new Rt.NotExecutable({m});")),
        }
    }
}

impl Spell for Java {
    const HOOKS: &'static str = "hooks";
    const ZONE: &'static str = "ZONE";
    const NULL: &'static str = "null";
    const AND: &'static str = " && ";
    const OR: &'static str = " || ";
    const EMPTY_ROW: &'static str = "Map.of()";
    const EMPTY_ROWS: &'static str = "new ArrayList<Map<String, Object>>()";
    const NEW_VALUE: &'static str = "newValue";

    fn function_name(snake: &str) -> String {
        names::camel(snake)
    }
    fn row_class_name(function: &str) -> String {
        format!("{}Row", capitalized(function))
    }
    fn member(snake: &str) -> String {
        names::camel(snake)
    }
    fn runtime(f: &str) -> String {
        format!("Rt.{}", names::camel(f))
    }
    fn statement_name(n: usize) -> String {
        format!("ps{n}")
    }
    fn statement_ref(name: &str) -> String {
        name.to_string()
    }
    fn zone_name(n: usize) -> String {
        format!("TZ_{n}")
    }
    fn spec_name(table: &str) -> String {
        super::spec_name(table)
    }
    fn hook_name(pattern: &str, k: usize) -> String {
        format!("computed{}_{k}", names::pascal(pattern))
    }
    fn joined(k: usize) -> String {
        format!("joined{k}")
    }

    fn string(s: &str) -> String {
        string(s)
    }
    fn bool(b: bool) -> &'static str {
        if b {
            "true"
        } else {
            "false"
        }
    }
    fn long(n: u32) -> String {
        format!("{n}L")
    }
    fn literal(&mut self, l: &Literal) -> String {
        match l {
            Literal::Null => "null".into(),
            Literal::Boolean { value: true } => "Boolean.TRUE".into(),
            Literal::Boolean { value: false } => "Boolean.FALSE".into(),
            Literal::Integer { value } => format!("Long.valueOf({value}L)"),
            Literal::Numeric { value } => format!("new BigDecimal({})", string(value)),
            Literal::Text { value } => string(value),
            Literal::Date { value } => format!("LocalDate.parse({})", string(value)),
            Literal::Timestamp { value } => format!("Rt.timestampFromText({})", string(value)),
            Literal::Timestamptz { value } => {
                format!("Rt.timestamptzFromText({}, ZONE)", string(value))
            }
            Literal::Interval {
                months,
                days,
                micros,
            } => format!("new Rt.Interval({months}L, {days}L, {micros}L)"),
            Literal::Uuid { value } => format!("UUID.fromString({})", string(value)),
            Literal::Bytes { hex } => format!("Rt.hex({})", string(hex)),
        }
    }
    fn param(p: &Param) -> String {
        java_name(&p.name)
    }
    fn array(items: &[String]) -> String {
        objects(items)
    }
    fn list(items: &[String]) -> String {
        format!("List.of({})", items.join(", "))
    }
    fn varargs(items: &[String]) -> String {
        objects(items)
    }
    fn tuple(items: &[String]) -> String {
        format!("Rt.tuple({})", objects(items))
    }
    fn record(class: &str, items: &[String]) -> String {
        format!("new Rt.{class}({})", items.join(", "))
    }
    fn new_runtime(class: &str, args: &[String]) -> String {
        format!("new Rt.{class}({})", args.join(", "))
    }
    fn pairs(pairs: &[(String, String)]) -> String {
        let flat: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}, {v}")).collect();
        objects(&flat)
    }
    fn map(pairs: &[(String, String)]) -> String {
        format!("Rt.map({})", Self::pairs(pairs))
    }
    fn pair_list(pairs: &[(String, String)]) -> String {
        let flat: Vec<String> = pairs.iter().map(|(a, b)| format!("{a}, {b}")).collect();
        Self::list(&flat)
    }
    fn keyed_entry(key: &str, entry: &str) -> String {
        format!("Rt.entryOf({key}, {entry})")
    }
    fn case_branch(cond: &str, then: &str, otherwise: &str) -> String {
        // A conditional expression of two boxed numbers would unbox them: `Rt.obj` keeps each
        // an `Object`.
        format!("({cond} ? Rt.obj({then}) : Rt.obj({otherwise}))")
    }
    fn sequence(call: String) -> String {
        format!("Long.valueOf({call})")
    }
    fn bind_marker(_t: &CqlType, value: &str) -> String {
        // The driver converts a value to the marker's CQL type when it binds it.
        value.to_string()
    }
    fn epoch_micros_utc(value: &str) -> String {
        format!("Rt.epochMicros({value}, Rt.UTC)")
    }

    fn not(cond: &str) -> String {
        format!("!{cond}")
    }
    fn is_null(value: &str) -> String {
        format!("{value} == null")
    }
    fn is_not_null(value: &str) -> String {
        format!("{value} != null")
    }
    fn nonzero(count: &str) -> String {
        format!("({count} == null || {count} != 0)")
    }
    fn is_empty(rows: &str) -> String {
        format!("{rows}.isEmpty()")
    }
    fn cond_expr(cond: &str, then: &str, otherwise: &str) -> String {
        format!("{cond} ? {then} : {otherwise}")
    }

    fn client_column(key: &str) -> String {
        format!("Rt.need(r, {key})")
    }
    fn map_get(map: &str, key: &str) -> String {
        format!("{map}.get({key})")
    }
    fn map_put(map: &str, key: &str, value: &str) -> String {
        format!("{map}.put({key}, {value})")
    }
    fn first(rows: &str) -> String {
        format!("{rows}.get(0)")
    }
    fn first_or_null(rows: &str) -> String {
        format!("{rows}.isEmpty() ? null : {rows}.get(0)")
    }
    fn filter_rows(rows: &str, cond: &str) -> String {
        format!("Rt.filter({rows}, r -> {cond})")
    }
    fn extend(list: &str, items: &str) -> String {
        format!("{list}.addAll({items})")
    }
    fn push(list: &str, item: &str) -> String {
        format!("{list}.add({item})")
    }
    fn merge(a: &str, b: &str) -> String {
        format!("Rt.merge({a}, {b})")
    }
    fn run(statement: &str, spec: &str, values: &[String]) -> String {
        format!("db.run({statement}, {spec}, {})", objects(values))
    }
    fn bound(list: &str, statement: &str, values: &[String]) -> String {
        let values: String = values.iter().map(|v| format!("    {v},\n")).collect();
        format!("{list}.add(new Driver.Bound({statement}, new Object[] {{\n{values}}}))")
    }
    fn send(list: &str, kind: &str, level: &str, chunk: Option<u32>) -> String {
        let chunk = chunk.map_or(String::new(), |n| format!(", {n}"));
        format!("db.send({list}, {kind}, {level}{chunk})")
    }
    fn function_map(map: &str, fresh: bool, entries: &[(String, String)]) -> Vec<Stmt> {
        let init = fresh.then(|| Stmt::Set(map.into(), "new HashMap<>()".into()));
        let puts = entries
            .iter()
            .map(|(k, e)| Stmt::Expr(format!("{map}.put({k}, row -> {e})")));
        init.into_iter().chain(puts).collect()
    }
    fn offset(count: &str) -> Vec<Stmt> {
        vec![Stmt::Set(
            "rows".into(),
            format!("Rt.slice(rows, {count}, null)"),
        )]
    }
    fn limit(count: &str) -> Vec<Stmt> {
        vec![Stmt::Set(
            "rows".into(),
            format!("Rt.slice(rows, null, {count})"),
        )]
    }
    fn rows_out(class: &str, fields: &[Field]) -> Vec<Stmt> {
        let values: Vec<String> = fields
            .iter()
            .map(|f| {
                let key = f.key.as_deref().unwrap_or_default();
                format!("    {}", typed(f.ty, &format!("r.get({})", string(key))))
            })
            .collect();
        let add = format!("out.add(new {class}(\n{}))", values.join(",\n"));
        vec![
            Stmt::Expr(format!("List<{class}> out = new ArrayList<>()")),
            Stmt::For {
                ty: Local::Row,
                var: "r".into(),
                iter: "rows".into(),
                body: vec![Stmt::Expr(add)],
            },
            Stmt::Expr("return out".into()),
        ]
    }
    fn row_accessor(f: &Field) -> String {
        format!("{}()", java_name(&f.name))
    }

    fn signature(&mut self, params: &[Param]) -> String {
        let params: Vec<String> = params
            .iter()
            .map(|p| format!("{} {}", param_type(p), java_name(&p.name)))
            .collect();
        params.join(", ")
    }
    fn hook_param(&mut self, p: &Param) -> (String, String) {
        (java_name(&p.name), param_type(p))
    }
    fn hook_returns(&mut self, ty: Option<ScalarType>) -> String {
        ty.map_or("Object", |t| jtype(Ty::of_scalar(t))).to_string()
    }
    fn doc(summary: &str, blocks: &[(&str, &str)]) -> String {
        javadoc(summary, blocks, 4)
    }
    fn header(&mut self, name: &str, sig: &str, returns: Returns<'_>) -> String {
        let returns = match returns {
            Returns::Nothing => "void".to_string(),
            Returns::Rows(class) => format!("List<{class}>"),
            Returns::AnyRows => "List<Object>".to_string(),
        };
        format!("public {returns} {name}({sig})")
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
        let mut out = format!("{doc}    {header} {{\n");
        render(body, 8, &mut out);
        out.push_str("    }\n");
        out
    }
    fn row_class(
        &mut self,
        class: &str,
        function: &str,
        pattern: &str,
        fields: &[Field],
    ) -> String {
        let comps: Vec<String> = fields
            .iter()
            .map(|f| format!("{} {}", jtype(f.ty), java_name(&f.name)))
            .collect();
        format!(
            "    /** A row of {{@code {function}}} ({pattern}), with the SQL result's columns in its order. */\n    \
             public record {class}({}) {{}}\n",
            comps.join(", ")
        )
    }
}
