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

fn tokens(sql: &str) -> Vec<Token> {
    let b = sql.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut depth = 0usize;
    while i < b.len() {
        let c = b[i];
        match c {
            b'-' if b.get(i + 1) == Some(&b'-') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let mut nest = 0;
                while i < b.len() {
                    if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                        nest += 1;
                        i += 2;
                    } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                        nest -= 1;
                        i += 2;
                        if nest == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
            }
            b'\'' => {
                let backslash = i > 0 && matches!(b[i - 1], b'e' | b'E');
                i += 1;
                while i < b.len() {
                    if backslash && b[i] == b'\\' {
                        i += 2;
                    } else if b[i] == b'\'' {
                        if b.get(i + 1) == Some(&b'\'') {
                            i += 2;
                        } else {
                            i += 1;
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
            }
            b'$' => {
                // $tag$ … $tag$ (a bare $n placeholder has no closing `$`).
                let tag_end = sql[i + 1..]
                    .find(|ch: char| !(ch.is_alphanumeric() || ch == '_'))
                    .map(|j| i + 1 + j);
                match tag_end {
                    Some(j) if b[j] == b'$' => {
                        let tag = &sql[i..=j];
                        let body = j + 1;
                        i = sql[body..]
                            .find(tag)
                            .map_or(b.len(), |k| body + k + tag.len());
                    }
                    _ => i += 1,
                }
            }
            b'"' => {
                let start = i;
                i += 1;
                while i < b.len() {
                    if b[i] == b'"' {
                        if b.get(i + 1) == Some(&b'"') {
                            i += 2;
                            continue;
                        }
                        i += 1;
                        break;
                    }
                    i += 1;
                }
                out.push(Token {
                    text: sql[start..i].to_string(),
                    start,
                    end: i,
                    depth,
                    quoted: true,
                });
            }
            b'(' => {
                depth += 1;
                i += 1;
            }
            b')' => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            c if c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80 => {
                let start = i;
                while i < b.len()
                    && (b[i].is_ascii_alphanumeric()
                        || b[i] == b'_'
                        || b[i] == b'$'
                        || b[i] >= 0x80)
                {
                    i += 1;
                }
                out.push(Token {
                    text: sql[start..i].to_string(),
                    start,
                    end: i,
                    depth,
                    quoted: false,
                });
            }
            _ => {
                if !c.is_ascii_whitespace() {
                    out.push(Token {
                        text: (c as char).to_string(),
                        start: i,
                        end: i + 1,
                        depth,
                        quoted: false,
                    });
                }
                i += 1;
            }
        }
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
