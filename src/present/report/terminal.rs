//! Text for a terminal: control characters made harmless, the terminal's
//! width, and lines wrapped to it.

use crate::base::text::bends_line;
use crate::tables::tabular::table;

/// Text safe to print on a terminal: control characters (escape sequences
/// included) that a document may carry in its strings are shown as `\u{..}`
/// escapes instead of being obeyed; newlines and tabs stay.
pub fn for_terminal(text: &str) -> std::borrow::Cow<'_, str> {
    let bad = |c: char| bends_line(c) && c != '\n' && c != '\t';
    if !text.chars().any(bad) {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(text.chars().map(|c| if bad(c) { c.escape_unicode().to_string() } else { c.to_string() }).collect())
}

/// `text` on one line: every control character (a newline and a tab
/// too) and line separator escaped, for a field that comes from a document
/// or a store (a hostname, a label) in a table of lines.
pub fn one_line(text: &str) -> std::borrow::Cow<'_, str> {
    let bad = bends_line;
    if !text.chars().any(bad) {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(text.chars().map(|c| if bad(c) { c.escape_unicode().to_string() } else { c.to_string() }).collect())
}

/// Columns of the terminal on standard output: COLUMNS, else the terminal's
/// own width, else 100.
pub fn terminal_width() -> usize {
    if let Some(c) = std::env::var("COLUMNS").ok().and_then(|c| c.trim().parse().ok()).filter(|&c: &usize| c >= 20) {
        return c;
    }
    // SAFETY: a zeroed winsize is valid; TIOCGWINSZ fills it; the result is checked.
    let cols = unsafe {
        let mut ws: libc::winsize = std::mem::zeroed();
        if libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut ws) == 0 { ws.ws_col as usize } else { 0 }
    };
    if cols >= 20 { cols } else { 100 }
}

/// Every line of `text` within `width`: a longer line (a header line, a
/// note) is wrapped at spaces, its continuation indented; tables rendered
/// laid out by `table::within` already fit.
pub fn fit_text(text: &str, width: usize) -> String {
    let mut out = String::new();
    for l in text.lines() {
        if l.chars().count() <= width {
            out += l;
            out.push('\n');
        } else {
            let indent: String = l.chars().take_while(|c| *c == ' ').collect();
            out += &wrap(l.trim_start(), width, &indent);
        }
    }
    out
}

/// Words wrapped to `width`, every line after `indent`.
pub fn wrap(text: &str, width: usize, indent: &str) -> String {
    let mut out = String::new();
    let mut line = indent.to_string();
    for w in text.split_whitespace() {
        if !line.trim().is_empty() && line.chars().count() + 1 + w.chars().count() > width {
            out += &table::cut(line.trim_end(), width);
            out.push('\n');
            line = format!("{indent}  ");
        }
        if !line.trim().is_empty() {
            line.push(' ');
        }
        line += w;
    }
    if !line.trim().is_empty() {
        out += &table::cut(line.trim_end(), width);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_wrap_at_spaces_with_their_indent() {
        let text = "short\n    a note far too long for a narrow terminal to show on one line\n";
        let fitted = fit_text(text, 24);
        assert!(fitted.lines().all(|l| l.chars().count() <= 24), "{fitted}");
        assert!(fitted.starts_with("short\n    a note far too long\n"), "{fitted}");
        assert!(fitted.lines().skip(2).all(|l| l.starts_with("      ")), "continuations indented: {fitted}");
        assert_eq!(wrap("a b c", 80, "  "), "  a b c\n");
    }

    #[test]
    fn control_characters_are_escaped_for_the_terminal() {
        assert_eq!(for_terminal("a\tb\nc"), "a\tb\nc");
        assert_eq!(for_terminal("x\x1b[2Jy\u{9b}z\r"), "x\\u{1b}[2Jy\\u{9b}z\\u{d}");
    }
}
