//! The Java backend: a Maven module for the DataStax Java driver 4.x (the Apache Cassandra
//! `java-driver-core`), Java 17, compiled with `-Xlint:all -Werror`. Its structure is the Python
//! backend's ([`crate::python`]): the same functions, the same names, the same runtime semantics.
//!
//! ```text
//! DIR/pom.xml                                 the driver as the one dependency, javac's checks
//! DIR/src/main/java/PACKAGE/Queries.java      one method per pattern, a record per read's rows
//! DIR/src/main/java/PACKAGE/Hooks.java        what the plan leaves to the application
//! DIR/src/main/java/PACKAGE/Executor.java     `java -cp … PACKAGE.Executor`: `replay --executor`
//! DIR/src/main/java/PACKAGE/Rt.java           SQL's semantics (NULLs, buckets, sorts), conversions
//! DIR/src/main/java/PACKAGE/Driver.java       prepared statements, binding by CQL type, batches
//! DIR/src/main/java/PACKAGE/BaseHooks.java    the hooks' defaults
//! DIR/src/main/java/PACKAGE/Serve.java        the protocol of `replay --executor` (and its JSON)
//! ```
//!
//! `Rt`, `Driver`, `BaseHooks` and `Serve` are the same for every plan (the templates of this
//! crate, their `package` line aside). The driver's object mapper (`@Entity`/`@Dao`) is not used:
//! every pattern needs more than one mapped statement (buckets, lookups, the client's work, write
//! paths), so each runs plain prepared statements.

mod executor;
mod expr;
mod module;
mod read;
mod write;

use crate::shape::{self, Param, Ty};
use crate::{File, Generated, NotGenerated};
use remodel_model::{AccessPattern, BindValue, ConsistencyLevel, Plan, ScalarType};
use std::collections::{BTreeMap, BTreeSet};

/// The runtime every module carries (the same text for every plan).
const RUNTIME: &str = include_str!("../../templates/java/Rt.java");
/// The driver calls every module carries.
const DRIVER: &str = include_str!("../../templates/java/Driver.java");
/// The hooks' base class every module carries.
const HOOKS: &str = include_str!("../../templates/java/BaseHooks.java");
/// The protocol of `replay --executor` every module carries.
const SERVE: &str = include_str!("../../templates/java/Serve.java");

/// The driver's version the module depends on (the Apache Cassandra Java driver 4.x).
pub const DRIVER_VERSION: &str = "4.18.1";

pub(crate) use crate::python::Skip;

/// A hook of an application-computed value.
struct Hook {
    name: String,
    sql: String,
    pattern: String,
    params: Vec<(String, String)>,
    returns: &'static str,
}

/// The state of one module being generated.
pub(crate) struct Gen<'p> {
    plan: &'p Plan,
    tables: Vec<&'p str>,
    zones: BTreeMap<String, String>,
    statements: Vec<(String, String, String)>,
    specs: BTreeSet<String>,
    hooks: Vec<Hook>,
    row_classes: Vec<String>,
    methods: Vec<String>,
    calls: Vec<executor::Call>,
}

