//! Token-shape helpers: small rewrites and recognisers over `sqlparser`'s tokens for the
//! `pg_dump` shapes its parser rejects (see `shared/notes/crates.md`), so they load instead of
//! failing. Each works on the token stream (quotes and comments already understood), never on
//! raw text.

use sqlparser::ast::ObjectName;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer, TokenizerError};

/// Tokens of one statement with their (statement-relative) positions.
pub(crate) fn tokenize(text: &str) -> Result<Vec<TokenWithSpan>, TokenizerError> {
    Tokenizer::new(&PostgreSqlDialect {}, text).tokenize_with_location()
}

/// True when `t` is the bare (unquoted) word `kw`.
fn is_word(t: &Token, kw: &str) -> bool {
    matches!(t, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(kw))
}

fn is_trivia(t: &Token) -> bool {
    matches!(t, Token::Whitespace(_))
}

/// Index of the next non-whitespace token at or after `i`.
fn next_solid(tokens: &[TokenWithSpan], mut i: usize) -> Option<usize> {
    while i < tokens.len() {
        if !is_trivia(&tokens[i].token) {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// Index of the previous non-whitespace token before `i`.
fn prev_solid(tokens: &[TokenWithSpan], i: usize) -> Option<usize> {
    (0..i).rev().find(|&j| !is_trivia(&tokens[j].token))
}

/// The non-whitespace tokens, for shape matching.
fn solid(tokens: &[TokenWithSpan]) -> impl Iterator<Item = &Token> {
    tokens.iter().map(|t| &t.token).filter(|t| !is_trivia(t))
}

/// `CREATE INDEX … ON ONLY parent (…)` (pg_dump's index on a partitioned table): drops `ONLY`,
/// which only says the index is not built on the partitions. Returns whether it rewrote.
pub(crate) fn drop_on_only(tokens: &mut Vec<TokenWithSpan>) -> bool {
    let pos = (0..tokens.len()).find(|&i| {
        is_word(&tokens[i].token, "ONLY")
            && prev_solid(tokens, i).is_some_and(|p| is_word(&tokens[p].token, "ON"))
    });
    match pos {
        Some(i) => {
            tokens.remove(i);
            true
        }
        None => false,
    }
}

/// `… GENERATED ALWAYS AS (expr) VIRTUAL` (PostgreSQL 18): `sqlparser` only knows `STORED`.
/// Rewrites `VIRTUAL` after a generation expression to `STORED`; the column stays a generated
/// column either way. Returns whether it rewrote.
pub(crate) fn virtual_to_stored(tokens: &mut [TokenWithSpan]) -> bool {
    let mut changed = false;
    for i in 0..tokens.len() {
        if is_word(&tokens[i].token, "VIRTUAL")
            && prev_solid(tokens, i).is_some_and(|p| tokens[p].token == Token::RParen)
        {
            tokens[i].token = Token::make_keyword("STORED");
            changed = true;
        }
    }
    changed
}

/// `ALTER TABLE … ALTER COLUMN c ADD GENERATED … AS IDENTITY (SEQUENCE NAME s START WITH 1 …)`
/// (how pg_dump writes identity columns): the sequence options are not understood by
/// `sqlparser` and do not matter here, so the parenthesised group is dropped.
pub(crate) fn drop_identity_options(tokens: &mut Vec<TokenWithSpan>) -> bool {
    let Some(ident) = (0..tokens.len()).find(|&i| {
        is_word(&tokens[i].token, "IDENTITY")
            && prev_solid(tokens, i).is_some_and(|p| is_word(&tokens[p].token, "AS"))
    }) else {
        return false;
    };
    let Some(open) = next_solid(tokens, ident + 1) else {
        return false;
    };
    if tokens[open].token != Token::LParen {
        return false;
    }
    let mut depth = 0usize;
    for j in open..tokens.len() {
        match tokens[j].token {
            Token::LParen => depth += 1,
            Token::RParen => {
                depth -= 1;
                if depth == 0 {
                    tokens.drain(open..=j);
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

/// `ALTER <object> name OWNER TO role`: an ownership change (nothing to model).
pub(crate) fn is_owner_change(tokens: &[TokenWithSpan]) -> bool {
    let s: Vec<&Token> = solid(tokens).collect();
    s.len() >= 3 && is_word(s[s.len() - 3], "OWNER") && is_word(s[s.len() - 2], "TO")
}

/// `ALTER SEQUENCE [IF EXISTS] seq … OWNED BY table.column` (how pg_dump ties a serial column's
/// sequence to it). Returns the sequence and the owner (`None` for `OWNED BY NONE`); `Ok(None)`
/// when the statement has no `OWNED BY`.
pub(crate) fn sequence_owned_by(
    tokens: Vec<TokenWithSpan>,
) -> Result<Option<(ObjectName, Option<ObjectName>)>, ParserError> {
    let owned = (0..tokens.len()).find(|&i| {
        is_word(&tokens[i].token, "OWNED")
            && next_solid(&tokens, i + 1).is_some_and(|n| is_word(&tokens[n].token, "BY"))
    });
    let Some(owned) = owned else { return Ok(None) };
    let tail: Vec<TokenWithSpan> = tokens[owned..].to_vec();
    let dialect = PostgreSqlDialect {};
    let mut head = Parser::new(&dialect).with_tokens_with_locations(tokens[..owned].to_vec());
    head.expect_keywords(&[
        sqlparser::keywords::Keyword::ALTER,
        sqlparser::keywords::Keyword::SEQUENCE,
    ])?;
    let _ = head.parse_keywords(&[
        sqlparser::keywords::Keyword::IF,
        sqlparser::keywords::Keyword::EXISTS,
    ]);
    let seq = head.parse_object_name(false)?;
    let mut tail = Parser::new(&dialect).with_tokens_with_locations(tail);
    tail.expect_keywords(&[
        sqlparser::keywords::Keyword::OWNED,
        sqlparser::keywords::Keyword::BY,
    ])?;
    if tail.parse_keyword(sqlparser::keywords::Keyword::NONE) {
        return Ok(Some((seq, None)));
    }
    let owner = tail.parse_object_name(false)?;
    Ok(Some((seq, Some(owner))))
}

/// The name created by `CREATE [OR REPLACE] MATERIALIZED VIEW [IF NOT EXISTS] name …` (the rest of
/// the statement, which `sqlparser` may reject, e.g. `WITH NO DATA`, is not needed).
pub(crate) fn materialized_view_name(tokens: Vec<TokenWithSpan>) -> Option<ObjectName> {
    use sqlparser::keywords::Keyword;
    let dialect = PostgreSqlDialect {};
    let mut p = Parser::new(&dialect).with_tokens_with_locations(tokens);
    p.expect_keyword(Keyword::CREATE).ok()?;
    let _ = p.parse_keywords(&[Keyword::OR, Keyword::REPLACE]);
    p.expect_keywords(&[Keyword::MATERIALIZED, Keyword::VIEW])
        .ok()?;
    let _ = p.parse_keywords(&[Keyword::IF, Keyword::NOT, Keyword::EXISTS]);
    p.parse_object_name(false).ok()
}

/// The name and language of `CREATE [OR REPLACE] FUNCTION name(…) … LANGUAGE lang …` (the
/// body is not parsed: only what names the function and says what it is written in).
pub(crate) fn function_name(tokens: Vec<TokenWithSpan>) -> Option<(ObjectName, Option<String>)> {
    use sqlparser::keywords::Keyword;
    let language = {
        let s: Vec<&Token> = solid(&tokens).collect();
        s.iter()
            .position(|t| is_word(t, "LANGUAGE"))
            .and_then(|i| match s.get(i + 1) {
                Some(Token::Word(w)) => Some(w.value.to_lowercase()),
                Some(Token::SingleQuotedString(v)) => Some(v.to_lowercase()),
                _ => None,
            })
    };
    let dialect = PostgreSqlDialect {};
    let mut p = Parser::new(&dialect).with_tokens_with_locations(tokens);
    p.expect_keyword(Keyword::CREATE).ok()?;
    let _ = p.parse_keywords(&[Keyword::OR, Keyword::REPLACE]);
    p.expect_keyword(Keyword::FUNCTION).ok()?;
    p.parse_object_name(false).ok().map(|n| (n, language))
}

/// Whether an `ALTER TABLE` that failed to parse asks for something the loader models (then the
/// failure is an error) or for a storage/maintenance action such as `ALTER COLUMN c SET
/// STATISTICS 1000` (then it is skipped). Returns the kind name to count it under when skipped.
pub(crate) fn unmodelled_alter_table_action(tokens: &[TokenWithSpan]) -> Option<String> {
    let s: Vec<&Token> = solid(tokens).collect();
    // ALTER TABLE [IF EXISTS] [ONLY] name[.name…] [*]
    let mut i = 2;
    if s.get(i).is_some_and(|t| is_word(t, "IF")) {
        i += 2;
    }
    if s.get(i).is_some_and(|t| is_word(t, "ONLY")) {
        i += 1;
    }
    i += 1;
    while s.get(i) == Some(&&Token::Period) {
        i += 2;
    }
    if s.get(i) == Some(&&Token::Mul) {
        i += 1;
    }
    let word = |k: usize| match s.get(k) {
        Some(Token::Word(w)) if w.quote_style.is_none() => w.value.to_ascii_uppercase(),
        _ => String::new(),
    };
    let first = word(i);
    let (action, rest) = if first == "ALTER" {
        // ALTER [COLUMN] col <what>
        let col = if word(i + 1) == "COLUMN" {
            i + 2
        } else {
            i + 1
        };
        (
            format!("{} {}", word(col + 1), word(col + 2)),
            "ALTER COLUMN ",
        )
    } else {
        (format!("{} {}", first, word(i + 1)), "")
    };
    let action = action.trim().to_string();
    let modelled = match rest {
        "ALTER COLUMN " => {
            [
                "SET DEFAULT",
                "SET NOT",
                "DROP NOT",
                "SET DATA",
                "ADD GENERATED",
            ]
            .contains(&action.as_str())
                || action.starts_with("TYPE")
        }
        _ => ["ADD", "ATTACH", "INHERIT"].contains(&first.as_str()),
    };
    if modelled || action.is_empty() {
        None
    } else {
        Some(format!("ALTER TABLE {rest}{action}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<TokenWithSpan> {
        tokenize(s).expect("test input tokenizes")
    }

    fn text(t: &[TokenWithSpan]) -> String {
        t.iter().map(|t| t.token.to_string()).collect()
    }

    #[test]
    fn on_only_is_dropped() {
        let mut t = toks("CREATE INDEX i ON ONLY public.p USING btree (a)");
        assert!(drop_on_only(&mut t));
        assert_eq!(text(&t), "CREATE INDEX i ON  public.p USING btree (a)");
        let mut t = toks("CREATE INDEX only_i ON t (a)");
        assert!(!drop_on_only(&mut t));
    }

    #[test]
    fn identity_options_are_dropped() {
        let mut t = toks("ALTER TABLE t ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (\n SEQUENCE NAME s START WITH 1 CACHE 1\n)");
        assert!(drop_identity_options(&mut t));
        assert_eq!(
            text(&t),
            "ALTER TABLE t ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY "
        );
    }

    #[test]
    fn virtual_generated_becomes_stored() {
        let mut t =
            toks("CREATE TABLE t (a int, b int GENERATED ALWAYS AS (a * 2) VIRTUAL, virtual int)");
        assert!(virtual_to_stored(&mut t));
        assert!(text(&t).contains("(a * 2) STORED, virtual int"));
    }

    #[test]
    fn owner_changes_and_owned_by() {
        assert!(is_owner_change(&toks(
            "ALTER DOMAIN public.\"x\" OWNER TO postgres"
        )));
        assert!(!is_owner_change(&toks(
            "ALTER DOMAIN public.x ADD CONSTRAINT c CHECK (VALUE > 0)"
        )));
        let (seq, owner) =
            sequence_owned_by(toks("ALTER SEQUENCE public.t_id_seq OWNED BY public.t.id"))
                .expect("parses")
                .expect("has OWNED BY");
        assert_eq!(seq.to_string(), "public.t_id_seq");
        assert_eq!(owner.map(|o| o.to_string()).as_deref(), Some("public.t.id"));
        assert!(sequence_owned_by(toks("ALTER SEQUENCE s RESTART WITH 5"))
            .expect("parses")
            .is_none());
        let none = sequence_owned_by(toks("ALTER SEQUENCE s OWNED BY NONE")).expect("parses");
        assert!(matches!(none, Some((_, None))));
    }

    #[test]
    fn materialized_view_names() {
        let name = materialized_view_name(toks(
            "CREATE MATERIALIZED VIEW public.v AS SELECT 1 WITH NO DATA",
        ));
        assert_eq!(name.map(|n| n.to_string()).as_deref(), Some("public.v"));
        assert!(materialized_view_name(toks("CREATE VIEW v AS SELECT 1")).is_none());
    }

    #[test]
    fn alter_table_actions() {
        let kind = |s: &str| unmodelled_alter_table_action(&toks(s));
        assert_eq!(
            kind("ALTER TABLE ONLY public.good_jobs ALTER COLUMN finished_at SET STATISTICS 1000")
                .as_deref(),
            Some("ALTER TABLE ALTER COLUMN SET STATISTICS")
        );
        assert_eq!(
            kind("ALTER TABLE t CLUSTER ON i").as_deref(),
            Some("ALTER TABLE CLUSTER ON")
        );
        assert_eq!(
            kind("ALTER TABLE t ADD CONSTRAINT c FOREIGN KEY (a) REFERENCES"),
            None
        );
        assert_eq!(
            kind("ALTER TABLE t ALTER COLUMN a SET DEFAULT nextval("),
            None
        );
    }
}
