//! The prelude: what the language expresses best itself, embedded in the binary and
//! run when an interpreter starts.

use crate::error::Result;
use crate::eval::Interp;

const PRELUDE: &str = include_str!("../stdlib/prelude.sexp");

pub fn load(interp: &Interp) -> Result<()> {
    interp.run_source("<prelude>", PRELUDE).map(|_| ())
}
