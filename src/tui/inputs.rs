//! The KEYS / ARGV form: two single-line fields taking space-separated values quoted by the
//! POSIX shell's rules (`'it'\''s'`, `"a b"`, `a\ b`), split and quoted with `shlex`.

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use tui_textarea::TextArea;

/// KEYS and ARGV as bytes.
pub type KeysAndArgv = (Vec<Vec<u8>>, Vec<Vec<u8>>);

#[derive(Default)]
pub struct InputsState {
    pub keys: TextArea<'static>,
    pub argv: TextArea<'static>,
}

/// A value as the field shows it: as it is when the shell would read it back so, else quoted.
fn quote(value: &str) -> String {
    match shlex::try_quote(value) {
        Ok(quoted) => quoted.into_owned(),
        // Only a NUL cannot be quoted for a shell; single quotes keep it (split reads it back).
        Err(_) => format!("'{}'", value.replace('\'', "'\\''")),
    }
}

/// What is wrong with a field the shell's rules cannot split, and where (1-based column): the
/// quote that is never closed, or a backslash at the end. It is the last quote or backslash
/// with everything before it well formed.
fn quoting_error(text: &str) -> String {
    let culprit = text
        .char_indices()
        .enumerate()
        .filter(|(_, (_, c))| matches!(c, '\'' | '"' | '\\'))
        .filter(|(_, (byte, _))| shlex::split(&text[..*byte]).is_some())
        .last();
    match culprit {
        Some((column, (_, '\\'))) => format!(
            "the backslash at column {} has nothing to escape: write \\\\ for a backslash",
            column + 1
        ),
        Some((column, (_, quote))) => format!(
            "the {quote} at column {} is never closed: close it, or write \\{quote} for the character itself",
            column + 1
        ),
        None => "the quoting is not the shell's: see the README".into(),
    }
}

impl InputsState {
    pub fn from_lists(keys: &[String], argv: &[String]) -> InputsState {
        let line = |items: &[String]| items.iter().map(|s| quote(s)).collect::<Vec<_>>().join(" ");
        InputsState {
            keys: TextArea::new(vec![line(keys)]),
            argv: TextArea::new(vec![line(argv)]),
        }
    }

    pub fn keys_text(&self) -> String {
        self.keys.lines().join(" ")
    }

    pub fn argv_text(&self) -> String {
        self.argv.lines().join(" ")
    }

    /// The values of one field, or an error saying what is wrong.
    pub fn values(text: &str, field: &str) -> Result<Vec<String>, String> {
        shlex::split(text).ok_or_else(|| format!("{field}: {}", quoting_error(text)))
    }

    /// KEYS and ARGV as bytes.
    pub fn parsed(&self) -> Result<KeysAndArgv, String> {
        let keys = Self::values(&self.keys_text(), "KEYS")?;
        let argv = Self::values(&self.argv_text(), "ARGV")?;
        let bytes = |v: Vec<String>| v.into_iter().map(String::into_bytes).collect();
        Ok((bytes(keys), bytes(argv)))
    }

    pub fn on_key(&mut self, keys_field: bool, key: KeyEvent) {
        if matches!(key.code, KeyCode::Enter) {
            return; // single-line fields
        }
        let field = if keys_field {
            &mut self.keys
        } else {
            &mut self.argv
        };
        field.input(key);
    }

    /// A click in a field: the cursor to character `col`.
    pub fn place_cursor(&mut self, keys_field: bool, col: usize) {
        let field = if keys_field {
            &mut self.keys
        } else {
            &mut self.argv
        };
        let col = col.min(u16::MAX as usize) as u16;
        field.move_cursor(tui_textarea::CursorMove::Jump(0, col));
    }

    pub fn paste(&mut self, keys_field: bool, text: &str) {
        let field = if keys_field {
            &mut self.keys
        } else {
            &mut self.argv
        };
        field.insert_str(text.replace(['\r', '\n'], " "));
    }
}

/// A key in a prompt's one-line input: typing replaces a prefilled value (Backspace clears it),
/// Ctrl-U clears the line, Ctrl-W deletes the word before the end, Backspace one character.
pub fn edit_prompt(prompt: &mut crate::tui::app::Prompt, key: KeyEvent) {
    use ratatui::crossterm::event::KeyModifiers;
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let prefilled = std::mem::take(&mut prompt.prefilled);
    match key.code {
        KeyCode::Char('u') if ctrl => prompt.input.clear(),
        KeyCode::Char('w') if ctrl => {
            let kept = prompt.input.trim_end().len();
            let start = prompt.input[..kept]
                .rfind(|c: char| c.is_whitespace() || c == '/')
                .map_or(0, |i| i + 1);
            prompt.input.truncate(start);
        }
        KeyCode::Backspace if prefilled => prompt.input.clear(),
        KeyCode::Backspace => {
            prompt.input.pop();
        }
        KeyCode::Char(c) if !ctrl => {
            if prefilled {
                prompt.input.clear();
            }
            prompt.input.push(c);
        }
        // Moving to the end keeps the value to edit it.
        _ => {}
    }
}
