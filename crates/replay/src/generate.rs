//! The source schema of a plan created in Postgres and filled with small generated data that
//! respects its types, keys and foreign keys.
//!
//! Tables are created from `plan.json`'s schema (columns with their declared types, NOT NULL,
//! primary and unique keys; declared foreign keys added after the load), then filled parents
//! first: a table referenced by chains of `h` tables gets `rows / 3^h` rows (at least 5), so a
//! parent has a few children each. Every value is computed inside Postgres from the row number
//! and the seed (`hashint8extended`), so the same seed gives the same rows:
//!
//! - key and unique columns take distinct values (the row number, `col-N`, an md5 uuid);
//! - foreign-key columns take the referenced columns of one parent row, drawn at random;
//! - other columns take few distinct values (text `col-K` of about `rows / 20` values, integers
//!   below 100, times at whole hours within 60 days of today, so equality finds several rows and
//!   an ORDER BY meets ties);
//! - nullable columns (foreign keys too) without a DEFAULT are NULL one time in ten;
//! - times are whole hours, so no value is finer than CQL's milliseconds;
//!
//! then rows that attack what a plan may assume about keys ([`adversarial_rows`]): copies 0.2 ms
//! apart where a key timestamp keeps microseconds, equal rows in tables without a key.

use crate::clock::{CURRENT_DATE_SQL, NOW_SQL};
use crate::Error;
use remodel_model::ident::{literal, quote};
use remodel_model::pgtype;
use remodel_model::{Column, FkOrigin, Schema, Table};
use std::collections::{BTreeMap, BTreeSet};
use tokio_postgres::Client;

/// What the generator loaded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Loaded {
    /// Rows per table, in load order.
    pub tables: Vec<(String, u64)>,
    /// Declared foreign keys that could not be added as constraints, with Postgres' reason.
    pub skipped_constraints: Vec<String>,
}

/// A declared type as a cast and a column definition can name it (`serial` → `int4`).
fn storage_type(c: &Column) -> String {
    pg_storage_type(&c.sql_type)
}

/// `declared` as a cast and a column definition can name it: a `serial` type as the integer it
/// stands for, by Postgres' internal name (`int4`); any other type as declared.
pub(crate) fn pg_storage_type(declared: &str) -> String {
    match pgtype::serial_width(declared) {
        Some(width) => format!("int{width}"),
        None => declared.to_string(),
    }
}

/// The tables of `schema` in an order where every table comes after the tables it references
/// (a cycle is cut where it is met), with the height of each: the longest chain of tables that
/// reference it.
fn load_order(schema: &Schema) -> (Vec<&Table>, BTreeMap<String, u32>) {
    let parents = |t: &Table| -> BTreeSet<String> {
        t.foreign_keys
            .iter()
            .filter_map(|fk| schema.table(&fk.ref_table))
            .map(|p| p.name.clone())
            .filter(|p| *p != t.name)
            .collect()
    };
    let mut order: Vec<&Table> = Vec::new();
    let mut placed: BTreeSet<String> = BTreeSet::new();
    while order.len() < schema.tables.len() {
        let ready = schema
            .tables
            .iter()
            .filter(|t| !placed.contains(&t.name))
            .find(|t| parents(t).iter().all(|p| placed.contains(p)))
            .or_else(|| schema.tables.iter().find(|t| !placed.contains(&t.name)));
        let Some(t) = ready else { break };
        placed.insert(t.name.clone());
        order.push(t);
    }
    let mut height: BTreeMap<String, u32> = order.iter().map(|t| (t.name.clone(), 0)).collect();
    // Children come after their parents: walking backwards, a parent is at least one above each child.
    for t in order.iter().rev() {
        let h = height.get(&t.name).copied().unwrap_or(0);
        for p in parents(t) {
            if let Some(ph) = height.get_mut(&p) {
                *ph = (*ph).max(h + 1);
            }
        }
    }
    (order, height)
}

