//! Exact decimals: Postgres' binary NUMERIC (base-10000 digits) and decimal text to CQL's
//! `decimal` (a two's-complement unscaled integer and a scale), and back to text for messages.
//! No floating point anywhere: every digit Postgres holds reaches Cassandra.

use scylla::value::CqlDecimal;

/// Why a value cannot become a CQL decimal.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecimalError {
    /// NaN, Infinity or -Infinity: CQL's decimal has no such values.
    #[error("numeric {0} has no CQL decimal equivalent")]
    NotFinite(&'static str),
    /// The bytes are not a NUMERIC in Postgres' binary format.
    #[error("malformed binary numeric ({0})")]
    Malformed(&'static str),
    /// The text is not a decimal number.
    #[error("`{0}` is not a decimal number")]
    BadText(String),
}

/// An unsigned big integer, little-endian base 2^32 limbs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct BigUint(Vec<u32>);

impl BigUint {
    fn mul_add(&mut self, mul: u32, add: u32) {
        let mut carry = add as u64;
        for limb in &mut self.0 {
            let v = (*limb as u64) * (mul as u64) + carry;
            *limb = v as u32;
            carry = v >> 32;
        }
        if carry > 0 {
            self.0.push(carry as u32);
        }
    }

    /// Divides in place and returns the remainder.
    fn div_rem(&mut self, div: u32) -> u32 {
        let mut rem = 0u64;
        for limb in self.0.iter_mut().rev() {
            let cur = (rem << 32) | *limb as u64;
            *limb = (cur / div as u64) as u32;
            rem = cur % div as u64;
        }
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
        rem as u32
    }

    fn is_zero(&self) -> bool {
        self.0.iter().all(|&l| l == 0)
    }

    fn mul_pow10(&mut self, mut exp: u32) {
        while exp > 0 {
            let step = exp.min(9);
            self.mul_add(10u32.pow(step), 0);
            exp -= step;
        }
    }

    /// Divides by 10^exp when that is exact; leaves `self` unchanged and returns false otherwise.
    fn div_pow10_exact(&mut self, exp: u32) -> bool {
        let mut trial = self.clone();
        let mut left = exp;
        while left > 0 {
            let step = left.min(9);
            if trial.div_rem(10u32.pow(step)) != 0 {
                return false;
            }
            left -= step;
        }
        *self = trial;
        true
    }

    fn to_be_bytes(&self) -> Vec<u8> {
        let mut out: Vec<u8> = self.0.iter().rev().flat_map(|l| l.to_be_bytes()).collect();
        let first = out.iter().position(|&b| b != 0).unwrap_or(out.len());
        out.drain(..first);
        out
    }

    fn from_be_bytes(bytes: &[u8]) -> BigUint {
        let mut limbs = Vec::with_capacity(bytes.len() / 4 + 1);
        for chunk in bytes.rchunks(4) {
            let mut word = [0u8; 4];
            word[4 - chunk.len()..].copy_from_slice(chunk);
            limbs.push(u32::from_be_bytes(word));
        }
        let mut n = BigUint(limbs);
        while n.0.last() == Some(&0) {
            n.0.pop();
        }
        n
    }

    fn to_decimal_string(&self) -> String {
        let mut n = self.clone();
        let mut chunks = Vec::new();
        while !n.is_zero() {
            chunks.push(n.div_rem(1_000_000_000));
        }
        let Some(last) = chunks.pop() else {
            return "0".into();
        };
        let mut s = last.to_string();
        for c in chunks.iter().rev() {
            s.push_str(&format!("{c:09}"));
        }
        s
    }
}

/// Two's-complement big-endian bytes of `±magnitude` (CQL varint form, at least one byte).
fn signed_bytes(magnitude: &BigUint, negative: bool) -> Vec<u8> {
    let mut bytes = magnitude.to_be_bytes();
    if bytes.is_empty() {
        return vec![0];
    }
    if !negative {
        if bytes[0] & 0x80 != 0 {
            bytes.insert(0, 0);
        }
        return bytes;
    }
    // Negate: invert and add one, from the least significant byte.
    let mut carry = true;
    for b in bytes.iter_mut().rev() {
        let (v, c) = (!*b).overflowing_add(carry as u8);
        *b = v;
        carry = c;
    }
    if bytes[0] & 0x80 == 0 {
        bytes.insert(0, 0xff);
    }
    bytes
}

fn decimal(magnitude: &BigUint, negative: bool, scale: i32) -> CqlDecimal {
    CqlDecimal::from_signed_be_bytes_and_exponent(
        signed_bytes(magnitude, negative && !magnitude.is_zero()),
        scale,
    )
}

/// Decodes Postgres' binary NUMERIC (`ndigits, weight, sign, dscale, digits[]`) exactly, keeping
/// its display scale (`1.50` stays `1.50`).
pub fn decode_numeric(raw: &[u8]) -> Result<CqlDecimal, DecimalError> {
    let word = |i: usize| -> Result<u16, DecimalError> {
        raw.get(i * 2..i * 2 + 2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]))
            .ok_or(DecimalError::Malformed("too short"))
    };
    let ndigits = word(0)? as usize;
    let weight = word(1)? as i16 as i64;
    let sign = word(2)?;
    let dscale = word(3)? as i64;
    match sign {
        0x0000 | 0x4000 => {}
        0xC000 => return Err(DecimalError::NotFinite("NaN")),
        0xD000 => return Err(DecimalError::NotFinite("Infinity")),
        0xF000 => return Err(DecimalError::NotFinite("-Infinity")),
        _ => return Err(DecimalError::Malformed("unknown sign")),
    }
    if raw.len() != 8 + ndigits * 2 {
        return Err(DecimalError::Malformed(
            "length does not match the digit count",
        ));
    }
    let mut n = BigUint::default();
    for i in 0..ndigits {
        let d = word(4 + i)?;
        if d >= 10_000 {
            return Err(DecimalError::Malformed("digit over 9999"));
        }
        n.mul_add(10_000, d as u32);
    }
    // value = n × 10000^(weight − ndigits + 1), i.e. n at scale `natural`.
    let natural = -4 * (weight - ndigits as i64 + 1);
    let scale = if ndigits == 0 {
        dscale
    } else if dscale >= natural {
        n.mul_pow10((dscale - natural) as u32);
        dscale
    } else if n.div_pow10_exact((natural - dscale) as u32) {
        dscale
    } else {
        // Digits past the display scale (Postgres never sends them): keep them all.
        natural
    };
    let scale = i32::try_from(scale).map_err(|_| DecimalError::Malformed("scale out of range"))?;
    Ok(decimal(&n, sign == 0x4000, scale))
}

