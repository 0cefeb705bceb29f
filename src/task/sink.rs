//! Where a streamed answer is shown as it arrives (`tasklisp run --stream`, `tasklisp
//! prompt`): stdout or stderr, each piece flushed at once, the answer ended by a newline.

use std::io::Write;

/// The stream a streamed answer is shown on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamTo {
    Stdout,
    Stderr,
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
            StreamTo::Stdout => write_flushed(&mut std::io::stdout().lock(), piece),
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