/// Creates the tables of `schema` (dropping them first when `replace`) and fills them with about
/// `rows` rows per leaf table.
pub async fn create_and_fill(
    client: &Client,
    schema: &Schema,
    rows: u64,
    seed: u64,
    replace: bool,
) -> Result<Loaded, Error> {
    let names: Vec<String> = schema.tables.iter().map(|t| t.name.clone()).collect();
    let existing: Vec<String> = client
        .query(
            "SELECT relname::text FROM pg_class WHERE relkind IN ('r', 'p') \
             AND relname = ANY($1) AND pg_table_is_visible(oid) ORDER BY 1",
            &[&names],
        )
        .await
        .map_err(Error::pg("look for the plan's tables"))?
        .iter()
        .map(|r| r.get(0))
        .collect();
    if !existing.is_empty() && !replace {
        return Err(Error::Plan(format!(
            "the source already has tables of the plan ({}): replay loads generated rows into an \
             empty schema; pass --replace to drop them first",
            existing.join(", ")
        )));
    }
    let mut ddl = String::from("SET client_min_messages = warning;\n");
    for t in &existing {
        ddl.push_str(&format!("DROP TABLE IF EXISTS {} CASCADE;\n", quote(t)));
    }
    for e in &schema.enums {
        let labels: Vec<String> = e.values.iter().map(|v| literal(v)).collect();
        let name = e.name.rsplit('.').next().unwrap_or(&e.name);
        ddl.push_str(&format!(
            "DROP TYPE IF EXISTS {n} CASCADE; CREATE TYPE {n} AS ENUM ({});\n",
            labels.join(", "),
            n = quote(name)
        ));
    }
    let types = Types {
        created: extension_types(client, schema, true).await?,
        enums: schema
            .enums
            .iter()
            .map(|e| {
                e.name
                    .rsplit('.')
                    .next()
                    .unwrap_or(&e.name)
                    .to_ascii_lowercase()
            })
            .collect(),
    };
    for t in &schema.tables {
        ddl.push_str(&create_table(t, &types.created));
    }
    client
        .batch_execute(&ddl)
        .await
        .map_err(Error::pg("create the source tables"))?;
    let (order, height) = load_order(schema);
    let mut loaded = Loaded::default();
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    for (n, t) in order.iter().enumerate() {
        let h = height.get(&t.name).copied().unwrap_or(0);
        let mut want = (rows / 3u64.saturating_pow(h)).max(5);
        // A table keyed by its parent's key (one row per parent at most) fills half the parents:
        // an INSERT replayed later needs a parent that has no row yet.
        if let Some(n) = one_row_per_parent(t, &counts) {
            want = want.min((n / 2).max(1));
        }
        let salt = seed.wrapping_mul(1_000).wrapping_add(n as u64 * 100);
        let sql = insert_sql(schema, t, &counts, (want, salt), &types);
        client
            .execute(&sql, &[])
            .await
            .map_err(Error::pg(format!("generate the rows of {}", t.name)))?;
        let got: i64 = client
            .query_one(&format!("SELECT count(*) FROM {}", quote(&t.name)), &[])
            .await
            .map_err(Error::pg(format!("count {}", t.name)))?
            .get(0);
        counts.insert(t.name.clone(), got as u64);
        loaded.tables.push((t.name.clone(), got as u64));
    }
    adversarial_rows(client, schema, seed, &mut loaded).await?;
    enforce(client, schema, &mut loaded).await?;
    // The generated tables only: a bare ANALYZE would visit every table of the database.
    let tables: Vec<String> = schema.tables.iter().map(|t| quote(&t.name)).collect();
    if !tables.is_empty() {
        client
            .batch_execute(&format!("ANALYZE {}", tables.join(", ")))
            .await
            .map_err(Error::pg("ANALYZE the generated tables"))?;
    }
    Ok(loaded)
}

