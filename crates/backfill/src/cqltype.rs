//! CQL types as `plan.json` writes them (`decimal`, `list<text>`, `map<text, frozen<entry>>`),
//! parsed once per column so that every value is converted against a known target type.

use remodel_model::UserType;
use std::sync::Arc;

/// A native (non-collection) CQL type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Native {
    /// `ascii`
    Ascii,
    /// `text` / `varchar`
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
}

impl Native {
    fn from_name(name: &str) -> Option<Native> {
        Some(match name {
            "ascii" => Native::Ascii,
            "text" | "varchar" => Native::Text,
            "boolean" => Native::Boolean,
            "blob" => Native::Blob,
            "tinyint" => Native::TinyInt,
            "smallint" => Native::SmallInt,
            "int" => Native::Int,
            "bigint" => Native::BigInt,
            "varint" => Native::Varint,
            "decimal" => Native::Decimal,
            "float" => Native::Float,
            "double" => Native::Double,
            "timestamp" => Native::Timestamp,
            "date" => Native::Date,
            "time" => Native::Time,
            "duration" => Native::Duration,
            "uuid" => Native::Uuid,
            "timeuuid" => Native::Timeuuid,
            "inet" => Native::Inet,
            _ => return None,
        })
    }
}

/// A user-defined type with its fields resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct UdtDef {
    /// Keyspace the type lives in (the driver checks it when a UDT value is bound).
    pub keyspace: String,
    /// Type name as the server knows it.
    pub name: String,
    /// Fields in declaration order.
    pub fields: Vec<(String, CqlType)>,
}

/// A CQL column type (`frozen<…>` is transparent: it changes storage, not values).
#[derive(Debug, Clone, PartialEq)]
pub enum CqlType {
    /// A native type.
    Native(Native),
    /// `list<T>`
    List(Box<CqlType>),
    /// `set<T>`
    Set(Box<CqlType>),
    /// `map<K, V>`
    Map(Box<CqlType>, Box<CqlType>),
    /// `tuple<…>`
    Tuple(Vec<CqlType>),
    /// A user-defined type of the plan.
    Udt(Arc<UdtDef>),
}

impl CqlType {
    /// True for list, set and map (whose empty value CQL stores as no value at all).
    pub fn is_collection(&self) -> bool {
        matches!(self, CqlType::List(_) | CqlType::Set(_) | CqlType::Map(..))
    }
}

/// Why a type string could not be understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("CQL type `{text}`: {reason}")]
pub struct TypeError {
    /// The type as written.
    pub text: String,
    /// What is wrong.
    pub reason: String,
}

/// Parses CQL type strings, resolving user-defined types from the plan's `design.types`.
pub struct TypeParser<'a> {
    keyspace: &'a str,
    types: &'a [UserType],
}

impl<'a> TypeParser<'a> {
    /// A parser for a plan whose keyspace is `keyspace` and whose UDTs are `types`.
    pub fn new(keyspace: &'a str, types: &'a [UserType]) -> Self {
        TypeParser { keyspace, types }
    }

    /// Parses one type, e.g. `map<text, frozen<address_entry>>`.
    pub fn parse(&self, text: &str) -> Result<CqlType, TypeError> {
        let err = |reason: String| TypeError {
            text: text.to_string(),
            reason,
        };
        let tokens = tokenize(text);
        let mut pos = 0;
        let t = self.parse_at(&tokens, &mut pos, 0).map_err(err)?;
        if pos != tokens.len() {
            return Err(err(format!("unexpected `{}`", tokens[pos])));
        }
        Ok(t)
    }

