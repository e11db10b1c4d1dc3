//! User configuration: defaults, merged with `config.toml` in the config directory
//! (theme, busy threshold, key overrides). A broken file gives a warning and the defaults. The
//! file's format is read in engine/formats/config.rs; here it is found and its keys applied.
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

pub use crate::engine::formats::config::Config;

use super::action::Action;
use super::keymap::{parse_key, Context, Keymap};

#[cfg(test)]
use crate::engine::formats::config::FILE_NAME;
pub use crate::engine::formats::config::{config_dir, CONFIG_DIR_ENV};

fn context_named(name: &str) -> Option<Context> {
    Context::ALL.into_iter().find(|c| c.name() == name)
}

fn action_named(name: &str) -> Option<Action> {
    Action::ALL.iter().copied().find(|a| a.name() == name)
}

impl Config {
    /// Apply key overrides; returns warnings (from loading too) for what could not be applied.
    /// A bad override leaves that action's default keys in place.
    pub fn apply_key_overrides(&self, keymap: &mut Keymap) -> Vec<String> {
        let mut warnings = self.warnings.clone();
        let defaults = Keymap::default();
        for (context_name, action_name, keys) in &self.key_overrides {
            let Some(action) = action_named(action_name) else {
                warnings.push(format!(
                    "config: unknown action '{action_name}' (see the names in the docs; ignored)"
                ));
                continue;
            };
            let contexts: Vec<Context> = if context_name.is_empty() {
                // The contexts the action has default keys in, else everywhere.
                let mut found: Vec<Context> = Vec::new();
                for b in defaults.bindings.iter().filter(|b| b.action == action) {
                    if !found.contains(&b.context) {
                        found.push(b.context);
                    }
                }
                if found.is_empty() {
                    found.push(Context::Global);
                }
                found
            } else {
                match context_named(context_name) {
                    Some(context) => vec![context],
                    None => {
                        warnings.push(format!(
                            "config: unknown key context '{context_name}' ({})",
                            Context::ALL.map(Context::name).join(", ")
                        ));
                        continue;
                    }
                }
            };
            // Check every notation first so a bad one leaves the defaults untouched.
            if let Some(bad) = keys.iter().find(|k| parse_key(k).is_none()) {
                warnings.push(format!(
                    "config: bad key notation {bad:?} for '{action_name}' (like \"<C-r>\", \"<F5>\", \"a\"); default keys kept"
                ));
                continue;
            }
            for context in contexts {
                // The override wins over another action bound to the same key.
                for key in keys.iter().filter_map(|k| parse_key(k)) {
                    keymap
                        .bindings
                        .retain(|b| !(b.context == context && b.key == key && b.action != action));
                }
                if let Err(e) = keymap.rebind(context, action, keys) {
                    warnings.push(format!("config: {action_name}: {e}"));
                }
            }
        }
        warnings
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use std::path::Path;

    fn key(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, modifiers)
    }

    fn applied(text: &str) -> (Keymap, Vec<String>) {
        let config = Config::parse(text, "config.toml");
        let mut keymap = Keymap::default();
        let warnings = config.apply_key_overrides(&mut keymap);
        (keymap, warnings)
    }

    #[test]
    fn settings_are_read() {
        let config = Config::parse(
            "theme = \"light\"\nbusy_threshold_ms = 250\nmemory_limit_mb = 256\nprofile = \"valkey-9.1\"\n",
            "c",
        );
        assert_eq!(config.theme, "light");
        assert_eq!(config.busy_threshold_ms, 250);
        assert_eq!(config.memory_limit_mb, 256);
        assert_eq!(config.profile.id, "valkey-9.1");
        assert!(config.warnings.is_empty());
    }

    #[test]
    fn a_lessons_folder_is_read_and_a_wrong_one_warned_about() {
        let config = Config::parse("lessons_dir = \"/srv/workshop/lessons\"\n", "c");
        assert_eq!(
            config.lessons_dir.as_deref(),
            Some(Path::new("/srv/workshop/lessons"))
        );
        let config = Config::parse("lessons_dir = 3\n", "c");
        assert_eq!(config.lessons_dir, None);
        assert_eq!(
            config.warnings,
            ["c:1:1: lessons_dir must be the path of a folder holding one sub-folder per lesson"]
        );
    }

    #[test]
    fn empty_and_missing_files_give_the_defaults_silently() {
        let config = Config::parse("", "c");
        assert_eq!(config.theme, "dark");
        assert!(config.warnings.is_empty());
        let missing = std::env::temp_dir().join("evalbench-no-such-dir/config.toml");
        let config = Config::load_from(&missing);
        assert!(config.warnings.is_empty());
        assert_eq!(
            config.busy_threshold_ms,
            crate::engine::sandbox::DEFAULT_BUSY_THRESHOLD_MS
        );
    }

