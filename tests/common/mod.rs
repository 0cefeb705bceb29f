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

/// The lines a block of a guide promises to print, in order, when every top-level
/// printing form in it (`(println …)`, `(prn …)`, `(print …)` on one line, at any depth) carries its
/// output: after ` ; ` on its line (a note may follow ` — `), or on the `;; prints: …`
/// line under it and the `;;` lines that continue it. `None` when one does not.
#[allow(dead_code)] // not every test crate that shares this module checks guides
pub fn printed_promises(block: &str) -> Option<Vec<String>> {
    let lines: Vec<&str> = block.lines().collect();
    let mut promised = Vec::new();
    let mut printing = 0;
    let mut every_one = true;
    for (at, line) in lines.iter().enumerate() {
        if !["(println ", "(prn ", "(print "]
            .iter()
            .any(|form| line.trim_start().starts_with(form))
        {
            continue;
        }
        printing += 1;
        if let Some((_, comment)) = line.split_once(" ; ") {
            promised.extend(comment.split(" — ").next().map(|s| s.trim().to_owned()));
            continue;
        }
        let Some(first) = lines
            .get(at + 1)
            .and_then(|l| l.strip_prefix(";; prints: "))
        else {
            every_one = false;
            continue;
        };
        promised.extend(first.split(" — ").next().map(str::to_owned));
        let continued = lines.iter().skip(at + 2);
        for more in continued.map_while(|l| l.strip_prefix(";;  ")) {
            promised.push(more.trim().to_owned());
        }
    }
    (printing > 0 && every_one).then_some(promised)
}

/// Whether a printed line is what the guide promised; `…` in the promise stands for
/// any text.
#[allow(dead_code)]
pub fn as_promised(printed: &str, promise: &str) -> bool {
    let mut parts = promise.split('…');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = printed.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}
