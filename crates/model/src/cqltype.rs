//! CQL column types as data. `plan.json` writes each as its CQL text (`decimal`, `list<text>`,
//! `map<text, frozen<address_entry>>`); this is the one place that text is read, so every
//! consumer (designer, backfill, replay, Spark job, report) matches on a type, never on a string.

use crate::ident;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

/// A native (non-collection) CQL type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NativeType {
    /// `ascii`
    Ascii,
    /// `text` (`varchar` is read as `text`, its alias)
    Text,
    /// `boolean`
    Boolean,
    /// `blob`
    Blob,
    /// `tinyint`
    TinyInt,
    /// `smallint`
    SmallInt,
    /// `int`
    Int,
    /// `bigint`
    BigInt,
    /// `varint`
    Varint,
    /// `decimal`
    Decimal,
    /// `float`
    Float,
    /// `double`
    Double,
    /// `timestamp`
    Timestamp,
    /// `date`
    Date,
    /// `time`
    Time,
    /// `duration`
    Duration,
    /// `uuid`
    Uuid,
    /// `timeuuid`
    Timeuuid,
    /// `inet`
    Inet,
    /// `counter`: a 64-bit count changed only by `UPDATE … SET c = c + ?` (a column of a
    /// counter table, whose other columns are all its primary key).
    Counter,
}

impl NativeType {
    const ALL: [(NativeType, &'static str); 20] = [
        (NativeType::Ascii, "ascii"),
        (NativeType::Text, "text"),
        (NativeType::Boolean, "boolean"),
        (NativeType::Blob, "blob"),
        (NativeType::TinyInt, "tinyint"),
        (NativeType::SmallInt, "smallint"),
        (NativeType::Int, "int"),
        (NativeType::BigInt, "bigint"),
        (NativeType::Varint, "varint"),
        (NativeType::Decimal, "decimal"),
        (NativeType::Float, "float"),
        (NativeType::Double, "double"),
        (NativeType::Timestamp, "timestamp"),
        (NativeType::Date, "date"),
        (NativeType::Time, "time"),
        (NativeType::Duration, "duration"),
        (NativeType::Uuid, "uuid"),
        (NativeType::Timeuuid, "timeuuid"),
        (NativeType::Inet, "inet"),
        (NativeType::Counter, "counter"),
    ];

    /// The type's CQL name (`bigint`).
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(t, _)| *t == self)
            .map_or("text", |(_, n)| n)
    }

    /// The native type a lower-case CQL name stands for (`varchar` is `text`).
    pub fn from_name(name: &str) -> Option<NativeType> {
        if name == "varchar" {
            return Some(NativeType::Text);
        }
        Self::ALL.iter().find(|(_, n)| *n == name).map(|(t, _)| *t)
    }
}

/// A CQL column type as the plan states it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CqlType {
    /// A native type.
    Native(NativeType),
    /// `list<T>`
    List(Box<CqlType>),
    /// `set<T>`
    Set(Box<CqlType>),
    /// `map<K, V>`
    Map(Box<CqlType>, Box<CqlType>),
    /// `tuple<A, B, …>`
    Tuple(Vec<CqlType>),
    /// `frozen<T>`: stored as one value; the values it holds are those of `T`.
    Frozen(Box<CqlType>),
    /// A user-defined type of the plan (`design.types`), by its name as the server stores it.
    Udt(String),
}

/// The generic type constructors: a user type of one of these names is written quoted.
const GENERICS: [&str; 5] = ["list", "set", "map", "tuple", "frozen"];

impl CqlType {
    /// `text`
    pub const TEXT: CqlType = CqlType::Native(NativeType::Text);
    /// `bigint`
    pub const BIGINT: CqlType = CqlType::Native(NativeType::BigInt);
    /// `timestamp`
    pub const TIMESTAMP: CqlType = CqlType::Native(NativeType::Timestamp);
    /// `date`
    pub const DATE: CqlType = CqlType::Native(NativeType::Date);
    /// `uuid`
    pub const UUID: CqlType = CqlType::Native(NativeType::Uuid);

    /// The native type, when this is one.
    pub fn native(&self) -> Option<NativeType> {
        match self {
            CqlType::Native(n) => Some(*n),
            _ => None,
        }
    }

    /// The type without `frozen<…>` around it (freezing changes storage, not values).
    pub fn unfrozen(&self) -> &CqlType {
        match self {
            CqlType::Frozen(inner) => inner.unfrozen(),
            t => t,
        }
    }

    /// True for list, set and map (frozen or not).
    pub fn is_collection(&self) -> bool {
        matches!(
            self.unfrozen(),
            CqlType::List(_) | CqlType::Set(_) | CqlType::Map(..)
        )
    }

