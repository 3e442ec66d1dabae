//! Standard output for every command that prints.
//!
//! A reader that stops early (`tauguard report RUN | head -1`) closes the pipe; `println!`
//! would then panic (exit 101). Here a closed pipe ends printing quietly and the command goes
//! on with the rest of its work (e.g. `report --out` still writes its files) and exits 0:
//! the reader chose to stop, nothing failed. Any other write error is the machine failing.

use crate::exit::CliError;
use std::fmt::Display;
use std::io::{BufWriter, ErrorKind, StdoutLock, Write};

/// Buffered, locked standard output that treats a closed pipe as the end of printing.
pub(crate) struct Output<W: Write = StdoutLock<'static>> {
    out: BufWriter<W>,
    closed: bool,
}

impl Output {
    /// The process's standard output.
    pub(crate) fn stdout() -> Self {
        Output::new(std::io::stdout().lock())
    }
}

impl<W: Write> Output<W> {
    pub(crate) fn new(writer: W) -> Self {
        Output {
            out: BufWriter::new(writer),
            closed: false,
        }
    }

    /// Writes `text` and a newline; after the reader has gone, does nothing.
    pub(crate) fn line(&mut self, text: impl Display) -> Result<(), CliError> {
        if self.closed {
            return Ok(());
        }
        let written = writeln!(self.out, "{text}");
        self.settle(written)
    }

    /// Flushes what is buffered; call once the command has printed everything.
    pub(crate) fn finish(mut self) -> Result<(), CliError> {
        if self.closed {
            return Ok(());
        }
        let flushed = self.out.flush();
        self.settle(flushed)
    }

    fn settle(&mut self, result: std::io::Result<()>) -> Result<(), CliError> {
        match result {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(())
            }
            Err(e) => Err(CliError::Internal(
                anyhow::Error::new(e).context("cannot write to standard output"),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Accepts `room` bytes, then fails every write with `kind`.
    struct Failing {
        room: usize,
        kind: ErrorKind,
        written: Vec<u8>,
    }

    impl Write for Failing {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.room == 0 {
                return Err(std::io::Error::from(self.kind));
            }
            let n = buf.len().min(self.room);
            self.room -= n;
            self.written.extend_from_slice(&buf[..n]);
            Ok(n)
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn failing(kind: ErrorKind) -> Output<Failing> {
        Output::new(Failing {
            room: 4,
            kind,
            written: Vec::new(),
        })
    }

    #[test]
    fn a_closed_pipe_ends_printing_without_an_error() {
        let mut out = failing(ErrorKind::BrokenPipe);
        for _ in 0..10_000 {
            out.line("a line longer than the room left").unwrap();
        }
        assert!(out.closed);
        out.finish().unwrap();
    }

    #[test]
    fn other_write_errors_are_internal_errors() {
        let mut out = failing(ErrorKind::StorageFull);
        let err = (0..10_000)
            .map(|_| out.line("a line longer than the room left"))
            .find_map(Result::err)
            .expect("a full disk is reported");
        assert!(matches!(err, CliError::Internal(_)), "{err:?}");
        assert!(
            format!("{:#}", err.error()).starts_with("cannot write to standard output: "),
            "{:#}",
            err.error()
        );
    }
}
