"""Unit tests of backfill.py's pure parts (no Spark, no database): the CQL type parser, the JSON
rules, dates and times, page ranges, URLs. The values are those of the Rust engine's own tests
(crates/backfill/src/json.rs, time.rs, numeric.rs, pg.rs), so both engines are held to the same
answers. Run by crates/spark/tests/job_python.rs (`python3 -m unittest`)."""

import unittest

import backfill as b


class CqlTypes(unittest.TestCase):
    def test_natives_collections_and_udts(self):
        udts = [{"name": "address_entry", "fields": [["label", "text"], ["lines", "list<text>"]]}]
        self.assertEqual(b.parse_cql_type("decimal", udts), ("native", "decimal"))
        self.assertEqual(
            b.parse_cql_type("list<frozen<list<int>>>", udts),
            ("list", ("list", ("native", "int"))),
        )
        t = b.parse_cql_type('map<text, frozen<"address_entry">>', udts)
        self.assertEqual(t[0], "map")
        self.assertEqual(t[2], ("udt", "address_entry", [
            ("label", ("native", "text")), ("lines", ("list", ("native", "text")))]))

    def test_unknown_names_and_bad_shapes_are_refused(self):
        for bad in ["geometry", "map<text>", "list<int", "int int"]:
            with self.assertRaises(b.Unusable, msg=bad):
                b.parse_cql_type(bad, [])


class Json(unittest.TestCase):
    UDTS = [{"name": "address_entry", "fields": [
        ["label", "text"], ["street", "text"], ["since", "timestamp"], ["fee", "decimal"]]}]

    def test_json_object_agg_becomes_a_map_of_udts_with_exact_decimals(self):
        t = b.parse_cql_type("map<text, frozen<address_entry>>", self.UDTS)
        text = ('{"home" : {"label" : "home", "street" : "1 Rue", '
                '"since" : "1969-07-20T20:17:40+00:00", "fee" : 12345678901234567890.123456789}}')
        value, err = b.from_json(text, t)
        self.assertIsNone(err)
        self.assertEqual(value, {"home": ("home", "1 Rue", -14_182_940_000,
                                          "12345678901234567890.123456789")})

    def test_missing_fields_are_null_and_unknown_fields_or_null_elements_are_rejects(self):
        t = b.parse_cql_type("list<frozen<address_entry>>", self.UDTS)
        self.assertEqual(b.from_json('[{"label": "a"}]', t), ([("a", None, None, None)], None))
        self.assertEqual(
            b.from_json('[{"nope": 1}]', t),
            (None, "JSON field `nope` is not a field of type address_entry"),
        )
        self.assertEqual(
            b.from_json("[null]", t),
            (None, "null element in a JSON array (CQL collections cannot hold null)"),
        )
        self.assertEqual(b.from_json(None, t), (None, None))
        self.assertEqual(b.from_json("null", t), (None, "JSON null where a value is needed"))

    def test_map_keys_parse_to_their_type(self):
        t = b.parse_cql_type("map<int, text>", [])
        self.assertEqual(b.from_json('{"7": "x"}', t), ({7: "x"}, None))
        self.assertEqual(b.from_json('{"x": "x"}', t)[1], 'JSON "x" is not an integer')

    def test_numbers_keep_their_text_and_are_range_checked(self):
        dec = ("list", ("native", "decimal"))
        self.assertEqual(b.from_json("[1.10, -0.001, 1.5e3]", dec), (["1.10", "-0.001", "1.5e3"], None))
        self.assertEqual(
            b.from_json('["NaN"]', dec), (None, "numeric NaN has no CQL decimal equivalent")
        )
        small = ("list", ("native", "smallint"))
        self.assertEqual(b.from_json("[70000]", small), (None, "70000 does not fit CQL smallint"))
        self.assertEqual(b.from_json("[1.5]", small), (None, "JSON 1.5 is not an integer"))

    def test_other_natives(self):
        def one(cql, text):
            return b.from_json("[%s]" % text, ("list", ("native", cql)))

        self.assertEqual(one("blob", '"\\\\x00ff"'), ([bytearray(b"\x00\xff")], None))
        self.assertEqual(one("date", '"1900-03-01"'), (["1900-03-01"], None))
        self.assertEqual(one("time", '"23:59:59.000001"'), ([86_399_000_001_000], None))
        self.assertEqual(one("inet", '"10.0.0.1"'), (["10.0.0.1"], None))
        self.assertIn("without netmask", one("inet", '"10.0.0.0/8"')[1])
        self.assertIn("not supported", one("duration", '"1 day"')[1])
        self.assertIn("version-1", one("timeuuid", '"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"')[1])


