//! The prelude: what the language expresses best itself, embedded in the binary and
//! run when an interpreter starts.

use crate::error::Result;
use crate::eval::Interp;

const PRELUDE: &str = include_str!("../stdlib/prelude.sexp");

/// The prelude's source name, in reports.
pub const PRELUDE_NAME: &str = "<prelude>";

pub fn load(interp: &Interp) -> Result<()> {
    interp.run_source(PRELUDE_NAME, PRELUDE).map(|_| ())
}