/// The module of `plan` whose Java package is `package`.
pub(crate) fn generate(plan: &Plan, package: &str) -> Result<Generated, crate::Error> {
    if let Some(part) = package.split('.').find(|p| KEYWORDS.contains(p)) {
        return Err(crate::Error::Package(
            package.to_string(),
            format!("`{part}` is a reserved word of Java"),
        ));
    }
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
        functions.push((id.to_string(), crate::names::camel(name)));
        if let Err(Skip(reason)) = g.function(p, &crate::names::camel(name)) {
            not_generated.push(NotGenerated {
                pattern: id.to_string(),
                reason,
            });
        }
    }
    let dir = format!("src/main/java/{}", package.replace('.', "/"));
    let fixed = |text: &str| text.replacen("package PACKAGE;", &format!("package {package};"), 1);
    let files = vec![
        file("pom.xml", pom(plan, package)),
        file(&format!("{dir}/Queries.java"), g.queries_file(package)),
        file(&format!("{dir}/Hooks.java"), g.hooks_file(package)),
        file(&format!("{dir}/Executor.java"), executor::file(&g, package)),
        file(&format!("{dir}/Rt.java"), fixed(RUNTIME)),
        file(&format!("{dir}/Driver.java"), fixed(DRIVER)),
        file(&format!("{dir}/BaseHooks.java"), fixed(HOOKS)),
        file(&format!("{dir}/Serve.java"), fixed(SERVE)),
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

/// The module's `pom.xml`: Java 17, the driver, javac's `-Xlint:all -Werror`, and the plugins
/// pinned (so an offline build finds what a first build cached).
fn pom(plan: &Plan, package: &str) -> String {
    POM.replace("{keyspace}", &plan.design.keyspace.name)
        .replace("{group}", package)
        .replace("{artifact}", &package.replace(['.', '_'], "-"))
        .replace("{driver}", DRIVER_VERSION)
}

const POM: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<!-- The data-access layer of keyspace {keyspace}, generated by `remodel codegen` from plan.json. -->
<project xmlns="http://maven.apache.org/POM/4.0.0"
         xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
         xsi:schemaLocation="http://maven.apache.org/POM/4.0.0 https://maven.apache.org/xsd/maven-4.0.0.xsd">
  <modelVersion>4.0.0</modelVersion>
  <groupId>{group}</groupId>
  <artifactId>{artifact}</artifactId>
  <version>0.1.0</version>
  <packaging>jar</packaging>

  <properties>
    <maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>

  <dependencies>
    <dependency>
      <groupId>org.apache.cassandra</groupId>
      <artifactId>java-driver-core-shaded</artifactId>
      <version>{driver}</version>
    </dependency>
  </dependencies>

  <build>
    <plugins>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-resources-plugin</artifactId>
        <version>3.3.1</version>
      </plugin>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-compiler-plugin</artifactId>
        <version>3.13.0</version>
        <configuration>
          <compilerArgs>
            <arg>-Xlint:all</arg>
            <arg>-Werror</arg>
          </compilerArgs>
        </configuration>
      </plugin>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-dependency-plugin</artifactId>
        <version>3.8.1</version>
      </plugin>
    </plugins>
  </build>
</project>
"#;

/// Java's reserved words (and literals): an identifier named so takes a trailing `_`.
const KEYWORDS: &[&str] = &[
    "abstract",
    "assert",
    "boolean",
    "break",
    "byte",
    "case",
    "catch",
    "char",
    "class",
    "const",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extends",
    "final",
    "finally",
    "float",
    "for",
    "goto",
    "if",
    "implements",
    "import",
    "instanceof",
    "int",
    "interface",
    "long",
    "native",
    "new",
    "package",
    "private",
    "protected",
    "public",
    "return",
    "short",
    "static",
    "strictfp",
    "super",
    "switch",
    "synchronized",
    "this",
    "throw",
    "throws",
    "transient",
    "try",
    "void",
    "volatile",
    "while",
    "true",
    "false",
    "null",
    "var",
    "record",
    "yield",
    "sealed",
    "permits",
    "_",
];

/// Names the generated methods use for their own locals and fields.
const LOCALS: &[&str] = &[
    "now", "rows", "st", "main", "counters", "each", "r", "found", "out", "db", "hooks", "row",
    "rowId", "keep", "skip", "q", "p",
];

/// `name` (camelCase) as a Java identifier: `name_` when it is a reserved word, a name of the
/// generated code's own, or one of its numbered locals (`b0`, `v1`, `s2`, `r0`, `k0_1`, `ps3`).
pub(crate) fn ident(name: &str) -> String {
    let numbered = ["b", "v", "s", "r", "k", "ps", "joined"].iter().any(|p| {
        name.strip_prefix(p).is_some_and(|rest| {
            !rest.is_empty() && rest.chars().all(|c| c.is_ascii_digit() || c == '_')
        })
    });
    if KEYWORDS.contains(&name) || LOCALS.contains(&name) || numbered {
        format!("{name}_")
    } else {
        name.to_string()
    }
}

/// The Java identifier of a snake_case name (`driver_id` → `driverId`).
pub(crate) fn java_name(snake: &str) -> String {
    ident(&crate::names::camel(snake))
}

/// `tripsByDriverId` → `TripsByDriverId`.
pub(crate) fn capitalized(name: &str) -> String {
    let mut c = name.chars();
    match c.next() {
        Some(f) => f.to_ascii_uppercase().to_string() + c.as_str(),
        None => String::new(),
    }
}

/// The Java type of `ty`.
pub(crate) fn jtype(ty: Ty) -> &'static str {
    match ty {
        Ty::Bool => "Boolean",
        Ty::Int => "Long",
        Ty::Decimal => "BigDecimal",
        Ty::Float => "Double",
        Ty::Text => "String",
        Ty::Date => "LocalDate",
        Ty::Time => "LocalTime",
        Ty::Timestamp => "LocalDateTime",
        Ty::Timestamptz => "Instant",
        Ty::Interval => "Rt.Interval",
        Ty::Uuid => "UUID",
        Ty::Bytes => "ByteBuffer",
        Ty::Any => "Object",
    }
}

