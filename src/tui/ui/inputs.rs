//! The KEYS / ARGV form. The KEYS title shows how many keys there are and each key's cluster
//! hash slot, with a warning when they span several slots (CROSSSLOT on a cluster); a field with
//! unbalanced quotes says so in its title.

use super::block;
use crate::engine::display::display_safe;
use crate::engine::lint::hash_slot;
use crate::tui::app::{App, Focus};
use crate::tui::inputs::InputsState;
use crate::tui::theme::Theme;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Borders;
use ratatui::Frame;
use std::collections::BTreeSet;

/// The KEYS title: "KEYS (n)" and the slots, or the parse error. `width` is what the title may
/// use: key names are dropped (slots only) when they do not fit, then the slot list is cut (…)
/// or left out; the CROSSSLOT warning always stays.
pub fn keys_title(text: &str, theme: &Theme, width: usize) -> Line<'static> {
    keys_title_with(text, theme, width, true)
}

/// `keys_title`, with the key names beside their slots only when `names`.
fn keys_title_with(text: &str, theme: &Theme, width: usize, names: bool) -> Line<'static> {
    let keys = match InputsState::values(text, "KEYS") {
        Ok(keys) => keys,
        Err(e) => return Line::from(Span::styled(e, theme.error.add_modifier(Modifier::BOLD))),
    };
    let mut spans = vec![Span::raw(format!("KEYS ({})", keys.len()))];
    if keys.is_empty() {
        return Line::from(spans);
    }
    let slots: Vec<u16> = keys.iter().map(|k| hash_slot(k.as_bytes())).collect();
    let distinct: BTreeSet<u16> = slots.iter().copied().collect();
    let named = keys
        .iter()
        .zip(&slots)
        .map(|(k, s)| format!("{}→{s}", display_safe(k)))
        .collect::<Vec<_>>()
        .join(" ");
    let bare = slots
        .iter()
        .map(u16::to_string)
        .collect::<Vec<_>>()
        .join(" ");
    let warning = (distinct.len() > 1).then(|| format!(" ⚠ {} slots (CROSSSLOT)", distinct.len()));
    let fixed = spans[0].width() + 6 + warning.as_ref().map_or(0, |w| w.chars().count());
    let room = width.saturating_sub(fixed);
    let list = if names && named.chars().count() <= room {
        Some(named)
    } else if bare.chars().count() <= room {
        Some(bare)
    } else if room >= 8 {
        Some(crate::tui::keyspace::fit(&bare, room))
    } else {
        None
    };
    if let Some(list) = list {
        spans.push(Span::styled(format!(" slot {list}"), theme.line_number));
    }
    if let Some(w) = warning {
        spans.push(Span::styled(w, theme.warning.add_modifier(Modifier::BOLD)));
    }
    Line::from(spans)
}

/// `line` cut to `width` cells, ending in an ellipsis when cut (a quoting error is long; F5 shows
/// it whole in the status line).
fn fit_title(line: Line<'static>, width: usize) -> Line<'static> {
    if line.width() <= width {
        return line;
    }
    let mut room = width.saturating_sub(1);
    let mut spans = Vec::new();
    for span in line.spans {
        let kept: String = span.content.chars().take(room).collect();
        room -= kept.chars().count();
        spans.push(Span::styled(kept, span.style));
        if room == 0 {
            break;
        }
    }
    let style = spans.last().map(|s| s.style).unwrap_or_default();
    spans.push(Span::styled("…", style));
    Line::from(spans)
}

fn title(field: &str, text: &str, theme: &Theme) -> Line<'static> {
    match InputsState::values(text, field) {
        Ok(values) => Line::from(format!("{field} ({})", values.len())),
        Err(e) => Line::from(Span::styled(e, theme.error.add_modifier(Modifier::BOLD))),
    }
}

/// Rows of the form: titled fields, or one row per field on a short terminal.
pub const FULL_HEIGHT: u16 = 4;
pub const COMPACT_HEIGHT: u16 = 2;
/// Both fields on one row, side by side (a short terminal: the panes keep their rows).
pub const ONE_ROW_HEIGHT: u16 = 1;

