//! Helpers shared by the integration tests.

/// The `lisp` code blocks of a Markdown file, in order.
#[allow(dead_code)] // not every test crate that includes this module uses it
pub fn lisp_blocks(markdown: &str) -> Vec<String> {
    code_blocks(markdown, "lisp")
}

/// The code blocks of a Markdown file fenced as ```` ```language ````, in order.
pub fn code_blocks(markdown: &str, language: &str) -> Vec<String> {
    let opening = format!("```{language}");
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in markdown.lines() {
        match (&mut current, line.trim()) {
            (None, fence) if fence == opening => current = Some(String::new()),
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

/// The value a `(prn …) ; value — note` line promises.
#[allow(dead_code)] // not every test crate that shares this module checks promises
pub fn promised(line: &str) -> Option<String> {
    if !line.trim_start().starts_with("(prn ") {
        return None;
    }
    let comment = line.rsplit_once("; ")?.1;
    Some(comment.split(" — ").next()?.trim().to_owned())
}
