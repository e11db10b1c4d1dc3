//! Named styles of the UI. Themes live in `themes/` and are embedded in the binary.

use ratatui::style::{Color, Modifier, Style};

#[derive(Debug, Clone)]
pub struct Theme {
    pub name: String,
    pub text: Style,
    pub border: Style,
    pub focus_border: Style,
    pub header: Style,
    pub selected: Style,
    pub error: Style,
    pub warning: Style,
    pub line_number: Style,
}

impl Theme {
    pub fn dark() -> Theme {
        Theme {
            name: "dark".into(),
            text: Style::default(),
            border: Style::default().fg(Color::DarkGray),
            focus_border: Style::default().fg(Color::Cyan),
            header: Style::default().fg(Color::Yellow),
            selected: Style::default().add_modifier(Modifier::REVERSED),
            error: Style::default().fg(Color::Red),
            warning: Style::default().fg(Color::Magenta),
            line_number: Style::default().fg(Color::DarkGray),
        }
    }
}
