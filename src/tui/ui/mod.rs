//! Drawing: `draw(frame, &app)` only reads the state.

mod buffers; // the list of open buffers
mod command_prompt; // the redis> prompt
mod debug;
mod editor;
mod help;
mod inputs;
mod keyspace;
mod lesson; // the Lesson tab and picker
mod palette;
mod panes;
mod present; // presenter mode
mod race; // the Race tab
mod reply_compare;
mod server;
mod server_overview;
mod statusbar;
mod value_view; // the value inspector

use super::app::{App, Focus, Overlay, Tab};
use super::theme::Theme;
use ratatui::layout::{Constraint, Direction, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph, Tabs, Wrap};
use ratatui::Frame;

/// Below this width the right-hand panes go under the editor.
const WIDE: u16 = 100;
/// Text lines the editor keeps on a small terminal (80x24 shows this many).
const EDITOR_MIN_LINES: u16 = 8;
/// Rows the panes keep under the editor when the height allows it: the tab bar and a box with
/// this many rows inside (80x24 shows this many).
const PANES_MIN_ROWS: u16 = 8;
/// Below this height (of the body, stacked) the KEYS / ARGV form takes one row per field.
const COMPACT_BELOW: u16 = 30;

pub use editor::column_at as editor_column_at;
pub use statusbar::key_label;

pub fn draw(frame: &mut Frame, app: &App, theme: &Theme) {
    let area = frame.area();
    app.regions.borrow_mut().clear();
    // Presenter mode: one large pane (ui/present.rs); overlays as usual.
    if app.present {
        // A projector washes out dim colours: presenter mode draws in the high-contrast theme.
        let theme = crate::tui::theme::Theme::contrast();
        frame.buffer_mut().set_style(area, theme.text);
        present::draw(frame, area, app, theme);
        draw_overlays(frame, area, app, theme);
        return;
    }
    let [body, status] = Layout::vertical([Constraint::Min(3), Constraint::Length(2)]).areas(area);
    let direction = if body.width >= WIDE {
        Direction::Horizontal
    } else {
        Direction::Vertical
    };
    // Stacked on a narrow terminal, the editor keeps EDITOR_MIN_LINES lines and the panes
    // PANES_MIN_ROWS rows when the height allows it: the form takes one row per field, or both
    // fields one row when that is what it takes; the editor wins what is left short.
    let compact = direction == Direction::Vertical && body.height < COMPACT_BELOW;
    let editor_min = EDITOR_MIN_LINES + 2;
    let panes_min = PANES_MIN_ROWS + 3;
    let inputs_height = if !compact {
        inputs::FULL_HEIGHT
    } else if body.height >= editor_min + inputs::COMPACT_HEIGHT + panes_min {
        inputs::COMPACT_HEIGHT
    } else {
        inputs::ONE_ROW_HEIGHT
    };
    let top = match direction {
        Direction::Horizontal => Constraint::Percentage(55),
        Direction::Vertical => {
            let least = (editor_min + inputs_height).min(body.height.saturating_sub(4));
            let most = body.height.saturating_sub(panes_min).max(least);
            Constraint::Length((body.height * 55 / 100).clamp(least, most))
        }
    };
    let halves = Layout::default()
        .direction(direction)
        .constraints([top, Constraint::Min(0)])
        .split(body);
    let [editor_area, inputs_area] =
        Layout::vertical([Constraint::Min(3), Constraint::Length(inputs_height)]).areas(halves[0]);
    // The light theme paints its own background (a terminal's may be dark).
    frame.buffer_mut().set_style(area, theme.text);
    if app.zoomed {
        // The focused pane alone (the fields with the editor above them).
        match app.focus {
            Focus::Editor => editor::draw(frame, body, app, theme),
            Focus::Keys | Focus::Argv => {
                let [editor_area, inputs_area] =
                    Layout::vertical([Constraint::Min(3), Constraint::Length(inputs::FULL_HEIGHT)])
                        .areas(body);
                editor::draw(frame, editor_area, app, theme);
                inputs::draw(frame, inputs_area, app, theme);
            }
            Focus::Panes => draw_panes(frame, body, app, theme),
        }
    } else {
        editor::draw(frame, editor_area, app, theme);
        inputs::draw(frame, inputs_area, app, theme);
        draw_panes(frame, halves[1], app, theme);
    }
    statusbar::draw(frame, status, app, theme);
    draw_overlays(frame, area, app, theme);
}