/// Rows that break what a plan may wrongly assume about keys, added to the friendly rows:
/// copies of rows 0.2 ms after them where a key timestamp keeps microseconds
/// ([`equal_after_truncation_rows`]), and equal rows in tables without a key
/// ([`duplicate_rows_of_keyless`]). Counts are taken again after.
async fn adversarial_rows(
    client: &Client,
    schema: &Schema,
    seed: u64,
    loaded: &mut Loaded,
) -> Result<(), Error> {
    for (n, t) in schema.tables.iter().enumerate() {
        let salt = seed.wrapping_mul(31).wrapping_add(n as u64);
        let sqls = [
            equal_after_truncation_rows(t, salt),
            duplicate_rows_of_keyless(t, salt),
        ];
        for sql in sqls.iter().flatten() {
            client
                .execute(sql.as_str(), &[])
                .await
                .map_err(Error::pg(format!("add adversarial rows to {}", t.name)))?;
        }
        if sqls.iter().any(Option::is_some) {
            let got: i64 = client
                .query_one(&format!("SELECT count(*) FROM {}", quote(&t.name)), &[])
                .await
                .map_err(Error::pg(format!("count {}", t.name)))?
                .get(0);
            if let Some(e) = loaded.tables.iter_mut().find(|(name, _)| *name == t.name) {
                e.1 = got as u64;
            }
        }
    }
    Ok(())
}

/// The columns an INSERT … SELECT copies (generated ones are computed again).
fn copied_columns(t: &Table) -> Vec<&Column> {
    t.columns.iter().filter(|c| c.generated.is_none()).collect()
}

/// One row in `1/k` of `t`'s rows, chosen by a hash of the row and the salt (not by where
/// Postgres keeps it).
fn some_rows(t: &Table, salt: u64, k: u32) -> String {
    format!(
        "abs(hashtext(ROW({}.*)::text || '{salt}')) % {k} = 0",
        quote(&t.name)
    )
}

/// Keys whose timestamp keeps microseconds (class 2 of the silently-wrong issue): a third of the
/// rows get a copy 0.2 ms later, equal to them after truncation to CQL's milliseconds, so a key
/// that holds milliseconds merges them. Other keys of the copy that collide skip it.
fn equal_after_truncation_rows(t: &Table, salt: u64) -> Option<String> {
    let key: &[String] = if t.primary_key.is_empty() {
        &t.unique_keys.first()?.columns
    } else {
        &t.primary_key
    };
    let shifted: Vec<&str> = key
        .iter()
        .filter_map(|k| t.column(k))
        .filter(|c| remodel_model::sub_ms_timestamp(&c.sql_type))
        .map(|c| c.name.as_str())
        .collect();
    if shifted.is_empty() {
        return None;
    }
    let cols = copied_columns(t);
    let names: Vec<String> = cols.iter().map(|c| quote(&c.name)).collect();
    let values: Vec<String> = cols
        .iter()
        .map(|c| {
            if shifted.contains(&c.name.as_str()) {
                format!("{} + interval '200 microseconds'", quote(&c.name))
            } else {
                quote(&c.name)
            }
        })
        .collect();
    Some(format!(
        "INSERT INTO {t} ({}) SELECT {} FROM {t} WHERE {} ON CONFLICT DO NOTHING",
        names.join(", "),
        values.join(", "),
        some_rows(t, salt, 3),
        t = quote(&t.name)
    ))
}

/// Tables without a primary or unique key can hold equal rows (class 6 of the silently-wrong
/// issue): a quarter of the rows get one or two equal copies, so a plan that keys such a table
/// by its columns merges them, and a DELETE of one value must remove every copy.
fn duplicate_rows_of_keyless(t: &Table, salt: u64) -> Option<String> {
    if !(t.primary_key.is_empty() && t.unique_keys.is_empty()) {
        return None;
    }
    let names: Vec<String> = copied_columns(t).iter().map(|c| quote(&c.name)).collect();
    Some(format!(
        "INSERT INTO {t} ({cols}) SELECT {cols} FROM {t} \
         CROSS JOIN LATERAL generate_series(1, 1 + abs(hashtext(ROW({t}.*)::text)) % 2) AS __copy \
         WHERE {}",
        some_rows(t, salt, 4),
        t = quote(&t.name),
        cols = names.join(", ")
    ))
}

