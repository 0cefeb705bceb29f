//! Text shown on a terminal: what came from outside (a model, a tool, a server, a
//! program) with its control characters made visible.

/// `text` as it may be shown on a terminal: control characters (ESC, CR, BEL, the C1
/// range) and the marks that reorder text (bidirectional overrides and isolates) become
/// visible escapes like `\u{1b}`, so text from a model, a tool or a server cannot move
/// the cursor, rewrite what was shown, reach the clipboard (OSC 52) or hide a part of
/// itself. Line breaks and tabs stay when `lines` is true, else they are escaped too.
pub fn terminal_safe(text: &str, lines: bool) -> String {
    let mut shown = String::with_capacity(text.len());
    for c in text.chars() {
        let kept = (lines && matches!(c, '\n' | '\t')) || !(c.is_control() || reorders(c));
        if kept {
            shown.push(c);
        } else {
            shown.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        }
    }
    shown
}

/// The invisible marks that change the order text is shown in (U+061C, U+200E–U+200F,
/// U+202A–U+202E, U+2066–U+2069).
fn reorders(c: char) -> bool {
    matches!(c, '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::terminal_safe;

    #[test]
    fn text_for_a_terminal_shows_its_control_characters() {
        let osc52 = "ok\u{1b}]52;c;ZWNobyBoaQ==\u{7}\r\u{9b}2J\u{202e}txt.exe";
        assert_eq!(
            terminal_safe(osc52, true),
            "ok\\u{1b}]52;c;ZWNobyBoaQ==\\u{7}\\u{d}\\u{9b}2J\\u{202e}txt.exe"
        );
        assert_eq!(terminal_safe("a\n\tb é", true), "a\n\tb é");
        assert_eq!(terminal_safe("a\nb", false), "a\\u{a}b");
    }
}
