//! Splits a CQL script (`schema.cql`) into statements: `;` ends one unless it is inside a string,
//! a quoted name, a `$$` block or a comment.

/// The statements of `script`, trimmed, comments removed, without their `;`.
pub fn statements(script: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = script.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '-' if chars.peek() == Some(&'-') => skip_line(&mut chars),
            '/' if chars.peek() == Some(&'/') => skip_line(&mut chars),
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut prev = ' ';
                for d in chars.by_ref() {
                    if prev == '*' && d == '/' {
                        break;
                    }
                    prev = d;
                }
                cur.push(' ');
            }
            '\'' | '"' => {
                cur.push(c);
                while let Some(d) = chars.next() {
                    cur.push(d);
                    if d == c {
                        if chars.peek() == Some(&c) {
                            cur.push(c);
                            chars.next();
                        } else {
                            break;
                        }
                    }
                }
            }
            '$' if chars.peek() == Some(&'$') => {
                chars.next();
                cur.push_str("$$");
                let mut prev = ' ';
                for d in chars.by_ref() {
                    cur.push(d);
                    if prev == '$' && d == '$' {
                        break;
                    }
                    prev = d;
                }
            }
            ';' => push(&mut out, &mut cur),
            c => cur.push(c),
        }
    }
    push(&mut out, &mut cur);
    out
}

fn skip_line(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    for d in chars.by_ref() {
        if d == '\n' {
            break;
        }
    }
}

fn push(out: &mut Vec<String>, cur: &mut String) {
    let s = cur.trim();
    if !s.is_empty() {
        out.push(s.to_string());
    }
    cur.clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_on_semicolons_outside_literals_and_comments() {
        let script = "-- a; comment\nCREATE KEYSPACE k WITH r = {'a;b': 1};\n/* x; */ CREATE TABLE \"t;\" (a int, PRIMARY KEY (a)); // tail;\n";
        assert_eq!(
            statements(script),
            vec![
                "CREATE KEYSPACE k WITH r = {'a;b': 1}",
                "CREATE TABLE \"t;\" (a int, PRIMARY KEY (a))"
            ]
        );
        assert!(statements("  -- only a comment\n").is_empty());
    }
}
