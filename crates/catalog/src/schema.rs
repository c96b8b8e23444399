//! The schema from `pg_catalog`, into the model the DDL front end fills.
//!
//! The reader mirrors the DDL front end's choices so that the same database read both ways gives
//! the same [`Schema`]:
//! - tables in creation order (`pg_class.oid`), columns by `attnum`; types as `format_type`
//!   prints them (`timestamp with time zone`, `character varying(20)`), user types unqualified
//!   when their schema is read (the transaction's search path is the schemas read); a column of
//!   a domain as the domain's base type, the domain's name beside it (as the DDL front end);
//! - names bare when one schema is read, `schema.name` when several are;
//! - `serial` columns (a `nextval` default) and identity columns get their [`Identity`];
//! - indexes are those made by `CREATE INDEX` (not the ones behind a primary key, unique or
//!   exclusion constraint); a unique index on plain columns without a predicate is also a
//!   unique key, as in the DDL front end;
//! - partitions are folded into their root table (named in `partitions`); their own indexes are
//!   dropped, and a foreign key declared on partitions but not on the root is kept once on the
//!   root as inferred, with the partitions as evidence;
//! - sequences are those not owned by an identity column.
//!
//! What the catalog cannot tell: source locations (none), constraint names the DDL did not
//! write (Postgres generates them: `trips_driver_id_fkey`), the spelling of types and default
//! expressions (Postgres keeps the parsed form, prints it canonically).

use crate::{Error, Source};
use remodel_model::{
    Column, Diagnostic, DomainType, EnumType, FkOrigin, ForeignKey, FunctionDef, Identity, Index,
    IndexKey, PartitionSpec, Schema, Sequence, Severity, SkipCount, Table, UniqueKey,
};
use std::collections::HashMap;

/// What [`read`] returns: the schema and what is worth saying about it.
#[derive(Debug, Clone, Default)]
pub struct SchemaRead {
    /// The schema.
    pub schema: Schema,
    /// Notes and warnings (references to tables outside the schemas read, …).
    pub diagnostics: Vec<Diagnostic>,
}

/// One relation of `pg_class` (table, partitioned table).
#[derive(Debug, Clone)]
struct Rel {
    oid: u32,
    nsp: String,
    name: String,
    is_partition: bool,
    comment: Option<String>,
    partkey: Option<String>,
}

/// Reads the schema of the source's schemas.
pub async fn read(src: &Source) -> Result<SchemaRead, Error> {
    let rels = relations(src).await?;
    let oids: Vec<u32> = rels.iter().map(|r| r.oid).collect();
    let mut tables: Vec<Table> = rels
        .iter()
        .map(|r| Table {
            schema: src.qualify().then(|| r.nsp.clone()),
            name: r.name.clone(),
            comment: r.comment.clone(),
            partition_by: r.partkey.as_deref().map(partition_spec),
            ..Default::default()
        })
        .collect();
    let index_of: HashMap<u32, usize> = oids.iter().enumerate().map(|(i, o)| (*o, i)).collect();
    let mut attnames: HashMap<(u32, i16), String> = HashMap::new();
    for (oid, attnum, col) in columns(src, &oids).await? {
        attnames.insert((oid, attnum), col.name.clone());
        if let Some(&i) = index_of.get(&oid) {
            tables[i].columns.push(col);
        }
    }
    let mut diagnostics = Vec::new();
    let mut partition_fks: Vec<(u32, ForeignKey)> = Vec::new();
    for c in constraints(src, &oids).await? {
        let Some(&i) = index_of.get(&c.table) else {
            continue;
        };
        let cols = names(&attnames, c.table, &c.keys);
        match c.kind.as_str() {
            "p" => tables[i].primary_key = cols,
            "u" => tables[i].unique_keys.push(UniqueKey {
                name: Some(c.name),
                columns: cols,
            }),
            _ => {
                let of = tables[i].qualified_name();
                let Some(fk) = foreign_key(src, c, cols, &attnames, &of, &mut diagnostics) else {
                    continue;
                };
                if rels[i].is_partition {
                    partition_fks.push((fk.0, fk.1));
                } else {
                    tables[i].foreign_keys.push(fk.1);
                }
            }
        }
    }
    for ix in indexes(src, &oids).await? {
        let Some(&i) = index_of.get(&ix.table) else {
            continue;
        };
        add_index(&mut tables[i], ix, &attnames);
    }
    let links = inherits(src, &oids).await?;
    for (child, parent, _) in links
        .iter()
        .filter(|(c, ..)| index_of.get(c).is_some_and(|&i| !rels[i].is_partition))
    {
        if let (Some(&ci), Some(pi)) = (index_of.get(child), index_of.get(parent)) {
            let parent_name = src.name_of(&rels[*pi].nsp, &rels[*pi].name);
            tables[ci].inherits.push(parent_name);
        }
    }
    let mut schema = Schema {
        tables,
        enums: enums(src).await?,
        sequences: sequences(src).await?,
        domains: domains(src).await?,
        functions: functions(src).await?,
        collation: Some(database_collation(src).await?),
        ..Schema::default()
    };
    fold_partitions(src, &rels, &links, partition_fks, &mut schema);
    schema.skipped = other_objects(src)
        .await?
        .into_iter()
        .map(|(kind, count)| SkipCount {
            kind,
            count,
            first: Vec::new(),
        })
        .collect();
    Ok(SchemaRead {
        schema,
        diagnostics,
    })
}