/// The row count of the parent whose key holds `t`'s whole primary key, when one does.
fn one_row_per_parent(t: &Table, counts: &BTreeMap<String, u64>) -> Option<u64> {
    t.foreign_keys
        .iter()
        .filter(|f| {
            !t.primary_key.is_empty() && t.primary_key.iter().all(|k| f.columns.contains(k))
        })
        .filter_map(|f| counts.get(&f.ref_table).copied())
        .min()
}

/// Adds the declared foreign keys (`NOT VALID`: enforced on every later write; one Postgres
/// refuses is listed in `loaded`) and moves each identity sequence past the rows loaded.
async fn enforce(client: &Client, schema: &Schema, loaded: &mut Loaded) -> Result<(), Error> {
    for t in &schema.tables {
        for fk in &t.foreign_keys {
            if !matches!(fk.origin, FkOrigin::Declared) {
                continue;
            }
            let cols: Vec<String> = fk.columns.iter().map(|c| quote(c)).collect();
            let refs: Vec<String> = fk.ref_columns.iter().map(|c| quote(c)).collect();
            let parent = fk.ref_table.rsplit('.').next().unwrap_or(&fk.ref_table);
            let sql = format!(
                "ALTER TABLE {} ADD FOREIGN KEY ({}) REFERENCES {} ({}) NOT VALID",
                quote(&t.name),
                cols.join(", "),
                quote(parent),
                refs.join(", ")
            );
            if let Err(e) = client.batch_execute(&sql).await {
                loaded.skipped_constraints.push(format!(
                    "{}({}) -> {parent}: {}",
                    t.name,
                    fk.columns.join(", "),
                    remodel_backfill::pg::pg_message(&e)
                ));
            }
        }
        for c in t.columns.iter().filter(|c| c.identity.is_some()) {
            let sql = format!(
                "SELECT setval(pg_get_serial_sequence({t}, {c}), coalesce(max({qc}), 0) + 1, false) FROM {qt}",
                t = literal(&quote(&t.name)),
                c = literal(&c.name),
                qc = quote(&c.name),
                qt = quote(&t.name)
            );
            client.batch_execute(&sql).await.map_err(Error::pg(format!(
                "advance the sequence of {}.{}",
                t.name, c.name
            )))?;
        }
    }
    Ok(())
}

/// The declared types the source does not know that an extension of the same name provides
/// (`citext`): the extension created (where it is not yet, with `create`), each such type by the name that
/// finds it wherever the extension lives (`"public"."citext"`), that schema put on the session's
/// search path (for the type's operators). A type neither the source nor an extension knows (a
/// domain the plan does not define) is created as `text`, the form the plan carries it in.
pub async fn extension_types(
    client: &Client,
    schema: &Schema,
    create: bool,
) -> Result<BTreeMap<String, String>, Error> {
    let mut out = BTreeMap::new();
    for c in schema.tables.iter().flat_map(|t| &t.columns) {
        let ty = storage_type(c);
        let enum_type = schema.enums.iter().any(|e| {
            let bare = e.name.rsplit('.').next().unwrap_or(&e.name);
            ty.trim_end_matches("[]").eq_ignore_ascii_case(bare)
        });
        // An enum of the plan is created with the tables.
        if out.contains_key(&ty) || ty.contains('.') || enum_type {
            continue;
        }
        let (base, array) = match ty.strip_suffix("[]") {
            Some(b) => (b.to_string(), "[]"),
            None => (ty.clone(), ""),
        };
        let known: bool = client
            .query_one("SELECT to_regtype($1) IS NOT NULL", &[&ty])
            .await
            .map(|r| r.get(0))
            .unwrap_or(true);
        if known {
            continue;
        }
        let extension = client
            .query_opt(
                "SELECT name FROM pg_available_extensions WHERE name = $1",
                &[&base],
            )
            .await
            .map_err(Error::pg("look for an extension of the type's name"))?;
        if extension.is_none() {
            // A domain or a type of another database the plan does not define: replay's table
            // holds it as the plan carries it, its text form.
            if create {
                out.insert(ty.clone(), format!("text{array}"));
            }
            continue;
        }
        if create {
            client
                .batch_execute(&format!("CREATE EXTENSION IF NOT EXISTS {}", quote(&base)))
                .await
                .map_err(Error::pg(format!(
                    "create extension {base} (for type {ty})"
                )))?;
        }
        let found = client
            .query_opt(
                "SELECT n.nspname::text FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace \
                 WHERE t.typname = $1 ORDER BY n.nspname = 'pg_catalog' DESC LIMIT 1",
                &[&base],
            )
            .await
            .map_err(Error::pg(format!("find type {base}")))?;
        if let Some(row) = found {
            let nsp: String = row.get(0);
            out.insert(
                ty.clone(),
                format!("{}.{}{array}", quote(&nsp), quote(&base)),
            );
            // The type's operators (citext's case-insensitive `=`) live beside it: the session
            // finds them as the application's does, with that schema on its path.
            client
                .query_one(
                    "SELECT set_config('search_path', current_setting('search_path') || ', ' || quote_ident($1), false)",
                    &[&nsp],
                )
                .await
                .map_err(Error::pg(format!("put schema {nsp} (type {base}) on the search path")))?;
        }
    }
    Ok(out)
}

