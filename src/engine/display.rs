//! Text from a script, a file or a server made safe to show on a terminal.
//!
//! A terminal acts on control characters: ESC starts sequences that retitle the window, clear the
//! screen or move the cursor, BEL rings, CR and BS overwrite what was printed, C1 code points are
//! single-character sequences on some terminals, and bidi controls reorder what follows them. Every
//! such character is shown as a visible escape instead, in the style of `quote_bytes` (and
//! redis-cli): `\x1b`, `\n`, `\r`, `\t`, `\a`, `\b` for C0 and DEL, `\u{9b}` for C1 and bidi code
//! points (written as code points so that they cannot be taken for the invalid byte `\x9b`), and
//! `\xNN` for each byte that is not UTF-8. Backslashes are left as they are: the result is for
//! reading, not for parsing back.

use std::borrow::Cow;

/// Whether `c` must not reach a terminal as it is: C0 controls, DEL, C1 controls, and the Unicode
/// bidi controls (embeddings, overrides, isolates, marks).
pub fn is_unsafe(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{1f}'
        | '\u{7f}'..='\u{9f}'
        | '\u{61c}'
        | '\u{200e}' | '\u{200f}'
        | '\u{202a}'..='\u{202e}'
        | '\u{2066}'..='\u{2069}')
}

/// Append the visible escape of the unsafe character `c`.
pub fn push_escape(out: &mut String, c: char) {
    use std::fmt::Write;
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\u{7}' => out.push_str("\\a"),
        '\u{8}' => out.push_str("\\b"),
        '\u{0}'..='\u{1f}' | '\u{7f}' => {
            let _ = write!(out, "\\x{:02x}", c as u32);
        }
        _ => {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
}

fn escape_where(text: &str, escape: impl Fn(char) -> bool) -> Cow<'_, str> {
    let Some(first) = text.find(&escape) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() + 16);
    out.push_str(&text[..first]);
    for c in text[first..].chars() {
        if escape(c) {
            push_escape(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// One line of foreign text: every unsafe character escaped, newlines and tabs included.
pub fn display_safe(text: &str) -> Cow<'_, str> {
    escape_where(text, is_unsafe)
}

/// Foreign text of several lines (a report, a multi-line message): as [`display_safe`], but
/// newlines and tabs are kept.
pub fn display_text(text: &str) -> Cow<'_, str> {
    escape_where(text, |c| is_unsafe(c) && c != '\n' && c != '\t')
}

/// One line of foreign bytes: as [`display_safe`], and each byte that is not part of valid
/// UTF-8 as `\xNN`.
pub fn display_bytes(bytes: &[u8]) -> Cow<'_, str> {
    if let Ok(text) = std::str::from_utf8(bytes) {
        return display_safe(text);
    }
    let mut out = String::with_capacity(bytes.len() + 16);
    for chunk in bytes.utf8_chunks() {
        out.push_str(&display_safe(chunk.valid()));
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOSTILE: &str = "\u{1b}]0;pwned\u{7}\u{1b}[2J";

    #[test]
    fn safe_text_is_borrowed_unchanged() {
        for text in ["", "plain", "naïve — ✓ 日本", "back\\slash \"quoted\""] {
            assert!(matches!(display_safe(text), Cow::Borrowed(t) if t == text));
            assert!(matches!(display_text(text), Cow::Borrowed(t) if t == text));
            assert!(matches!(display_bytes(text.as_bytes()), Cow::Borrowed(t) if t == text));
        }
    }

    #[test]
    fn c0_and_del_are_escaped_as_bytes() {
        assert_eq!(display_safe(HOSTILE), "\\x1b]0;pwned\\a\\x1b[2J");
        assert_eq!(
            display_safe("a\nb\rc\td\u{8}e\u{0}f\u{7f}g\u{1f}"),
            "a\\nb\\rc\\td\\be\\x00f\\x7fg\\x1f"
        );
    }

    #[test]
    fn c1_and_bidi_are_escaped_as_code_points() {
        assert_eq!(display_safe("\u{9b}31m\u{85}"), "\\u{9b}31m\\u{85}");
        assert_eq!(
            display_safe("a\u{202e}b\u{2066}c\u{2069}d\u{200e}\u{200f}\u{61c}\u{202a}"),
            "a\\u{202e}b\\u{2066}c\\u{2069}d\\u{200e}\\u{200f}\\u{61c}\\u{202a}"
        );
        // Neighbours of the ranges are ordinary text.
        assert_eq!(
            display_safe("\u{a0}\u{2065}\u{206a}\u{2029}"),
            "\u{a0}\u{2065}\u{206a}\u{2029}"
        );
    }

    #[test]
    fn text_keeps_newlines_and_tabs() {
        assert_eq!(
            display_text("line 1\n\tline 2\r\n\u{1b}[2J"),
            "line 1\n\tline 2\\r\n\\x1b[2J"
        );
    }

    #[test]
    fn invalid_utf8_bytes_are_escaped() {
        assert_eq!(display_bytes(b"ok\xff\xc3(\x1b"), "ok\\xff\\xc3(\\x1b");
        assert_eq!(
            display_bytes(b"\xe2\x80\xae\xc2\x9b\x80"),
            "\\u{202e}\\u{9b}\\x80"
        );
    }

    #[test]
    fn every_unsafe_char_is_escaped_to_printable_ascii() {
        for c in (0..=0x10ffffu32)
            .filter_map(char::from_u32)
            .filter(|&c| is_unsafe(c))
        {
            let shown = display_safe(c.encode_utf8(&mut [0; 4])).into_owned();
            assert!(shown.starts_with('\\') && shown.bytes().all(|b| (0x20..0x7f).contains(&b)));
        }
    }
}
