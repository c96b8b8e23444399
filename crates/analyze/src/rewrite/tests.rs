//! Unit tests of the rewrite rules.