/// The types replay's tables give columns of types the plan does not know.
#[derive(Debug, Default)]
struct Types {
    /// A declared type → the type its column is created with (an extension's, qualified; a
    /// domain's text).
    created: BTreeMap<String, String>,
    /// The schema's enums (bare, lower case).
    enums: BTreeSet<String>,
}

/// `CREATE TABLE` with the declared types (`types`: those an extension provides, by the name that
/// finds them), defaults, NOT NULL, identity, primary and unique keys.
fn create_table(t: &Table, types: &BTreeMap<String, String>) -> String {
    let mut items: Vec<String> = t
        .columns
        .iter()
        .map(|c| {
            let declared = storage_type(c);
            let ty = types.get(&declared).unwrap_or(&declared);
            let mut def = format!("{} {ty}", quote(&c.name));
            if let Some(coll) = &c.collation {
                def.push_str(&format!(" COLLATE {}", quote(coll)));
            }
            if let Some(g) = &c.generated {
                def.push_str(&format!(" GENERATED ALWAYS AS ({g}) STORED"));
            } else if c.identity.is_some() {
                def.push_str(" GENERATED BY DEFAULT AS IDENTITY");
            } else if let Some(d) = default_sql(c) {
                def.push_str(&format!(" DEFAULT {d}"));
            }
            if !c.nullable {
                def.push_str(" NOT NULL");
            }
            def
        })
        .collect();
    if !t.primary_key.is_empty() {
        let pk: Vec<String> = t.primary_key.iter().map(|c| quote(c)).collect();
        items.push(format!("PRIMARY KEY ({})", pk.join(", ")));
    }
    for u in &t.unique_keys {
        let cols: Vec<String> = u.columns.iter().map(|c| quote(c)).collect();
        items.push(format!("UNIQUE ({})", cols.join(", ")));
    }
    format!("CREATE TABLE {} ({});\n", quote(&t.name), items.join(", "))
}

/// A column's `DEFAULT` as replay's table declares it: one that reads the clock reads replay's
/// ([`crate::clock`]); a sequence's is left to the identity.
fn default_sql(c: &Column) -> Option<String> {
    let d = c.default.as_deref().filter(|d| !d.contains("nextval"))?;
    // A default that does not parse is handed to Postgres as written (it says why it refuses).
    Some(crate::clock::on_replay_clock(d).unwrap_or_else(|_| d.to_string()))
}

