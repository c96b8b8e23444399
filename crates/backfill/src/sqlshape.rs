//! Small, quote-aware edits of a table's `source_sql`: find its driving table (`FROM <table> t0`),
//! add a range predicate to its top-level WHERE, add a TABLESAMPLE. The designer writes
//! `SELECT … FROM <root> t0 [JOIN …] [WHERE …]`; anything else (a top-level GROUP BY, UNION,
//! LIMIT …) is read whole, as one range, rather than edited wrongly.

/// One token outside comments and literals, with its byte span and parenthesis depth.
#[derive(Debug, Clone, PartialEq)]
struct Token {
    text: String,
    start: usize,
    end: usize,
    depth: usize,
    quoted: bool,
}

/// Where the comment or literal starting at `i` ends, if one starts there (`--`, `/* */` nested,
/// `'…'` and `E'…'`, `$tag$…$tag$`).
fn skip_literal(sql: &str, i: usize) -> Option<usize> {
    let b = sql.as_bytes();
    match b[i] {
        b'-' if b.get(i + 1) == Some(&b'-') => {
            Some(sql[i..].find('\n').map_or(b.len(), |j| i + j + 1))
        }
        b'/' if b.get(i + 1) == Some(&b'*') => {
            let (mut j, mut nest) = (i, 0);
            while j < b.len() {
                if b[j] == b'/' && b.get(j + 1) == Some(&b'*') {
                    nest += 1;
                    j += 2;
                } else if b[j] == b'*' && b.get(j + 1) == Some(&b'/') {
                    nest -= 1;
                    j += 2;
                    if nest == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            Some(j)
        }
        b'\'' => {
            let backslash = i > 0 && matches!(b[i - 1], b'e' | b'E');
            let mut j = i + 1;
            while j < b.len() {
                let escaped =
                    (backslash && b[j] == b'\\') || (b[j] == b'\'' && b.get(j + 1) == Some(&b'\''));
                if escaped {
                    j += 2;
                } else if b[j] == b'\'' {
                    return Some(j + 1);
                } else {
                    j += 1;
                }
            }
            Some(b.len())
        }
        b'$' => {
            // $tag$ … $tag$ (a bare $n placeholder has no closing `$`).
            let tag_end = sql[i + 1..]
                .find(|ch: char| !(ch.is_alphanumeric() || ch == '_'))
                .map(|j| i + 1 + j)
                .filter(|&j| b[j] == b'$')?;
            let tag = &sql[i..=tag_end];
            let body = tag_end + 1;
            Some(
                sql[body..]
                    .find(tag)
                    .map_or(b.len(), |k| body + k + tag.len()),
            )
        }
        _ => None,
    }
}

/// The end of the word or quoted name starting at `i`.
fn word_end(b: &[u8], i: usize) -> usize {
    let mut j = i + 1;
    if b[i] == b'"' {
        while j < b.len() {
            match (b[j], b.get(j + 1)) {
                (b'"', Some(b'"')) => j += 2,
                (b'"', _) => return j + 1,
                _ => j += 1,
            }
        }
        return j;
    }
    let is_word = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80;
    while j < b.len() && is_word(b[j]) {
        j += 1;
    }
    j
}

fn tokens(sql: &str) -> Vec<Token> {
    let b = sql.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut depth = 0usize;
    while i < b.len() {
        if let Some(end) = skip_literal(sql, i) {
            i = end;
            continue;
        }
        let c = b[i];
        let end = match c {
            b'(' | b')' => {
                depth = if c == b'(' {
                    depth + 1
                } else {
                    depth.saturating_sub(1)
                };
                i += 1;
                continue;
            }
            c if c.is_ascii_whitespace() => {
                i += 1;
                continue;
            }
            b'"' => word_end(b, i),
            c if c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80 => word_end(b, i),
            _ => i + 1,
        };
        out.push(Token {
            text: sql[i..end].to_string(),
            start: i,
            end,
            depth,
            quoted: c == b'"',
        });
        i = end;
    }
    out
}

fn is_kw(t: &Token, kw: &str) -> bool {
    !t.quoted && t.depth == 0 && t.text.eq_ignore_ascii_case(kw)
}

/// The driving table of a `source_sql`: its name as written and where its alias ends.
#[derive(Debug, Clone, PartialEq)]
pub struct Driving {
    /// The table as written (`trips`, `"app"."Trips"`), usable as `'…'::regclass` text.
    pub table: String,
    /// Alias (`t0`).
    pub alias: String,
    /// Byte offset just after the alias (where a TABLESAMPLE clause goes).
    alias_end: usize,
    /// Byte offset of the top-level `WHERE` keyword's end, if any.
    where_end: Option<usize>,
}

/// Finds `FROM <table> [AS] <alias>` at the top level, when the statement's shape allows adding
/// a predicate to it (no top-level GROUP BY, HAVING, ORDER BY, LIMIT, OFFSET, UNION …).
pub fn driving(sql: &str) -> Option<Driving> {
    let toks = tokens(sql);
    let blockers = [
        "group",
        "having",
        "order",
        "limit",
        "offset",
        "fetch",
        "union",
        "intersect",
        "except",
        "window",
        "for",
    ];
    if toks.iter().any(|t| blockers.iter().any(|k| is_kw(t, k))) {
        return None;
    }
    let from = toks.iter().position(|t| is_kw(t, "from"))?;
    // name [. name]
    let mut i = from + 1;
    let first = toks.get(i)?;
    let mut end = first.end;
    i += 1;
    while toks.get(i).is_some_and(|t| t.text == ".") {
        end = toks.get(i + 1)?.end;
        i += 2;
    }
    let table = sql[first.start..end].to_string();
    if toks.get(i).is_some_and(|t| is_kw(t, "as")) {
        i += 1;
    }
    let alias_tok = toks.get(i)?;
    let reserved = [
        "join", "left", "right", "inner", "full", "cross", "where", "natural", "on",
    ];
    if alias_tok.depth != 0 || reserved.iter().any(|k| is_kw(alias_tok, k)) || alias_tok.text == ","
    {
        return None;
    }
    // A comma join at the top level would make the range apply to a cross product's side:
    // still correct, but the shape is not the designer's; read it whole.
    if toks[i + 1..].iter().any(|t| t.depth == 0 && t.text == ",") {
        return None;
    }
    let where_end = toks[i + 1..]
        .iter()
        .find(|t| is_kw(t, "where"))
        .map(|t| t.end);
    Some(Driving {
        table,
        alias: alias_tok.text.clone(),
        alias_end: alias_tok.end,
        where_end,
    })
}

/// `sql` with `predicate` AND-ed to its top-level WHERE (the existing condition parenthesized).
pub fn with_predicate(sql: &str, d: &Driving, predicate: &str) -> String {
    let sql = sql.trim_end().trim_end_matches(';');
    match d.where_end {
        Some(w) => format!("{} ({}) AND {predicate}", &sql[..w], sql[w..].trim()),
        None => format!("{sql} WHERE {predicate}"),
    }
}

/// `sql` with `clause` (e.g. `TABLESAMPLE SYSTEM (1)`) right after the driving table's alias.
pub fn with_sample(sql: &str, d: &Driving, clause: &str) -> String {
    format!("{} {clause}{}", &sql[..d.alias_end], &sql[d.alias_end..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_driving_table_of_designer_shapes() {
        let sql = "SELECT t0.id, e0.addresses FROM customers t0 LEFT JOIN LATERAL (SELECT json_object_agg(c.label, c.city) AS addresses FROM customer_addresses c WHERE c.customer_id = t0.id) e0 ON true";
        let d = driving(sql).unwrap();
        assert_eq!((d.table.as_str(), d.alias.as_str()), ("customers", "t0"));
        assert_eq!(d.where_end, None);
        assert!(with_predicate(sql, &d, "t0.ctid < '(1,0)'")
            .ends_with("ON true WHERE t0.ctid < '(1,0)'"));

        let sql = "SELECT t0.\"from\" FROM \"App\".\"Trips\" AS t0 JOIN x t1 ON t1.a = t0.a WHERE t1.b IS NULL OR t0.c = 'where'";
        let d = driving(sql).unwrap();
        assert_eq!(d.table, "\"App\".\"Trips\"");
        assert_eq!(
            with_predicate(sql, &d, "p"),
            "SELECT t0.\"from\" FROM \"App\".\"Trips\" AS t0 JOIN x t1 ON t1.a = t0.a WHERE (t1.b IS NULL OR t0.c = 'where') AND p"
        );
        assert_eq!(
            with_sample(sql, &d, "TABLESAMPLE SYSTEM (5)"),
            "SELECT t0.\"from\" FROM \"App\".\"Trips\" AS t0 TABLESAMPLE SYSTEM (5) JOIN x t1 ON t1.a = t0.a WHERE t1.b IS NULL OR t0.c = 'where'"
        );
    }

    #[test]
    fn shapes_that_cannot_take_a_predicate_are_read_whole() {
        assert_eq!(driving("SELECT a, count(*) FROM t GROUP BY a"), None);
        assert_eq!(driving("SELECT a FROM t t0 UNION SELECT a FROM u"), None);
        assert_eq!(driving("SELECT a FROM t, u"), None);
        assert_eq!(driving("SELECT a FROM t JOIN u ON true"), None);
        // Keywords inside literals, comments and subqueries do not count.
        let sql = "SELECT 'order by' AS x, $$limit$$ AS y /* group by */ FROM t t0 -- union\n";
        assert!(driving(sql).is_some());
    }
}