    /// The user types the type names anywhere inside it, outermost first.
    pub fn user_types(&self) -> Vec<&str> {
        match self {
            CqlType::Native(_) => Vec::new(),
            CqlType::Udt(n) => vec![n.as_str()],
            CqlType::List(t) | CqlType::Set(t) | CqlType::Frozen(t) => t.user_types(),
            CqlType::Map(k, v) => [k.user_types(), v.user_types()].concat(),
            CqlType::Tuple(items) => items.iter().flat_map(|t| t.user_types()).collect(),
        }
    }
}

impl From<NativeType> for CqlType {
    fn from(n: NativeType) -> Self {
        CqlType::Native(n)
    }
}

impl fmt::Display for NativeType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for CqlType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CqlType::Native(n) => f.write_str(n.name()),
            CqlType::List(t) => write!(f, "list<{t}>"),
            CqlType::Set(t) => write!(f, "set<{t}>"),
            CqlType::Map(k, v) => write!(f, "map<{k}, {v}>"),
            CqlType::Frozen(t) => write!(f, "frozen<{t}>"),
            CqlType::Tuple(items) => {
                f.write_str("tuple<")?;
                for (i, t) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{t}")?;
                }
                f.write_str(">")
            }
            CqlType::Udt(name) => {
                // A user type named like a built-in one must be quoted to read back as itself.
                let lower = name.to_ascii_lowercase();
                if NativeType::from_name(&lower).is_some() || GENERICS.contains(&lower.as_str()) {
                    f.write_str(&ident::quote(name))
                } else {
                    f.write_str(&ident::cql_quote(name))
                }
            }
        }
    }
}

/// Why a CQL type's text could not be read: where, and what was expected there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CqlTypeError {
    /// The type as written.
    pub text: String,
    /// 1-based character column in `text` where reading stopped.
    pub column: usize,
    /// What was expected there (and what was found).
    pub expected: String,
}

impl fmt::Display for CqlTypeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "CQL type `{}`, column {}: expected {}",
            self.text, self.column, self.expected
        )
    }
}

impl std::error::Error for CqlTypeError {}

/// One word of a type's text with the character column it starts at.
struct Token {
    text: String,
    column: usize,
}

impl FromStr for CqlType {
    type Err = CqlTypeError;

    fn from_str(text: &str) -> Result<CqlType, CqlTypeError> {
        let tokens = tokenize(text);
        let mut reader = Reader {
            text,
            tokens: &tokens,
            pos: 0,
        };
        let t = reader.read(0)?;
        if reader.pos < tokens.len() {
            return Err(reader.error("the end of the type"));
        }
        Ok(t)
    }
}

struct Reader<'a> {
    text: &'a str,
    tokens: &'a [Token],
    pos: usize,
}

impl Reader<'_> {
    fn error(&self, expected: &str) -> CqlTypeError {
        let (column, found) = match self.tokens.get(self.pos) {
            Some(t) => (t.column, format!(", found `{}`", t.text)),
            None => (self.text.chars().count() + 1, ", found the end".to_string()),
        };
        CqlTypeError {
            text: self.text.to_string(),
            column,
            expected: format!("{expected}{found}"),
        }
    }

    fn read(&mut self, depth: usize) -> Result<CqlType, CqlTypeError> {
        if depth > 16 {
            return Err(self.error("a type nested at most 16 deep"));
        }
        let Some(word) = self.tokens.get(self.pos) else {
            return Err(self.error("a type name"));
        };
        if matches!(word.text.as_str(), "<" | ">" | ",") {
            return Err(self.error("a type name"));
        }
        self.pos += 1;
        if let Some(quoted) = word.text.strip_prefix('"') {
            let inner = quoted.strip_suffix('"').unwrap_or(quoted);
            return Ok(CqlType::Udt(inner.replace("\"\"", "\"")));
        }
        let name = word.text.to_ascii_lowercase();
        let one = |r: &mut Self| {
            r.args(Some(1), &name, depth)
                .map(|mut a| Box::new(a.remove(0)))
        };
        Ok(match name.as_str() {
            "list" => CqlType::List(one(self)?),
            "set" => CqlType::Set(one(self)?),
            "frozen" => CqlType::Frozen(one(self)?),
            "map" => {
                let mut a = self.args(Some(2), &name, depth)?;
                let v = a.remove(1);
                CqlType::Map(Box::new(a.remove(0)), Box::new(v))
            }
            "tuple" => CqlType::Tuple(self.args(None, &name, depth)?),
            _ => match NativeType::from_name(&name) {
                Some(n) => CqlType::Native(n),
                None => CqlType::Udt(name),
            },
        })
    }

    /// `<T, …>` after a generic name: `count` types when given, at least one otherwise.
    fn args(
        &mut self,
        count: Option<usize>,
        name: &str,
        depth: usize,
    ) -> Result<Vec<CqlType>, CqlTypeError> {
        self.punct("<", &format!("`<` after `{name}`"))?;
        let mut args = vec![self.read(depth + 1)?];
        loop {
            match count {
                Some(n) if args.len() < n => {
                    self.punct(",", &format!("`,` (`{name}` takes {n} types)"))?;
                }
                Some(_) => {
                    self.punct(">", &format!("`>` closing `{name}<`"))?;
                    return Ok(args);
                }
                None if self.punct(",", "").is_ok() => {}
                None => {
                    self.punct(">", &format!("`,` or `>` closing `{name}<`"))?;
                    return Ok(args);
                }
            }
            args.push(self.read(depth + 1)?);
        }
    }

    fn punct(&mut self, p: &str, expected: &str) -> Result<(), CqlTypeError> {
        if self.tokens.get(self.pos).map(|t| t.text.as_str()) == Some(p) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.error(expected))
        }
    }
}