class Time(unittest.TestCase):
    def test_civil_round_trips_around_the_epochs(self):
        self.assertEqual(b.days_from_civil(1970, 1, 1), 0)
        self.assertEqual(b.days_from_civil(2000, 1, 1), 10_957)
        self.assertEqual(b.days_from_civil(1900, 3, 1), -25_508)
        for z in [-800_000, -1, 0, 1, 59, 60, 11_016, 2_932_896]:
            self.assertEqual(b.days_from_civil(*b.civil_from_days(z)), z)
        self.assertEqual(b.iso_date(-25_508), "1900-03-01")
        self.assertEqual(b.iso_date(b.days_from_civil(10000, 1, 1)), "+10000-01-01")
        self.assertEqual(b.iso_date(b.days_from_civil(-43, 3, 15)), "-0043-03-15")

    def test_iso_timestamps_parse_with_offsets(self):
        self.assertEqual(b.parse_timestamp_ms("1970-01-01T00:00:00"), 0)
        self.assertEqual(b.parse_timestamp_ms("1970-01-01T01:00:00+01:00"), 0)
        self.assertEqual(b.parse_timestamp_ms("1969-12-31T23:59:59.9995Z"), -1)
        self.assertEqual(b.parse_timestamp_ms("2024-02-29T12:30:00.123456-05:30"), 1_709_229_600_123)
        self.assertIsNone(b.parse_timestamp_ms("2024-02-30T00:00:00"))

    def test_rejects_show_keys_like_the_rust_engine(self):
        self.assertEqual(b.show_value(-1, ("native", "timestamp")), "1969-12-31 23:59:59.999Z")
        self.assertEqual(b.show_value("dev-1", ("native", "text")), '"dev-1"')
        self.assertEqual(b.show_value(27, ("native", "bigint")), "27")
        self.assertEqual(b.show_value(None, ("native", "text")), "NULL")


class Ranges(unittest.TestCase):
    def test_pages_split_evenly_and_the_last_range_is_open(self):
        self.assertEqual(b.split_pages(0, 0.0, 1000), [(0, None)])
        self.assertEqual(b.split_pages(100, 10_000.0, 2_500), [(0, 25), (25, 50), (50, 75), (75, None)])
        self.assertEqual(len(b.split_pages(3, 1e6, 10)), 3)


class Buckets(unittest.TestCase):
    # The same texts as `bucket_sql_is_spelt_as_the_spark_job_spells_it` in model/src/bucket.rs.
    def test_buckets_are_spelt_as_the_rust_engine_spells_them(self):
        self.assertEqual(b.bucket_sql('s."at"', True, "day", None), '(s."at" AT TIME ZONE \'UTC\')::date')
        self.assertEqual(b.bucket_sql('s."at"', False, "hour", "UTC"), "date_trunc('hour', s.\"at\")")
        self.assertEqual(
            b.bucket_sql('s."at"', True, "day", "Europe/Paris"),
            '(s."at" AT TIME ZONE \'Europe/Paris\')::date',
        )
        self.assertEqual(
            b.bucket_sql('s."at"', False, "month", "America/New_York"),
            "(date_trunc('month', ((s.\"at\"::timestamp AT TIME ZONE 'UTC') AT TIME ZONE"
            " 'America/New_York')) AT TIME ZONE 'America/New_York')",
        )


class Urls(unittest.TestCase):
    def test_passwords_never_show_and_jdbc_gets_the_rest(self):
        s = b.Source("postgres://app:s3cr%40t@db:5432/prod?sslmode=disable&options=-c%20search_path%3Dx")
        self.assertEqual(s.password, "s3cr@t")
        self.assertEqual(s.user, "app")
        self.assertEqual(
            s.jdbc_url, "jdbc:postgresql://db:5432/prod?sslmode=disable&options=-c%20search_path%3Dx"
        )
        self.assertNotIn("s3cr", s.display)
        self.assertNotIn("s3cr", s.jdbc_url)
        self.assertEqual(b.redact("postgresql://db/prod?password=x&user=app"), "postgresql://db/prod?user=app")
        self.assertEqual(b.redact_text("at postgres://u:pw@h/db: refused"), "at postgres://u@h/db: refused")
        with self.assertRaises(b.Unusable):
            b.Source("host=db user=app")

    def test_schema_cql_splits_into_statements(self):
        text = "-- c\nCREATE KEYSPACE k WITH r = {'a': 1};\n\n-- t\nCREATE TABLE k.t (\n a int PRIMARY KEY\n);\n"
        self.assertEqual(
            b.cql_statements(text),
            ["CREATE KEYSPACE k WITH r = {'a': 1}", "CREATE TABLE k.t (\n a int PRIMARY KEY\n)"],
        )


if __name__ == "__main__":
    unittest.main()
