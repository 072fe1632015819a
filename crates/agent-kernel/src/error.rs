//! The one error type of this crate ([`KernelError`]): why an `eval` call could not run its
//! cell, each message saying what to do next.

use std::path::PathBuf;

/// Why an `eval` call could not run its cell. Every variant becomes an error result; none of them
/// is a panic. Messages say what to do next.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KernelError {
    /// `description` was not 5–10 words.
    #[error(
        "`description` must be 5–10 words (it labels this cell in the transcript), but it has {count}: {given:?}; give a short phrase such as \"load the sales csv and plot revenue\""
    )]
    Description {
        /// How many words it has.
        count: usize,
        /// The description, as given.
        given: String,
    },
    /// No interpreter for the language could be found.
    #[error("no {language} interpreter found: looked for {looked}; {fix}")]
    NoRuntime {
        /// The cell's language.
        language: &'static str,
        /// Where it looked.
        looked: String,
        /// How to make one available.
        fix: &'static str,
    },
    /// The interpreter could not be spawned.
    #[error(
        "could not start the {language} kernel with `{program}`: {source}; check that the program exists (and the sandbox launcher `{launcher}` works) or set it in the kernel configuration"
    )]
    Spawn {
        /// The cell's language.
        language: &'static str,
        /// The interpreter.
        program: PathBuf,
        /// The sandbox launcher it was run under, or `(none: on the host)`.
        launcher: String,
        /// The failure.
        source: std::io::Error,
    },
    /// The interpreter started but its driver never said it was ready.
    #[error("the {language} kernel did not start: {detail}; stderr tail:\n{tail}")]
    Startup {
        /// The cell's language.
        language: &'static str,
        /// What went wrong.
        detail: String,
        /// The tail of the kernel's stderr.
        tail: String,
    },
}
