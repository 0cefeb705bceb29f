//! `<attachments><attachment path="…" mime="…"/></attachments>`: a task's attachments in
//! XML, written as the `:attachments` vector `deftask` takes. A `path` (a file or a URL)
//! may hold `{{tags}}`, filled at each call as command arguments are.

use super::generate::{command_arg, list, symbol, text_string, vector};
use super::parse::Element;
use super::shape::{check_shape, required_attribute};
use crate::error::{Error, Result};
use crate::eval::reader::{Syntax, SyntaxKind};
use crate::symbol::Sym;

/// The vector of `(attachment PATH :mime TYPE)` calls the element's children write.
pub fn syntax(element: &Element) -> Result<Syntax> {
    check_shape(element, &[], &["attachment"])?;
    let mut items = Vec::with_capacity(element.children.len());
    for child in &element.children {
        check_shape(child, &["path", "mime"], &[])?;
        if child.has_text() {
            return Err(
                Error::validation("<attachment> takes no text (it is written path=\"…\")")
                    .with_span(child.text.first_line_span()),
            );
        }
        let path = required_attribute(child, "path")?;
        let mut call = vec![symbol("attachment", child.span), command_arg(&path.value)];
        if let Some(mime) = child.attribute("mime") {
            let keyword = SyntaxKind::Keyword(Sym::new("mime"));
            call.push(Syntax::new(keyword, mime.name_span));
            call.push(text_string(&mime.value));
        }
        items.push(list(call, child.span));
    }
    Ok(vector(items, element.span))
}
