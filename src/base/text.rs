//! What a character does to the line it is printed in. Plain functions of a
//! `char`, shared with the programs that include oscycles' files by path
//! (the Hermit program's `frame`).

/// Characters that change how a terminal lays out the text around them
/// without being seen: Unicode's format characters (bidirectional
/// overrides and isolates such as U+202E, zero-width ones, the BOM).
pub fn invisible(c: char) -> bool {
    matches!(c, '\u{061c}' | '\u{180e}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{206f}' | '\u{feff}' | '\u{fff9}'..='\u{fffb}')
}

/// A character that ends, moves or hides part of a line where it is
/// printed: a control character, a line or paragraph separator, or an
/// [`invisible`] format character.
pub fn bends_line(c: char) -> bool {
    c.is_control() || c == '\u{2028}' || c == '\u{2029}' || invisible(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_and_control_characters_bend_a_line_and_letters_do_not() {
        for c in ['\n', '\r', '\u{1b}', '\u{2028}', '\u{202e}', '\u{200b}', '\u{feff}'] {
            assert!(bends_line(c), "{:?}", c);
        }
        for c in ['a', ' ', 'é', '→', '\u{2027}'] {
            assert!(!bends_line(c), "{:?}", c);
        }
        assert!(invisible('\u{202e}') && !invisible('\n'));
    }
}