pub fn draw(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    if area.height < FULL_HEIGHT {
        return draw_compact(frame, area, app, theme);
    }
    let [keys_area, argv_area] =
        Layout::vertical([Constraint::Length(2), Constraint::Length(2)]).areas(area);
    let width = keys_area.width.saturating_sub(2) as usize;
    let mut keys = app.inputs.keys.clone();
    keys.set_cursor_line_style(Style::default());
    // The cursor shows only in the focused field (and not under an overlay).
    keys.set_cursor_style(cursor_style(app, app.focus == Focus::Keys));
    // A function library: the function F5 calls, on the right of the KEYS title, as long as fits
    // (the key names give way first).
    let call = app.form_function.describe_fitting();
    let reserve = call.last().map_or(0, |c| c.chars().count() + 3);
    let keys_line = keys_title(
        &app.inputs.keys_text(),
        theme,
        width.saturating_sub(reserve + 1),
    );
    let keys_line = fit_title(keys_line, width.saturating_sub(1));
    let mut keys_block = block("", app.focus == Focus::Keys, theme)
        .title(super::focus_title(
            keys_line.clone(),
            app.focus == Focus::Keys,
            theme,
        ))
        .borders(Borders::TOP);
    // (The focus mark takes a cell before the title.)
    let room = width.saturating_sub(keys_line.width() + 1 + usize::from(app.focus == Focus::Keys));
    if let Some(call) = call.iter().find(|c| c.chars().count() + 2 <= room) {
        let style = if app.form_function.error.is_some() {
            theme.error
        } else {
            theme.header
        };
        keys_block = keys_block.title(Line::styled(format!(" {call} "), style).right_aligned());
    }
    keys.set_block(keys_block);
    let mut argv = app.inputs.argv.clone();
    argv.set_cursor_line_style(Style::default());
    argv.set_cursor_style(cursor_style(app, app.focus == Focus::Argv));
    argv.set_block(
        block("", app.focus == Focus::Argv, theme)
            .title(super::focus_title(
                fit_title(
                    title("ARGV", &app.inputs.argv_text(), theme),
                    width.saturating_sub(1),
                ),
                app.focus == Focus::Argv,
                theme,
            ))
            .borders(Borders::TOP),
    );
    frame.render_widget(&keys, keys_area);
    frame.render_widget(&argv, argv_area);
    // The fields' text rows, for clicks.
    let mut regions = app.regions.borrow_mut();
    regions.keys = Rect::new(keys_area.x, keys_area.y + 1, keys_area.width, 1);
    regions.argv = Rect::new(argv_area.x, argv_area.y + 1, argv_area.width, 1);
}

/// The cursor's style in a field: shown only when the field has focus and no overlay is open.
fn cursor_style(app: &App, focused: bool) -> Style {
    if focused && app.overlay.is_none() {
        Style::default().add_modifier(Modifier::REVERSED)
    } else {
        Style::default()
    }
}

/// One row per field, its title (count, CROSSSLOT, quoting error) before the value; on one row,
/// KEYS on the left half and ARGV on the right.
fn draw_compact(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    let rows = if area.height >= COMPACT_HEIGHT {
        Layout::vertical([Constraint::Length(1), Constraint::Length(1)]).split(area)
    } else {
        // KEYS has the longer title (slots, a library's call): the wider part.
        Layout::horizontal([Constraint::Percentage(60), Constraint::Percentage(40)]).split(area)
    };
    let fields = [
        (&app.inputs.keys, "KEYS", app.focus == Focus::Keys, rows[0]),
        (&app.inputs.argv, "ARGV", app.focus == Focus::Argv, rows[1]),
    ];
    for (field, name, focused, row) in fields {
        let text = field.lines().join(" ");
        // A function library: the call F5 makes, before KEYS.
        let call = match name {
            "KEYS" => app.form_function.describe_fitting().last().cloned(),
            _ => None,
        };
        let call_width = call.as_ref().map_or(0, |c| c.chars().count() + 3);
        // The count, the slots as far as half the row allows (no names: the value follows),
        // and the CROSSSLOT warning, which stays.
        let mut label = if name == "KEYS" {
            let room = ((row.width / 2) as usize).saturating_sub(call_width);
            keys_title_with(&text, theme, room, false)
        } else {
            title(name, &text, theme)
        };
        if let Some(call) = call {
            label.spans.insert(0, Span::raw(format!("{call} · ")));
        }
        let mut label = fit_title(label, (row.width as usize).saturating_sub(2));
        label.spans.push(Span::raw(" "));
        let label = super::focus_title(label, focused, theme);
        let style = if focused {
            theme.focus_border
        } else {
            theme.border
        };
        let label = label.patch_style(style);
        let width = (label.width() as u16).min(row.width);
        let [label_area, value_area] =
            Layout::horizontal([Constraint::Length(width), Constraint::Min(0)]).areas(row);
        frame.render_widget(label, label_area);
        let mut value = field.clone();
        value.set_cursor_line_style(Style::default());
        value.set_cursor_style(cursor_style(app, focused));
        frame.render_widget(&value, value_area);
        let mut regions = app.regions.borrow_mut();
        if name == "KEYS" {
            regions.keys = value_area;
        } else {
            regions.argv = value_area;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(line: &Line) -> String {
        line.spans.iter().map(|s| s.content.as_ref()).collect()
    }

    #[test]
    fn keys_title_shows_slots_and_errors() {
        let theme = Theme::dark();
        assert_eq!(plain(&keys_title("", &theme, 80)), "KEYS (0)");
        assert_eq!(
            plain(&keys_title("foo {foo}.x", &theme, 80)),
            "KEYS (2) slot foo→12182 {foo}.x→12182"
        );
        let t = plain(&keys_title("foo bar", &theme, 80));
        assert!(t.contains("⚠ 2 slots"), "{t}");
        assert_eq!(
            plain(&keys_title("foo bar", &theme, 47)),
            "KEYS (2) slot 12182 5061 ⚠ 2 slots (CROSSSLOT)"
        );
        // Narrower: the slot list is cut, then left out; the warning stays whole.
        assert_eq!(
            plain(&keys_title("foo bar baz", &theme, 48)),
            "KEYS (3) slot 12182 5061 … ⚠ 3 slots (CROSSSLOT)"
        );
        assert_eq!(
            plain(&keys_title("foo bar", &theme, 20)),
            "KEYS (2) ⚠ 2 slots (CROSSSLOT)"
        );
        assert_eq!(
            plain(&keys_title("\"foo", &theme, 80)),
            "KEYS: the \" at column 1 is never closed: close it, or write \\\" for the character itself"
        );
    }
}
