//! Standard output for the REPL's interpreter that remembers whether the last thing
//! written ended a line, so a result after `(display "a")` starts on its own line
//! instead of reading `anil`.

use std::io::{self, BufWriter, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// False after output that did not end with a newline. A REPL owns the terminal, so
/// one flag per process is enough.
static AT_LINE_START: AtomicBool = AtomicBool::new(true);

/// True unless output written through [`output`] left the cursor mid-line.
pub fn at_line_start() -> bool {
    AT_LINE_START.load(Ordering::Relaxed)
}

/// Buffered stdout that tracks line ends and writes beside a progress line; give it to
/// `Interp::with_output` for the REPL.
pub fn output() -> Box<dyn Write> {
    let stdout = crate::progress::BesideProgress(io::stdout());
    Box::new(LineTracking(BufWriter::new(stdout)))
}

struct LineTracking<W>(W);

impl<W: Write> Write for LineTracking<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let written = self.0.write(buf)?;
        if let Some(last) = buf.get(..written).and_then(<[u8]>::last) {
            AT_LINE_START.store(*last == b'\n', Ordering::Relaxed);
        }
        Ok(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_whether_the_last_write_ended_a_line() {
        let mut out = LineTracking(Vec::new());
        out.write_all(b"").unwrap();
        assert!(at_line_start());
        out.write_all(b"a").unwrap();
        assert!(!at_line_start());
        out.write_all(b"b\n").unwrap();
        assert!(at_line_start());
    }
}