/// Column names of `keys` (attnums) of relation `oid`.
fn names(attnames: &HashMap<(u32, i16), String>, oid: u32, keys: &[i16]) -> Vec<String> {
    keys.iter()
        .filter_map(|k| attnames.get(&(oid, *k)).cloned())
        .collect()
}

async fn relations(src: &Source) -> Result<Vec<Rel>, Error> {
    let rows = src
        .query(
            "SELECT c.oid, n.nspname::text, c.relname::text, c.relispartition, \
                    obj_description(c.oid, 'pg_class'), \
                    CASE WHEN c.relkind = 'p' THEN pg_get_partkeydef(c.oid) END \
             FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE n.nspname = ANY($1) AND c.relkind IN ('r', 'p') \
             ORDER BY c.oid",
            &[&src.schemas()],
            "list the tables",
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| Rel {
            oid: r.get(0),
            nsp: r.get(1),
            name: r.get(2),
            is_partition: r.get(3),
            comment: r.get(4),
            partkey: r.get(5),
        })
        .collect())
}

/// The database's default collation: its ICU locale when ICU provides it, else its
/// `LC_COLLATE`.
async fn database_collation(src: &Source) -> Result<String, Error> {
    // `datlocprovider` and `daticulocale` exist from Postgres 15 on; an older server is libc.
    let rows = src
        .query(
            "SELECT datcollate::text, \
                    (to_jsonb(d) ->> 'datlocprovider'), (to_jsonb(d) ->> 'daticulocale') \
             FROM pg_database d WHERE datname = current_database()",
            &[],
            "read the database's collation",
        )
        .await?;
    let Some(r) = rows.first() else {
        return Ok("C".into());
    };
    let (collate, provider, icu): (String, Option<String>, Option<String>) =
        (r.get(0), r.get(1), r.get(2));
    Ok(match (provider.as_deref(), icu) {
        (Some("i"), Some(locale)) => format!("{locale} (ICU)"),
        _ => collate,
    })
}

