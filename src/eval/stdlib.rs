//! The prelude: what the language expresses best itself, embedded in the binary and
//! run when an interpreter starts.

use crate::error::Result;
use crate::eval::reader::{read_source_as, Syntax};
use crate::eval::Interp;
use crate::source::Origin;
use std::rc::Rc;

const PRELUDE: &str = include_str!("../../stdlib/prelude.sexp");

pub use crate::source::PRELUDE_NAME;

thread_local! {
    /// The prelude read (and its text registered) once per thread: every interpreter
    /// runs the same forms, so creating one costs only their analysis and evaluation.
    static FORMS: Result<Rc<[Syntax]>> = read_source_as(Origin::Builtin, PRELUDE_NAME, PRELUDE).map(Rc::from);
}

pub fn load(interp: &Interp) -> Result<()> {
    let forms = FORMS.with(Clone::clone)?;
    interp.run_forms(&forms).map(|_| ())
}