/// The overlay over the panes, then the frame made safe (the last step of every frame).
fn draw_overlays(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    match &app.overlay {
        Some(Overlay::Palette(palette)) => palette::draw(frame, area, palette, theme),
        Some(Overlay::Command) => command_prompt::draw(frame, area, app, theme),
        Some(Overlay::Picker(picker)) => help::draw_picker(frame, area, picker, theme),
        Some(Overlay::Buffers(selected)) => buffers::draw(frame, area, app, *selected, theme),
        Some(Overlay::Value(view)) => value_view::draw(frame, area, view, theme),
        Some(Overlay::Lessons(selected)) => lesson::draw_picker(frame, area, app, *selected, theme),
        Some(Overlay::Prompt(prompt)) => {
            // A prefilled value shows selected: typing replaces it.
            let style = if prompt.prefilled {
                theme.selection
            } else {
                Style::default()
            };
            draw_prompt(frame, area, &prompt.title, &prompt.input, style, theme)
        }
        Some(Overlay::Confirm(confirm)) => {
            let text: String = match confirm {
                super::app::Confirm::QuitUnsaved => crate::tui::buffers::quit_question(app),
                super::app::Confirm::Recover => {
                    "Unsaved changes to this script from an earlier session were autosaved. r recovers them, d discards them."
                        .into()
                }
                super::app::Confirm::CloseUnsaved => format!(
                    "{} has unsaved changes. s saves it and closes it, d discards the changes, Esc keeps it open.",
                    crate::tui::buffers::name_of(&app.editor)
                ),
                super::app::Confirm::Overwrite(_) => {
                    "That file exists. Replace it with this script? (y/n)".into()
                }
                super::app::Confirm::ForeignSidecar { script, why } => {
                    crate::tui::file_actions::foreign_sidecar_question(script, why)
                }
                // The live guard's question: as tall as its text needs.
                // On a cluster it names the node the script goes to.
                super::app::Confirm::LiveSend(_, question) => {
                    crate::tui::connection::live_send_text(question, app.live_node.as_deref(), app.cluster_timeout_note.as_deref(), app.connection.replica_timeout_note.as_deref())
                }
                super::app::Confirm::OpenLesson(_) => {
                    "The script has unsaved changes. Open the lesson anyway? (y/n)".into()
                }
                super::app::Confirm::ResetLesson => {
                    "Reset to the lesson's starting script? Ctrl-Z brings yours back. (y/n)".into()
                }
                super::app::Confirm::ScriptKill => super::server_overview::KILL_QUESTION.into(),
                super::app::Confirm::OpenServerLibrary { name, .. } => {
                    crate::tui::server_library::question(name)
                }
                // live Functions (tui/live_function.rs)
                super::app::Confirm::LiveFcall(_, question, function) => {
                    super::live_function::dialog_text(question, function)
                }
                super::app::Confirm::LoadLibrary(planned) => {
                    let border = theme.focus_border;
                    super::live_function::draw_plan(frame, area, &planned.1, border);
                    make_safe(frame.buffer_mut());
                    return;
                }
            };
            draw_prompt(frame, area, "Confirm", &text, Style::default(), theme)
        }
        None => {}
    }
    make_safe(frame.buffer_mut());
}