async fn columns(src: &Source, oids: &[u32]) -> Result<Vec<(u32, i16, Column)>, Error> {
    let rows = src
        .query(
            "SELECT a.attrelid, a.attnum, a.attname::text, \
                    CASE WHEN t.typtype = 'd' AND b.typtype = 'd' THEN format_type(b.typbasetype, b.typtypmod) \
                         WHEN t.typtype = 'd' THEN format_type(t.typbasetype, t.typtypmod) \
                         ELSE format_type(a.atttypid, a.atttypmod) END, \
                    a.attnotnull, pg_get_expr(d.adbin, d.adrelid, true), a.attidentity::text, \
                    a.attgenerated::text, col_description(a.attrelid, a.attnum), \
                    CASE WHEN a.attcollation <> 0 AND a.attcollation <> t.typcollation \
                         THEN co.collname::text END, \
                    CASE WHEN t.typtype = 'd' THEN format_type(a.atttypid, NULL) END \
             FROM pg_attribute a \
             JOIN pg_type t ON t.oid = a.atttypid \
             LEFT JOIN pg_type b ON b.oid = t.typbasetype \
             LEFT JOIN pg_collation co ON co.oid = a.attcollation \
             LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum \
             WHERE a.attrelid = ANY($1) AND a.attnum > 0 AND NOT a.attisdropped \
             ORDER BY a.attrelid, a.attnum",
            &[&oids],
            "read the columns",
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| {
            let expr: Option<String> = r.get(5);
            let identity: String = r.get(6);
            let generated: String = r.get(7);
            let (default, generated) = if generated.is_empty() {
                (expr, None)
            } else {
                (None, expr)
            };
            let identity = match identity.as_str() {
                "a" => Some(Identity::Always),
                "d" => Some(Identity::ByDefault),
                _ if default
                    .as_deref()
                    .is_some_and(|d| d.starts_with("nextval(")) =>
                {
                    Some(Identity::Serial)
                }
                _ => None,
            };
            let not_null: bool = r.get(4);
            (
                r.get(0),
                r.get(1),
                Column {
                    name: r.get(2),
                    sql_type: r.get(3),
                    nullable: !not_null,
                    default,
                    identity,
                    generated,
                    // Typed by the front end (cli hands these texts to remodel_sql).
                    default_expr: None,
                    generated_expr: None,
                    comment: r.get(8),
                    location: None,
                    lookup: None,
                    collation: r.get(9),
                    domain: r.get(10),
                },
            )
        })
        .collect())
}

/// A primary key, unique or foreign key constraint.
struct Constraint {
    table: u32,
    name: String,
    kind: String,
    keys: Vec<i16>,
    ref_table: Option<u32>,
    ref_keys: Vec<i16>,
    ref_name: Option<(String, String)>,
}

/// The foreign key a constraint of table `of` states (with its table's oid), `None` when it
/// references nothing known; a reference outside the schemas read is kept by its qualified
/// name and warned about.
fn foreign_key(
    src: &Source,
    c: Constraint,
    cols: Vec<String>,
    attnames: &HashMap<(u32, i16), String>,
    of: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<(u32, ForeignKey)> {
    let ref_oid = c.ref_table?;
    let ref_cols = names(attnames, ref_oid, &c.ref_keys);
    let ref_table = match &c.ref_name {
        Some((nsp, name)) if src.schemas().contains(nsp) => src.name_of(nsp, name),
        Some((nsp, name)) => {
            diagnostics.push(Diagnostic {
                severity: Severity::Warning,
                location: None,
                message: format!(
                    "foreign key {} of `{of}` references `{nsp}.{name}`, outside the schemas read ({}): add --schemas {nsp} to model it",
                    c.name,
                    src.schemas().join(", ")
                ),
            });
            format!("{nsp}.{name}")
        }
        None => return None,
    };
    let ref_cols = if ref_cols.is_empty() {
        c.ref_keys.iter().map(|k| format!("#{k}")).collect()
    } else {
        ref_cols
    };
    let fk = ForeignKey {
        name: Some(c.name),
        columns: cols,
        ref_table,
        ref_columns: ref_cols,
        origin: FkOrigin::Declared,
        location: None,
    };
    Some((c.table, fk))
}

async fn constraints(src: &Source, oids: &[u32]) -> Result<Vec<Constraint>, Error> {
    // Constraints cloned onto partitions from their parent (`conparentid`) are the parent's.
    let rows = src
        .query(
            "SELECT con.conrelid, con.conname::text, con.contype::text, con.conkey, \
                    NULLIF(con.confrelid, 0), con.confkey, fn.nspname::text, fc.relname::text \
             FROM pg_constraint con \
             LEFT JOIN pg_class fc ON fc.oid = con.confrelid \
             LEFT JOIN pg_namespace fn ON fn.oid = fc.relnamespace \
             WHERE con.conrelid = ANY($1) AND con.contype IN ('p', 'u', 'f') \
               AND con.conparentid = 0 \
             ORDER BY con.oid",
            &[&oids],
            "read the constraints",
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| {
            let nsp: Option<String> = r.get(6);
            let rel: Option<String> = r.get(7);
            Constraint {
                table: r.get(0),
                name: r.get(1),
                kind: r.get(2),
                keys: r.get::<_, Option<Vec<i16>>>(3).unwrap_or_default(),
                ref_table: r.get(4),
                ref_keys: r.get::<_, Option<Vec<i16>>>(5).unwrap_or_default(),
                ref_name: nsp.zip(rel),
            }
        })
        .collect())
}