    fn parse_at(
        &self,
        tokens: &[String],
        pos: &mut usize,
        depth: usize,
    ) -> Result<CqlType, String> {
        if depth > 16 {
            return Err("nested too deeply".into());
        }
        let Some(word) = tokens.get(*pos) else {
            return Err("ends early".into());
        };
        *pos += 1;
        let name = unquote(word);
        let generic = |n: usize, this: &Self, pos: &mut usize| -> Result<Vec<CqlType>, String> {
            expect(tokens, pos, "<")?;
            let mut args = Vec::new();
            loop {
                args.push(this.parse_at(tokens, pos, depth + 1)?);
                match tokens.get(*pos).map(String::as_str) {
                    Some(",") => *pos += 1,
                    Some(">") => {
                        *pos += 1;
                        break;
                    }
                    other => return Err(format!("expected `,` or `>`, found {other:?}")),
                }
            }
            if n != 0 && args.len() != n {
                return Err(format!("`{name}` takes {n} type argument(s)"));
            }
            Ok(args)
        };
        if !word.starts_with('"') {
            match name.as_str() {
                "frozen" => return generic(1, self, pos).map(|mut a| a.remove(0)),
                "list" => return Ok(CqlType::List(Box::new(generic(1, self, pos)?.remove(0)))),
                "set" => return Ok(CqlType::Set(Box::new(generic(1, self, pos)?.remove(0)))),
                "map" => {
                    let mut a = generic(2, self, pos)?;
                    let v = a.remove(1);
                    return Ok(CqlType::Map(Box::new(a.remove(0)), Box::new(v)));
                }
                "tuple" => return Ok(CqlType::Tuple(generic(0, self, pos)?)),
                _ => {
                    if let Some(n) = Native::from_name(&name) {
                        return Ok(CqlType::Native(n));
                    }
                }
            }
        }
        self.udt(&name, depth).ok_or_else(|| {
            format!("`{name}` is neither a CQL type nor a user type of the plan (design.types)")
        })
    }

    fn udt(&self, name: &str, depth: usize) -> Option<CqlType> {
        let ut = self.types.iter().find(|t| t.name == name)?;
        let mut fields = Vec::new();
        for (field, ty) in &ut.fields {
            let tokens = tokenize(ty);
            let mut pos = 0;
            let t = self.parse_at(&tokens, &mut pos, depth + 1).ok()?;
            // Field names in the plan are the names themselves (`"Name"` stays `Name`).
            fields.push((field.clone(), t));
        }
        Some(CqlType::Udt(Arc::new(UdtDef {
            keyspace: self.keyspace.to_string(),
            name: name.to_string(),
            fields,
        })))
    }
}

fn expect(tokens: &[String], pos: &mut usize, what: &str) -> Result<(), String> {
    if tokens.get(*pos).map(String::as_str) == Some(what) {
        *pos += 1;
        Ok(())
    } else {
        Err(format!("expected `{what}`"))
    }
}

/// A CQL identifier as the server stores it: quoted names verbatim, others lower-cased.
pub fn unquote(name: &str) -> String {
    match name.strip_prefix('"').and_then(|n| n.strip_suffix('"')) {
        Some(inner) => inner.replace("\"\"", "\""),
        None => name.to_ascii_lowercase(),
    }
}

/// The words of a type: names (quoted ones with their quotes), `<`, `>` and `,`.
pub(crate) fn tokenize(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '<' | '>' | ',' => out.push(c.to_string()),
            '"' => {
                let mut word = String::from('"');
                while let Some(d) = chars.next() {
                    word.push(d);
                    if d == '"' {
                        if chars.peek() == Some(&'"') {
                            word.push('"');
                            chars.next();
                        } else {
                            break;
                        }
                    }
                }
                out.push(word);
            }
            c if c.is_whitespace() => {}
            c => {
                let mut word = String::from(c);
                while let Some(&d) = chars.peek() {
                    if d == '<' || d == '>' || d == ',' || d.is_whitespace() {
                        break;
                    }
                    word.push(d);
                    chars.next();
                }
                out.push(word);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_natives_collections_and_udts() {
        let types = vec![UserType {
            name: "address_entry".into(),
            fields: vec![
                ("label".into(), "text".into()),
                ("lines".into(), "list<text>".into()),
            ],
        }];
        let p = TypeParser::new("shop", &types);
        assert_eq!(
            p.parse("decimal").unwrap(),
            CqlType::Native(Native::Decimal)
        );
        assert_eq!(
            p.parse("list<frozen<list<int>>>").unwrap(),
            CqlType::List(Box::new(CqlType::List(Box::new(CqlType::Native(
                Native::Int
            )))))
        );
        let CqlType::Map(k, v) = p.parse("map<text, frozen<\"address_entry\">>").unwrap() else {
            panic!("not a map")
        };
        assert_eq!(*k, CqlType::Native(Native::Text));
        let CqlType::Udt(u) = *v else {
            panic!("not a udt")
        };
        assert_eq!(u.keyspace, "shop");
        assert_eq!(
            u.fields[1].1,
            CqlType::List(Box::new(CqlType::Native(Native::Text)))
        );
    }

    #[test]
    fn unknown_names_and_bad_shapes_are_errors() {
        let p = TypeParser::new("ks", &[]);
        assert!(p
            .parse("geometry")
            .unwrap_err()
            .reason
            .contains("design.types"));
        assert!(p.parse("map<text>").is_err());
        assert!(p.parse("list<int").is_err());
        assert!(p.parse("int int").is_err());
    }
}
