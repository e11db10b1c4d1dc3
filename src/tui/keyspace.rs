//! The keyspace inspector's view state: filters, selection, diff toggle.

use super::app::{App, ListState};
use crate::engine::commands::glob_match;

#[derive(Debug, Clone, Default)]
pub struct KeyspaceView {
    pub filter: String,
    /// None: every type; otherwise "string", "hash", ...
    pub type_filter: Option<&'static str>,
    pub show_diff: bool,
    pub list: ListState,
}

const TYPES: [&str; 6] = ["string", "hash", "list", "set", "zset", "stream"];

impl KeyspaceView {
    pub fn cycle_type_filter(&mut self) {
        self.type_filter = match self.type_filter {
            None => Some(TYPES[0]),
            Some(t) => TYPES
                .iter()
                .position(|x| *x == t)
                .and_then(|i| TYPES.get(i + 1))
                .copied(),
        };
        self.list = ListState::default();
    }

    /// Keys of the shown keyspace passing the filters, in byte order.
    pub fn visible_keys(&self, app: &App) -> Vec<Vec<u8>> {
        let db = app.shown_keyspace();
        let now = app.now_ms;
        db.sorted_keys(now)
            .into_iter()
            .filter(|k| self.filter.is_empty() || glob_match(self.filter.as_bytes(), k, false))
            .filter(|k| {
                self.type_filter
                    .is_none_or(|t| db.get(k, now).is_some_and(|e| e.value.type_name() == t))
            })
            .collect()
    }

    pub fn selected_key(&self, app: &App) -> Option<Vec<u8>> {
        self.visible_keys(app).get(self.list.selected).cloned()
    }
}