/// An index made by `CREATE INDEX`.
struct RawIndex {
    table: u32,
    name: String,
    unique: bool,
    method: String,
    keys: Vec<i16>,
    options: Vec<i16>,
    defs: Vec<String>,
    predicate: Option<String>,
}

async fn indexes(src: &Source, oids: &[u32]) -> Result<Vec<RawIndex>, Error> {
    let rows = src
        .query(
            "SELECT i.indrelid, ic.relname::text, i.indisunique, am.amname::text, \
                    (i.indkey::int2[])[0:i.indnkeyatts - 1], (i.indoption::int2[])[0:i.indnkeyatts - 1], \
                    ARRAY(SELECT pg_get_indexdef(i.indexrelid, k, true) \
                          FROM generate_series(1, i.indnkeyatts) AS k ORDER BY k), \
                    pg_get_expr(i.indpred, i.indrelid, true) \
             FROM pg_index i \
             JOIN pg_class ic ON ic.oid = i.indexrelid \
             JOIN pg_am am ON am.oid = ic.relam \
             WHERE i.indrelid = ANY($1) \
               AND NOT EXISTS (SELECT 1 FROM pg_constraint con \
                               WHERE con.conindid = i.indexrelid AND con.conrelid = i.indrelid \
                                 AND con.contype IN ('p', 'u', 'x')) \
             ORDER BY i.indexrelid",
            &[&oids],
            "read the indexes",
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| RawIndex {
            table: r.get(0),
            name: r.get(1),
            unique: r.get(2),
            method: r.get(3),
            keys: r.get::<_, Option<Vec<i16>>>(4).unwrap_or_default(),
            options: r.get::<_, Option<Vec<i16>>>(5).unwrap_or_default(),
            defs: r.get(6),
            predicate: r.get(7),
        })
        .collect())
}

/// Adds an index to its table, and a unique key for a unique index on plain columns without a
/// predicate that the table is not already unique on (as the DDL front end does).
fn add_index(t: &mut Table, ix: RawIndex, attnames: &HashMap<(u32, i16), String>) {
    let keys: Vec<IndexKey> = ix
        .keys
        .iter()
        .enumerate()
        .map(|(k, attnum)| match attnames.get(&(ix.table, *attnum)) {
            Some(name) if *attnum > 0 => IndexKey::Column {
                name: name.clone(),
                // indoption bit 0: DESC.
                desc: ix.options.get(k).is_some_and(|o| o & 1 == 1),
            },
            _ => IndexKey::Expression {
                sql: ix.defs.get(k).cloned().unwrap_or_default(),
            },
        })
        .collect();
    let plain: Option<Vec<String>> = keys
        .iter()
        .map(|k| match k {
            IndexKey::Column { name, .. } => Some(name.clone()),
            IndexKey::Expression { .. } => None,
        })
        .collect();
    if ix.unique && ix.predicate.is_none() {
        if let Some(columns) = plain {
            if !t.is_unique_on(&columns) {
                t.unique_keys.push(UniqueKey {
                    name: Some(ix.name.clone()),
                    columns,
                });
            }
        }
    }
    t.indexes.push(Index {
        name: ix.name,
        unique: ix.unique,
        method: Some(ix.method),
        keys,
        predicate: ix.predicate,
        location: None,
    });
}

/// `(child, parent, is_partition)` of every inheritance link among the tables read, in
/// `inhseqno` order per child.
async fn inherits(src: &Source, oids: &[u32]) -> Result<Vec<(u32, u32, bool)>, Error> {
    let rows = src
        .query(
            "SELECT i.inhrelid, i.inhparent, c.relispartition FROM pg_inherits i \
             JOIN pg_class c ON c.oid = i.inhrelid \
             WHERE i.inhrelid = ANY($1) ORDER BY i.inhrelid, i.inhseqno",
            &[&oids],
            "read the inheritance",
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect())
}

/// `RANGE (a, lower(b))` → strategy `range`, keys `a`, `lower(b)`.
fn partition_spec(def: &str) -> PartitionSpec {
    let (strategy, rest) = def.split_once(' ').unwrap_or((def, ""));
    let inner = rest
        .trim()
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .unwrap_or(rest);
    PartitionSpec {
        strategy: strategy.to_lowercase(),
        keys: split_top_level(inner),
    }
}

