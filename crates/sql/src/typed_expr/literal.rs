//! Constants: a number token, and a string read as a value of a type (`DATE '…'`, `'…'::uuid`,
//! `'2025-01-15'` compared with a date column), each exactly as Postgres' input function reads
//! it, or refused. Forms that depend on a session setting Postgres' readers consult
//! (`DateStyle`: `01/02/2025`; special words: `today`, `now`, `infinity`) are refused.

use super::interval;
use remodel_model::time::days_in_month;
use remodel_model::{Expr, Literal, ScalarType};

/// A number token (`42`, `12.50`, `1e3`, `.5`): an integer when it is digits only and fits
/// 64 bits, else an exact decimal normalised as Postgres' `numeric_in` keeps it (`1.50e1` is
/// `15.0`). `negative` folds a unary minus into it, as Postgres' grammar does.
pub(crate) fn number(token: &str, negative: bool) -> Result<Literal, String> {
    let sign = if negative { "-" } else { "" };
    if !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit()) {
        if let Ok(v) = format!("{sign}{token}").parse::<i64>() {
            return Ok(Literal::Integer { value: v });
        }
    }
    let value = signed_decimal(&format!("{sign}{token}"))
        .ok_or_else(|| format!("{token} is not a number"))?;
    Ok(Literal::Numeric { value })
}

/// `digits[.digits][e[+-]digits]` as a plain decimal with the scale Postgres gives it
/// (the fraction's digits less the exponent, at least 0).
fn decimal_digits(token: &str) -> Option<String> {
    let t = token.trim();
    let (mantissa, exp) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], t[i + 1..].parse::<i32>().ok()?),
        None => (t, 0),
    };
    if exp.abs() > 1000 {
        return None;
    }
    let (whole, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if whole.is_empty() && frac.is_empty()
        || !whole
            .bytes()
            .chain(frac.bytes())
            .all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let digits: String = format!("{whole}{frac}");
    let scale = (i32::try_from(frac.len()).ok()? - exp).max(0) as usize;
    // The point sits `point` digits from the left of `digits`.
    let point = i32::try_from(whole.len()).ok()? + exp;
    let (int_part, frac_part) = if point <= 0 {
        (
            String::new(),
            format!("{}{digits}", "0".repeat(point.unsigned_abs() as usize)),
        )
    } else if point as usize >= digits.len() {
        (
            format!("{digits}{}", "0".repeat(point as usize - digits.len())),
            String::new(),
        )
    } else {
        (
            digits[..point as usize].to_string(),
            digits[point as usize..].to_string(),
        )
    };
    let int_part = int_part.trim_start_matches('0');
    let int_part = if int_part.is_empty() { "0" } else { int_part };
    let mut frac_part: String = frac_part.chars().take(scale).collect();
    while frac_part.len() < scale {
        frac_part.push('0');
    }
    Some(if scale == 0 {
        int_part.to_string()
    } else {
        format!("{int_part}.{frac_part}")
    })
}

/// The integer type a literal value has in Postgres (`integer` when it fits 32 bits).
pub(crate) fn integer_type(v: i64) -> ScalarType {
    if i32::try_from(v).is_ok() {
        ScalarType::Integer
    } else {
        ScalarType::Bigint
    }
}

