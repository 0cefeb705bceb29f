//! Where a streamed answer is shown as it arrives (`tasklisp run --stream`, `tasklisp
//! prompt`, the REPL): stdout or stderr, each piece flushed at once, the answer ended by
//! a newline.

use std::io::Write;
use std::sync::Mutex;

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
        // A terminal or pipe that fails to take the text must not fail the call; stdout's
        // failure is kept for the command to report when it ends.
        match self.to {
            StreamTo::Stdout | StreamTo::Repl => {
                if let Err(e) = write_flushed(&mut std::io::stdout().lock(), piece) {
                    remember_stdout_failure(e);
                }
            }
            StreamTo::Stderr => {
                let _ = write_flushed(&mut std::io::stderr().lock(), piece);
            }
        }
    }

    /// Ends the answer shown with a newline, so what is printed next starts a line.
    pub fn end(&mut self) {
        if !self.at_line_start {
            self.write("\n");
        }
    }
}

/// The first failure to show a streamed answer on stdout, not yet reported.
static STDOUT_FAILURE: Mutex<Option<std::io::Error>> = Mutex::new(None);

fn remember_stdout_failure(error: std::io::Error) {
    if let Ok(mut failure) = STDOUT_FAILURE.lock() {
        failure.get_or_insert(error);
    }
}

/// The failure a streamed answer met on stdout, once: the command that streamed it did
/// not print all it was asked to.
pub fn take_stdout_failure() -> Option<std::io::Error> {
    STDOUT_FAILURE.lock().ok()?.take()
}

fn write_flushed(out: &mut dyn Write, piece: &str) -> std::io::Result<()> {
    out.write_all(piece.as_bytes())?;
    out.flush()
}
