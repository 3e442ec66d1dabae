//! One way to write an error with its causes, for the places that keep an error as text (a
//! record's `error` field, a log line).
//!
//! Library errors keep their causes as typed `#[source]` chains and never repeat a cause's text
//! in their own message, so the chain is only ever printed by walking it: the binary does that
//! with the alternate format `{:#}` of its error type, and everything that stores an error as a string does it with
//! [`Chain`], which joins the links the same way (`outer: inner: innermost`). Both then print
//! every cause exactly once.

use std::error::Error;
use std::fmt;

/// Displays an error followed by each of its sources, joined by `": "`, as the binary's
/// alternate format (`{:#}`) does.
#[derive(Debug, Clone, Copy)]
pub struct Chain<'a>(pub &'a (dyn Error + 'static));

impl fmt::Display for Chain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)?;
        let mut next = self.0.source();
        while let Some(cause) = next {
            write!(f, ": {cause}")?;
            next = cause.source();
        }
        Ok(())
    }
}

/// The error and its causes as one line of text (see [`Chain`]).
#[must_use]
pub fn chain_text(error: &(dyn Error + 'static)) -> String {
    Chain(error).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("reading the plan at {path}")]
    struct Outer {
        path: &'static str,
        #[source]
        cause: std::io::Error,
    }

    #[test]
    fn every_cause_is_written_once_outermost_first() {
        let e = Outer {
            path: "run/plan.json",
            cause: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
        };
        assert_eq!(
            chain_text(&e),
            "reading the plan at run/plan.json: no such file"
        );
        let bare = std::io::Error::other("disk full");
        assert_eq!(chain_text(&bare), "disk full");
    }
}
