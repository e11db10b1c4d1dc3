//! The workbench's `config.toml`: read into settings and key overrides as strings (the workbench
//! applies the keys to its keymap). A broken file gives warnings at file:line:column and the
//! defaults for what it could not read.
//!
//! ```toml
//! theme = "dark"
//! busy_threshold_ms = 5000
//! memory_limit_mb = 1024  # the run's memory budget: Lua, keyspace, trace, reply, snapshots
//! profile = "redis-7.0"   # the server the sandbox imitates (a live server picks its own)
//! lessons_dir = "/srv/workshop/lessons"  # Alt-L's lessons: one sub-folder each (else the bundled)
//! [keys]              # an action's keys in every context it has default keys in
//! run = ["<F5>", "<C-r>"]
//! [keys.keyspace]     # or in one context: global, editor, panes, keyspace, overlay
//! delete_key = "x"
//! ```

use std::path::{Path, PathBuf};

/// Overrides the config directory (tests, portable setups).
pub const CONFIG_DIR_ENV: &str = "EVALBENCH_CONFIG_DIR";
pub const FILE_NAME: &str = "config.toml";

/// The directory holding `config.toml`: `$EVALBENCH_CONFIG_DIR`, else the platform's config dir.
pub fn config_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os(CONFIG_DIR_ENV).filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    // Unit tests never read the user's own configuration.
    if cfg!(test) {
        return None;
    }
    directories::ProjectDirs::from("", "", "evalbench").map(|p| p.config_dir().to_path_buf())
}

#[derive(Debug, Clone)]
pub struct Config {
    pub theme: String,
    pub busy_threshold_ms: u64,
    /// The sandbox's memory budget in MiB (engine/budget.rs).
    pub memory_limit_mb: u64,
    /// The server profile the sandbox imitates (engine/profile.rs).
    pub profile: &'static crate::engine::profile::Profile,
    /// A folder of lessons (one sub-folder each) Alt-L offers instead of the bundled ones.
    pub lessons_dir: Option<PathBuf>,
    /// (context, action name, keys) overrides; an empty context means the action's default contexts.
    pub key_overrides: Vec<(String, String, Vec<String>)>,
    /// Warnings found while loading.
    pub warnings: Vec<String>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            theme: "dark".into(),
            busy_threshold_ms: crate::engine::sandbox::DEFAULT_BUSY_THRESHOLD_MS,
            memory_limit_mb: (crate::engine::sandbox::DEFAULT_MEMORY_LIMIT >> 20) as u64,
            key_overrides: Vec::new(),
            warnings: Vec::new(),
            profile: crate::engine::profile::DEFAULT,
            lessons_dir: None,
        }
    }
}

impl Config {
    /// The user's configuration; a missing file gives the defaults silently.
    pub fn load() -> Config {
        match config_dir() {
            Some(dir) => Config::load_from(&dir.join(FILE_NAME)),
            None => Config::default(),
        }
    }

    /// The configuration in `path`; any problem gives a warning and the defaults for that part.
    pub fn load_from(path: &Path) -> Config {
        match crate::engine::input::read_bounded_text(path, &crate::engine::input::SETTINGS) {
            Ok(text) => Config::parse(&text, &path.display().to_string()),
            Err(e) if e.is_not_found() => Config::default(),
            Err(e) => Config {
                warnings: vec![format!("{e}; using the defaults")],
                ..Config::default()
            },
        }
    }

    /// Parse the TOML `text` (`origin` names it in warnings).
    pub fn parse(text: &str, origin: &str) -> Config {
        let mut config = Config::default();
        let table: toml::Table = match text.parse() {
            Ok(table) => table,
            Err(e) => {
                config.warnings.push(broken_config(text, origin, &e));
                return config;
            }
        };
        let mut problems = Problems::new();
        for (name, value) in &table {
            config.apply(name, value, &mut problems);
        }
        // A setting's warning says where its key is written.
        for (path, w) in problems {
            let path: Vec<&str> = path.iter().map(String::as_str).collect();
            let place = setting_at(text, &path).map_or(String::new(), |(l, c)| format!("{l}:{c}:"));
            config.warnings.push(format!("{origin}:{place} {w}"));
        }
        config
    }

