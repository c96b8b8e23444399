//! Why a package cannot be generated at all (a pattern the generator cannot translate is not an
//! error: its function raises, and [`crate::Generated::not_generated`] says why).

/// An error of [`crate::generate`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The package name is not one the language accepts.
    #[error("package name `{0}`: {1}")]
    Package(String, String),
    /// A pattern the plan executes names no function (`design.queries[].function`): the plan
    /// was edited by hand, or not made by `remodel plan`.
    #[error("pattern {0}: the plan names no function for it (design.queries[].function or design.writes[].function); run remodel plan again")]
    Unnamed(String),
}