/// The INSERT … SELECT that generates `count` rows of `t` (`counts`: rows of the tables loaded).
fn insert_sql(
    schema: &Schema,
    t: &Table,
    counts: &BTreeMap<String, u64>,
    (count, salt): (u64, u64),
    types: &Types,
) -> String {
    let unique: BTreeSet<&str> = t
        .unique_keys
        .iter()
        .filter(|u| u.columns.len() == 1)
        .flat_map(|u| u.columns.iter().map(String::as_str))
        .collect();
    let mut ctes = Vec::new();
    let mut joins = Vec::new();
    let mut from_fk: BTreeMap<String, String> = BTreeMap::new();
    for (k, fk) in t.foreign_keys.iter().enumerate() {
        let Some(parent) = schema.table(&fk.ref_table) else {
            continue;
        };
        let n = counts.get(&parent.name).copied().unwrap_or(0);
        if n == 0 || fk.columns.iter().any(|c| from_fk.contains_key(c)) {
            continue;
        }
        let refs: Vec<String> = fk.ref_columns.iter().map(|c| quote(c)).collect();
        ctes.push(format!(
            "fk{k} AS MATERIALIZED (SELECT row_number() OVER (ORDER BY {r}) AS rn, {r} FROM {p})",
            r = refs.join(", "),
            p = quote(&parent.name)
        ));
        joins.push(format!(
            "LEFT JOIN fk{k} ON fk{k}.rn = 1 + {} % {n}",
            hash(salt + 90 + k as u64)
        ));
        for (c, r) in fk.columns.iter().zip(&fk.ref_columns) {
            from_fk.insert(c.clone(), format!("fk{k}.{}", quote(r)));
        }
    }
    let mut cols = Vec::new();
    let mut exprs = Vec::new();
    let card = (count / 20).max(2);
    for (i, c) in t.columns.iter().enumerate() {
        if c.generated.is_some() {
            continue;
        }
        let s = salt + i as u64;
        let key = t.primary_key.iter().any(|k| k == &c.name) || unique.contains(c.name.as_str());
        // A parent's key for a foreign-key column (NULL too when it may be: a row linked to no
        // parent), else a value of the column's type.
        let v = match from_fk.get(&c.name) {
            Some(e) => e.clone(),
            None => value_expr(c, key, s, card, types),
        };
        // A column with a DEFAULT gets it when an INSERT leaves it out: NULL there comes only
        // from an explicit NULL, which applications rarely write.
        let has_default = c
            .default
            .as_deref()
            .is_some_and(|d| !d.trim().eq_ignore_ascii_case("null"));
        let expr = if c.nullable && !key && !has_default {
            format!("CASE WHEN {} % 10 = 0 THEN NULL ELSE {v} END", hash(s + 50))
        } else {
            v
        };
        cols.push(quote(&c.name));
        exprs.push(expr);
    }
    let with = if ctes.is_empty() {
        String::new()
    } else {
        format!("WITH {} ", ctes.join(", "))
    };
    format!(
        "{with}INSERT INTO {} ({}) SELECT {} FROM generate_series(1, {count}) AS g(i) {} ON CONFLICT DO NOTHING",
        quote(&t.name),
        cols.join(", "),
        exprs.join(", "),
        joins.join(" ")
    )
}

/// A non-negative pseudo-random int8 of the row number and a salt.
fn hash(salt: u64) -> String {
    format!(
        "(hashint8extended(g.i, {}) & 2147483647)",
        salt % (i64::MAX as u64)
    )
}