/// Splits at commas outside parentheses and quotes.
fn split_top_level(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut cur = String::new();
    for c in s.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '(') => depth += 1,
            (None, ')') => depth -= 1,
            (None, ',') if depth == 0 => {
                out.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

/// Partitions are folded into their root table as the DDL front end does: removed, named in the
/// root's `partitions`; a foreign key declared on partitions only is kept once on the root as
/// inferred.
fn fold_partitions(
    src: &Source,
    rels: &[Rel],
    links: &[(u32, u32, bool)],
    partition_fks: Vec<(u32, ForeignKey)>,
    schema: &mut Schema,
) {
    let parent_of: HashMap<u32, u32> = links
        .iter()
        .filter(|(_, _, part)| *part)
        .map(|(c, p, _)| (*c, *p))
        .collect();
    let root_of = |mut oid: u32| {
        for _ in 0..=parent_of.len() {
            match parent_of.get(&oid) {
                Some(p) => oid = *p,
                None => break,
            }
        }
        oid
    };
    let pos = |oid: u32| rels.iter().position(|r| r.oid == oid);
    let mut lifted: Vec<(usize, ForeignKey, Vec<String>)> = Vec::new();
    for (child, fk) in partition_fks {
        let Some(root) = pos(root_of(child)) else {
            continue;
        };
        let child_name = pos(child)
            .map(|c| src.name_of(&rels[c].nsp, &rels[c].name))
            .unwrap_or_default();
        let same = |o: &ForeignKey| {
            o.columns == fk.columns
                && o.ref_table == fk.ref_table
                && o.ref_columns == fk.ref_columns
        };
        if schema.tables[root].foreign_keys.iter().any(same) {
            continue;
        }
        match lifted.iter_mut().find(|(r, l, _)| *r == root && same(l)) {
            Some((_, _, on)) => on.push(child_name),
            None => lifted.push((root, fk, vec![child_name])),
        }
    }
    let mut folded = vec![0usize; rels.len()];
    for (i, r) in rels.iter().enumerate().filter(|(_, r)| r.is_partition) {
        if let Some(root) = pos(root_of(r.oid)).filter(|&p| p != i) {
            let name = src.name_of(&r.nsp, &r.name);
            schema.tables[root].partitions.push(name);
            folded[root] += 1;
        }
    }
    for (root, mut fk, on) in lifted {
        fk.origin = FkOrigin::from_partitions(&on, folded[root]);
        schema.tables[root].foreign_keys.push(fk);
    }
    let keep: Vec<bool> = rels
        .iter()
        .map(|r| !r.is_partition || pos(root_of(r.oid)).is_none_or(|p| rels[p].oid == r.oid))
        .collect();
    let mut k = keep.iter();
    schema.tables.retain(|_| *k.next().unwrap_or(&true));
}

/// The objects of the schemas read that `sql` lists (namespace and name first, `$1` the schemas),
/// each made by `make` from its name as the DDL front end writes it and its row.
async fn named_objects<T>(
    src: &Source,
    sql: &str,
    what: &str,
    make: impl Fn(String, &tokio_postgres::Row) -> T,
) -> Result<Vec<T>, Error> {
    let rows = src.query(sql, &[&src.schemas()], what).await?;
    Ok(rows
        .iter()
        .map(|r| {
            let (nsp, name): (String, String) = (r.get(0), r.get(1));
            make(src.name_of(&nsp, &name), r)
        })
        .collect())
}

async fn enums(src: &Source) -> Result<Vec<EnumType>, Error> {
    named_objects(
        src,
        "SELECT n.nspname::text, t.typname::text, \
                array_agg(e.enumlabel::text ORDER BY e.enumsortorder) \
         FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace \
         JOIN pg_enum e ON e.enumtypid = t.oid \
         WHERE n.nspname = ANY($1) GROUP BY t.oid, 1, 2 ORDER BY t.oid",
        "read the enum types",
        |name, r| EnumType {
            name,
            values: r.get(2),
            location: None,
        },
    )
    .await
}

async fn domains(src: &Source) -> Result<Vec<DomainType>, Error> {
    named_objects(
        src,
        "SELECT n.nspname::text, t.typname::text, format_type(t.typbasetype, t.typtypmod) \
         FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace \
         WHERE t.typtype = 'd' AND n.nspname = ANY($1) ORDER BY t.oid",
        "read the domains",
        |name, r| DomainType {
            name,
            base: r.get(2),
            location: None,
        },
    )
    .await
}

/// The functions of the schemas read (not an extension's, not aggregates or procedures), as
/// the DDL front end records `CREATE FUNCTION`.
async fn functions(src: &Source) -> Result<Vec<FunctionDef>, Error> {
    named_objects(
        src,
        "SELECT n.nspname::text, p.proname::text, l.lanname::text \
         FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace \
         JOIN pg_language l ON l.oid = p.prolang \
         WHERE n.nspname = ANY($1) AND p.prokind = 'f' \
           AND NOT EXISTS (SELECT 1 FROM pg_depend d \
                           WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e') \
         ORDER BY p.oid",
        "read the functions",
        |name, r| FunctionDef {
            name,
            language: Some(r.get(2)),
            location: None,
        },
    )
    .await
}

async fn sequences(src: &Source) -> Result<Vec<Sequence>, Error> {
    // `deptype 'a'`: owned by a column (serial, OWNED BY); `'i'`: an identity column's own.
    let rows = src
        .query(
            "SELECT n.nspname::text, c.relname::text, \
                    (SELECT tn.nspname::text || '.' || tc.relname::text || '.' || a.attname::text \
                     FROM pg_depend d \
                     JOIN pg_class tc ON tc.oid = d.refobjid \
                     JOIN pg_namespace tn ON tn.oid = tc.relnamespace \
                     JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid \
                     WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid \
                       AND d.refclassid = 'pg_class'::regclass AND d.deptype = 'a' LIMIT 1) \
             FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE n.nspname = ANY($1) AND c.relkind = 'S' \
               AND NOT EXISTS (SELECT 1 FROM pg_depend d \
                               WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid \
                                 AND d.deptype = 'i') \
             ORDER BY c.oid",
            &[&src.schemas()],
            "read the sequences",
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| {
            let nsp: String = r.get(0);
            let name: String = r.get(1);
            let owner: Option<String> = r.get(2);
            Sequence {
                name: src.name_of(&nsp, &name),
                owned_by: owner.map(|o| {
                    // `schema.table.column`: the schema goes when one schema is read.
                    let (s, rest) = o.split_once('.').unwrap_or(("", &o));
                    if src.qualify() || !src.schemas().iter().any(|x| x == s) {
                        o.clone()
                    } else {
                        rest.to_string()
                    }
                }),
                location: None,
            }
        })
        .collect())
}