    /// One top-level setting.
    fn apply(&mut self, name: &str, value: &toml::Value, problems: &mut Problems) {
        let mut warn = |w: String| problems.push((vec![name.to_string()], w));
        match (name, value) {
            ("theme", toml::Value::String(theme)) if !theme.trim().is_empty() => {
                self.theme = theme.trim().to_string()
            }
            ("theme", _) => warn("theme must be a theme name such as \"dark\"".into()),
            ("lessons_dir", toml::Value::String(dir)) if !dir.trim().is_empty() => {
                self.lessons_dir = Some(PathBuf::from(dir.trim()))
            }
            ("lessons_dir", _) => warn(
                "lessons_dir must be the path of a folder holding one sub-folder per lesson".into(),
            ),
            ("busy_threshold_ms", toml::Value::Integer(ms)) if *ms > 0 => {
                self.busy_threshold_ms = *ms as u64
            }
            ("busy_threshold_ms", _) => {
                warn("busy_threshold_ms must be a positive number of milliseconds".into())
            }
            ("memory_limit_mb", toml::Value::Integer(mb)) if (1..=1 << 30).contains(mb) => {
                self.memory_limit_mb = *mb as u64
            }
            ("memory_limit_mb", _) => warn(
                "memory_limit_mb must be a positive number of MiB (the run's memory budget)".into(),
            ),
            ("profile", toml::Value::String(id)) => {
                match crate::engine::profile::Profile::by_id(id) {
                    Ok(p) => self.profile = p,
                    Err(e) => warn(e),
                }
            }
            ("profile", _) => warn(format!(
                "profile must be a profile name: {}",
                crate::engine::profile::ids()
            )),
            ("keys", toml::Value::Table(keys)) => self.apply_keys(keys, problems),
            ("keys", _) => warn("keys must be a table ([keys])".into()),
            (other, _) => warn(format!("unknown setting '{other}' (ignored)")),
        }
    }

    /// `[keys]`: `action = key(s)` for every context, or `[keys.context]` tables of them.
    fn apply_keys(&mut self, keys: &toml::Table, problems: &mut Problems) {
        for (name, value) in keys {
            match value {
                toml::Value::Table(actions) => {
                    for (action, keys) in actions {
                        match key_list(keys) {
                            Some(list) => {
                                self.key_overrides
                                    .push((name.clone(), action.clone(), list))
                            }
                            None => problems.push((
                                vec!["keys".into(), name.clone(), action.clone()],
                                format!("keys.{name}.{action} must be a key or a list of keys"),
                            )),
                        }
                    }
                }
                other => match key_list(other) {
                    Some(list) => self.key_overrides.push((String::new(), name.clone(), list)),
                    None => problems.push((
                        vec!["keys".into(), name.clone()],
                        format!("keys.{name} must be a key or a list of keys, like [\"<F5>\"]"),
                    )),
                },
            }
        }
    }
}

/// The settings that could not be taken: the key's path in the file and what is wrong.
type Problems = Vec<(Vec<String>, String)>;

/// A file that is not TOML: where (file:line:column), what, and what a setting looks like.
fn broken_config(text: &str, origin: &str, e: &toml::de::Error) -> String {
    let at = e.span().map_or(0, |span| span.start.min(text.len()));
    let before = &text[..text.floor_char_boundary(at)];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    format!(
        "{origin}:{line}:{column}: broken config: {}; write one setting a line, \
         like theme = \"light\" or busy_threshold_ms = 5000; using the defaults",
        e.message().trim().replace('\n', ", ")
    )
}

/// A key or a list of keys as strings.
fn key_list(value: &toml::Value) -> Option<Vec<String>> {
    match value {
        toml::Value::String(key) => Some(vec![key.clone()]),
        toml::Value::Array(items) => items
            .iter()
            .map(|v| v.as_str().map(str::to_string))
            .collect(),
        _ => None,
    }
}

/// Where the setting at `path` (table keys from the root) is written in `text`: its key's line
/// and column.
fn setting_at(text: &str, path: &[&str]) -> Option<(usize, usize)> {
    let doc = toml_edit::ImDocument::parse(text).ok()?;
    let mut table: &dyn toml_edit::TableLike = doc.as_table();
    for (i, name) in path.iter().enumerate() {
        let (key, item) = table.get_key_value(name)?;
        if i + 1 == path.len() {
            return key
                .span()
                .map(|span| super::test_file::line_column(text, span.start));
        }
        table = item.as_table_like()?;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wrong_setting_is_placed_at_its_key() {
        let text = "theme = \"light\"\nbusy_threshold_ms = -5\n\n[keys]\nrun = 3\n[keys.keyspace]\n  delete_key = {}\n";
        let config = Config::parse(text, "config.toml");
        assert_eq!(config.theme, "light");
        assert_eq!(
            config.warnings,
            [
                "config.toml:2:1: busy_threshold_ms must be a positive number of milliseconds",
                // Tables are read in key order.
                "config.toml:7:3: keys.keyspace.delete_key must be a key or a list of keys",
                "config.toml:5:1: keys.run must be a key or a list of keys, like [\"<F5>\"]",
            ]
        );
        // A dotted key is placed at its last part.
        let config = Config::parse("keys.global.quit = 1\n", "c");
        assert_eq!(
            config.warnings,
            ["c:1:13: keys.global.quit must be a key or a list of keys"]
        );
    }
}
