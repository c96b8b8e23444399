//! Why a package cannot be generated at all (a pattern the generator cannot translate is not an
//! error: its function raises, and [`crate::Generated::not_generated`] says why).

/// An error of [`crate::generate`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The package name is not one the language accepts.
    #[error("package name `{0}`: {1}")]
    Package(String, String),
}