/// Objects read but not modelled, counted by kind (views, materialized views, foreign tables,
/// functions, triggers), as the DDL front end counts the statements it skips.
async fn other_objects(src: &Source) -> Result<Vec<(String, u64)>, Error> {
    let rows = src
        .query(
            "SELECT k, n FROM ( \
               SELECT CASE c.relkind WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view' \
                                     ELSE 'foreign table' END AS k, count(*) AS n \
               FROM pg_class c JOIN pg_namespace ns ON ns.oid = c.relnamespace \
               WHERE ns.nspname = ANY($1) AND c.relkind IN ('v', 'm', 'f') GROUP BY 1 \
               UNION ALL \
               SELECT 'function', count(*) FROM pg_proc p JOIN pg_namespace ns ON ns.oid = p.pronamespace \
               WHERE ns.nspname = ANY($1) HAVING count(*) > 0 \
               UNION ALL \
               SELECT 'trigger', count(*) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid \
               JOIN pg_namespace ns ON ns.oid = c.relnamespace \
               WHERE ns.nspname = ANY($1) AND NOT t.tgisinternal HAVING count(*) > 0 \
             ) s ORDER BY k",
            &[&src.schemas()],
            "count the other objects",
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| (r.get(0), r.get::<_, i64>(1).max(0) as u64))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_keys() {
        let p = partition_spec("RANGE (payment_date)");
        assert_eq!(p.strategy, "range");
        assert_eq!(p.keys, vec!["payment_date"]);
        let p = partition_spec("LIST (region, lower((name)::text))");
        assert_eq!(p.keys, vec!["region", "lower((name)::text)"]);
    }
}
