//! pgss
