//! Named styles of the UI and the syntax theme of the editor.
//!
//! A theme NAME is two files: `NAME.tmTheme` (syntax colours, a TextMate plist) and `NAME.toml`
//! (the UI palette). They are looked up in the config directory's `themes/` first, then among the
//! embedded defaults (`themes/dark.*`, `themes/light.*`). An unknown or broken theme gives the
//! dark default and a warning, never an error.

use ratatui::style::{Color, Modifier, Style};
use std::path::Path;
use std::sync::Arc;

const DARK_TM: &str = include_str!("../../themes/dark.tmTheme");
const DARK_TOML: &str = include_str!("../../themes/dark.toml");
const LIGHT_TM: &str = include_str!("../../themes/light.tmTheme");
const LIGHT_TOML: &str = include_str!("../../themes/light.toml");
const CONTRAST_TM: &str = include_str!("../../themes/contrast.tmTheme");
const CONTRAST_TOML: &str = include_str!("../../themes/contrast.toml");

/// The theme used when none is given or the given one cannot be loaded.
pub const DEFAULT: &str = "dark";

#[derive(Debug, Clone)]
pub struct Theme {
    pub name: String,
    pub text: Style,
    pub border: Style,
    pub focus_border: Style,
    pub header: Style,
    pub selected: Style,
    /// Text selected in the editor (told apart from the cursor, which is reversed).
    pub selection: Style,
    pub error: Style,
    pub warning: Style,
    pub line_number: Style,
    /// Background of the cursor's line in the editor.
    pub current_line: Style,
    /// The line of the last run's error.
    pub error_line: Style,
    /// Keys a run changed.
    pub changed: Style,
    /// The race lab's clients, one colour each (always beside the client's number: a colour
    /// alone tells nothing to a colour-blind reader or on a washed-out projector).
    pub clients: [Style; 8],
    /// Syntax colours for the editor (shared: the highlight cache keys on this pointer).
    pub syntax: Arc<syntect::highlighting::Theme>,
}

fn embedded(name: &str) -> Option<(&'static str, &'static str)> {
    match name {
        "dark" => Some((DARK_TM, DARK_TOML)),
        "light" => Some((LIGHT_TM, LIGHT_TOML)),
        "contrast" => Some((CONTRAST_TM, CONTRAST_TOML)),
        _ => None,
    }
}

fn parse_tm(text: &str) -> Result<syntect::highlighting::Theme, String> {
    syntect::highlighting::ThemeSet::load_from_reader(&mut std::io::Cursor::new(text.as_bytes()))
        .map_err(|e| e.to_string())
}

fn parse_color(text: &str) -> Result<Color, String> {
    text.parse::<Color>()
        .map_err(|_| format!("unknown colour '{text}'"))
}

fn parse_style(value: &toml::Value) -> Result<Style, String> {
    let table = value
        .as_table()
        .ok_or("expected a table such as { fg = \"cyan\" }")?;
    let mut style = Style::default();
    for (key, v) in table {
        match key.as_str() {
            "fg" | "bg" => {
                let color = parse_color(v.as_str().ok_or(format!("{key} must be a string"))?)?;
                style = if key == "fg" {
                    style.fg(color)
                } else {
                    style.bg(color)
                };
            }
            "modifiers" => {
                let list = v.as_array().ok_or("modifiers must be a list")?;
                for m in list {
                    let m = match m.as_str().unwrap_or("") {
                        "bold" => Modifier::BOLD,
                        "dim" => Modifier::DIM,
                        "italic" => Modifier::ITALIC,
                        "underlined" => Modifier::UNDERLINED,
                        "reversed" => Modifier::REVERSED,
                        "crossed_out" => Modifier::CROSSED_OUT,
                        other => return Err(format!("unknown modifier '{other}'")),
                    };
                    style = style.add_modifier(m);
                }
            }
            other => return Err(format!("unknown field '{other}'")),
        }
    }
    Ok(style)
}

impl Theme {
    /// The style of race client `n` (1-based; past the eighth, the colours come round again).
    pub fn client(&self, n: usize) -> Style {
        self.clients[n.saturating_sub(1) % self.clients.len()]
    }