/// Parses decimal text (`-12.340`, `1.5e3`, as JSON or Postgres prints numbers) exactly.
pub fn parse_decimal(text: &str) -> Result<CqlDecimal, DecimalError> {
    let bad = || DecimalError::BadText(text.to_string());
    let t = text.trim();
    match t.to_ascii_lowercase().as_str() {
        "nan" => return Err(DecimalError::NotFinite("NaN")),
        "infinity" | "+infinity" | "inf" => return Err(DecimalError::NotFinite("Infinity")),
        "-infinity" | "-inf" => return Err(DecimalError::NotFinite("-Infinity")),
        _ => {}
    }
    let (negative, rest) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let (mantissa, exp) = match rest.find(['e', 'E']) {
        Some(i) => (&rest[..i], rest[i + 1..].parse::<i64>().map_err(|_| bad())?),
        None => (rest, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int.is_empty() && frac.is_empty() {
        return Err(bad());
    }
    let mut n = BigUint::default();
    for c in int.chars().chain(frac.chars()) {
        let d = c.to_digit(10).ok_or_else(bad)?;
        n.mul_add(10, d);
    }
    let scale = i32::try_from(frac.len() as i64 - exp).map_err(|_| bad())?;
    Ok(decimal(&n, negative, scale))
}

/// A CQL decimal as plain text (`-12.340`), for messages and comparisons.
pub fn decimal_to_string(d: &CqlDecimal) -> String {
    let (bytes, scale) = d.as_signed_be_bytes_slice_and_exponent();
    let negative = bytes.first().is_some_and(|b| b & 0x80 != 0);
    let magnitude = if negative {
        // Two's complement back to a magnitude: invert and add one.
        let mut inv: Vec<u8> = bytes.iter().map(|b| !b).collect();
        for b in inv.iter_mut().rev() {
            let (v, c) = b.overflowing_add(1);
            *b = v;
            if !c {
                break;
            }
        }
        BigUint::from_be_bytes(&inv)
    } else {
        BigUint::from_be_bytes(bytes)
    };
    let digits = magnitude.to_decimal_string();
    let sign = if negative { "-" } else { "" };
    if scale <= 0 {
        let zeros = if magnitude.is_zero() {
            0
        } else {
            (-scale) as usize
        };
        return format!("{sign}{digits}{}", "0".repeat(zeros));
    }
    let scale = scale as usize;
    let padded = if digits.len() <= scale {
        format!("{}{digits}", "0".repeat(scale - digits.len() + 1))
    } else {
        digits
    };
    let (int, frac) = padded.split_at(padded.len() - scale);
    format!("{sign}{int}.{frac}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Postgres' binary NUMERIC for the given fields, as numeric_send writes it.
    fn pg(weight: i16, sign: u16, dscale: u16, digits: &[u16]) -> Vec<u8> {
        let mut v = Vec::new();
        for w in [digits.len() as u16, weight as u16, sign, dscale] {
            v.extend_from_slice(&w.to_be_bytes());
        }
        for d in digits {
            v.extend_from_slice(&d.to_be_bytes());
        }
        v
    }

    fn text(raw: &[u8]) -> String {
        decimal_to_string(&decode_numeric(raw).unwrap())
    }

    #[test]
    fn binary_numerics_keep_every_digit_and_the_scale() {
        // 1.50: digits [1, 5000], weight 0, dscale 2.
        assert_eq!(text(&pg(0, 0, 2, &[1, 5000])), "1.50");
        // -0.001: digits [10], weight -1, dscale 3.
        assert_eq!(text(&pg(-1, 0x4000, 3, &[10])), "-0.001");
        // 123456789012345678901234567890.123 (30 integer digits).
        let digits = [12, 3456, 7890, 1234, 5678, 9012, 3456, 7890, 1230];
        assert_eq!(
            text(&pg(7, 0, 3, &digits)),
            "123456789012345678901234567890.123"
        );
        // 10000 is stored as one digit 1 with weight 1 and no trailing zeros.
        assert_eq!(text(&pg(1, 0, 0, &[1])), "10000");
        assert_eq!(text(&pg(0, 0, 4, &[])), "0.0000");
        assert_eq!(text(&pg(0, 0x4000, 0, &[])), "0");
    }

    #[test]
    fn not_finite_and_malformed_are_errors() {
        assert_eq!(
            decode_numeric(&pg(0, 0xC000, 0, &[])),
            Err(DecimalError::NotFinite("NaN"))
        );
        assert_eq!(
            decode_numeric(&pg(0, 0xD000, 0, &[])),
            Err(DecimalError::NotFinite("Infinity"))
        );
        assert_eq!(
            decode_numeric(&pg(0, 0xF000, 0, &[])),
            Err(DecimalError::NotFinite("-Infinity"))
        );
        assert!(decode_numeric(&[0, 1]).is_err());
        assert!(decode_numeric(&pg(0, 0, 0, &[10_000])).is_err());
    }

    #[test]
    fn twos_complement_edges() {
        for (v, bytes) in [
            ("127", vec![0x7f]),
            ("128", vec![0x00, 0x80]),
            ("-128", vec![0x80]),
            ("-129", vec![0xff, 0x7f]),
            ("-255", vec![0xff, 0x01]),
            ("-256", vec![0xff, 0x00]),
            ("0", vec![0x00]),
        ] {
            let d = parse_decimal(v).unwrap();
            assert_eq!(
                d.as_signed_be_bytes_slice_and_exponent(),
                (&bytes[..], 0),
                "{v}"
            );
            assert_eq!(decimal_to_string(&d), v);
        }
    }

    #[test]
    fn text_round_trips() {
        for v in [
            "0.5",
            "-0.05",
            "99999999999999999999999999999999999999999.000001",
            "-123456789012345678901234567890",
        ] {
            assert_eq!(decimal_to_string(&parse_decimal(v).unwrap()), v);
        }
        assert_eq!(decimal_to_string(&parse_decimal("1.5e3").unwrap()), "1500");
        assert_eq!(decimal_to_string(&parse_decimal("15e-3").unwrap()), "0.015");
        assert!(parse_decimal("NaN").is_err());
        assert!(parse_decimal("1.2.3").is_err());
        assert!(parse_decimal("").is_err());
    }
}