/// The value of column `c` for row `g.i`: distinct per row when `key`, else one of about `card`.
fn value_expr(c: &Column, key: bool, salt: u64, card: u64, types: &Types) -> String {
    let declared = storage_type(c);
    // The type's name picks the values; the type the column was created with casts them.
    let (base, args, array) = split_type(&declared);
    let ty = types.created.get(&declared).cloned().unwrap_or(declared);
    if array {
        let elem = Column {
            sql_type: base.clone(),
            ..c.clone()
        };
        return format!(
            "ARRAY[{}, {}]::{ty}",
            value_expr(&elem, false, salt, card, types),
            value_expr(&elem, false, salt + 7, card, types)
        );
    }
    let h = hash(salt);
    let pick = if key {
        "g.i".to_string()
    } else {
        format!("({h} % {card})")
    };
    let text = |len: Option<u64>| {
        let prefix: String = c.name.chars().take(8).collect::<String>().replace('\'', "");
        let plain = format!("'{prefix}-' || {pick}");
        match len {
            // Too short for a readable prefix: hex digits of a hash of the value.
            Some(n) if n < prefix.len() as u64 + 6 => format!("left(md5({pick}::text), {n})"),
            _ => plain,
        }
    };
    let int_pick = if key {
        "g.i".to_string()
    } else {
        format!("({h} % 100)")
    };
    match base.as_str() {
        b if pgtype::integer_width(b).is_some() => int_pick,
        "numeric" | "decimal" => numeric_value(&args, key, &h, &ty),
        "real" | "float4" | "float" | "float8" | "double precision" => {
            format!("(({h} % 10000) / 100.0)::{ty}")
        }
        "money" => format!("(({h} % 10000) / 100.0)::numeric::money"),
        "text" | "varchar" | "character varying" | "citext" | "name" => {
            let v = text(args.first().map(|n| *n as u64));
            match &c.collation {
                // Under a linguistic collation, upper- and lower-case values, which it orders
                // apart from their bytes (`adam` before `Banana`).
                Some(coll) if !remodel_model::bytewise_collation(coll) => {
                    format!("(CASE WHEN {h} % 2 = 0 THEN upper({v}) ELSE {v} END)")
                }
                _ => v,
            }
        }
        "char" | "character" | "bpchar" => text(Some(args.first().copied().unwrap_or(1) as u64)),
        "boolean" | "bool" => format!("({h} % 2 = 0)"),
        "date"
        | "timestamp"
        | "timestamp without time zone"
        | "timestamptz"
        | "timestamp with time zone" => calendar_value(&base, key, &h),
        "time" | "time without time zone" => {
            format!("(time '00:00' + ({h} % 86400) * interval '1 second')")
        }
        "interval" => format!("(({h} % 1000) * interval '1 minute')"),
        "uuid" => format!("md5('{salt}-' || g.i)::uuid"),
        "bytea" => format!("decode(md5({pick}::text), 'hex')"),
        "json" | "jsonb" => format!("json_build_object('v', {pick})::{ty}"),
        "inet" | "cidr" => format!("('10.' || ({h} % 250) || '.' || (g.i % 250) || '.1')::{ty}"),
        other
            if types
                .enums
                .contains(other.rsplit('.').next().unwrap_or(other)) =>
        {
            format!("(enum_range(NULL::{ty}))[1 + {h} % cardinality(enum_range(NULL::{ty}))]")
        }
        // Types of extensions: values of their own syntax.
        "ltree" => format!("('n.' || {pick})::{ty}"),
        // Another type (a domain over text, say): a text its input reads.
        _ => format!("(({})::text)::{ty}", text(args.first().map(|n| *n as u64))),
    }
}

/// A `numeric(p, s)` value (`g.i` for a key): at most six integer digits, `s` decimals.
fn numeric_value(args: &[u32], key: bool, h: &str, ty: &str) -> String {
    let p: u32 = args.first().copied().unwrap_or(10);
    let s: u32 = args.get(1).copied().unwrap_or(2);
    let digits = p.saturating_sub(s).min(6);
    if key {
        format!("g.i::{ty}")
    } else {
        let m = 10u64.pow((digits + s).min(9));
        format!(
            "round(({h} % {m})::numeric / {}, {s})::{ty}",
            10u64.pow(s.min(9))
        )
    }
}

/// A `date`, `timestamp` or `timestamptz` value around the run's clock (a step per row for a
/// key: days for a date, hours for a timestamp).
fn calendar_value(base: &str, key: bool, h: &str) -> String {
    if base == "date" {
        let days = if key {
            "g.i".to_string()
        } else {
            format!("({h} % 120 - 60)")
        };
        return format!("({CURRENT_DATE_SQL} + {days}::int)");
    }
    let step = if key {
        "g.i".to_string()
    } else {
        format!("({h} % 2880 - 1440)")
    };
    if matches!(base, "timestamp" | "timestamp without time zone") {
        let hours = format!("(date_trunc('day', {NOW_SQL} AT TIME ZONE 'UTC'))");
        format!("({hours} + {step} * interval '1 hour')")
    } else {
        format!("(date_trunc('day', {NOW_SQL}) + {step} * interval '1 hour')")
    }
}