/// A string read as a value of `ty` (`'2025-01-15'` as a date), typed as Postgres types it:
/// a literal of the model when one says exactly that value and type, else the literal cast
/// (`'5'::smallint` is `CAST(5 AS smallint)`; `'10:00'::time` keeps the normalised text,
/// the model having no time literal). `utc` says the plan's zone is UTC, so a `timestamptz`
/// written without an offset is an instant here; elsewhere it stays a cast of the local
/// timestamp, read in the plan's zone by whoever evaluates it.
pub(crate) fn typed_string(s: &str, ty: ScalarType, utc: bool) -> Result<Expr, String> {
    let lit = |value: Literal| Expr::Literal { value };
    let cast = |value: Literal, to: ScalarType| Expr::Cast {
        arg: Box::new(Expr::Literal { value }),
        to,
    };
    let bad = |what: &str| format!("'{s}' is not {what} as Postgres reads it exactly");
    let t = s.trim();
    Ok(match ty {
        ScalarType::Text => lit(Literal::Text {
            value: s.to_string(),
        }),
        ScalarType::Boolean => lit(Literal::Boolean {
            value: boolean(t).ok_or_else(|| bad("a boolean"))?,
        }),
        ScalarType::Smallint | ScalarType::Integer | ScalarType::Bigint => {
            let v = integer(t).ok_or_else(|| bad("an integer"))?;
            let fits = match ty {
                ScalarType::Smallint => i16::try_from(v).is_ok(),
                ScalarType::Integer => i32::try_from(v).is_ok(),
                _ => true,
            };
            if !fits {
                return Err(format!("'{s}' is out of range for {}", ty.sql()));
            }
            if integer_type(v) == ty {
                lit(Literal::Integer { value: v })
            } else {
                cast(Literal::Integer { value: v }, ty)
            }
        }
        ScalarType::Numeric => lit(Literal::Numeric {
            value: signed_decimal(t).ok_or_else(|| bad("a number"))?,
        }),
        ScalarType::Real | ScalarType::Double => cast(
            Literal::Numeric {
                value: signed_decimal(t).ok_or_else(|| bad("a number"))?,
            },
            ty,
        ),
        ScalarType::Date => lit(Literal::Date {
            value: date(t).ok_or_else(|| bad("a date (YYYY-MM-DD)"))?,
        }),
        ScalarType::Timestamp => {
            let ts = timestamp(t).ok_or_else(|| bad("a timestamp (ISO 8601)"))?;
            // `timestamp` ignores a written offset, as Postgres does.
            lit(Literal::Timestamp { value: ts.local })
        }
        ScalarType::Timestamptz => {
            let ts = timestamp(t)
                .ok_or_else(|| bad("a timestamptz (ISO 8601, with a numeric offset or none)"))?;
            match (ts.offset, utc) {
                (Some(off), _) => lit(Literal::Timestamptz {
                    value: format!("{}{off}", ts.local),
                }),
                (None, true) => lit(Literal::Timestamptz {
                    value: format!("{}+00:00", ts.local),
                }),
                (None, false) => cast(Literal::Timestamp { value: ts.local }, ty),
            }
        }
        ScalarType::Time => cast(
            Literal::Text {
                value: time(t).ok_or_else(|| bad("a time (HH:MM[:SS])"))?,
            },
            ty,
        ),
        ScalarType::Interval => lit(interval::parse(s)?.literal()?),
        ScalarType::Uuid => lit(Literal::Uuid {
            value: uuid(t).ok_or_else(|| bad("a uuid"))?,
        }),
        ScalarType::Bytea => lit(Literal::Bytes {
            hex: bytea(s).ok_or_else(|| bad("a bytea (\\x… or text without backslashes)"))?,
        }),
        ScalarType::Json => {
            serde_json::from_str::<serde_json::Value>(s).map_err(|_| bad("a JSON document"))?;
            cast(
                Literal::Text {
                    value: s.to_string(),
                },
                ty,
            )
        }
    })
}

/// Postgres' `boolin`: `t`/`true`/`yes`/`on`/`1` and their prefixes, case-insensitive.
fn boolean(t: &str) -> Option<bool> {
    let w = t.to_ascii_lowercase();
    let prefix_of = |full: &str, min: usize| w.len() >= min && full.starts_with(w.as_str());
    if prefix_of("true", 1) || prefix_of("yes", 1) || prefix_of("on", 2) || w == "1" {
        Some(true)
    } else if prefix_of("false", 1) || prefix_of("no", 1) || prefix_of("off", 2) || w == "0" {
        Some(false)
    } else {
        None
    }
}

/// `[+-]digits`, 64 bits.
fn integer(t: &str) -> Option<i64> {
    let body = t.strip_prefix(['+', '-']).unwrap_or(t);
    if body.is_empty() || !body.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    t.parse().ok()
}