/// The runtime's conversion of an `Object` to `ty` (`None`: kept as `Object`).
pub(crate) fn as_type(ty: Ty) -> Option<&'static str> {
    Some(match ty {
        Ty::Bool => "Rt.asBool",
        Ty::Int => "Rt.asLong",
        Ty::Decimal => "Rt.asDecimal",
        Ty::Float => "Rt.asDouble",
        Ty::Text => "Rt.asText",
        Ty::Date => "Rt.asDate",
        Ty::Time => "Rt.asTime",
        Ty::Timestamp => "Rt.asTimestamp",
        Ty::Timestamptz => "Rt.asInstant",
        Ty::Interval => "Rt.asInterval",
        Ty::Uuid => "Rt.asUuid",
        Ty::Bytes => "Rt.asBytes",
        Ty::Any => return None,
    })
}

/// `value` (an `Object`) converted to `ty`.
pub(crate) fn typed(ty: Ty, value: &str) -> String {
    match as_type(ty) {
        Some(c) => format!("{c}({value})"),
        None => value.to_string(),
    }
}

/// The Java type of a parameter (`String`, `List<String>`).
pub(crate) fn param_type(p: &Param) -> String {
    if p.list {
        format!("List<{}>", jtype(p.ty))
    } else {
        jtype(p.ty).to_string()
    }
}

impl<'p> Gen<'p> {
    /// The constant of time zone `zone`.
    pub(super) fn zone(&mut self, zone: &str) -> String {
        if let Some(c) = self.zones.get(zone) {
            return c.clone();
        }
        let c = format!("TZ_{}", self.zones.len());
        self.zones.insert(zone.to_string(), c.clone());
        c
    }

