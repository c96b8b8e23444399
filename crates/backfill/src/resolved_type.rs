//! The plan's CQL types ([`remodel_model::CqlType`]) resolved for value conversion, once per
//! column: user types carry their fields and `frozen<…>` is gone, so that every value is
//! converted against a known target type.

use remodel_model::CqlType as PlanType;
use remodel_model::UserType;
use std::sync::Arc;

/// A native (non-collection) CQL type: the model's.
pub use remodel_model::NativeType as Native;

/// A user-defined type with its fields resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct UdtDef {
    /// Keyspace the type lives in (the driver checks it when a UDT value is bound).
    pub keyspace: String,
    /// Type name as the server knows it.
    pub name: String,
    /// Fields in declaration order.
    pub fields: Vec<(String, ResolvedType)>,
}

/// A plan's CQL column type resolved for value conversion: user types carry their fields and
/// `frozen<…>` is transparent (it changes storage, not values).
#[derive(Debug, Clone, PartialEq)]
pub enum ResolvedType {
    /// A native type.
    Native(Native),
    /// `list<T>`
    List(Box<ResolvedType>),
    /// `set<T>`
    Set(Box<ResolvedType>),
    /// `map<K, V>`
    Map(Box<ResolvedType>, Box<ResolvedType>),
    /// `tuple<…>`
    Tuple(Vec<ResolvedType>),
    /// A user-defined type of the plan.
    Udt(Arc<UdtDef>),
}

impl ResolvedType {
    /// True for list, set and map (whose empty value CQL stores as no value at all).
    pub fn is_collection(&self) -> bool {
        matches!(
            self,
            ResolvedType::List(_) | ResolvedType::Set(_) | ResolvedType::Map(..)
        )
    }
}

/// Why a plan's type could not be resolved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("CQL type `{text}`: {reason}")]
pub struct TypeError {
    /// The type as the plan writes it.
    pub text: String,
    /// What is wrong.
    pub reason: String,
}

/// Resolves the plan's types against its user-defined types (`design.types`).
pub struct TypeParser<'a> {
    keyspace: &'a str,
    types: &'a [UserType],
}

impl<'a> TypeParser<'a> {
    /// A resolver for a plan whose keyspace is `keyspace` and whose UDTs are `types`.
    pub fn new(keyspace: &'a str, types: &'a [UserType]) -> Self {
        TypeParser { keyspace, types }
    }

    /// Resolves one type, e.g. `map<text, frozen<address_entry>>`.
    pub fn resolve(&self, t: &PlanType) -> Result<ResolvedType, TypeError> {
        self.resolve_at(t, 0).map_err(|reason| TypeError {
            text: t.to_string(),
            reason,
        })
    }

    /// Reads and resolves one type's text (tests and hand-made types).
    pub fn parse(&self, text: &str) -> Result<ResolvedType, TypeError> {
        let t: PlanType = text
            .parse()
            .map_err(|e: remodel_model::CqlTypeError| TypeError {
                text: text.to_string(),
                reason: e.to_string(),
            })?;
        self.resolve(&t)
    }

    fn resolve_at(&self, t: &PlanType, depth: usize) -> Result<ResolvedType, String> {
        // A user type may name itself through another; the plan's validator refuses that, the
        // resolver stops rather than recurse forever.
        if depth > 16 {
            return Err("nested too deeply (a user type that contains itself?)".into());
        }
        let inner = |t: &PlanType| self.resolve_at(t, depth + 1).map(Box::new);
        Ok(match t {
            PlanType::Native(n) => ResolvedType::Native(*n),
            PlanType::Frozen(t) => self.resolve_at(t, depth + 1)?,
            PlanType::List(t) => ResolvedType::List(inner(t)?),
            PlanType::Set(t) => ResolvedType::Set(inner(t)?),
            PlanType::Map(k, v) => ResolvedType::Map(inner(k)?, inner(v)?),
            PlanType::Tuple(items) => ResolvedType::Tuple(
                items
                    .iter()
                    .map(|t| self.resolve_at(t, depth + 1))
                    .collect::<Result<_, _>>()?,
            ),
            PlanType::Udt(name) => self.udt(name, depth)?,
        })
    }

    fn udt(&self, name: &str, depth: usize) -> Result<ResolvedType, String> {
        let ut = self.types.iter().find(|t| t.name == name).ok_or_else(|| {
            format!("`{name}` is neither a CQL type nor a user type of the plan (design.types)")
        })?;
        let fields = ut
            .fields
            .iter()
            .map(|(field, ty)| Ok((field.clone(), self.resolve_at(ty, depth + 1)?)))
            .collect::<Result<_, String>>()?;
        Ok(ResolvedType::Udt(Arc::new(UdtDef {
            keyspace: self.keyspace.to_string(),
            name: name.to_string(),
            fields,
        })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_natives_collections_and_udts() {
        let types = vec![UserType {
            name: "address_entry".into(),
            fields: vec![
                ("label".into(), PlanType::TEXT),
                ("lines".into(), "list<text>".parse().unwrap()),
            ],
        }];
        let p = TypeParser::new("shop", &types);
        assert_eq!(
            p.parse("decimal").unwrap(),
            ResolvedType::Native(Native::Decimal)
        );
        assert_eq!(
            p.parse("list<frozen<list<int>>>").unwrap(),
            ResolvedType::List(Box::new(ResolvedType::List(Box::new(
                ResolvedType::Native(Native::Int)
            ))))
        );
        let ResolvedType::Map(k, v) = p.parse("map<text, frozen<\"address_entry\">>").unwrap()
        else {
            panic!("not a map")
        };
        assert_eq!(*k, ResolvedType::Native(Native::Text));
        let ResolvedType::Udt(u) = *v else {
            panic!("not a udt")
        };
        assert_eq!(u.keyspace, "shop");
        assert_eq!(
            u.fields[1].1,
            ResolvedType::List(Box::new(ResolvedType::Native(Native::Text)))
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
