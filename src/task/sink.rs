//! Where a streamed answer is shown as it arrives (`tasklisp run --stream`, `tasklisp
//! prompt`, the REPL): stdout or stderr, each piece flushed at once, the answer ended by
//! a newline.

use std::io::Write;

/// The stream a streamed answer is shown on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamTo {
    Stdout,
    Stderr,
    /// The REPL's terminal (stdout): only answers that arrive in pieces are shown, as
    /// the REPL prints every result once it is complete anyway.
    Repl,
}

impl StreamTo {
    /// Whether an answer that came whole (from a provider that does not stream, a
    /// procedure, the cache) is shown too.
    pub fn shows_whole_answers(self) -> bool {
        self != StreamTo::Repl
    }
}

/// Shows the pieces of one answer.
pub struct TextSink {
    to: StreamTo,
    /// The last piece shown ended a line (or nothing was shown).
    at_line_start: bool,
}

impl TextSink {
    pub fn new(to: StreamTo) -> TextSink {
        TextSink {
            to,
            at_line_start: true,
        }
    }

    pub fn write(&mut self, piece: &str) {
        if piece.is_empty() {
            return;
        }
        self.at_line_start = piece.ends_with('\n');
        // A terminal or pipe that fails to take the text must not fail the call.
        let _ = match self.to {
            StreamTo::Stdout | StreamTo::Repl => {
                write_flushed(&mut std::io::stdout().lock(), piece)
            }
            StreamTo::Stderr => write_flushed(&mut std::io::stderr().lock(), piece),
        };
    }

    /// Ends the answer shown with a newline, so what is printed next starts a line.
    pub fn end(&mut self) {
        if !self.at_line_start {
            self.write("\n");
        }
    }
}

fn write_flushed(out: &mut dyn Write, piece: &str) -> std::io::Result<()> {
    out.write_all(piece.as_bytes())?;
    out.flush()
}