/// `[+-]` then a decimal with optional exponent, normalised (`-0` is `0`).
fn signed_decimal(t: &str) -> Option<String> {
    let (neg, body) = match t.as_bytes().first()? {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    let d = decimal_digits(body)?;
    let zero = d.bytes().all(|b| b == b'0' || b == b'.');
    Some(if neg && !zero { format!("-{d}") } else { d })
}

/// Days in a month of the proleptic Gregorian calendar.
/// `YYYY-MM-DD` (four-digit year, a day the month has).
fn date(t: &str) -> Option<String> {
    let b = t.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<u32> {
        let s = t.get(r)?;
        s.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| s.parse().ok())?
    };
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let y = i32::try_from(y).ok()?;
    (y >= 1 && (1..=12).contains(&m) && d >= 1 && d <= days_in_month(i64::from(y), m))
        .then(|| t.to_string())
}

/// `HH:MM[:SS[.ffffff]]` → `HH:MM:SS[.f]`, hours 0–23.
fn time(t: &str) -> Option<String> {
    let parts: Vec<&str> = t.split(':').collect();
    let two = |s: &str| s.len() == 2 && s.bytes().all(|c| c.is_ascii_digit());
    let (h, m, s) = match parts.as_slice() {
        [h, m] => (*h, *m, "00"),
        [h, m, s] => (*h, *m, *s),
        _ => return None,
    };
    if !two(h) || !two(m) || h > "23" || m > "59" {
        return None;
    }
    let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
    if !two(whole) || whole > "59" || frac.len() > 6 || !frac.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let frac = frac.trim_end_matches('0');
    Some(if frac.is_empty() {
        format!("{h}:{m}:{whole}")
    } else {
        format!("{h}:{m}:{whole}.{frac}")
    })
}

/// A timestamp read from ISO 8601 text: local part and offset, each normalised.
struct Timestamp {
    /// `YYYY-MM-DDTHH:MM:SS[.f]`.
    local: String,
    /// `+HH:MM`, when written.
    offset: Option<String>,
}

/// `YYYY-MM-DD[( |T)HH:MM[:SS[.ffffff]]][offset]`, the offset `Z`, `±HH`, `±HHMM`, `±HH:MM`
/// (optionally after a space) or `UTC`/`GMT`.
fn timestamp(t: &str) -> Option<Timestamp> {
    let day = date(t.get(..10)?)?;
    let rest = &t[10..];
    if rest.is_empty() {
        return Some(Timestamp {
            local: format!("{day}T00:00:00"),
            offset: None,
        });
    }
    let rest = rest.strip_prefix(['T', 't', ' '])?;
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == ':' || c == '.'))
        .unwrap_or(rest.len());
    let clock = time(&rest[..end])?;
    let offset = match rest[end..].trim_start() {
        "" => None,
        z => Some(offset(z)?),
    };
    Some(Timestamp {
        local: format!("{day}T{clock}"),
        offset,
    })
}

/// A zone offset as `+HH:MM` (Postgres reads `+01` east of Greenwich in a timestamp).
fn offset(z: &str) -> Option<String> {
    if ["z", "utc", "gmt"].contains(&z.to_ascii_lowercase().as_str()) {
        return Some("+00:00".into());
    }
    let sign = match z.as_bytes().first()? {
        b'+' => '+',
        b'-' => '-',
        _ => return None,
    };
    let body = &z[1..];
    let digits = |s: &str| s.len() == 2 && s.bytes().all(|c| c.is_ascii_digit());
    let (h, m) = match body.len() {
        2 => (body, "00"),
        4 => (&body[..2], &body[2..]),
        5 if body.as_bytes()[2] == b':' => (&body[..2], &body[3..]),
        _ => return None,
    };
    if !digits(h) || !digits(m) || h > "15" || m > "59" {
        return None;
    }
    let sign = if h == "00" && m == "00" { '+' } else { sign };
    Some(format!("{sign}{h}:{m}"))
}

/// A UUID in the forms Postgres reads (hyphenated, plain 32 digits, in braces), lower-case
/// hyphenated.
fn uuid(t: &str) -> Option<String> {
    let inner = t
        .strip_prefix('{')
        .and_then(|x| x.strip_suffix('}'))
        .unwrap_or(t);
    let hex: String = match inner.len() {
        36 => {
            let b = inner.as_bytes();
            if [8, 13, 18, 23].iter().any(|&i| b[i] != b'-') {
                return None;
            }
            inner.chars().filter(|c| *c != '-').collect()
        }
        32 => inner.to_string(),
        _ => return None,
    };
    if hex.len() != 32 || !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let h = hex.to_ascii_lowercase();
    Some(format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    ))
}