/// The last step of every frame, so no pane, overlay or widget can forget it: a cell holding a
/// control, C1 or bidi character (text from a script, a file or a server) loses it before the
/// frame reaches the terminal, which would act on it (retitle the window, clear the screen,
/// reorder the line). The panes escape such characters where they place foreign text (the
/// readable `\x1b` form, `engine::display`); what reaches a cell anyway (inside a third-party
/// widget such as the KEYS / ARGV fields, or a pane that forgot) is dropped from the cell, and a
/// cell left empty shows the character's control picture (`␛`) or `�`.
pub fn make_safe(buf: &mut ratatui::buffer::Buffer) {
    use crate::engine::display::is_unsafe;
    for cell in buf.content.iter_mut() {
        let symbol = cell.symbol();
        // Fast path: a printable ASCII cell (nearly all of them).
        if symbol.len() == 1 && (0x20..0x7f).contains(&symbol.as_bytes()[0]) {
            continue;
        }
        let Some(first) = symbol.chars().find(|&c| is_unsafe(c)) else {
            continue;
        };
        let kept: String = symbol.chars().filter(|&c| !is_unsafe(c)).collect();
        if kept.is_empty() {
            let picture = match first {
                '\u{0}'..='\u{1f}' => char::from_u32(0x2400 + first as u32).unwrap_or('�'),
                '\u{7f}' => '␡',
                _ => '�',
            };
            cell.set_char(picture);
        } else {
            cell.set_symbol(&kept);
        }
    }
}

/// Before the focused pane's title: with its thick border, the focus shows without colour.
pub const FOCUS_MARK: &str = "❯";

/// A bordered pane; the focused one has thick lines and `FOCUS_MARK` before its title (an
/// untitled one's caller puts it before the title it adds: `focus_title`).
pub fn block<'a>(title: &'a str, focused: bool, theme: &Theme) -> Block<'a> {
    let block = Block::default().borders(Borders::ALL);
    if !focused {
        return block.title(title).border_style(theme.border);
    }
    let block = block
        .border_type(BorderType::Thick)
        .border_style(theme.focus_border);
    if title.is_empty() {
        return block;
    }
    block.title(focus_title(Line::from(title), true, theme))
}

/// `title` with the focus mark before it when `focused`.
pub fn focus_title<'a>(mut title: Line<'a>, focused: bool, theme: &Theme) -> Line<'a> {
    if focused {
        let mark = Span::styled(FOCUS_MARK, theme.focus_border.add_modifier(Modifier::BOLD));
        title.spans.insert(0, mark);
    }
    title
}

fn draw_panes(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    let focused = app.focus == Focus::Panes && app.overlay.is_none();
    let tabs = app.tabs();
    let titles: Vec<Line> = tabs
        .iter()
        .map(|t| {
            // The number of the tab's Alt key (the Server tab shows only with a live server).
            let i = Tab::ALL.iter().position(|x| x == t).unwrap_or(0);
            let mut label = format!("{} {}", i + 1, t.title());
            if *t == Tab::Warnings {
                let n = app
                    .last_run
                    .as_ref()
                    .map_or(0, |r| panes::listed_warnings(&r.report).len())
                    + app.lint.diagnostics().len(); // lint while typing
                if n > 0 {
                    label.push_str(&format!(" ({n})"));
                }
            }
            Line::from(label)
        })
        .collect();
    let selected = tabs.iter().position(|t| *t == app.tab).unwrap_or(0);
    let [tabs_area, content] =
        Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(area);
    // Every tab stays findable in a narrow pane: shortened, cut to numbers, or scrolled.
    let (titles, first, divider) = fit_tab_titles(titles, selected, tabs_area.width);
    let selected = selected - first;
    {
        // Where each title lands (no padding, then the divider), for clicks.
        let mut regions = app.regions.borrow_mut();
        regions.panes = content;
        let mut x = tabs_area.x;
        for (title, tab) in titles.iter().zip(&tabs[first..]) {
            let width = (title.width() as u16).min(tabs_area.right().saturating_sub(x));
            regions
                .tabs
                .push((Rect::new(x, tabs_area.y, width, 1), *tab));
            x = x.saturating_add(width + divider.chars().count() as u16);
        }
    }
    frame.render_widget(
        // Spaces only around the dividers: five tabs fit the 54 columns of a 120-column
        // terminal's pane.
        Tabs::new(titles)
            .padding("", "")
            .divider(divider)
            .select(selected)
            .highlight_style(theme.selected.add_modifier(Modifier::BOLD)),
        tabs_area,
    );
    match app.tab {
        Tab::Trace => panes::draw_trace(frame, content, app, theme, focused),
        Tab::Reply => panes::draw_reply(frame, content, app, theme, focused),
        Tab::Keyspace => keyspace::draw(frame, content, app, theme, focused),
        Tab::Warnings => panes::draw_warnings(frame, content, app, theme, focused),
        Tab::Server => server::draw(frame, content, app, theme, focused),
        Tab::Debug => debug::draw(frame, content, app, theme, focused),
        Tab::Lesson => lesson::draw(frame, content, app, theme, focused),
        Tab::Race => race::draw(frame, content, app, theme, focused),
        Tab::Tests => crate::tui::tests_tab::draw(frame, content, app, theme, focused),
    }
}