    /// The field of the statement `cql` (without the keyspace) prepared at `level`.
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
        let field = format!("ps{}", self.statements.len());
        self.statements.push((field.clone(), text, level));
        field
    }

    /// The constant describing design table `table`'s columns for decoding.
    pub(super) fn spec(&mut self, table: &str) -> String {
        self.specs.insert(table.to_string());
        spec_name(table)
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
        let name = format!(
            "computed{}_{k}",
            crate::names::pascal(&crate::names::snake(pattern))
        );
        let params = args
            .iter()
            .map(|p| (java_name(&p.name), param_type(p)))
            .collect();
        let returns = ty.map_or("Object", |t| jtype(Ty::of_scalar(t)));
        self.hooks.push(Hook {
            name: name.clone(),
            sql: sql.to_string(),
            pattern: pattern.to_string(),
            params,
            returns,
        });
        name
    }

    /// The method of pattern `p`, named `name`: its text, and its executor entry.
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

    /// The parameter list of a method (`String driverId, Long limit`).
    pub(super) fn signature(&self, params: &[Param]) -> String {
        params
            .iter()
            .map(|p| format!("{} {}", param_type(p), java_name(&p.name)))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// A method that throws, for a pattern the plan states no executable way for.
    fn raising_method(
        &mut self,
        p: &AccessPattern,
        name: &str,
        params: &[Param],
        reason: &str,
    ) -> String {
        let sig = self.signature(params);
        let returns = if p.kind.is_write() {
            "void"
        } else {
            "List<Object>"
        };
        let mut out = javadoc(
            &format!(
                "{} ({} calls): not executable from plan.json: {reason}.",
                p.id,
                remodel_model::text::thousands(p.calls)
            ),
            &[("SQL", p.sql.as_str())],
            4,
        );
        out.push_str(&format!("    public {returns} {name}({sig}) {{\n"));
        out.push_str(&format!(
            "        throw new Rt.NotExecutable({});\n    }}\n",
            expr::string(&format!("{}: {reason}", p.id))
        ));
        out
    }

    /// A bind's value in the source's meaning (a `buckets` bind is the caller's), where
    /// `current`, `new` and a row id read as `place` says. The driver converts it to the
    /// marker's CQL type when it binds it.
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
            BindValue::Literal { value } => expr::literal(value),
            BindValue::List { items } => {
                let parts: Result<Vec<String>, Skip> =
                    items.iter().map(|x| self.expr(x, scope)).collect();
                format!("Rt.flatten(new Object[] {{{}}})", parts?.join(", "))
            }
            BindValue::Bucket {
                bucket,
                of,
                time_zone,
            } => {
                let of = self.bind_value(of, scope, place)?;
                let z = self.zone(time_zone);
                format!("Rt.bucket({of}, {}, {z})", expr::string(bucket.name()))
            }
            BindValue::EpochMicros { of, null_last } => format!(
                "Rt.{}({}, ZONE)",
                if *null_last {
                    "epochMicrosNullLast"
                } else {
                    "epochMicros"
                },
                self.bind_value(of, scope, place)?
            ),
            BindValue::Encoded { of, encoding } => format!(
                "Rt.encoded({}, {}, ZONE)",
                self.bind_value(of, scope, place)?,
                expr::string(encoding.name())
            ),
            BindValue::SecondsUntil { of, min, max, .. } => format!(
                "Rt.secondsUntil({}, hooks.now(), {min}L, {max}L)",
                self.bind_value(of, scope, place)?
            ),
            other => return Err(Skip(format!("a bind of {other} here"))),
        })
    }
}

/// The constant of table `table`'s columns.
fn spec_name(table: &str) -> String {
    format!(
        "COLUMNS_{}",
        crate::names::snake(table).to_ascii_uppercase()
    )
}

/// A Javadoc comment at `indent`: the summary, then each titled block verbatim (SQL, CQL).
pub(super) fn javadoc(summary: &str, blocks: &[(&str, &str)], indent: usize) -> String {
    let pad = " ".repeat(indent);
    // `*/` would end the comment; a backslash-u would be read as a Unicode escape; `<`, `>`
    // and `&` are HTML in Javadoc.
    let escape = |s: &str| {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace("*/", "*&#47;")
            .replace('@', "&#64;")
            .replace("\\u", "\\\\u")
    };
    let mut out = format!("{pad}/**\n");
    for line in summary.lines() {
        if line.trim().is_empty() {
            out.push_str(&format!("{pad} *\n"));
        } else {
            out.push_str(&format!("{pad} * {}\n", escape(line.trim_end())));
        }
    }
    for (title, text) in blocks {
        out.push_str(&format!("{pad} *\n{pad} * <p>{title}:\n{pad} * <pre>\n"));
        for line in text.lines() {
            out.push_str(
                &format!("{pad} *     {}\n", escape(line.trim_end())).replace(" \n", "\n"),
            );
        }
        out.push_str(&format!("{pad} * </pre>\n"));
    }
    out.push_str(&format!("{pad} */\n"));
    out
}

/// The decoder of a stored column (`None`: as the driver returns it).
fn decoder(
    t: &remodel_model::CqlType,
    encoding: Option<remodel_model::Encoding>,
    aware: bool,
) -> Option<String> {
    use remodel_model::NativeType;
    if let Some(e) = encoding {
        return Some(crate::shape::encoded_decoder(e, aware));
    }
    match t.unfrozen().native()? {
        NativeType::Timestamp if aware => Some("timestamp_tz".into()),
        NativeType::Timestamp => Some("timestamp_naive".into()),
        _ => None,
    }
}
