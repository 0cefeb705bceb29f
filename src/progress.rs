//! The progress line on stderr (`indicatif`), shared by `pmap` (items done of all,
//! failures, items in flight, tokens and cost so far) and the batch driver (the job's
//! status, on the same line). It is drawn only when stderr is a terminal, never into a
//! pipe or a file, and cleared when the work ends.
//!
//! While a line is shown, the interpreter's writes to stdout go through [`suspend`], so
//! printed text never lands in the middle of the line.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::cell::RefCell;
use std::io::{IsTerminal, Write};
use std::time::Duration;

thread_local! {
    /// The line shown now on this thread (the interpreter's), if any.
    static SHOWN: RefCell<Option<ProgressBar>> = const { RefCell::new(None) };
}

/// How often the line is redrawn when nothing changes (for the elapsed time).
const TICK: Duration = Duration::from_millis(250);

/// A progress line, or nothing when it is not to be shown.
pub struct Progress {
    bar: Option<ProgressBar>,
    /// What the owner reports (`3 failed · 8 in flight …`).
    counts: RefCell<String>,
    /// What a batch job reports, shown after the counts.
    job: RefCell<String>,
}

impl Progress {
    /// A line labelled `label` counting to `total`, shown when `wanted` and stderr is a
    /// terminal, and no other line is shown on this thread.
    pub fn new(label: &str, total: usize, wanted: bool) -> Progress {
        let visible = wanted
            && std::io::stderr().is_terminal()
            && SHOWN.with(|shown| shown.borrow().is_none());
        let bar = visible.then(|| {
            let style =
                ProgressStyle::with_template("{prefix} [{bar:20}] {pos}/{len}{msg} {elapsed}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> ");
            let bar =
                ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr())
                    .with_style(style)
                    .with_prefix(label.to_owned());
            bar.enable_steady_tick(TICK);
            SHOWN.with(|shown| *shown.borrow_mut() = Some(bar.clone()));
            bar
        });
        Progress {
            bar,
            counts: RefCell::new(String::new()),
            job: RefCell::new(String::new()),
        }
    }

    /// `done` steps of the total are done; `counts` (called only when the line is
    /// shown) says the rest.
    pub fn set(&self, done: usize, counts: impl FnOnce() -> String) {
        let Some(bar) = &self.bar else { return };
        let counts = counts();
        if *self.counts.borrow() != counts {
            *self.counts.borrow_mut() = counts;
            self.redraw(bar);
        }
        bar.set_position(done as u64);
    }

    /// The state of a batch job the items wait for (empty once it has ended).
    pub fn set_job(&self, job: String) {
        let Some(bar) = &self.bar else { return };
        *self.job.borrow_mut() = job;
        self.redraw(bar);
    }

    fn redraw(&self, bar: &ProgressBar) {
        let (counts, job) = (self.counts.borrow(), self.job.borrow());
        let mut message = String::new();
        for part in [counts.as_str(), job.as_str()] {
            if !part.is_empty() {
                message.push_str("  ");
                message.push_str(part);
            }
        }
        bar.set_message(message);
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
            SHOWN.with(|shown| *shown.borrow_mut() = None);
        }
    }
}

/// Runs `write` with the progress line (if any) cleared, and draws it again after.
pub fn suspend<R>(write: impl FnOnce() -> R) -> R {
    let bar = SHOWN.with(|shown| shown.borrow().clone());
    match bar {
        Some(bar) => bar.suspend(write),
        None => write(),
    }
}

/// A writer whose writes clear the progress line first (stdout, under a `BufWriter`).
pub struct BesideProgress<W: Write>(pub W);

impl<W: Write> Write for BesideProgress<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        suspend(|| self.0.write(buf))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        suspend(|| self.0.flush())
    }
}

/// Tokens as people read them: `950`, `12.3k`, `4.5M`.
pub fn tokens(n: u64) -> String {
    match n {
        0..=999 => n.to_string(),
        1_000..=999_999 => format!("{:.1}k", n as f64 / 1e3),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_not_wanted_is_never_drawn_and_costs_nothing() {
        let progress = Progress::new("pmap", 10, false);
        assert!(progress.bar.is_none());
        progress.set(3, || unreachable!("counts are only built for a shown line"));
        progress.set_job("openai batch".into());
        assert_eq!(suspend(|| 7), 7);
    }

    #[test]
    fn tokens_read_as_people_count() {
        assert_eq!(tokens(950), "950");
        assert_eq!(tokens(12_345), "12.3k");
        assert_eq!(tokens(4_500_000), "4.5M");
    }
}
