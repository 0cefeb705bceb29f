//! Notices: what the library has to say that is neither a result nor an error (a task
//! redefined, a run log that cannot be written, a prices file ignored). As rhai's
//! `on_print`/`on_debug` hand printing to the embedder, notices go to a hook: an
//! interpreter's own ([`crate::eval::Interp::on_notice`]), or, for work outside any
//! interpreter (the run log's writer thread, the price table), the process's
//! ([`set_hook`]). Without one, a notice is a line on stderr, which is what the command
//! line installs.

use std::sync::{Arc, PoisonError, RwLock};

/// Where notices go.
pub type Notice = Arc<dyn Fn(&str) + Send + Sync>;

static HOOK: RwLock<Option<Notice>> = RwLock::new(None);

/// A notice as a line on stderr.
pub fn stderr() -> Notice {
    Arc::new(|text| eprintln!("{text}"))
}

/// Sets where notices from outside an interpreter go, for the whole process.
pub fn set_hook(hook: Notice) {
    *HOOK.write().unwrap_or_else(PoisonError::into_inner) = Some(hook);
}

/// The process's hook (stderr unless [`set_hook`] chose another).
pub fn hook() -> Notice {
    HOOK.read()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
        .unwrap_or_else(stderr)
}

/// Gives `text` to the process's hook.
pub fn emit(text: &str) {
    hook()(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::{run_on_large_stack, Interp, Limits};
    use std::sync::Mutex;

    #[test]
    fn an_interpreters_hook_hears_a_task_redefined() {
        let heard = Arc::new(Mutex::new(Vec::new()));
        let sink = heard.clone();
        run_on_large_stack(&Limits::default(), move |limits| {
            let interp = Interp::with_output(limits, Box::new(std::io::sink())).unwrap();
            interp.on_notice(Arc::new(move |text| {
                sink.lock().unwrap().push(text.to_owned())
            }));
            interp.tasks.set_replace_on_redefine(true);
            let twice = "(deftask t () :prompt \"a\") (deftask t () :prompt \"b\")";
            interp.run_source("<test>", twice).unwrap();
        })
        .unwrap();
        assert_eq!(*heard.lock().unwrap(), ["note: task `t` redefined"]);
    }
}
