//! The task special forms: `deftask`, `sequential`, `step`, `cond-output`,
//! `with-provider`, `import`, `load`.

use crate::error::Result;
use crate::eval::ast::Node;
use crate::eval::Compiler;
use crate::reader::Syntax;
use crate::source::Span;

pub type SpecialForm = fn(&mut Compiler, &[Syntax], Span) -> Result<Node>;

pub fn special_form(_name: &str) -> Option<SpecialForm> {
    None
}