/// The words of a type: names (quoted ones with their quotes), `<`, `>` and `,`.
fn tokenize(text: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut chars = text.chars().enumerate().peekable();
    while let Some((i, c)) = chars.next() {
        let column = i + 1;
        let mut word = String::from(c);
        match c {
            '<' | '>' | ',' => {}
            '"' => {
                while let Some((_, d)) = chars.next() {
                    word.push(d);
                    if d == '"' {
                        if chars.peek().map(|p| p.1) != Some('"') {
                            break;
                        }
                        word.push('"');
                        chars.next();
                    }
                }
            }
            c if c.is_whitespace() => continue,
            _ => {
                while let Some(&(_, d)) = chars.peek() {
                    if matches!(d, '<' | '>' | ',' | '"') || d.is_whitespace() {
                        break;
                    }
                    word.push(d);
                    chars.next();
                }
            }
        }
        out.push(Token { text: word, column });
    }
    out
}

impl Serialize for CqlType {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for CqlType {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<CqlType, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for CqlType {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "CqlType".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "description": "A CQL type as CQL writes it: a native type (`bigint`), `list<T>`, `set<T>`, `map<K, V>`, `tuple<…>`, `frozen<T>` or a user type of `design.types`.",
            "minLength": 1
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<CqlType, String> {
        text.parse::<CqlType>().map_err(|e| e.to_string())
    }

    #[test]
    fn text_reads_back_as_written() {
        for text in [
            "bigint",
            "timestamp",
            "list<text>",
            "set<frozen<list<int>>>",
            "map<text, frozen<address_entry>>",
            "tuple<int, text, date>",
            "list<frozen<\"Entry\">>",
            "\"text\"",
        ] {
            let t = parse(text).unwrap();
            assert_eq!(t.to_string(), text);
            assert_eq!(parse(&t.to_string()).unwrap(), t);
        }
        assert_eq!(parse("VARCHAR").unwrap(), CqlType::TEXT);
        assert_eq!(
            parse(" map < text ,int > ").unwrap().to_string(),
            "map<text, int>"
        );
        assert_eq!(parse("\"text\"").unwrap(), CqlType::Udt("text".into()));
    }

    #[test]
    fn errors_say_where_and_what_was_expected() {
        let cases = [
            (
                "map<text>",
                "column 9: expected `,` (`map` takes 2 types), found `>`",
            ),
            (
                "list<int",
                "column 9: expected `>` closing `list<`, found the end",
            ),
            (
                "int int",
                "column 5: expected the end of the type, found `int`",
            ),
            (
                "list int",
                "column 6: expected `<` after `list`, found `int`",
            ),
            ("", "column 1: expected a type name, found the end"),
            ("map<,int>", "column 5: expected a type name, found `,`"),
            (
                "tuple<int text>",
                "column 11: expected `,` or `>` closing `tuple<`, found `text`",
            ),
        ];
        for (text, want) in cases {
            let got = parse(text).unwrap_err();
            assert!(got.ends_with(want), "{text}: {got}");
        }
        let deep = format!("{}int{}", "list<".repeat(40), ">".repeat(40));
        assert!(parse(&deep).unwrap_err().contains("nested at most 16 deep"));
    }

    #[test]
    fn serde_writes_the_text() {
        let t: CqlType = "map<text, frozen<address_entry>>".parse().unwrap();
        let json = serde_json::to_string(&t).unwrap();
        assert_eq!(json, "\"map<text, frozen<address_entry>>\"");
        assert_eq!(serde_json::from_str::<CqlType>(&json).unwrap(), t);
        let err = serde_json::from_str::<CqlType>("\"list<\"").unwrap_err();
        assert!(err.to_string().contains("expected a type name"), "{err}");
    }
}
