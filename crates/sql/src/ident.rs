//! Identifiers as Postgres stores them: the one rule every front end folds names by.

/// Postgres' longest identifier in bytes (`NAMEDATALEN - 1`): a longer name is cut, on a
/// character boundary, as Postgres cuts it (with a NOTICE) in DDL and queries alike.
pub const MAX_IDENTIFIER_BYTES: usize = 63;

/// An identifier as a UTF-8 Postgres database stores it: an unquoted name folds its ASCII
/// letters to lower case (other letters keep their case: `CAFÉ` is `cafÉ`), a quoted one is
/// kept; both are cut to [`MAX_IDENTIFIER_BYTES`].
pub fn fold(value: &str, quoted: bool) -> String {
    let mut name = if quoted {
        value.to_string()
    } else {
        value.to_ascii_lowercase()
    };
    if name.len() > MAX_IDENTIFIER_BYTES {
        let mut cut = MAX_IDENTIFIER_BYTES;
        while !name.is_char_boundary(cut) {
            cut -= 1;
        }
        name.truncate(cut);
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_as_postgres() {
        assert_eq!(fold("Users", false), "users");
        assert_eq!(fold("Users", true), "Users");
        assert_eq!(fold("CAFÉ", false), "cafÉ");
        let long = "a".repeat(200);
        assert_eq!(fold(&long, true), "a".repeat(63));
        // 62 ASCII bytes and a two-byte letter: the letter does not fit whole and goes.
        let wide = format!("{}é", "b".repeat(62));
        assert_eq!(fold(&wide, false), "b".repeat(62));
    }
}
