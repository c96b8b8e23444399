//! A small CQL checker for the statements remodel emits: syntax (CREATE KEYSPACE/TYPE/TABLE,
//! SELECT, INSERT, UPDATE, DELETE) and the rules Cassandra enforces on reads and writes (every
//! partition-key column bound, clustering restrictions as a prefix with one trailing range, ORDER
//! BY on the clustering, no ALLOW FILTERING). Used where no live Cassandra is at hand.

#![allow(dead_code)]

use remodel_model::keywords::CQL_RESERVED;
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Quoted(String),
    Num(String),
    Str(String),
    Sym(char),
    Op(String),
}

fn lex(src: &str) -> Result<Vec<Tok>, String> {
    let chars: Vec<char> = src.chars().collect();
    let mut i = 0;
    let mut out = Vec::new();
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '-' && chars.get(i + 1) == Some(&'-') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c.is_ascii_alphabetic() || c == '_' {
            let s = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Tok::Ident(
                chars[s..i].iter().collect::<String>().to_ascii_lowercase(),
            ));
        } else if c.is_ascii_digit() {
            let s = i;
            while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                i += 1;
            }
            out.push(Tok::Num(chars[s..i].iter().collect()));
        } else if c == '"' {
            let mut s = String::new();
            i += 1;
            loop {
                match chars.get(i) {
                    None => return Err("unterminated quoted identifier".into()),
                    Some('"') if chars.get(i + 1) == Some(&'"') => {
                        s.push('"');
                        i += 2;
                    }
                    Some('"') => {
                        i += 1;
                        break;
                    }
                    Some(ch) => {
                        s.push(*ch);
                        i += 1;
                    }
                }
            }
            if s.is_empty() {
                return Err("empty quoted identifier".into());
            }
            out.push(Tok::Quoted(s));
        } else if c == '\'' {
            let mut s = String::new();
            i += 1;
            loop {
                match chars.get(i) {
                    None => return Err("unterminated string".into()),
                    Some('\'') if chars.get(i + 1) == Some(&'\'') => {
                        s.push('\'');
                        i += 2;
                    }
                    Some('\'') => {
                        i += 1;
                        break;
                    }
                    Some(ch) => {
                        s.push(*ch);
                        i += 1;
                    }
                }
            }
            out.push(Tok::Str(s));
        } else if c == '<' || c == '>' {
            if chars.get(i + 1) == Some(&'=') {
                out.push(Tok::Op(format!("{c}=")));
                i += 2;
            } else {
                out.push(Tok::Op(c.to_string()));
                i += 1;
            }
        } else if c == '+' {
            out.push(Tok::Op("+".into()));
            i += 1;
        } else if "(),;.=*?{}:[]".contains(c) {
            out.push(Tok::Sym(c));
            i += 1;
        } else {
            return Err(format!("unexpected character `{c}`"));
        }
    }
    Ok(out)
}

/// What the checker knows about one table.
#[derive(Debug, Clone, Default)]
pub struct TableDef {
    pub columns: BTreeMap<String, String>,
    pub statics: Vec<String>,
    pub partition: Vec<String>,
    pub clustering: Vec<(String, bool)>,
}

/// Tables created so far (by `keyspace.table`).
#[derive(Debug, Default)]
pub struct Catalog {
    pub keyspaces: Vec<String>,
    pub types: Vec<String>,
    pub tables: BTreeMap<String, TableDef>,
}

const TYPES: &[&str] = &[
    "ascii",
    "bigint",
    "blob",
    "boolean",
    "counter",
    "date",
    "decimal",
    "double",
    "duration",
    "float",
    "inet",
    "int",
    "smallint",
    "text",
    "time",
    "timestamp",
    "timeuuid",
    "tinyint",
    "uuid",
    "varchar",
    "varint",
];

struct P<'a> {
    t: &'a [Tok],
    i: usize,
}

