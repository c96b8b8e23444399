use super::*;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;

struct Cols;

impl Columns for Cols {
    fn column(&self, path: &[String]) -> Result<ColumnInfo, String> {
        let name = path.last().cloned().unwrap_or_default();
        let ty = match name.as_str() {
            "id" | "n" => Ok(Ty::Scalar(ScalarType::Integer)),
            "ts" => Ok(Ty::Scalar(ScalarType::Timestamptz)),
            "d" => Ok(Ty::Scalar(ScalarType::Date)),
            "title" => Ok(Ty::Scalar(ScalarType::Text)),
            "mood" => Ok(Ty::Enum),
            _ => Err("type citext".to_string()),
        };
        Ok(ColumnInfo {
            column: ColumnRef::new("t", name),
            row: RowRef::This,
            ty,
        })
    }
}

fn conv(sql: &str) -> Result<String, String> {
    let e = Parser::new(&PostgreSqlDialect {})
        .try_with_sql(sql)
        .and_then(|mut p| p.parse_expr())
        .map_err(|e| e.to_string())?;
    Converter::new(Some("UTC"))
        .value(&e, &Cols)
        .map(|x| x.to_string())
}

#[test]
fn converts_and_refuses() {
    assert_eq!(
        conv("ts > now() - interval '14 days'").unwrap(),
        "t.ts > (now() - INTERVAL '0 mons 14 days 0 microseconds')"
    );
    assert!(conv("TO_DAYS(NOW()) - TO_DAYS(ts) <= $2")
        .unwrap_err()
        .contains("MySQL"));
    assert!(conv("mood < 'happy'").is_err());
    assert!(conv("mood = 'happy'").is_ok());
}

#[test]
fn time_zones_are_iana_names() {
    assert_eq!(time_zone("europe/berlin"), Ok("Europe/Berlin"));
    assert_eq!(time_zone("UTC"), Ok("UTC"));
    assert_eq!(time_zone("Etc/UTC"), Ok("Etc/UTC"));
    assert!(time_zone("UTC+3").is_err());
    assert!(time_zone("Mars/Olympus").is_err());
    assert!(time_zone("localtime").is_err());
    assert!(is_utc("Etc/UTC") && !is_utc("Europe/London"));
}

/// `= ANY($1::bigint[])` (how asyncpg and node-postgres send an IN list) is the list of one
/// array parameter, as `IN ($1)` is; an element type that does not compare is refused.
#[test]
fn any_of_a_cast_array_parameter_is_a_list() {
    assert_eq!(conv("id = ANY($1::bigint[])").unwrap(), "t.id = ANY($1)");
    assert_eq!(
        conv("id = ANY(CAST($1 AS int[]))").unwrap(),
        "t.id = ANY($1)"
    );
    assert_eq!(conv("id <> ALL($1::int8[])").unwrap(), "t.id <> ALL($1)");
    assert!(conv("ts = ANY($1::bigint[])").is_err());
}

/// A keyset page's row comparison, `(ts, id) < ($1, $2)`, is a comparison of row values; rows of
/// different lengths are refused.
#[test]
fn row_values_compare() {
    assert_eq!(
        conv("(ts, id) < ($1, $2)").unwrap(),
        "(t.ts, t.id) < ($1, $2)"
    );
    assert!(conv("(ts, id) < ($1, $2, $3)").is_err());
    assert!(conv("(ts, id) < ($1, 'x')").is_err());
}