    /// The built-in palette, used under everything else (and if the embedded files were broken).
    fn builtin() -> Theme {
        Theme {
            name: DEFAULT.into(),
            text: Style::default(),
            border: Style::default().fg(Color::DarkGray),
            focus_border: Style::default().fg(Color::Cyan),
            header: Style::default().fg(Color::Yellow),
            selected: Style::default().add_modifier(Modifier::REVERSED),
            selection: Style::default().bg(Color::Rgb(0x26, 0x4f, 0x78)),
            error: Style::default().fg(Color::LightRed),
            warning: Style::default().fg(Color::LightMagenta),
            line_number: Style::default().fg(Color::DarkGray),
            current_line: Style::default().bg(Color::Rgb(0x2a, 0x2a, 0x2a)),
            error_line: Style::default().bg(Color::Rgb(0x4a, 0x1c, 0x1c)),
            changed: Style::default()
                .fg(Color::Yellow)
                .add_modifier(Modifier::BOLD),
            clients: [
                Color::Rgb(0x00, 0xd7, 0xff),
                Color::Rgb(0x87, 0xff, 0x5f),
                Color::Rgb(0xff, 0xd7, 0x00),
                Color::Rgb(0xff, 0x87, 0xff),
                Color::Rgb(0xff, 0x87, 0x00),
                Color::Rgb(0xaf, 0xaf, 0xff),
                Color::Rgb(0xd7, 0xaf, 0x87),
                Color::Rgb(0xff, 0x5f, 0x5f),
            ]
            .map(|c| Style::default().fg(c)),
            syntax: Arc::new(syntect::highlighting::Theme::default()),
        }
    }

    /// Apply a UI palette (TOML) over `self`.
    fn with_palette(mut self, text: &str) -> Result<Theme, String> {
        let table: toml::Table = text.parse().map_err(|e: toml::de::Error| e.to_string())?;
        for (key, value) in &table {
            let style = parse_style(value).map_err(|e| format!("{key}: {e}"))?;
            let slot = match key.as_str() {
                "text" => &mut self.text,
                "border" => &mut self.border,
                "focus_border" => &mut self.focus_border,
                "header" => &mut self.header,
                "selected" => &mut self.selected,
                "selection" => &mut self.selection,
                "error" => &mut self.error,
                "warning" => &mut self.warning,
                "line_number" => &mut self.line_number,
                "current_line" => &mut self.current_line,
                "error_line" => &mut self.error_line,
                "changed" => &mut self.changed,
                client => match client
                    .strip_prefix("client")
                    .and_then(|n| n.parse::<usize>().ok())
                    .filter(|n| (1..=8).contains(n))
                {
                    Some(n) => &mut self.clients[n - 1],
                    None => return Err(format!("unknown style '{client}'")),
                },
            };
            *slot = style;
        }
        Ok(self)
    }

    /// The embedded dark theme.
    pub fn dark() -> Theme {
        Self::from_texts(DEFAULT, DARK_TM, DARK_TOML).unwrap_or_else(|_| Theme::builtin())
    }