impl<'a> P<'a> {
    fn peek(&self) -> Option<&Tok> {
        self.t.get(self.i)
    }
    fn kw(&mut self, k: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Ident(x)) if x == k) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn expect_kw(&mut self, k: &str) -> Result<(), String> {
        if self.kw(k) {
            Ok(())
        } else {
            Err(format!(
                "expected `{}` at token {} ({:?})",
                k.to_uppercase(),
                self.i,
                self.peek()
            ))
        }
    }
    fn sym(&mut self, c: char) -> bool {
        if self.peek() == Some(&Tok::Sym(c)) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn expect_sym(&mut self, c: char) -> Result<(), String> {
        if self.sym(c) {
            Ok(())
        } else {
            Err(format!(
                "expected `{c}` at token {} ({:?})",
                self.i,
                self.peek()
            ))
        }
    }
    fn ident(&mut self) -> Result<String, String> {
        match self.peek().cloned() {
            Some(Tok::Ident(x)) if !CQL_RESERVED.contains(&x.as_str()) => {
                self.i += 1;
                Ok(x)
            }
            Some(Tok::Quoted(x)) => {
                self.i += 1;
                Ok(x)
            }
            other => Err(format!(
                "expected an identifier at token {} ({other:?})",
                self.i
            )),
        }
    }
    fn qualified(&mut self) -> Result<(String, String), String> {
        let a = self.ident()?;
        self.expect_sym('.')?;
        let b = self.ident()?;
        Ok((a, b))
    }
    fn cql_type(&mut self, cat: &Catalog) -> Result<String, String> {
        let name = self.ident()?;
        // Cassandra rejects a non-frozen user type inside a collection.
        let bare_udt = |t: &str| {
            if cat.types.iter().any(|u| u == t) {
                Err(format!("user type `{t}` in a collection must be frozen"))
            } else {
                Ok(())
            }
        };
        if matches!(name.as_str(), "list" | "set" | "frozen") {
            self.expect_op("<")?;
            let inner = self.cql_type(cat)?;
            self.expect_op(">")?;
            if name != "frozen" {
                bare_udt(&inner)?;
            }
            return Ok(format!("{name}<{inner}>"));
        }
        if name == "map" {
            self.expect_op("<")?;
            let k = self.cql_type(cat)?;
            self.expect_sym(',')?;
            let v = self.cql_type(cat)?;
            self.expect_op(">")?;
            bare_udt(&k)?;
            bare_udt(&v)?;
            return Ok(format!("map<{k}, {v}>"));
        }
        if TYPES.contains(&name.as_str()) || cat.types.contains(&name) {
            Ok(name)
        } else {
            Err(format!("unknown CQL type `{name}`"))
        }
    }
    fn expect_op(&mut self, op: &str) -> Result<(), String> {
        if matches!(self.peek(), Some(Tok::Op(x)) if x == op) {
            self.i += 1;
            Ok(())
        } else {
            Err(format!("expected `{op}` at token {}", self.i))
        }
    }
    fn end(&mut self) -> Result<(), String> {
        self.sym(';');
        if self.i == self.t.len() {
            Ok(())
        } else {
            Err(format!(
                "unexpected trailing tokens from {} ({:?})",
                self.i,
                self.peek()
            ))
        }
    }
}