/// Tab titles that fit in `width` with every tab there and the selected one whole: as they are
/// when they fit, else the others shortened ("4 War (2)"), then with narrower dividers, then cut
/// to their number ("1│2│7 Tests"), else a window around the selected one, marked with ‹ › where
/// tabs are out of view. Returns the titles, the index of the first one shown and the divider.
fn fit_tab_titles(
    titles: Vec<Line<'static>>,
    selected: usize,
    width: u16,
) -> (Vec<Line<'static>>, usize, &'static str) {
    const WIDE: &str = " │ ";
    const NARROW: &str = "│";
    let width = width as usize;
    let total = |titles: &[Line], divider: &str| -> usize {
        titles.iter().map(Line::width).sum::<usize>()
            + divider.chars().count() * titles.len().saturating_sub(1)
    };
    if total(&titles, WIDE) <= width {
        return (titles, 0, WIDE);
    }
    let texts: Vec<String> = titles
        .iter()
        .map(|t| t.spans.iter().map(|s| s.content.as_ref()).collect())
        .collect();
    let shortened = |short: &dyn Fn(&str) -> String| -> Vec<Line<'static>> {
        texts
            .iter()
            .enumerate()
            .map(|(i, text)| {
                if i == selected {
                    titles[i].clone()
                } else {
                    Line::from(short(text))
                }
            })
            .collect()
    };
    // "4 Warnings (2)" → "4 War (2)".
    let abbreviated = shortened(&|text: &str| {
        let mut words = text.splitn(3, ' ');
        let number = words.next().unwrap_or("");
        let name: String = words.next().unwrap_or("").chars().take(3).collect();
        match words.next() {
            Some(rest) => format!("{number} {name} {rest}"),
            None => format!("{number} {name}"),
        }
    });
    for divider in [WIDE, NARROW] {
        if total(&abbreviated, divider) <= width {
            return (abbreviated, 0, divider);
        }
    }
    let numbers = shortened(&|text: &str| text.split(' ').next().unwrap_or("").to_string());
    if total(&numbers, NARROW) <= width {
        return (numbers, 0, NARROW);
    }
    // A window around the selected tab, grown on the side with more tabs left out.
    let (mut first, mut last) = (selected, selected);
    let window = |first: usize, last: usize| {
        total(&numbers[first..=last], NARROW)
            + 2 * usize::from(first > 0)
            + 2 * usize::from(last + 1 < numbers.len())
    };
    loop {
        let grow_left = first > 0 && window(first - 1, last) <= width;
        let grow_right = last + 1 < numbers.len() && window(first, last + 1) <= width;
        match (grow_left, grow_right) {
            (true, true) if selected - first <= last - selected => first -= 1,
            (true, true) => last += 1,
            (true, false) => first -= 1,
            (false, true) => last += 1,
            (false, false) => break,
        }
    }
    let mut shown: Vec<Line<'static>> = numbers[first..=last].to_vec();
    if first > 0 {
        shown[0].spans.insert(0, Span::raw("‹ "));
    }
    if last + 1 < numbers.len() {
        if let Some(end) = shown.last_mut() {
            end.spans.push(Span::raw(" ›"));
        }
    }
    (shown, first, NARROW)
}

