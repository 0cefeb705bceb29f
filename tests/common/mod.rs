//! Helpers shared by the integration tests.

/// The `lisp` code blocks of a Markdown file, in order.
pub fn lisp_blocks(markdown: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in markdown.lines() {
        match (&mut current, line.trim()) {
            (None, "```lisp") => current = Some(String::new()),
            (Some(_), "```") => blocks.extend(current.take()),
            (Some(block), _) => {
                block.push_str(line.trim_end());
                block.push('\n');
            }
            (None, _) => {}
        }
    }
    blocks
}