fn split_statements(src: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_str = false;
    for line in src.lines() {
        let line = if !in_str {
            line.split("--").next().unwrap_or("")
        } else {
            line
        };
        for ch in line.chars() {
            if ch == '\'' {
                in_str = !in_str;
            }
            if ch == ';' && !in_str {
                if !cur.trim().is_empty() {
                    out.push(cur.trim().to_string());
                }
                cur.clear();
            } else {
                cur.push(ch);
            }
        }
        cur.push('\n');
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

impl Catalog {
    /// Checks a whole schema file, statement by statement, adding what it creates.
    pub fn load_schema(&mut self, src: &str) -> Result<(), String> {
        for (n, stmt) in split_statements(src).iter().enumerate() {
            self.ddl(stmt)
                .map_err(|e| format!("statement {} `{}`: {e}", n + 1, first_line(stmt)))?;
        }
        Ok(())
    }

    fn ddl(&mut self, stmt: &str) -> Result<(), String> {
        let toks = lex(stmt)?;
        let mut p = P { t: &toks, i: 0 };
        p.expect_kw("create")?;
        if p.kw("keyspace") {
            if p.kw("if") {
                p.expect_kw("not")?;
                p.expect_kw("exists")?;
            }
            let ks = p.ident()?;
            p.expect_kw("with")?;
            p.expect_kw("replication")?;
            p.expect_sym('=')?;
            p.expect_sym('{')?;
            loop {
                match p.peek() {
                    Some(Tok::Str(_)) => p.i += 1,
                    _ => return Err("replication keys are strings".into()),
                }
                p.expect_sym(':')?;
                match p.peek() {
                    Some(Tok::Str(_)) | Some(Tok::Num(_)) => p.i += 1,
                    _ => return Err("replication values are strings or numbers".into()),
                }
                if !p.sym(',') {
                    break;
                }
            }
            p.expect_sym('}')?;
            p.end()?;
            self.keyspaces.push(ks);
            return Ok(());
        }
        if p.kw("type") {
            if p.kw("if") {
                p.expect_kw("not")?;
                p.expect_kw("exists")?;
            }
            let (_, name) = p.qualified()?;
            p.expect_sym('(')?;
            loop {
                p.ident()?;
                p.cql_type(self)?;
                if !p.sym(',') {
                    break;
                }
            }
            p.expect_sym(')')?;
            p.end()?;
            self.types.push(name);
            return Ok(());
        }
        p.expect_kw("table")?;
        if p.kw("if") {
            p.expect_kw("not")?;
            p.expect_kw("exists")?;
        }
        let (ks, name) = p.qualified()?;
        if !self.keyspaces.contains(&ks) {
            return Err(format!("keyspace `{ks}` is not created"));
        }
        if name.len() > 48 {
            return Err(format!("table name `{name}` is longer than 48 characters"));
        }
        p.expect_sym('(')?;
        let mut def = TableDef::default();
        loop {
            if p.kw("primary") {
                p.expect_kw("key")?;
                p.expect_sym('(')?;
                if p.sym('(') {
                    loop {
                        def.partition.push(p.ident()?);
                        if !p.sym(',') {
                            break;
                        }
                    }
                    p.expect_sym(')')?;
                } else {
                    def.partition.push(p.ident()?);
                }
                while p.sym(',') {
                    def.clustering.push((p.ident()?, false));
                }
                p.expect_sym(')')?;
            } else {
                let col = p.ident()?;
                let ty = p.cql_type(self)?;
                if p.kw("static") {
                    def.statics.push(col.clone());
                }
                if def.columns.insert(col.clone(), ty).is_some() {
                    return Err(format!("column `{col}` defined twice"));
                }
            }
            if !p.sym(',') {
                break;
            }
        }
        p.expect_sym(')')?;
        if p.kw("with") {
            p.expect_kw("clustering")?;
            p.expect_kw("order")?;
            p.expect_kw("by")?;
            p.expect_sym('(')?;
            let mut i = 0;
            loop {
                let c = p.ident()?;
                let desc = if p.kw("desc") {
                    true
                } else {
                    p.expect_kw("asc")?;
                    false
                };
                match def.clustering.get_mut(i) {
                    Some((name, d)) if *name == c => *d = desc,
                    _ => {
                        return Err(format!(
                            "CLUSTERING ORDER BY names `{c}` out of the clustering order"
                        ))
                    }
                }
                i += 1;
                if !p.sym(',') {
                    break;
                }
            }
            p.expect_sym(')')?;
        }
        p.end()?;
        if def.partition.is_empty() {
            return Err("no partition key".into());
        }
        for k in def
            .partition
            .iter()
            .chain(def.clustering.iter().map(|(c, _)| c))
        {
            let Some(ty) = def.columns.get(k) else {
                return Err(format!("key column `{k}` is not defined"));
            };
            if (ty.starts_with("list") || ty.starts_with("set") || ty.starts_with("map"))
                && !ty.starts_with("frozen")
            {
                return Err(format!("key column `{k}` has a non-frozen collection type"));
            }
            if def.statics.contains(k) {
                return Err(format!("key column `{k}` cannot be static"));
            }
        }
        if !def.statics.is_empty() && def.clustering.is_empty() {
            return Err("static columns need a clustering column".into());
        }
        self.tables.insert(format!("{ks}.{name}"), def);
        Ok(())
    }

    /// Checks one query or write against the catalog.
    pub fn check(&self, stmt: &str) -> Result<(), String> {
        if stmt.to_ascii_uppercase().contains("ALLOW FILTERING") {
            return Err("ALLOW FILTERING".into());
        }
        let toks = lex(stmt)?;
        let mut p = P { t: &toks, i: 0 };
        if p.kw("select") {
            self.select(&mut p)
        } else if p.kw("insert") {
            p.expect_kw("into")?;
            let def = self.table(&mut p)?;
            p.expect_sym('(')?;
            let mut cols = Vec::new();
            loop {
                let c = p.ident()?;
                self.col(def, &c)?;
                cols.push(c);
                if !p.sym(',') {
                    break;
                }
            }
            p.expect_sym(')')?;
            p.expect_kw("values")?;
            p.expect_sym('(')?;
            let mut n = 0;
            loop {
                p.expect_sym('?')?;
                n += 1;
                if !p.sym(',') {
                    break;
                }
            }
            p.expect_sym(')')?;
            p.end()?;
            if n != cols.len() {
                return Err("INSERT column and value counts differ".into());
            }
            for k in def
                .partition
                .iter()
                .chain(def.clustering.iter().map(|(c, _)| c))
            {
                if !cols.contains(k) {
                    return Err(format!("INSERT misses key column `{k}`"));
                }
            }
            Ok(())
        } else if p.kw("update") {
            let def = self.table(&mut p)?;
            p.expect_kw("set")?;
            let mut set = Vec::new();
            loop {
                let c = p.ident()?;
                self.col(def, &c)?;
                // `c[?] = ?`: one element of a non-frozen map or list.
                if p.sym('[') {
                    element_of(def, &c)?;
                    p.expect_sym('?')?;
                    p.expect_sym(']')?;
                }
                p.expect_sym('=')?;
                // `c = c + ?`: an append to a non-frozen collection column.
                if matches!(p.peek(), Some(Tok::Ident(x)) if *x == c) {
                    p.i += 1;
                    p.expect_op("+")?;
                    let ty = def.columns.get(&c).map(String::as_str).unwrap_or("");
                    let collection = ["list<", "set<", "map<"].iter().any(|k| ty.starts_with(k));
                    if !collection {
                        return Err(format!("`{c} = {c} + ?` on a non-collection column"));
                    }
                }
                p.expect_sym('?')?;
                set.push(c);
                if !p.sym(',') {
                    break;
                }
            }
            p.expect_kw("where")?;
            let rels = relations(&mut p)?;
            p.end()?;
            for c in &set {
                if def.partition.contains(c) || def.clustering.iter().any(|(k, _)| k == c) {
                    return Err(format!("UPDATE sets key column `{c}`"));
                }
            }
            let only_static = set.iter().all(|c| def.statics.contains(c));
            self.write_key(def, &rels, only_static)
        } else if p.kw("delete") {
            // `DELETE c[?] FROM …`: one element of a non-frozen map or list.
            if !p.kw("from") {
                let c = p.ident()?;
                p.expect_sym('[')?;
                p.expect_sym('?')?;
                p.expect_sym(']')?;
                p.expect_kw("from")?;
                let def = self.table(&mut p)?;
                element_of(def, &c)?;
                p.expect_kw("where")?;
                let rels = relations(&mut p)?;
                p.end()?;
                return self.write_key(def, &rels, false);
            }
            let def = self.table(&mut p)?;
            p.expect_kw("where")?;
            let rels = relations(&mut p)?;
            p.end()?;
            self.write_key(def, &rels, false)
        } else {
            Err(format!("not a statement remodel emits: {:?}", p.peek()))
        }
    }

    fn table(&self, p: &mut P<'_>) -> Result<&TableDef, String> {
        let (ks, t) = p.qualified()?;
        self.tables
            .get(&format!("{ks}.{t}"))
            .ok_or_else(|| format!("table `{ks}.{t}` is not created"))
    }

    fn col(&self, def: &TableDef, c: &str) -> Result<(), String> {
        if def.columns.contains_key(c) {
            Ok(())
        } else {
            Err(format!("unknown column `{c}`"))
        }
    }

    fn write_key(
        &self,
        def: &TableDef,
        rels: &[(String, String)],
        partition_only: bool,
    ) -> Result<(), String> {
        for (c, op) in rels {
            self.col(def, c)?;
            if op != "=" && op != "in" {
                return Err(format!("a write restricts `{c}` with `{op}`"));
            }
        }
        for k in &def.partition {
            if !rels.iter().any(|(c, _)| c == k) {
                return Err(format!("partition key column `{k}` is not bound"));
            }
        }
        if !partition_only {
            for (k, _) in &def.clustering {
                if !rels.iter().any(|(c, _)| c == k) {
                    return Err(format!("clustering column `{k}` is not bound"));
                }
            }
        }
        for (c, _) in rels {
            if !def.partition.contains(c) && !def.clustering.iter().any(|(k, _)| k == c) {
                return Err(format!("a write restricts non-key column `{c}`"));
            }
        }
        Ok(())
    }

    fn select(&self, p: &mut P<'_>) -> Result<(), String> {
        // Selectors are checked after the table is known.
        let start = p.i;
        while !matches!(p.peek(), Some(Tok::Ident(x)) if x == "from") {
            if p.peek().is_none() {
                return Err("SELECT without FROM".into());
            }
            p.i += 1;
        }
        let sel_end = p.i;
        p.expect_kw("from")?;
        let def = self.table(p)?;
        {
            let mut q = P {
                t: &p.t[start..sel_end],
                i: 0,
            };
            if !q.sym('*') {
                loop {
                    let name = q.ident()?;
                    if q.sym('(') {
                        if !matches!(name.as_str(), "count" | "min" | "max" | "sum" | "avg") {
                            return Err(format!("unknown function `{name}`"));
                        }
                        if !q.sym('*') {
                            let c = q.ident()?;
                            self.col(def, &c)?;
                        }
                        q.expect_sym(')')?;
                    } else {
                        self.col(def, &name)?;
                    }
                    if !q.sym(',') {
                        break;
                    }
                }
            }
            if q.i != q.t.len() {
                return Err("bad selector list".into());
            }
        }
        let rels = if p.kw("where") {
            relations(p)?
        } else {
            Vec::new()
        };
        let mut group = Vec::new();
        if p.kw("group") {
            p.expect_kw("by")?;
            loop {
                group.push(p.ident()?);
                if !p.sym(',') {
                    break;
                }
            }
        }
        let mut order = Vec::new();
        if p.kw("order") {
            p.expect_kw("by")?;
            loop {
                let c = p.ident()?;
                let desc = if p.kw("desc") {
                    true
                } else {
                    p.kw("asc");
                    false
                };
                order.push((c, desc));
                if !p.sym(',') {
                    break;
                }
            }
        }
        if p.kw("limit") {
            match p.peek() {
                Some(Tok::Num(_)) | Some(Tok::Sym('?')) => p.i += 1,
                _ => return Err("LIMIT needs a number".into()),
            }
        }
        if p.kw("allow") {
            return Err("ALLOW FILTERING".into());
        }
        p.end()?;
        // Cassandra's restriction rules.
        for (c, _) in &rels {
            self.col(def, c)?;
        }
        if !rels.is_empty() {
            for k in &def.partition {
                match rels.iter().find(|(c, _)| c == k) {
                    Some((_, op)) if op == "=" || op == "in" => {}
                    Some((_, op)) => {
                        return Err(format!("partition key `{k}` restricted with `{op}`"))
                    }
                    None => {
                        return Err(format!(
                            "partition key `{k}` is not restricted (would need ALLOW FILTERING)"
                        ))
                    }
                }
            }
            let mut seen_range = false;
            let mut gap = false;
            for (k, _) in &def.clustering {
                let ops: Vec<&String> = rels
                    .iter()
                    .filter(|(c, _)| c == k)
                    .map(|(_, o)| o)
                    .collect();
                if ops.is_empty() {
                    gap = true;
                    continue;
                }
                if ops.iter().all(|o| *o == "tuple") {
                    // A slice's next column: right after the slice's previous one.
                    if gap || !seen_range {
                        return Err(format!(
                            "clustering column `{k}` of a slice out of clustering order"
                        ));
                    }
                    continue;
                }
                if gap || seen_range {
                    return Err(format!(
                        "clustering column `{k}` restricted after an unrestricted or range column"
                    ));
                }
                if ops.iter().any(|o| *o != "=" && *o != "in") {
                    seen_range = true;
                }
            }
            for (c, _) in &rels {
                if !def.partition.contains(c) && !def.clustering.iter().any(|(k, _)| k == c) {
                    return Err(format!(
                        "restriction on non-key column `{c}` (would need ALLOW FILTERING)"
                    ));
                }
            }
        }
        if !order.is_empty() {
            let restricted_pk = def
                .partition
                .iter()
                .all(|k| rels.iter().any(|(c, _)| c == k));
            if !restricted_pk {
                return Err("ORDER BY needs the partition key restricted".into());
            }
            let mut reversed: Option<bool> = None;
            for (i, (c, desc)) in order.iter().enumerate() {
                let Some((k, kd)) = def.clustering.get(i) else {
                    return Err(format!("ORDER BY `{c}` beyond the clustering"));
                };
                if k != c {
                    return Err(format!("ORDER BY `{c}` out of clustering order"));
                }
                let r = kd != desc;
                if *reversed.get_or_insert(r) != r {
                    return Err("ORDER BY mixes declared and reversed directions".into());
                }
            }
        }
        if !group.is_empty() {
            let keys: Vec<&String> = def
                .partition
                .iter()
                .chain(def.clustering.iter().map(|(c, _)| c))
                .collect();
            for (i, g) in group.iter().enumerate() {
                if keys.get(i) != Some(&g) {
                    return Err(format!("GROUP BY `{g}` is not a primary-key prefix"));
                }
            }
        }
        Ok(())
    }
}

/// `(a, b) op (?, ?)`: a multi-column slice. The first column carries the operator, the others
/// `tuple` (a slice's continuation, checked against the clustering order by the caller).
fn tuple_relation(p: &mut P<'_>, out: &mut Vec<(String, String)>) -> Result<(), String> {
    let mut cols = vec![p.ident()?];
    while p.sym(',') {
        cols.push(p.ident()?);
    }
    p.expect_sym(')')?;
    let op = match p.peek().cloned() {
        Some(Tok::Op(o)) if o != "!=" => {
            p.i += 1;
            o
        }
        other => {
            return Err(format!(
                "expected a slice operator after a column tuple, found {other:?}"
            ))
        }
    };
    p.expect_sym('(')?;
    for i in 0..cols.len() {
        if i > 0 {
            p.expect_sym(',')?;
        }
        p.expect_sym('?')?;
    }
    p.expect_sym(')')?;
    for (i, c) in cols.into_iter().enumerate() {
        out.push((c, if i == 0 { op.clone() } else { "tuple".into() }));
    }
    Ok(())
}

fn relations(p: &mut P<'_>) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    loop {
        if p.sym('(') {
            tuple_relation(p, &mut out)?;
            if !p.kw("and") {
                break;
            }
            continue;
        }
        let c = p.ident()?;
        let op = match p.peek().cloned() {
            Some(Tok::Sym('=')) => {
                p.i += 1;
                "=".to_string()
            }
            Some(Tok::Op(o)) => {
                p.i += 1;
                o
            }
            Some(Tok::Ident(x)) if x == "in" => {
                p.i += 1;
                "in".to_string()
            }
            other => return Err(format!("expected an operator after `{c}`, found {other:?}")),
        };
        p.expect_sym('?')?;
        out.push((c, op));
        if !p.kw("and") {
            break;
        }
    }
    Ok(out)
}

/// `c[…]` needs `c` to be a non-frozen map or list.
fn element_of(def: &TableDef, c: &str) -> Result<(), String> {
    let ty = def.columns.get(c).map(String::as_str).unwrap_or("");
    if ty.starts_with("map<") || ty.starts_with("list<") {
        Ok(())
    } else {
        Err(format!(
            "`{c}[?]` on a column that is not a non-frozen map or list ({ty})"
        ))
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

/// Loads the design's `schema.cql` into the checker, then checks every statement the design
/// emits (not the CREATE script: the queries are what could need ALLOW FILTERING) against it:
/// valid, on a table of the schema, restricted as Cassandra requires, and never `ALLOW
/// FILTERING`. Panics naming the statement; returns how many were checked.
pub fn check_design(name: &str, d: &remodel_model::Design) -> usize {
    let schema = remodel_design::emit_cql(d);
    let mut cat = Catalog::default();
    cat.load_schema(&schema)
        .unwrap_or_else(|e| panic!("{name}: schema.cql: {e}\n{schema}"));
    let statements = d.statements();
    for (what, cql) in &statements {
        assert!(
            !cql.to_ascii_uppercase().contains("ALLOW FILTERING"),
            "{name} {what}: {cql}"
        );
        cat.check(cql)
            .unwrap_or_else(|e| panic!("{name} {what}: {e}\n{cql}"));
    }
    statements.len()
}
