//! Text helpers every stage shares: numbers as messages, notes and reports print them, a
//! stable hash of a text (statement fingerprints, shortened names), a word quoted for a POSIX
//! shell (every command line remodel prints or writes), and a name as a snake_case identifier
//! (the generated functions' names and parameters).

/// `1234567` → `1,234,567`.
pub fn thousands(n: impl Into<u128>) -> String {
    let digits = n.into().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// FNV-1a, 64 bit: stable across runs, platforms and Rust versions (unlike `DefaultHasher`).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h = Fnv1a64::new();
    h.write(bytes);
    h.finish()
}

/// [`fnv1a64`] fed in pieces: the hash of everything written, as if written at once.
#[derive(Debug, Clone, Copy)]
pub struct Fnv1a64(u64);

impl Fnv1a64 {
    /// The hash of nothing yet.
    pub fn new() -> Self {
        Fnv1a64(0xcbf2_9ce4_8422_2325)
    }

    /// Adds `bytes`.
    pub fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    /// The hash of what was written.
    pub fn finish(self) -> u64 {
        self.0
    }
}

impl Default for Fnv1a64 {
    fn default() -> Self {
        Self::new()
    }
}

/// A word as a POSIX shell reads it back: as it is when plainly safe, else in single quotes (a
/// quote inside as `'\''`). The one shell quoting of the command lines `remodel` prints (a resume
/// hint), the Spark job's README and the report's runbook.
pub fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:@=,+".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// A snake_case identifier of `text`: ASCII letters, digits and `_`, lower case, words of a
/// camel-cased name apart (`TripsOfDriver` → `trips_of_driver`), never starting with a digit.
/// The one spelling of the names the plan gives generated functions (`design.queries[].function`)
/// and of the parameters codegen names.
pub fn snake(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 4);
    let mut prev_lower = false;
    for c in text.chars() {
        if c.is_ascii_uppercase() {
            if prev_lower {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
            prev_lower = false;
        } else if c.is_ascii_alphanumeric() {
            out.push(c);
            prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        } else {
            if !out.ends_with('_') {
                out.push('_');
            }
            prev_lower = false;
        }
    }
    let trimmed = out.trim_matches('_').to_string();
    match trimmed.chars().next() {
        None => "x".into(),
        Some(c) if c.is_ascii_digit() => format!("n{trimmed}"),
        Some(_) => trimmed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_snake_case_whatever_they_were() {
        assert_eq!(snake("TripsOfDriver"), "trips_of_driver");
        assert_eq!(snake("auth.users"), "auth_users");
        assert_eq!(snake("user-accounts"), "user_accounts");
        assert_eq!(snake("2fa codes"), "n2fa_codes");
        assert_eq!(snake("?column?"), "column");
    }

    #[test]
    fn groups_of_three() {
        assert_eq!(thousands(0u64), "0");
        assert_eq!(thousands(999u64), "999");
        assert_eq!(thousands(1_000u64), "1,000");
        assert_eq!(thousands(1_200_000u64), "1,200,000");
        assert_eq!(thousands(u128::MAX).len(), 39 + 12);
    }

    #[test]
    fn fnv1a64_reference_values() {
        // The published FNV-1a 64 test vectors.
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
        let mut pieces = Fnv1a64::new();
        pieces.write(b"foo");
        pieces.write(b"bar");
        assert_eq!(pieces.finish(), fnv1a64(b"foobar"));
    }

    #[test]
    fn shell_words_read_back() {
        assert_eq!(shell_word("out/plan.json"), "out/plan.json");
        assert_eq!(shell_word(""), "''");
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
    }
}