/// Bytes as lower-case hex: `\x` hex text (whitespace between pairs allowed), or text without
/// backslashes (its UTF-8 bytes, Postgres' escape format read literally).
fn bytea(s: &str) -> Option<String> {
    if let Some(hex) = s.strip_prefix("\\x") {
        let digits: String = hex.chars().filter(|c| !c.is_ascii_whitespace()).collect();
        if !digits.len().is_multiple_of(2) || !digits.bytes().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        return Some(digits.to_ascii_lowercase());
    }
    if s.contains('\\') {
        return None;
    }
    Some(s.bytes().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_as_postgres_types_them() {
        let n = |t: &str, neg| number(t, neg).unwrap();
        assert_eq!(n("42", false), Literal::Integer { value: 42 });
        assert_eq!(n("42", true), Literal::Integer { value: -42 });
        assert_eq!(
            n("9223372036854775808", true),
            Literal::Integer { value: i64::MIN }
        );
        let num = |v: &str| Literal::Numeric { value: v.into() };
        assert_eq!(n("9223372036854775808", false), num("9223372036854775808"));
        assert_eq!(n("12.50", false), num("12.50"));
        assert_eq!(n("1e3", false), num("1000"));
        assert_eq!(n("1.50e1", false), num("15.0"));
        assert_eq!(n("1e-3", false), num("0.001"));
        assert_eq!(n(".5", true), num("-0.5"));
        assert_eq!(n("5.", false), num("5"));
        assert_eq!(n("0.0", true), num("0.0"));
        assert!(number("0x1f", false).is_err());
    }

    #[test]
    fn strings_read_as_typed_values() {
        let lit = |s: &str, ty| typed_string(s, ty, true).map(|e| e.to_string());
        assert_eq!(
            lit("2025-01-15 10:00", ScalarType::Timestamptz).unwrap(),
            "TIMESTAMPTZ '2025-01-15T10:00:00+00:00'"
        );
        assert_eq!(
            typed_string("2025-01-15 10:00", ScalarType::Timestamptz, false)
                .unwrap()
                .to_string(),
            "CAST(TIMESTAMP '2025-01-15T10:00:00' AS timestamptz)"
        );
        assert_eq!(
            lit("2025-01-15T10:00:00.250+0530", ScalarType::Timestamptz).unwrap(),
            "TIMESTAMPTZ '2025-01-15T10:00:00.25+05:30'"
        );
        assert_eq!(
            lit("2025-01-15 10:00-01", ScalarType::Timestamp).unwrap(),
            "TIMESTAMP '2025-01-15T10:00:00'"
        );
        assert_eq!(
            lit("2024-02-29", ScalarType::Date).unwrap(),
            "DATE '2024-02-29'"
        );
        assert!(lit("2025-02-29", ScalarType::Date).is_err());
        assert!(lit("01/02/2025", ScalarType::Date).is_err());
        assert!(lit("today", ScalarType::Date).is_err());
        assert!(lit("2025-01-15 24:00", ScalarType::Timestamp).is_err());
        assert!(lit("2025-01-15 10:00 Europe/Berlin", ScalarType::Timestamptz).is_err());
        assert_eq!(
            lit(" 5 ", ScalarType::Smallint).unwrap(),
            "CAST(5 AS smallint)"
        );
        assert_eq!(lit("5", ScalarType::Bigint).unwrap(), "CAST(5 AS bigint)");
        assert!(lit("40000", ScalarType::Smallint).is_err());
        assert_eq!(lit("yes", ScalarType::Boolean).unwrap(), "true");
        assert!(lit("o", ScalarType::Boolean).is_err());
        assert_eq!(
            lit("{A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11}", ScalarType::Uuid).unwrap(),
            "UUID 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'"
        );
        assert_eq!(
            lit("\\xDEAD be", ScalarType::Bytea).unwrap(),
            "'\\xdeadbe'::bytea"
        );
        assert!(lit("a\\000", ScalarType::Bytea).is_err());
        assert_eq!(
            lit("10:00", ScalarType::Time).unwrap(),
            "CAST('10:00:00' AS time)"
        );
        assert!(lit("{\"a\":", ScalarType::Json).is_err());
    }
}