    #[test]
    fn broken_file_warns_and_gives_the_defaults() {
        let config = Config::parse("theme = \"light\"\nbusy_threshold_ms = [", "config.toml");
        assert_eq!(config.theme, "dark");
        assert_eq!(config.warnings.len(), 1);
        assert_eq!(
            config.warnings[0],
            "config.toml:2:22: broken config: invalid array, expected `]`; write one setting a \
             line, like theme = \"light\" or busy_threshold_ms = 5000; using the defaults"
        );
        // Not UTF-8 / binary junk is just as harmless.
        let config = Config::parse("\u{0}\u{1}[[[", "c");
        assert_eq!(config.warnings.len(), 1);
    }

    #[test]
    fn bad_values_warn_and_keep_their_defaults() {
        let config = Config::parse(
            "theme = 3\nbusy_threshold_ms = -5\ncolour = \"red\"\nkeys = 1\n",
            "c",
        );
        assert_eq!(config.theme, "dark");
        assert_eq!(
            config.busy_threshold_ms,
            crate::engine::sandbox::DEFAULT_BUSY_THRESHOLD_MS
        );
        assert_eq!(config.warnings.len(), 4, "{:?}", config.warnings);
        assert!(config.warnings.iter().any(|w| w.contains("'colour'")));
    }

    #[test]
    fn key_overrides_rebind_in_the_default_contexts() {
        let (keymap, warnings) = applied("[keys]\nrun = [\"<F8>\", \"<C-e>\"]\nup = \"w\"\n");
        assert!(warnings.is_empty(), "{warnings:?}");
        let f8 = key(KeyCode::F(8), KeyModifiers::NONE);
        let ce = key(KeyCode::Char('e'), KeyModifiers::CONTROL);
        let f5 = key(KeyCode::F(5), KeyModifiers::NONE);
        assert_eq!(keymap.lookup(Context::Global, &f8), Some(Action::Run));
        assert_eq!(keymap.lookup(Context::Global, &ce), Some(Action::Run));
        assert_eq!(keymap.lookup(Context::Global, &f5), None);
        // `up` has default keys in the panes and in overlays: both are rebound.
        let w = key(KeyCode::Char('w'), KeyModifiers::NONE);
        assert_eq!(keymap.lookup(Context::Panes, &w), Some(Action::Up));
        assert_eq!(keymap.lookup(Context::Overlay, &w), Some(Action::Up));
        let k = key(KeyCode::Char('k'), KeyModifiers::NONE);
        assert_eq!(keymap.lookup(Context::Panes, &k), None);
    }

    #[test]
    fn key_overrides_per_context() {
        let (keymap, warnings) = applied("[keys.keyspace]\ndelete_key = [\"x\"]\n");
        assert!(warnings.is_empty(), "{warnings:?}");
        let x = key(KeyCode::Char('x'), KeyModifiers::NONE);
        let d = key(KeyCode::Char('d'), KeyModifiers::NONE);
        assert_eq!(
            keymap.lookup(Context::Keyspace, &x),
            Some(Action::DeleteKey)
        );
        assert_eq!(keymap.lookup(Context::Keyspace, &d), None);
        // Other contexts keep their bindings of `x`.
        assert_eq!(keymap.lookup(Context::Panes, &x), Some(Action::StepStop));
    }

    #[test]
    fn an_override_takes_a_key_from_another_action() {
        let (keymap, _) = applied("[keys]\nrun = \"<C-s>\"\n");
        let cs = key(KeyCode::Char('s'), KeyModifiers::CONTROL);
        assert_eq!(keymap.lookup(Context::Global, &cs), Some(Action::Run));
    }

    #[test]
    fn unknown_action_warns_and_keeps_the_defaults() {
        let (keymap, warnings) = applied("[keys]\nfly = [\"<F8>\"]\n");
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("unknown action 'fly'"), "{warnings:?}");
        let defaults = Keymap::default();
        assert_eq!(keymap.bindings, defaults.bindings);
    }

    #[test]
    fn bad_notation_warns_and_keeps_the_defaults() {
        let (keymap, warnings) = applied("[keys]\nrun = [\"<F12>\", \"<C-nope>\"]\nsave = 5\n");
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings.iter().any(|w| w.contains("<C-nope>")));
        let f5 = key(KeyCode::F(5), KeyModifiers::NONE);
        let f12 = key(KeyCode::F(12), KeyModifiers::NONE);
        assert_eq!(keymap.lookup(Context::Global, &f5), Some(Action::Run));
        assert_eq!(keymap.lookup(Context::Global, &f12), None);
    }

    #[test]
    fn unknown_context_warns() {
        let (keymap, warnings) = applied("[keys.sidebar]\nrun = \"<F8>\"\n");
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("'sidebar'"));
        assert_eq!(keymap.bindings, Keymap::default().bindings);
    }

    #[test]
    fn load_reads_the_config_dir_file() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        std::fs::write(dir.join(FILE_NAME), "theme = \"light\"\n").unwrap();
        let config = Config::load_from(&dir.join(FILE_NAME));
        assert_eq!(config.theme, "light");
    }
}