    /// The embedded high-contrast theme, presenter mode's (made once: the syntax colours are
    /// parsed from XML).
    pub fn contrast() -> &'static Theme {
        static CONTRAST: std::sync::OnceLock<Theme> = std::sync::OnceLock::new();
        CONTRAST.get_or_init(|| {
            Self::from_texts("contrast", CONTRAST_TM, CONTRAST_TOML)
                .unwrap_or_else(|_| Theme::dark())
        })
    }

    /// The embedded light theme.
    pub fn light() -> Theme {
        Self::from_texts("light", LIGHT_TM, LIGHT_TOML).unwrap_or_else(|_| Theme::dark())
    }

    fn from_texts(name: &str, tm: &str, palette: &str) -> Result<Theme, String> {
        let syntax = parse_tm(tm).map_err(|e| format!("{name}.tmTheme: {e}"))?;
        let mut theme = Theme::builtin()
            .with_palette(palette)
            .map_err(|e| format!("{name}.toml: {e}"))?;
        theme.name = name.into();
        theme.syntax = Arc::new(syntax);
        Ok(theme)
    }

    /// Load theme `name`: `config_dir/themes/NAME.{tmTheme,toml}` first, then the embedded ones.
    /// A missing half of a user theme comes from the dark default. Returns the theme and the
    /// warnings (an unknown or broken theme gives the dark default).
    pub fn load(name: &str, config_dir: Option<&Path>) -> (Theme, Vec<String>) {
        let read = |ext: &str| -> Option<Result<String, String>> {
            let dir = config_dir?.join("themes");
            let path = dir.join(format!("{name}.{ext}"));
            path.is_file().then(|| {
                crate::engine::input::read_bounded_text(&path, &crate::engine::input::SETTINGS)
                    .map_err(|e| e.to_string())
            })
        };
        let fallback = |warning: String| (Theme::dark(), vec![warning]);
        // A name with a path separator would escape the themes directory.
        if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
            return fallback(format!(
                "theme '{name}' is not a valid name; using {DEFAULT}"
            ));
        }
        let builtin = embedded(name);
        let tm = match (read("tmTheme"), builtin) {
            (Some(r), _) => Some(r),
            (None, Some((tm, _))) => Some(Ok(tm.to_string())),
            (None, None) => None,
        };
        let palette = match (read("toml"), builtin) {
            (Some(r), _) => Some(r),
            (None, Some((_, toml))) => Some(Ok(toml.to_string())),
            (None, None) => None,
        };
        if tm.is_none() && palette.is_none() {
            return fallback(format!("unknown theme '{name}'; using {DEFAULT}"));
        }
        let tm = match tm.unwrap_or_else(|| Ok(DARK_TM.to_string())) {
            Ok(t) => t,
            Err(e) => return fallback(format!("{e}; using theme {DEFAULT}")),
        };
        let palette = match palette.unwrap_or_else(|| Ok(DARK_TOML.to_string())) {
            Ok(t) => t,
            Err(e) => return fallback(format!("{e}; using theme {DEFAULT}")),
        };
        match Theme::from_texts(name, &tm, &palette) {
            Ok(theme) => (theme, Vec::new()),
            Err(e) => fallback(format!("theme {e}; using {DEFAULT}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_themes_parse() {
        for (name, tm, toml) in [
            ("dark", DARK_TM, DARK_TOML),
            ("light", LIGHT_TM, LIGHT_TOML),
            ("contrast", CONTRAST_TM, CONTRAST_TOML),
        ] {
            let theme = Theme::from_texts(name, tm, toml).expect(name);
            assert!(theme.syntax.scopes.len() >= 8, "{name}");
        }
        let (light, warnings) = Theme::load("light", None);
        assert_eq!(light.name, "light");
        assert!(warnings.is_empty());
    }

    #[test]
    fn unknown_or_broken_theme_falls_back() {
        let (t, w) = Theme::load("nope", None);
        assert_eq!(t.name, "dark");
        assert_eq!(w.len(), 1);
        let (t, w) = Theme::load("../etc", None);
        assert_eq!(t.name, "dark");
        assert_eq!(w.len(), 1);

        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().to_path_buf();
        let themes = dir.join("themes");
        std::fs::create_dir_all(&themes).unwrap();
        std::fs::write(themes.join("mine.tmTheme"), "<plist><broken").unwrap();
        let (t, w) = Theme::load("mine", Some(&dir));
        assert_eq!(t.name, "dark");
        assert_eq!(w.len(), 1, "{w:?}");
        // A user palette only: syntax colours from the default, styles from the file.
        std::fs::remove_file(themes.join("mine.tmTheme")).unwrap();
        std::fs::write(themes.join("mine.toml"), "error = { fg = \"#ff0000\" }\n").unwrap();
        let (t, w) = Theme::load("mine", Some(&dir));
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(t.name, "mine");
        assert_eq!(t.error.fg, Some(Color::Rgb(255, 0, 0)));
        std::fs::write(themes.join("mine.toml"), "error = { fg = \"nocolour\" }\n").unwrap();
        let (t, w) = Theme::load("mine", Some(&dir));
        assert_eq!((t.name.as_str(), w.len()), ("dark", 1));
    }
}