/// `varchar(16)` → (`varchar`, [16], false); `int[]` → (`int`, [], true).
fn split_type(ty: &str) -> (String, Vec<u32>, bool) {
    let (ty, array) = match ty.strip_suffix("[]") {
        Some(t) => (t, true),
        None => (ty, false),
    };
    let (base, args) = match ty.split_once('(') {
        Some((b, rest)) => {
            let inner = rest.split(')').next().unwrap_or_default();
            let args = inner
                .split(',')
                .filter_map(|a| a.trim().parse().ok())
                .collect();
            let tail = rest
                .split_once(')')
                .map(|(_, t)| t.trim())
                .unwrap_or_default();
            let base = format!("{} {tail}", b.trim()).trim().to_string();
            (base, args)
        }
        None => (ty.trim().to_string(), Vec::new()),
    };
    (base, args, array)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_split_into_base_and_arguments() {
        assert_eq!(
            split_type("varchar(16)"),
            ("varchar".into(), vec![16], false)
        );
        assert_eq!(
            split_type("numeric(6,2)"),
            ("numeric".into(), vec![6, 2], false)
        );
        assert_eq!(split_type("int[]"), ("int".into(), vec![], true));
        assert_eq!(
            split_type("timestamp(3) with time zone"),
            ("timestamp with time zone".into(), vec![3], false)
        );
    }

    fn table(name: &str, refs: &[&str]) -> Table {
        Table {
            name: name.into(),
            foreign_keys: refs
                .iter()
                .map(|r| remodel_model::ForeignKey {
                    name: None,
                    columns: vec![format!("{r}_id")],
                    ref_table: r.to_string(),
                    ref_columns: vec!["id".into()],
                    origin: FkOrigin::Declared,
                    location: None,
                })
                .collect(),
            ..Table::default()
        }
    }

    /// The generated rows and the tables' defaults read replay's clock, never the server's: a
    /// replay must not depend on the day it runs.
    #[test]
    fn generated_values_and_defaults_read_replays_clock() {
        let col = |name: &str, ty: &str, default: Option<&str>| Column {
            name: name.into(),
            sql_type: ty.into(),
            nullable: true,
            default: default.map(str::to_string),
            ..Column::default()
        };
        let t = Table {
            name: "events".into(),
            columns: vec![
                col("id", "bigint", None),
                col("at", "timestamptz", Some("now()")),
                col("local", "timestamp", Some("CURRENT_TIMESTAMP")),
                col("day", "date", Some("(CURRENT_DATE + 1)")),
                col("kept", "text", Some("'x'::text")),
            ],
            primary_key: vec!["id".into()],
            ..Table::default()
        };
        let schema = Schema {
            tables: vec![t.clone()],
            ..Schema::default()
        };
        let ddl = create_table(&t, &BTreeMap::new());
        let rows = insert_sql(&schema, &t, &BTreeMap::new(), (10, 1), &Types::default());
        for sql in [&ddl, &rows] {
            let server_clock = sql
                .to_ascii_lowercase()
                .replace("current_setting('remodel.now')", "");
            for clock in ["now()", "current_timestamp", "current_date"] {
                assert!(!server_clock.contains(clock), "{clock} in {sql}");
            }
        }
        assert_eq!(
            ddl.matches("current_setting('remodel.now')").count(),
            3,
            "{ddl}"
        );
        assert!(
            ddl.to_ascii_lowercase().contains("default 'x'::text"),
            "{ddl}"
        );
    }

    #[test]
    fn parents_load_first_and_sit_higher() {
        let schema = Schema {
            tables: vec![
                table("trips", &["drivers", "cities"]),
                table("drivers", &["cities"]),
                table("cities", &[]),
            ],
            ..Schema::default()
        };
        let (order, height) = load_order(&schema);
        let names: Vec<&str> = order.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["cities", "drivers", "trips"]);
        assert_eq!(height["trips"], 0);
        assert_eq!(height["drivers"], 1);
        assert_eq!(height["cities"], 2);
    }
}
