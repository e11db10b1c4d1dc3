//! The mouse: a click on a tab shows it, on the editor places the cursor (a drag selects,
//! Shift-click extends), on a field focuses it, on a list row selects the row; the wheel scrolls
//! the pane under the pointer. Drawing records where everything went (`Regions`), so a click
//! maps to what was on screen.

use super::action::Action;
use super::app::{App, Effect, Focus, Overlay, Tab};
use ratatui::crossterm::event::{KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::{Position, Rect};

/// Lines (or rows) one wheel notch scrolls.
const WHEEL_STEP: usize = 3;

/// Rows of a list as drawn: `area` holds the rows, the first of them is item `first`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListRows {
    pub area: Rect,
    pub first: usize,
}

impl ListRows {
    /// The item at screen row `y`, if `y` is one of the rows.
    fn item_at(&self, x: u16, y: u16) -> Option<usize> {
        self.area
            .contains(Position::new(x, y))
            .then(|| self.first + (y - self.area.y) as usize)
    }
}

/// Where the last frame put things (written while drawing, read on a click).
#[derive(Debug, Clone, Default)]
pub struct Regions {
    /// The editor's text rows, gutter included.
    pub editor: Rect,
    pub gutter: u16,
    /// What each editor row shows: (line, first character column) (wrapped lines take several).
    pub editor_rows: Vec<(usize, usize)>,
    /// The first line and the first character column shown.
    pub editor_top: usize,
    pub editor_left: usize,
    pub keys: Rect,
    pub argv: Rect,
    pub tabs: Vec<(Rect, Tab)>,
    /// The right-hand pane under the tab bar.
    pub panes: Rect,
    /// The rows of the list in the pane (trace, keys), when one is drawn.
    pub rows: Option<ListRows>,
    /// How far the scrolled text shown (Reply, Warnings, the help) can scroll.
    pub scroll_max: u16,
    /// A selection drag in the editor is under way.
    pub dragging: bool,
}

impl Regions {
    /// Forget what only the last frame drew (the drag survives frames).
    pub fn clear(&mut self) {
        *self = Regions {
            dragging: self.dragging,
            ..Regions::default()
        };
    }
}

pub fn on_mouse(app: &mut App, event: MouseEvent) -> Vec<Effect> {
    let (x, y) = (event.column, event.row);
    let at = Position::new(x, y);
    let regions = app.regions.borrow().clone();
    if let Some(overlay) = &mut app.overlay {
        // The palette's choice moves with the wheel; everything else waits for its keys.
        if let Overlay::Palette(_) = overlay {
            match event.kind {
                MouseEventKind::ScrollDown => super::palette::scroll(app, WHEEL_STEP as isize),
                MouseEventKind::ScrollUp => super::palette::scroll(app, -(WHEEL_STEP as isize)),
                _ => {}
            }
        }
        return Vec::new();
    }
    match event.kind {
        MouseEventKind::Down(MouseButton::Left) => {
            if let Some((_, tab)) = regions.tabs.iter().find(|(r, _)| r.contains(at)) {
                let action = match tab {
                    Tab::Trace => Action::TabTrace,
                    Tab::Reply => Action::TabReply,
                    Tab::Keyspace => Action::TabKeyspace,
                    Tab::Warnings => Action::TabWarnings,
                    Tab::Server => Action::TabServer,
                    Tab::Debug => Action::TabDebug,
                    Tab::Lesson => Action::TabLesson,
                    // Shown only once a lab ran: show it again without running again.
                    Tab::Race => {
                        app.tab = Tab::Race;
                        return Vec::new();
                    }
                    Tab::Tests => Action::TabTests,
                };
                return app.update(action);
            }
            if regions.editor.contains(at) {
                app.focus = Focus::Editor;
                let extend = event.modifiers.contains(KeyModifiers::SHIFT);
                place_cursor(app, &regions, x, y, extend);
                app.regions.borrow_mut().dragging = true;
            } else if regions.keys.contains(at) || regions.argv.contains(at) {
                let keys = regions.keys.contains(at);
                app.focus = if keys { Focus::Keys } else { Focus::Argv };
                let area = if keys { regions.keys } else { regions.argv };
                app.inputs.place_cursor(keys, (x - area.x) as usize);
            } else if regions.panes.contains(at) {
                app.focus = Focus::Panes;
                if let Some(item) = regions.rows.and_then(|rows| rows.item_at(x, y)) {
                    select_row(app, item);
                }
            }
        }
        MouseEventKind::Drag(MouseButton::Left) if regions.dragging => {
            place_cursor(app, &regions, x, y, true);
        }
        MouseEventKind::Up(_) => app.regions.borrow_mut().dragging = false,
        MouseEventKind::ScrollDown | MouseEventKind::ScrollUp => {
            let down = event.kind == MouseEventKind::ScrollDown;
            if regions.editor.contains(at) {
                app.editor.scroll_view(if down {
                    WHEEL_STEP as isize
                } else {
                    -(WHEEL_STEP as isize)
                });
            } else if regions.panes.contains(at) {
                return scroll_pane(app, down);
            }
        }
        _ => {}
    }
    Vec::new()
}

/// The cursor to the character under (x, y) in the editor; `extend` selects up to it.
fn place_cursor(app: &mut App, regions: &Regions, x: u16, y: u16, extend: bool) {
    let area = regions.editor;
    // A drag past the top or bottom edge reaches the line beyond it.
    let (row, start) = if y < area.y {
        (regions.editor_top.saturating_sub(1), regions.editor_left)
    } else {
        let index = (y - area.y) as usize;
        match regions.editor_rows.get(index) {
            Some(&shown) => shown,
            None => {
                let below = regions
                    .editor_rows
                    .last()
                    .map_or(regions.editor_top, |r| r.0 + 1);
                (below, regions.editor_left)
            }
        }
    };
    let cells = x.saturating_sub(area.x + regions.gutter) as usize;
    let last = app.editor.textarea.lines().len().saturating_sub(1);
    let row = row.min(last);
    let col = super::ui::editor_column_at(&app.editor.textarea.lines()[row], start, cells);
    app.editor.click(row, col, extend);
}

/// Select item `item` of the list shown in the pane.
fn select_row(app: &mut App, item: usize) {
    let len = match app.tab {
        Tab::Trace => app.last_run.as_ref().map_or(0, |r| r.report.trace.len()),
        Tab::Keyspace => app.keyspace.visible_keys(app).len(),
        _ => 0,
    };
    if item >= len {
        return;
    }
    if app.tab == Tab::Trace {
        app.trace_list.selected = item;
    } else {
        app.keyspace.list.selected = item;
        app.keyspace.value_focus = false;
    }
}

/// The wheel over the right-hand pane: its rows move, the focus stays where it was.
fn scroll_pane(app: &mut App, down: bool) -> Vec<Effect> {
    let action = match (app.tab, down) {
        (Tab::Keyspace | Tab::Server, true) => Action::KeyspaceDown,
        (Tab::Keyspace | Tab::Server, false) => Action::KeyspaceUp,
        (_, true) => Action::Down,
        (_, false) => Action::Up,
    };
    let focus = app.focus;
    app.focus = Focus::Panes;
    let mut effects = Vec::new();
    for _ in 0..WHEEL_STEP {
        effects.extend(app.update(action));
    }
    app.focus = focus;
    effects
}
