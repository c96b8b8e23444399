//! The CQL checker itself rejects what Cassandra rejects (so a passing corpus check means something).

mod support;
use support::cqlcheck::Catalog;

const SCHEMA: &str = "CREATE KEYSPACE IF NOT EXISTS ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE TYPE IF NOT EXISTS ks.entry (x text, y int);
CREATE TABLE IF NOT EXISTS ks.u (k int, m map<text, frozen<entry>>, l list<frozen<entry>>, n int, PRIMARY KEY ((k)));
CREATE TABLE IF NOT EXISTS ks.t (a text, b date, c timestamp, d uuid, e int, s text STATIC, PRIMARY KEY ((a, b), c, d)) WITH CLUSTERING ORDER BY (c DESC, d ASC);";

#[test]
fn accepts_valid_reads_and_writes() {
    let mut cat = Catalog::default();
    cat.load_schema(SCHEMA).expect("schema");
    for ok in [
        "SELECT e FROM ks.t WHERE a = ? AND b = ? AND c >= ? AND c < ? ORDER BY c DESC LIMIT 10",
        "SELECT count(*) FROM ks.t WHERE a = ? AND b IN ?",
        "SELECT * FROM ks.t",
        "SELECT e FROM ks.t WHERE a = ? AND b = ? ORDER BY c ASC",
        "INSERT INTO ks.t (a, b, c, d, e) VALUES (?, ?, ?, ?, ?)",
        "UPDATE ks.t SET e = ? WHERE a = ? AND b = ? AND c = ? AND d = ?",
        "UPDATE ks.t SET s = ? WHERE a = ? AND b = ?",
        "DELETE FROM ks.t WHERE a = ? AND b = ? AND c = ? AND d = ?",
        "UPDATE ks.u SET m = m + ? WHERE k = ?",
        "UPDATE ks.u SET l = l + ?, n = ? WHERE k = ?",
    ] {
        cat.check(ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
    }
}

#[test]
fn rejects_what_cassandra_rejects() {
    let mut cat = Catalog::default();
    cat.load_schema(SCHEMA).expect("schema");
    for bad in [
        "SELECT e FROM ks.t WHERE a = ?",
        "SELECT e FROM ks.t WHERE a = ? AND b = ? AND d = ?",
        "SELECT e FROM ks.t WHERE a = ? AND b = ? AND e = ?",
        "SELECT e FROM ks.t WHERE a = ? AND b = ? ORDER BY d DESC",
        "SELECT e FROM ks.t WHERE a = ? AND b = ? ALLOW FILTERING",
        "SELECT nope FROM ks.t WHERE a = ? AND b = ?",
        "INSERT INTO ks.t (a, b, c, e) VALUES (?, ?, ?, ?)",
        "UPDATE ks.t SET e = ? WHERE a = ? AND b = ?",
        "UPDATE ks.t SET c = ? WHERE a = ? AND b = ? AND c = ? AND d = ?",
        "SELECT e FROM ks.missing WHERE a = ?",
        "UPDATE ks.u SET n = n + ? WHERE k = ?",
        "UPDATE ks.u SET m = l + ? WHERE k = ?",
    ] {
        assert!(cat.check(bad).is_err(), "accepted: {bad}");
    }
    let mut cat = Catalog::default();
    assert!(cat.load_schema("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy'}; CREATE TABLE ks.x (a int, s int STATIC, PRIMARY KEY (a));").is_err());
    assert!(Catalog::default()
        .load_schema("CREATE TABLE ks.y (a int PRIMARY KEY);")
        .is_err());
    assert!(Catalog::default()
        .load_schema("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}; CREATE TYPE ks.e (x int); CREATE TABLE ks.z (a int, l list<e>, PRIMARY KEY ((a)));")
        .is_err());
}
