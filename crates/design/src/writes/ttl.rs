//! `USING TTL ?` on a write statement: where the marker goes in an INSERT and an UPDATE, and
//! the bind that gives it the seconds until the row's expiry column passes (which tables expire
//! is [`crate::checklist::expiry`]'s decision).

use remodel_model::{Bind, BindValue, CqlType, NativeType, WriteAction, WriteTarget};

/// The `?` bind of `USING TTL ?`: the seconds until the row's new value of the column.
pub fn ttl_bind(of: BindValue) -> Bind {
    Bind {
        column: "ttl".into(),
        cql_type: CqlType::Native(NativeType::Int),
        value: BindValue::seconds_until(of),
    }
}

/// Adds `USING TTL ?` to an INSERT or UPDATE of an expiring table (a DELETE takes none).
pub fn with_ttl(mut target: WriteTarget, of: BindValue) -> WriteTarget {
    match target.action {
        WriteAction::Insert => {
            target.cql.push_str(" USING TTL ?");
            target.binds.push(ttl_bind(of));
        }
        WriteAction::Update => {
            let table_end = target.cql.find(" SET ").unwrap_or(target.cql.len());
            target.cql.insert_str(table_end, " USING TTL ?");
            target.binds.insert(0, ttl_bind(of));
        }
        WriteAction::Delete => {}
    }
    target
}

#[cfg(test)]
mod tests {
    use super::*;
    use remodel_model::ColumnRef;

    fn target(action: WriteAction, cql: &str) -> WriteTarget {
        WriteTarget {
            table: "t".into(),
            cql: cql.into(),
            action,
            binds: vec![],
            for_each: None,
            guard: None,
            counter: None,
        }
    }

    #[test]
    fn the_ttl_marker_goes_where_cql_takes_it() {
        let c = ColumnRef {
            table: "r".into(),
            column: "until".into(),
        };
        let of = BindValue::New { column: c };
        let ins = with_ttl(
            target(WriteAction::Insert, "INSERT INTO k.t (a) VALUES (?)"),
            of.clone(),
        );
        assert_eq!(ins.cql, "INSERT INTO k.t (a) VALUES (?) USING TTL ?");
        assert_eq!(ins.binds.last().map(|b| b.column.as_str()), Some("ttl"));
        let upd = with_ttl(
            target(WriteAction::Update, "UPDATE k.t SET a = ? WHERE b = ?"),
            of.clone(),
        );
        assert_eq!(upd.cql, "UPDATE k.t USING TTL ? SET a = ? WHERE b = ?");
        assert_eq!(upd.binds.first().map(|b| b.column.as_str()), Some("ttl"));
        let del = with_ttl(
            target(WriteAction::Delete, "DELETE FROM k.t WHERE b = ?"),
            of,
        );
        assert_eq!(del.cql, "DELETE FROM k.t WHERE b = ?");
    }
}