/// Below this height a key list and its value view take turns (Enter switches).
const SPLIT_MIN_HEIGHT: u16 = 16;

/// At least this wide, a pane too short to stack a key list over its value view puts them side
/// by side (80x24).
const SIDE_BY_SIDE_MIN_WIDTH: u16 = 60;

/// The areas of a key list and its value view: the list over the value when the pane is tall
/// enough, side by side when it is wide enough, else only the focused one.
pub fn list_and_value(area: Rect, value_focus: bool) -> (Option<Rect>, Option<Rect>) {
    if area.height >= SPLIT_MIN_HEIGHT {
        let [list, value] =
            Layout::vertical([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(area);
        (Some(list), Some(value))
    } else if area.width >= SIDE_BY_SIDE_MIN_WIDTH {
        let [list, value] =
            Layout::horizontal([Constraint::Percentage(45), Constraint::Percentage(55)])
                .areas(area);
        (Some(list), Some(value))
    } else if value_focus {
        (None, Some(area))
    } else {
        (Some(area), None)
    }
}

/// The furthest a bordered paragraph in `area` can scroll and still show its last row (panes
/// never scroll past their content).
pub fn max_scroll(paragraph: &Paragraph, area: Rect) -> u16 {
    let rows = paragraph.line_count(area.width.saturating_sub(2));
    rows.saturating_sub(area.height as usize)
        .min(u16::MAX as usize) as u16
}

/// A centred rectangle of at most `width` x `height`.
pub fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let w = width.min(area.width);
    let h = height.min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

fn draw_prompt(
    frame: &mut Frame,
    area: Rect,
    title: &str,
    input: &str,
    input_style: Style,
    theme: &Theme,
) {
    // Taller for a long message (the live guard's question), at least 5 rows as before.
    let width = 70.min(area.width).max(3);
    let rows = input.chars().count() as u16 / (width - 2).max(1) + 1;
    let rect = centered(area, 70, (rows + 2).max(5));
    frame.render_widget(Clear, rect);
    // A typed or pasted path, or a message quoting one.
    let text = vec![Line::from(vec![
        Span::styled(
            crate::engine::display::display_safe(input).into_owned(),
            input_style,
        ),
        Span::styled(" ", Style::default().add_modifier(Modifier::REVERSED)),
    ])];
    frame.render_widget(
        Paragraph::new(text).wrap(Wrap { trim: false }).block(block(
            &crate::engine::display::display_safe(title),
            true,
            theme,
        )),
        rect,
    );
}

#[cfg(test)]
mod tests {
    use super::make_safe;
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;
    use ratatui::text::Span;
    use ratatui::widgets::Widget;

    #[test]
    fn no_unsafe_character_survives_the_last_pass() {
        let mut buf = Buffer::empty(Rect::new(0, 0, 30, 1));
        Span::raw("a\u{1b}]0;x\u{7}b\u{202e}c\u{9b}d\u{7f}").render(buf.area, &mut buf);
        make_safe(&mut buf);
        let row: String = buf.content.iter().map(|c| c.symbol()).collect();
        assert!(
            !row.chars().any(crate::engine::display::is_unsafe),
            "{row:?}"
        );
        assert!(row.starts_with("a"), "{row:?}");
        assert!(
            row.contains("]0;x") && row.contains('b') && row.contains('d'),
            "{row:?}"
        );
    }
}
