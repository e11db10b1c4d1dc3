//! Files: opening and saving scripts with their sidecar, the samples/recent picker, the autosave
//! of everything typed (data directory), and seed keyspace files.
//!
//! Every public function that touches the data directory has an `_in(dir, ...)` twin that the
//! tests call with a temporary directory.

use super::config::Config;
use super::inputs::InputsState;
use crate::engine::formats::{load_keyspace, load_sidecar_keyspace, read_sidecar, sidecar_path};
use crate::engine::input::{self, read_bounded, read_bounded_text};
use crate::engine::keyspace::{keyspace_to_json, Db};
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Overrides the data directory (tests, portable setups).
pub const DATA_DIR_ENV: &str = "EVALBENCH_DATA_DIR";
const RECENT_FILE: &str = "recent.json";
const RECENT_MAX: usize = 10;
/// Picker paths of the samples compiled into the binary start with this.
pub const EMBEDDED_PREFIX: &str = "embedded:";

/// Samples compiled in, for when there is no `samples/` directory: (file name, script, sidecar).
/// Add a line per sample added to `samples/`.
const EMBEDDED_SAMPLES: &[(&str, &str, &str)] = &[
    (
        "batch_delete.lua",
        include_str!("../../samples/batch_delete.lua"),
        include_str!("../../samples/batch_delete.json"),
    ),
    (
        "counter_library.lua", // a function library
        include_str!("../../samples/counter_library.lua"),
        include_str!("../../samples/counter_library.json"),
    ),
    (
        "capped_counter.lua",
        include_str!("../../samples/capped_counter.lua"),
        include_str!("../../samples/capped_counter.json"),
    ),
    (
        "delayed_queue_pop.lua",
        include_str!("../../samples/delayed_queue_pop.lua"),
        include_str!("../../samples/delayed_queue_pop.json"),
    ),
    (
        "idempotency_key.lua",
        include_str!("../../samples/idempotency_key.lua"),
        include_str!("../../samples/idempotency_key.json"),
    ),
    (
        "lock_acquire.lua",
        include_str!("../../samples/lock_acquire.lua"),
        include_str!("../../samples/lock_acquire.json"),
    ),
    (
        "rate_limiter.lua",
        include_str!("../../samples/rate_limiter.lua"),
        include_str!("../../samples/rate_limiter.json"),
    ),
    (
        "stock_decrement.lua",
        include_str!("../../samples/stock_decrement.lua"),
        include_str!("../../samples/stock_decrement.json"),
    ),
    (
        "token_bucket.lua",
        include_str!("../../samples/token_bucket.lua"),
        include_str!("../../samples/token_bucket.json"),
    ),
    (
        "unlock.lua",
        include_str!("../../samples/unlock.lua"),
        include_str!("../../samples/unlock.json"),
    ),
    (
        "versioned_cas.lua",
        include_str!("../../samples/versioned_cas.lua"),
        include_str!("../../samples/versioned_cas.json"),
    ),
];

/// The directory of the autosave and the recent list: `$EVALBENCH_DATA_DIR`, else the platform's.
pub fn data_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os(DATA_DIR_ENV).filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    // Unit tests never touch the user's own autosave and recent list, nor leave folders in the
    // system's temporary folder: theirs is in the project's build folder, which `cargo clean` empties.
    if cfg!(test) {
        return Some(
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("target/tmp")
                .join(format!("unit-data-{}", std::process::id())),
        );
    }
    directories::ProjectDirs::from("", "", "evalbench").map(|p| p.data_dir().to_path_buf())
}

/// Unix ms now, but never before `sandbox_ms` (the sandbox clock may have been advanced).
pub fn now_ms(sandbox_ms: i64) -> i64 {
    let wall = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0);
    wall.max(sandbox_ms)
}

/// `~/x.lua` is `x.lua` in the home directory (typed paths in prompts).
pub fn expand_home(path: &Path) -> PathBuf {
    match (path.strip_prefix("~"), directories::BaseDirs::new()) {
        (Ok(rest), Some(dirs)) => dirs.home_dir().join(rest),
        _ => path.to_path_buf(),
    }
}

/// Write `bytes` to `path` atomically (`engine::output`): a crash never leaves a half-written
/// file, symbolic links are written through, an existing file keeps its permissions and a new one
/// gets the umask's.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), String> {
    write_with_mode(path, bytes, None)
}

/// As `write_atomically`, for evalbench's own files (autosave, recent list), which may hold a
/// script's text and file names: owner-only (0600) whatever the umask or an older file's mode.
pub fn write_private(path: &Path, bytes: &[u8]) -> Result<(), String> {
    write_with_mode(path, bytes, Some(0o600))
}

/// Create `dir` (and its parents) owner-only (0700). An existing directory is left as it is: it
/// may be one the user chose (`EVALBENCH_DATA_DIR`).
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

fn write_with_mode(path: &Path, bytes: &[u8], mode: Option<u32>) -> Result<(), String> {
    let options = crate::engine::output::Options {
        mode,
        create_new: false,
    };
    crate::engine::output::write_with(path, options, |w| w.write_all(bytes))
        .map_err(|e| e.to_string())
}

// ---------------------------------------------------------------------------------------------
// Scripts and sidecars

pub struct Sidecar {
    pub keys: Vec<String>,
    pub argv: Vec<String>,
    pub seed: Db,
    /// The function of a library the form calls (`"function"`).
    pub function: Option<String>,
    pub breakpoints: Vec<crate::engine::formats::SidecarBreakpoint>,
    pub watches: Vec<String>,
    /// The run clock's offset from the seed's time (ms).
    pub clock_offset_ms: i64,
    pub keep_state: bool,
}

pub struct Opened {
    /// Buffer text: bytes that are not UTF-8 stand for themselves (`editor::decode_script`).
    pub text: String,
    /// The path the buffer gets (None for a built-in sample: saving asks for a path).
    pub path: Option<PathBuf>,
    pub sidecar: Option<Sidecar>,
    /// Why the sidecar was ignored.
    pub sidecar_error: Option<String>,
}

fn parse_sidecar(car_path: &Path, text: &str, now_ms: i64) -> Result<Sidecar, String> {
    let car: crate::engine::formats::Sidecar = serde_json::from_str(text).map_err(|e| {
        format!(
            "{}:{}:{}: malformed sidecar: {e}",
            car_path.display(),
            e.line(),
            e.column()
        )
    })?;
    let seed = match &car.keyspace {
        Some(ks) => load_sidecar_keyspace(car_path, text, ks, now_ms).map_err(|e| e.message)?,
        None => Db::new(),
    };
    Ok(Sidecar {
        keys: car.keys,
        argv: car.argv,
        seed,
        function: car.function,
        breakpoints: car.breakpoints,
        watches: car.watches,
        // Within what the advance-clock prompt allows: a hand-edited number cannot overflow.
        clock_offset_ms: car.clock_offset_ms.clamp(0, i64::MAX / 4_000),
        keep_state: car.keep_state,
    })
}

fn embedded_sample(path: &Path) -> Option<&'static (&'static str, &'static str, &'static str)> {
    let name = path.to_str()?.strip_prefix(EMBEDDED_PREFIX)?;
    EMBEDDED_SAMPLES.iter().find(|(n, _, _)| *n == name)
}

/// Read a script and its sidecar. A broken sidecar does not stop the script from opening.
pub fn open_script(path: &Path, now_ms: i64) -> Result<Opened, String> {
    if let Some((name, script, car)) = embedded_sample(path) {
        let (sidecar, sidecar_error) = match parse_sidecar(Path::new(name), car, now_ms) {
            Ok(car) => (Some(car), None),
            Err(e) => (None, Some(e)),
        };
        return Ok(Opened {
            text: script.to_string(),
            path: None,
            sidecar,
            sidecar_error,
        });
    }
    // Any bytes: a script need not be UTF-8 (Lua strings are bytes, and `evalbench run` takes it).
    let bytes = read_bounded(path, &input::SCRIPT).map_err(|e| e.to_string())?;
    let text = crate::tui::editor::decode_script(&bytes);
    let car_path = sidecar_path(path);
    let (sidecar, sidecar_error) = if car_path == path || !car_path.exists() {
        (None, None)
    } else {
        match read_bounded_text(&car_path, &input::KEYSPACE_JSON)
            .map_err(|e| e.to_string())
            .and_then(|t| parse_sidecar(&car_path, &t, now_ms))
        {
            Ok(car) => (Some(car), None),
            Err(e) => (None, Some(e)),
        }
    };
    Ok(Opened {
        text,
        path: Some(path.to_path_buf()),
        sidecar,
        sidecar_error,
    })
}

/// What a save writes to the sidecar besides the script.
pub struct SidecarContent<'a> {
    pub inputs: &'a InputsState,
    pub seed: &'a Db,
    /// The seed's time: its TTLs are saved relative to it.
    pub now_ms: i64,
    /// The form's function of a library (`"function"`).
    pub function: Option<&'a str>,
    pub breakpoints: Vec<crate::engine::formats::SidecarBreakpoint>,
    pub watches: Vec<String>,
    pub clock_offset_ms: i64,
    pub keep_state: bool,
}

/// How a save treats the file at the sidecar's path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SidecarWrite {
    /// Write it only if it is missing or an evalbench sidecar (its other fields are kept).
    IfOurs,
    /// Replace whatever is there (the user said so).
    Replace,
    /// Leave it as it is: the script only.
    Skip,
}

/// What is at a script's sidecar path.
#[derive(Debug, Clone, PartialEq)]
pub enum SidecarFile {
    Missing,
    /// An evalbench sidecar: its fields, which a save keeps (its description among them).
    Ours(serde_json::Map<String, serde_json::Value>),
    /// A file evalbench did not write (or cannot read): why, in words.
    Foreign(String),
}

/// The fields a sidecar may have: a JSON object with any other field is someone else's file.
const SIDECAR_FIELDS: &[&str] = &[
    "description",
    "keys",
    "argv",
    "keyspace",
    "expected",
    "function",
    "breakpoints",
    "watches",
    "clock_offset_ms",
    "keep_state",
];

/// Whether the file at `car_path` is an evalbench sidecar, told by its shape: a JSON object whose
/// fields are all a sidecar's, each of a sidecar's type. Anything else (another tool's
/// `notes.json`, a seed file, a sidecar broken by hand) is not evalbench's to replace or merge
/// into without asking.
pub fn classify_sidecar(car_path: &Path) -> SidecarFile {
    let text = match read_bounded_text(car_path, &input::KEYSPACE_JSON) {
        Ok(text) => text,
        Err(input::InputError::Io { source, .. })
            if source.kind() == std::io::ErrorKind::NotFound =>
        {
            return SidecarFile::Missing
        }
        Err(e) => return SidecarFile::Foreign(e.to_string()),
    };
    let map = match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(serde_json::Value::Object(map)) => map,
        Ok(_) => {
            return SidecarFile::Foreign(format!(
                "{}: not a JSON object, so not an evalbench sidecar",
                car_path.display()
            ))
        }
        Err(e) => {
            return SidecarFile::Foreign(format!(
                "{}:{}:{}: malformed sidecar: {e}",
                car_path.display(),
                e.line(),
                e.column()
            ))
        }
    };
    let strange: Vec<&str> = map
        .keys()
        .map(String::as_str)
        .filter(|k| !SIDECAR_FIELDS.contains(k))
        .collect();
    if !strange.is_empty() {
        let quoted: Vec<String> = strange.iter().take(3).map(|k| format!("{k:?}")).collect();
        let more = if strange.len() > 3 { ", …" } else { "" };
        return SidecarFile::Foreign(format!(
            "{}: not an evalbench sidecar (it has {} {}{more})",
            car_path.display(),
            if strange.len() == 1 {
                "field"
            } else {
                "fields"
            },
            quoted.join(", ")
        ));
    }
    if let Err(e) = serde_json::from_value::<crate::engine::formats::Sidecar>(
        serde_json::Value::Object(map.clone()),
    ) {
        return SidecarFile::Foreign(format!(
            "{}: not an evalbench sidecar ({e})",
            car_path.display()
        ));
    }
    SidecarFile::Ours(map)
}

/// Write the script, then its sidecar (keys, argv, keyspace; other fields of an existing sidecar,
/// such as `description`, are kept). `Err`: the script was not saved. `Ok(Some(why))`: the script
/// was saved but not its sidecar (say, unbalanced quotes in KEYS). `text` is buffer text: the
/// bytes it stands for are written (`editor::encode_script`).
pub fn save_script(
    path: &Path,
    text: &str,
    inputs: &InputsState,
    seed: &Db,
    now_ms: i64,
) -> Result<Option<String>, String> {
    save_script_with(path, text, inputs, seed, now_ms, None)
}

/// `save_script`, and the form's function of a library as the sidecar's `"function"`.
pub fn save_script_with(
    path: &Path,
    text: &str,
    inputs: &InputsState,
    seed: &Db,
    now_ms: i64,
    function: Option<&str>,
) -> Result<Option<String>, String> {
    let content = SidecarContent {
        inputs,
        seed,
        now_ms,
        function,
        breakpoints: Vec::new(),
        watches: Vec::new(),
        clock_offset_ms: 0,
        keep_state: false,
    };
    save_buffer(path, text, &content, SidecarWrite::IfOurs)
}

/// Save the script and, as `mode` says, its sidecar. A file at the sidecar's path that is not an
/// evalbench sidecar is left as it is unless `mode` is `Replace`; the answer says so.
pub fn save_buffer(
    path: &Path,
    text: &str,
    content: &SidecarContent,
    mode: SidecarWrite,
) -> Result<Option<String>, String> {
    let car_path = sidecar_path(path);
    if car_path == path {
        return Err(format!(
            "{}: the sidecar would overwrite the script; use a .lua name",
            path.display()
        ));
    }
    write_atomically(path, &crate::tui::editor::encode_script(text))?;
    if mode == SidecarWrite::Skip {
        let name = car_path.file_name().unwrap_or_default().to_string_lossy();
        return Ok(Some(format!(
            "saved {} without its sidecar ({name} stays as it is)",
            path.display()
        )));
    }
    let not_sidecar =
        |e: String| Some(format!("saved {} but not its sidecar: {e}", path.display()));
    let keys = InputsState::values(&content.inputs.keys_text(), "KEYS");
    let argv = InputsState::values(&content.inputs.argv_text(), "ARGV");
    let (keys, argv) = match (keys, argv) {
        (Ok(k), Ok(a)) => (k, a),
        (Err(e), _) | (_, Err(e)) => return Ok(not_sidecar(e)),
    };
    let mut car = match (classify_sidecar(&car_path), mode) {
        (SidecarFile::Ours(map), _) => map,
        (SidecarFile::Missing, _) | (SidecarFile::Foreign(_), SidecarWrite::Replace) => {
            Default::default()
        }
        (SidecarFile::Foreign(why), _) => {
            return Ok(not_sidecar(format!(
                "{why}; it was left as it is (fix or remove it, then save again)"
            )))
        }
    };
    car.insert("keys".into(), keys.into());
    car.insert("argv".into(), argv.into());
    car.insert(
        "keyspace".into(),
        keyspace_to_json(content.seed, content.now_ms),
    );
    if let Some(function) = content.function {
        car.insert("function".into(), function.into());
    }
    // Only when there are some (or were): a sidecar stays as short as it was.
    if !content.breakpoints.is_empty() || car.contains_key("breakpoints") {
        let value = serde_json::to_value(&content.breakpoints).unwrap_or_default();
        car.insert("breakpoints".into(), value);
    }
    if !content.watches.is_empty() || car.contains_key("watches") {
        car.insert("watches".into(), content.watches.clone().into());
    }
    // The run clock and keep state: only when not the defaults (or there before).
    if content.clock_offset_ms != 0 || car.contains_key("clock_offset_ms") {
        car.insert("clock_offset_ms".into(), content.clock_offset_ms.into());
    }
    if content.keep_state || car.contains_key("keep_state") {
        car.insert("keep_state".into(), content.keep_state.into());
    }
    let json = serde_json::to_string_pretty(&serde_json::Value::Object(car))
        .unwrap_or_else(|_| "{}".into());
    Ok(write_atomically(&car_path, format!("{json}\n").as_bytes())
        .err()
        .and_then(not_sidecar))
}

pub fn load_seed(path: &Path, now_ms: i64) -> Result<Db, String> {
    let text = read_bounded_text(path, &input::KEYSPACE_JSON).map_err(|e| e.to_string())?;
    load_keyspace(path, &text, now_ms).map_err(|e| e.message)
}

pub fn save_seed(path: &Path, seed: &Db, now_ms: i64) -> Result<(), String> {
    let text =
        serde_json::to_string_pretty(&keyspace_to_json(seed, now_ms)).map_err(|e| e.to_string())?;
    write_atomically(path, text.as_bytes())
}

// ---------------------------------------------------------------------------------------------
// The picker

/// The Ctrl-O picker: samples with their descriptions, then recent files.
pub struct PickerState {
    /// (path, description); built-in samples have `embedded:NAME` paths.
    pub entries: Vec<(PathBuf, String)>,
    /// How many of the entries are samples (they come first).
    pub samples: usize,
    /// Position in `shown` (the entries the filter lets through).
    pub selected: usize,
    /// What was typed: a filter on names and descriptions, or a path to open.
    pub query: String,
    /// Indices into `entries` of those shown.
    pub shown: Vec<usize>,
}

fn description_of(script: &Path) -> String {
    read_sidecar(&sidecar_path(script))
        .map(|c| c.description)
        .unwrap_or_default()
}

/// The `samples/` directory of the working directory, if there is one.
fn samples_dir() -> Option<PathBuf> {
    let dir = PathBuf::from("samples");
    dir.is_dir().then_some(dir)
}

impl PickerState {
    pub fn load(_config: &Config) -> PickerState {
        match data_dir() {
            Some(dir) => PickerState::load_in(samples_dir().as_deref(), &dir),
            None => PickerState::load_in(samples_dir().as_deref(), Path::new("")),
        }
    }

    /// Samples from `samples` (the built-in ones without it), then the recent files in `data`.
    pub fn load_in(samples: Option<&Path>, data: &Path) -> PickerState {
        let mut entries = Vec::new();
        match samples {
            Some(dir) => {
                let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
                    .map(|d| {
                        d.filter_map(|e| e.ok())
                            .map(|e| e.path())
                            .filter(|p| p.extension().is_some_and(|e| e == "lua"))
                            .collect()
                    })
                    .unwrap_or_default();
                paths.sort();
                for p in paths {
                    let description = description_of(&p);
                    entries.push((p, description));
                }
            }
            None => {
                for (name, _, car) in EMBEDDED_SAMPLES {
                    let description = serde_json::from_str::<crate::engine::formats::Sidecar>(car)
                        .map(|c| c.description)
                        .unwrap_or_default();
                    entries.push((
                        PathBuf::from(format!("{EMBEDDED_PREFIX}{name}")),
                        description,
                    ));
                }
            }
        }
        let samples_len = entries.len();
        let listed: Vec<PathBuf> = entries
            .iter()
            .filter_map(|(p, _)| std::fs::canonicalize(p).ok())
            .collect();
        for path in recent_in(data) {
            if path.is_file() && !listed.contains(&path) {
                let description = description_of(&path);
                entries.push((path, description));
            }
        }
        PickerState {
            shown: (0..entries.len()).collect(),
            entries,
            samples: samples_len,
            selected: 0,
            query: String::new(),
        }
    }

    /// Filter the entries: every word of `query` in the path or the description (any case).
    pub fn set_query(&mut self, query: String) {
        let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
        self.shown = (0..self.entries.len())
            .filter(|&i| {
                let (path, description) = &self.entries[i];
                let text = format!("{} {}", path.display(), description).to_lowercase();
                words.iter().all(|w| text.contains(w.as_str()))
            })
            .collect();
        self.query = query;
        self.selected = 0;
    }

    pub fn move_by(&mut self, delta: isize) {
        if !self.shown.is_empty() {
            self.selected =
                (self.selected as isize + delta).clamp(0, self.shown.len() as isize - 1) as usize;
        }
    }

    pub fn selected_path(&self) -> Option<PathBuf> {
        let i = *self.shown.get(self.selected)?;
        self.entries.get(i).map(|(p, _)| p.clone())
    }
}

// ---------------------------------------------------------------------------------------------
// Recent files

/// The recent files, most recent first.
pub fn recent() -> Vec<PathBuf> {
    data_dir().map(|d| recent_in(&d)).unwrap_or_default()
}

pub fn recent_in(dir: &Path) -> Vec<PathBuf> {
    read_bounded_text(&dir.join(RECENT_FILE), &input::SETTINGS)
        .ok()
        .and_then(|t| serde_json::from_str::<Vec<String>>(&t).ok())
        .unwrap_or_default()
        .into_iter()
        .map(PathBuf::from)
        .collect()
}

/// Put `path` first in the recent list (best effort: the list is a convenience).
pub fn remember_recent(path: &Path) {
    if let Some(dir) = data_dir() {
        let _ = remember_recent_in(&dir, path);
    }
}

pub fn remember_recent_in(dir: &Path, path: &Path) -> Result<(), String> {
    if path
        .to_str()
        .is_some_and(|p| p.starts_with(EMBEDDED_PREFIX))
    {
        return Ok(());
    }
    let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let mut list = recent_in(dir);
    list.retain(|p| *p != path);
    list.insert(0, path);
    list.truncate(RECENT_MAX);
    let names: Vec<String> = list
        .iter()
        .filter_map(|p| p.to_str().map(str::to_string))
        .collect();
    create_private_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let json = serde_json::to_string_pretty(&names).map_err(|e| e.to_string())?;
    write_private(&dir.join(RECENT_FILE), json.as_bytes())
}

// ---------------------------------------------------------------------------------------------
// Autosave

/// What the autosave keeps: the buffer, its path and the raw KEYS / ARGV fields.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Autosaved {
    pub text: String,
    pub path: Option<PathBuf>,
    pub keys: String,
    pub argv: String,
    /// The buffer's id (tui/buffer.rs): an untitled buffer's autosave is named by it.
    #[serde(default)]
    pub buffer: String,
}

impl Autosaved {
    fn fingerprint(&self) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.hash(&mut h);
        h.finish()
    }

    /// Which autosave this is.
    pub fn slot(&self) -> Slot<'_> {
        match &self.path {
            Some(path) => Slot::File(path),
            None => Slot::Untitled(&self.buffer),
        }
    }
}

impl Hash for Autosaved {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.text.hash(h);
        self.path.hash(h);
        self.keys.hash(h);
        self.argv.hash(h);
    }
}

/// One autosave per buffer: a script's by its full path, an untitled buffer's by its id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot<'a> {
    File(&'a Path),
    Untitled(&'a str),
}

impl<'a> Slot<'a> {
    /// The autosave of the buffer with this path (None: untitled) and id.
    pub fn of(path: Option<&'a Path>, buffer: &'a str) -> Slot<'a> {
        match path {
            Some(path) => Slot::File(path),
            None => Slot::Untitled(buffer),
        }
    }
}

/// Per autosave file: the fingerprint of what is on disk in the script's own files ("clean")
/// and of the last autosave written by this process.
#[derive(Default)]
struct Tracker {
    clean: Option<u64>,
    written: Option<u64>,
}

static TRACKERS: Mutex<Option<HashMap<PathBuf, Tracker>>> = Mutex::new(None);

fn with_tracker<T>(file: &Path, f: impl FnOnce(&mut Tracker) -> T) -> T {
    let mut guard = TRACKERS.lock().unwrap_or_else(|e| e.into_inner());
    let map = guard.get_or_insert_with(HashMap::new);
    f(map.entry(file.to_path_buf()).or_default())
}

/// What an autosave tick did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AutosaveOutcome {
    /// Nothing changed since the last tick.
    Unchanged,
    Written,
    /// Everything matches the saved files again: the autosave was removed.
    Discarded,
    /// Another evalbench is editing this script and writes its autosave.
    Locked,
}

/// Record that `state` is what the script's own files hold (after open and save).
pub fn mark_clean(state: &Autosaved) {
    if let Some(dir) = data_dir() {
        mark_clean_in(&dir, state);
    }
}

pub fn mark_clean_in(dir: &Path, state: &Autosaved) {
    let fp = state.fingerprint();
    with_tracker(&autosave_file(dir, state.slot()), |t| t.clean = Some(fp));
}

const UNTITLED_PREFIX: &str = "autosave-untitled-";

/// The autosave of a buffer: a script's is named by a hash of its full path (the path inside
/// says which script it is), an untitled buffer's by its id.
fn autosave_file(dir: &Path, slot: Slot) -> PathBuf {
    match slot {
        Slot::Untitled(id) => {
            // The id is evalbench's own (digits and dashes); anything else is kept out of the name.
            let id: String = id
                .chars()
                .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            dir.join(format!("{UNTITLED_PREFIX}{id}.json"))
        }
        Slot::File(p) => {
            let full = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
            let hash = crate::engine::script::sha1_hex(full.as_os_str().as_encoded_bytes());
            dir.join(format!("autosave-{}.json", &hash[..16]))
        }
    }
}

/// The same buffer (paths compared in full; untitled ones by id).
fn same_buffer(saved: &Autosaved, slot: Slot) -> bool {
    let full = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    match (saved.slot(), slot) {
        (Slot::Untitled(a), Slot::Untitled(b)) => a == b,
        (Slot::File(a), Slot::File(b)) => full(a) == full(b),
        _ => false,
    }
}

/// The lock files this process holds (an advisory `flock`, released by the kernel when the
/// process ends, crash included): one writer per buffer's autosave across instances.
static LOCKS: Mutex<Option<HashMap<PathBuf, std::fs::File>>> = Mutex::new(None);

/// Take (or keep) the lock of an autosave file; false when another process holds it.
fn hold_lock(file: &Path) -> bool {
    use std::os::unix::io::AsRawFd;
    let lock = file.with_extension("lock");
    let mut guard = LOCKS.lock().unwrap_or_else(|e| e.into_inner());
    let map = guard.get_or_insert_with(HashMap::new);
    if map.contains_key(&lock) {
        return true;
    }
    if let Some(dir) = lock.parent() {
        let _ = create_private_dir(dir);
    }
    let Ok(handle) = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock)
    else {
        return true; // no lock file possible (read-only dir): autosave as before
    };
    // SAFETY: flock on a file descriptor this function owns; no memory is involved.
    let taken = unsafe { libc::flock(handle.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0;
    if taken {
        map.insert(lock, handle);
    }
    taken
}

fn release_lock(file: &Path) {
    let lock = file.with_extension("lock");
    let mut guard = LOCKS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(map) = guard.as_mut() {
        map.remove(&lock);
    }
}

/// Let go of the buffer's autosave lock (another file was opened).
pub fn release_autosave(slot: Slot) {
    if let Some(dir) = data_dir() {
        release_lock(&autosave_file(&dir, slot));
    }
}

/// Whether this process may write the autosave of the buffer (no other evalbench is editing it).
pub fn may_autosave(slot: Slot) -> bool {
    data_dir().is_none_or(|dir| hold_lock(&autosave_file(&dir, slot)))
}

/// Autosave `state` if it changed since the last tick and differs from the saved files; remove
/// this session's autosave once it matches the saved files again. Costs a hash when unchanged.
pub fn autosave(state: &Autosaved) -> Result<AutosaveOutcome, String> {
    match data_dir() {
        Some(dir) => autosave_in(&dir, state),
        None => Ok(AutosaveOutcome::Unchanged),
    }
}

pub fn autosave_in(dir: &Path, state: &Autosaved) -> Result<AutosaveOutcome, String> {
    let fp = state.fingerprint();
    let file = autosave_file(dir, state.slot());
    let (clean, written) = with_tracker(&file, |t| (t.clean, t.written));
    if clean == Some(fp) {
        if written.is_some() {
            discard_autosave_in(dir, state.slot());
            return Ok(AutosaveOutcome::Discarded);
        }
        return Ok(AutosaveOutcome::Unchanged);
    }
    if written == Some(fp) {
        return Ok(AutosaveOutcome::Unchanged);
    }
    if !hold_lock(&file) {
        return Ok(AutosaveOutcome::Locked);
    }
    write_autosave_in(dir, state)?;
    with_tracker(&file, |t| t.written = Some(fp));
    Ok(AutosaveOutcome::Written)
}

/// Write the autosave now, atomically.
pub fn write_autosave_in(dir: &Path, state: &Autosaved) -> Result<(), String> {
    create_private_dir(dir).map_err(|e| format!("autosave: {}: {e}", dir.display()))?;
    let json = serde_json::to_string(state).map_err(|e| e.to_string())?;
    write_private(&autosave_file(dir, state.slot()), json.as_bytes())
        .map_err(|e| format!("autosave: {e}"))
}

pub fn autosave_exists(slot: Slot) -> bool {
    data_dir().is_some_and(|d| autosave_exists_in(&d, slot))
}

pub fn autosave_exists_in(dir: &Path, slot: Slot) -> bool {
    autosave_file(dir, slot).is_file()
}

pub fn load_autosave(slot: Slot) -> Option<Autosaved> {
    data_dir().and_then(|d| load_autosave_in(&d, slot))
}

/// The autosave of the buffer, only if it is that buffer's.
pub fn load_autosave_in(dir: &Path, slot: Slot) -> Option<Autosaved> {
    let text = read_bounded_text(&autosave_file(dir, slot), &input::KEYSPACE_JSON).ok()?;
    let saved: Autosaved = serde_json::from_str(&text).ok()?;
    same_buffer(&saved, slot).then_some(saved)
}

/// An untitled buffer's autosave left by an evalbench that ended without saving it (its lock is
/// free), the most recent first: its id. Its lock is taken, so no other evalbench offers it too.
pub fn orphaned_untitled() -> Option<String> {
    data_dir().and_then(|d| orphaned_untitled_in(&d))
}

pub fn orphaned_untitled_in(dir: &Path) -> Option<String> {
    let mut found: Vec<(std::time::SystemTime, String, PathBuf)> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let id = name.strip_prefix(UNTITLED_PREFIX)?.strip_suffix(".json")?;
            let modified = e.metadata().ok()?.modified().ok()?;
            Some((modified, id.to_string(), e.path()))
        })
        .collect();
    found.sort();
    found.into_iter().rev().find_map(|(_, id, file)| {
        let held = LOCKS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .is_some_and(|m| m.contains_key(&file.with_extension("lock")));
        // Held by this process: a buffer of this session, not an orphan.
        (!held && hold_lock(&file)).then_some(id)
    })
}

pub fn discard_autosave(slot: Slot) {
    if let Some(dir) = data_dir() {
        discard_autosave_in(&dir, slot);
    }
}

/// Remove the buffer's autosave (not while another evalbench is writing it); an untitled
/// buffer's lock file goes with it (its id is never used again).
pub fn discard_autosave_in(dir: &Path, slot: Slot) {
    let file = autosave_file(dir, slot);
    if hold_lock(&file) {
        let _ = std::fs::remove_file(&file);
        if matches!(slot, Slot::Untitled(_)) {
            let _ = std::fs::remove_file(file.with_extension("lock"));
            release_lock(&file);
        }
    }
    with_tracker(&file, |t| t.written = None);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::keyspace::Value;

    /// A fresh temporary directory (its path first), removed on drop.
    struct TempDir(PathBuf, #[allow(dead_code)] tempfile::TempDir);
    impl TempDir {
        fn new(name: &str) -> TempDir {
            let dir = tempfile::Builder::new()
                .prefix(&format!("evalbench-files-{name}-"))
                .tempdir()
                .unwrap();
            TempDir(dir.path().to_path_buf(), dir)
        }
    }

    /// The script the test autosaves belong to.
    const X_PATH: &str = "/tmp/x.lua";

    /// A new session's view of `dir`: nothing known about its autosaves.
    fn forget_trackers(dir: &Path) {
        let mut guard = TRACKERS.lock().unwrap();
        if let Some(map) = guard.as_mut() {
            map.retain(|file, _| !file.starts_with(dir));
        }
    }

    fn state(text: &str, keys: &str) -> Autosaved {
        Autosaved {
            text: text.into(),
            path: Some(PathBuf::from(X_PATH)),
            keys: keys.into(),
            argv: "1 \"two words\"".into(),
            buffer: String::new(),
        }
    }

    #[test]
    fn home_is_expanded() {
        let home = directories::BaseDirs::new().map(|d| d.home_dir().to_path_buf());
        if let Some(home) = home {
            assert_eq!(expand_home(Path::new("~/a.lua")), home.join("a.lua"));
        }
        assert_eq!(expand_home(Path::new("a/~/b")), PathBuf::from("a/~/b"));
        assert_eq!(expand_home(Path::new("~x")), PathBuf::from("~x"));
    }

    #[test]
    fn autosave_round_trip() {
        let dir = TempDir::new("autosave");
        assert!(!autosave_exists_in(&dir.0, Slot::File(Path::new(X_PATH))));
        let s = state("return 1\n-- ünïcode", "k1 k2");
        assert_eq!(autosave_in(&dir.0, &s), Ok(AutosaveOutcome::Written));
        assert!(autosave_exists_in(&dir.0, Slot::File(Path::new(X_PATH))));
        assert_eq!(
            load_autosave_in(&dir.0, Slot::File(Path::new(X_PATH))),
            Some(s.clone())
        );
        // No temporary file is left behind: the autosave and its lock file.
        let mut names: Vec<String> = std::fs::read_dir(&dir.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names.len(), 2, "{names:?}");
        assert!(names[0].starts_with("autosave-") && names[0].ends_with(".json"));
        assert!(names[1].ends_with(".lock"));
        discard_autosave_in(&dir.0, Slot::File(Path::new(X_PATH)));
        assert!(!autosave_exists_in(&dir.0, Slot::File(Path::new(X_PATH))));
        assert_eq!(
            load_autosave_in(&dir.0, Slot::File(Path::new(X_PATH))),
            None
        );
    }

    #[test]
    fn autosave_writes_only_changes() {
        let dir = TempDir::new("changes");
        let clean = state("return 1", "k");
        mark_clean_in(&dir.0, &clean);
        // Nothing typed yet: nothing written.
        assert_eq!(autosave_in(&dir.0, &clean), Ok(AutosaveOutcome::Unchanged));
        assert!(!autosave_exists_in(&dir.0, Slot::File(Path::new(X_PATH))));
        let edited = state("return 2", "k");
        assert_eq!(autosave_in(&dir.0, &edited), Ok(AutosaveOutcome::Written));
        assert_eq!(autosave_in(&dir.0, &edited), Ok(AutosaveOutcome::Unchanged));
        // A change of KEYS alone counts.
        let keys = state("return 2", "k other");
        assert_eq!(autosave_in(&dir.0, &keys), Ok(AutosaveOutcome::Written));
        assert_eq!(
            load_autosave_in(&dir.0, Slot::File(Path::new(X_PATH)))
                .unwrap()
                .keys,
            "k other"
        );
        // Back to what the files hold: the autosave goes.
        assert_eq!(autosave_in(&dir.0, &clean), Ok(AutosaveOutcome::Discarded));
        assert!(!autosave_exists_in(&dir.0, Slot::File(Path::new(X_PATH))));
    }

    #[test]
    fn recovery_after_a_crash() {
        let dir = TempDir::new("recovery");
        let s = state("local x = 1", "a");
        assert_eq!(autosave_in(&dir.0, &s), Ok(AutosaveOutcome::Written));
        // A "crash": a new session (a fresh tracker) finds the autosave.
        forget_trackers(&dir.0);
        assert!(autosave_exists_in(&dir.0, Slot::File(Path::new(X_PATH))));
        mark_clean_in(&dir.0, &state("other", ""));
        // The new session's first clean tick leaves the old autosave alone.
        assert_eq!(
            autosave_in(&dir.0, &state("other", "")),
            Ok(AutosaveOutcome::Unchanged)
        );
        assert_eq!(
            load_autosave_in(&dir.0, Slot::File(Path::new(X_PATH))),
            Some(s)
        );
        // A broken autosave reads as none.
        std::fs::write(
            autosave_file(&dir.0, Slot::File(Path::new(X_PATH))),
            "{ nope",
        )
        .unwrap();
        assert!(autosave_exists_in(&dir.0, Slot::File(Path::new(X_PATH))));
        assert_eq!(
            load_autosave_in(&dir.0, Slot::File(Path::new(X_PATH))),
            None
        );
    }

    #[test]
    fn one_writer_per_script_and_each_script_its_own_autosave() {
        let dir = TempDir::new("lock");
        let a = state("return 'a'", "");
        let mut b = state("return 'b'", "");
        b.path = Some(PathBuf::from("/tmp/other.lua"));
        assert_eq!(autosave_in(&dir.0, &a), Ok(AutosaveOutcome::Written));
        forget_trackers(&dir.0);
        assert_eq!(autosave_in(&dir.0, &b), Ok(AutosaveOutcome::Written));
        assert_eq!(
            load_autosave_in(&dir.0, Slot::File(Path::new(X_PATH))),
            Some(a)
        );
        assert_eq!(
            load_autosave_in(&dir.0, Slot::File(Path::new("/tmp/other.lua"))),
            Some(b)
        );
        assert_eq!(
            load_autosave_in(&dir.0, Slot::Untitled("1")),
            None,
            "no untitled autosave"
        );
        // Another process holding the lock of x.lua's autosave: this one writes nothing.
        let file = autosave_file(&dir.0, Slot::File(Path::new(X_PATH)));
        LOCKS
            .lock()
            .unwrap()
            .as_mut()
            .unwrap()
            .remove(&file.with_extension("lock"));
        // --no-fork: the sleep is the process holding the lock, so killing it frees the lock.
        let child = std::process::Command::new("flock")
            .arg("--no-fork")
            .arg(file.with_extension("lock"))
            .args(["sleep", "5"])
            .spawn();
        let Ok(mut child) = child else {
            return; // no flock(1): the rest needs a second process
        };
        std::thread::sleep(std::time::Duration::from_millis(300));
        forget_trackers(&dir.0);
        assert_eq!(
            autosave_in(&dir.0, &state("return 'c'", "")),
            Ok(AutosaveOutcome::Locked)
        );
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(
            autosave_in(&dir.0, &state("return 'c'", "")),
            Ok(AutosaveOutcome::Written)
        );
    }

    #[test]
    fn recent_list_keeps_the_last_ten() {
        let dir = TempDir::new("recent");
        assert!(recent_in(&dir.0).is_empty());
        for i in 0..12 {
            remember_recent_in(&dir.0, &dir.0.join(format!("s{i}.lua"))).unwrap();
        }
        remember_recent_in(&dir.0, &dir.0.join("s5.lua")).unwrap();
        let list = recent_in(&dir.0);
        assert_eq!(list.len(), 10);
        assert_eq!(list[0], dir.0.join("s5.lua"));
        assert_eq!(list[1], dir.0.join("s11.lua"));
        assert_eq!(list.iter().filter(|p| p.ends_with("s5.lua")).count(), 1);
        assert!(!list.contains(&dir.0.join("s0.lua")));
        // Built-in samples are not files to remember.
        remember_recent_in(&dir.0, Path::new("embedded:rate_limiter.lua")).unwrap();
        assert_eq!(recent_in(&dir.0)[0], dir.0.join("s5.lua"));
        // A broken list is an empty one.
        std::fs::write(dir.0.join(RECENT_FILE), "[1, 2").unwrap();
        assert!(recent_in(&dir.0).is_empty());
    }

    #[test]
    fn save_and_open_round_trip() {
        let dir = TempDir::new("save");
        let path = dir.0.join("limiter.lua");
        let now = now_ms(0);
        let inputs = InputsState::from_lists(
            &["key one".to_string(), "k2".to_string()],
            &["10".to_string(), "".to_string()],
        );
        let mut seed = Db::new();
        seed.set(b"counter".to_vec(), Value::Str(b"3".to_vec()));
        seed.set_expire(b"counter", Some(now + 60_000));
        assert_eq!(
            save_script(&path, "return KEYS[1]\n", &inputs, &seed, now),
            Ok(None)
        );
        let car: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.0.join("limiter.json")).unwrap())
                .unwrap();
        assert_eq!(car["keys"], serde_json::json!(["key one", "k2"]));
        assert_eq!(car["argv"], serde_json::json!(["10", ""]));
        let opened = open_script(&path, now).unwrap();
        assert_eq!(opened.text, "return KEYS[1]\n");
        assert_eq!(opened.path.as_deref(), Some(path.as_path()));
        assert!(opened.sidecar_error.is_none());
        let car = opened.sidecar.unwrap();
        assert_eq!(car.keys, vec!["key one", "k2"]);
        assert_eq!(car.argv, vec!["10", ""]);
        let entry = car.seed.get(b"counter", now).expect("seed key");
        assert_eq!(entry.value.type_name(), "string");
        assert!(entry.expire_at_ms.is_some());
    }

    #[test]
    fn saving_keeps_other_sidecar_fields() {
        let dir = TempDir::new("keep");
        let path = dir.0.join("s.lua");
        std::fs::write(
            dir.0.join("s.json"),
            r#"{"description": "demo", "keys": ["old"], "expected": {"int": 1}}"#,
        )
        .unwrap();
        let inputs = InputsState::from_lists(&["new".to_string()], &[]);
        save_script(&path, "return 1", &inputs, &Db::new(), 0).unwrap();
        let car: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.0.join("s.json")).unwrap()).unwrap();
        assert_eq!(car["description"], "demo");
        assert_eq!(car["expected"], serde_json::json!({"int": 1}));
        assert_eq!(car["keys"], serde_json::json!(["new"]));
    }

    #[test]
    fn a_sidecar_that_cannot_be_parsed_is_never_replaced() {
        let dir = TempDir::new("malformed-car");
        let path = dir.0.join("m.lua");
        let car = dir.0.join("m.json");
        let broken = "{\"description\": \"the limiter we ship\",\n  \"keys\": [\"a\",]\n}\n";
        std::fs::write(&car, broken).unwrap();
        let inputs = InputsState::from_lists(&["k".to_string()], &[]);
        let note = save_script(&path, "return 2", &inputs, &Db::new(), 0)
            .unwrap()
            .expect("the sidecar is refused");
        assert_eq!(
            note,
            format!(
                "saved {} but not its sidecar: {}:2:16: malformed sidecar: trailing comma at line 2 column 16; it was left as it is (fix or remove it, then save again)",
                path.display(),
                car.display()
            )
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "return 2");
        assert_eq!(std::fs::read_to_string(&car).unwrap(), broken);
        std::fs::write(&car, "[1]").unwrap();
        let note = save_script(&path, "return 3", &inputs, &Db::new(), 0)
            .unwrap()
            .expect("the sidecar is refused");
        assert!(note.ends_with("m.json: not a JSON object, so not an evalbench sidecar; it was left as it is (fix or remove it, then save again)"), "{note}");
        assert_eq!(std::fs::read_to_string(&car).unwrap(), "[1]");
    }

    #[test]
    fn saving_through_a_symlink_keeps_the_link_and_the_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = TempDir::new("save-link");
        let real = dir.0.join("real.lua");
        std::fs::write(&real, "return 1").unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
        let link = dir.0.join("link.lua");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        save_script(&link, "return 2", &InputsState::default(), &Db::new(), 0).unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "return 2");
        let mode = std::fs::metadata(&real).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }

    #[test]
    fn unbalanced_quotes_save_the_script_only() {
        let dir = TempDir::new("quotes");
        let path = dir.0.join("q.lua");
        let mut inputs = InputsState::default();
        inputs.keys.insert_str("\"open");
        let err = save_script(&path, "return 1", &inputs, &Db::new(), 0)
            .unwrap()
            .expect("a sidecar problem");
        assert!(err.contains("KEYS"), "{err}");
        assert!(path.is_file());
        assert!(!dir.0.join("q.json").exists());
        // A .json script would be overwritten by its own sidecar.
        assert!(save_script(&dir.0.join("x.json"), "", &inputs, &Db::new(), 0).is_err());
    }

    #[test]
    fn a_broken_sidecar_still_opens_the_script() {
        let dir = TempDir::new("broken");
        let path = dir.0.join("b.lua");
        std::fs::write(&path, "return 1").unwrap();
        std::fs::write(dir.0.join("b.json"), "{\"keys\": [").unwrap();
        let opened = open_script(&path, 0).unwrap();
        assert_eq!(opened.text, "return 1");
        assert!(opened.sidecar.is_none());
        assert!(opened.sidecar_error.unwrap().contains("malformed sidecar"));
        // A bad keyspace in a well-formed sidecar too.
        std::fs::write(
            dir.0.join("b.json"),
            r#"{"keyspace": {"k": {"type": "nope"}}}"#,
        )
        .unwrap();
        let opened = open_script(&path, 0).unwrap();
        assert!(opened.sidecar.is_none());
        assert!(opened.sidecar_error.is_some());
        // A missing script is an error.
        assert!(open_script(&dir.0.join("none.lua"), 0).is_err());
    }

    #[test]
    fn embedded_samples_open_untitled() {
        for (name, _, car) in EMBEDDED_SAMPLES {
            let opened =
                open_script(Path::new(&format!("{EMBEDDED_PREFIX}{name}")), now_ms(0)).unwrap();
            assert!(opened.path.is_none());
            assert!(opened.sidecar_error.is_none(), "{name}");
            assert!(!opened.text.is_empty());
            assert!(serde_json::from_str::<crate::engine::formats::Sidecar>(car).is_ok());
        }
    }

    #[test]
    fn picker_lists_samples_then_recent_files() {
        let data = TempDir::new("picker-data");
        let samples = TempDir::new("picker-samples");
        std::fs::write(samples.0.join("a.lua"), "return 1").unwrap();
        std::fs::write(samples.0.join("a.json"), r#"{"description": "first"}"#).unwrap();
        std::fs::write(samples.0.join("b.lua"), "return 2").unwrap();
        std::fs::write(samples.0.join("notes.txt"), "").unwrap();
        let mine = data.0.join("mine.lua");
        std::fs::write(&mine, "return 3").unwrap();
        remember_recent_in(&data.0, &data.0.join("gone.lua")).unwrap();
        remember_recent_in(&data.0, &samples.0.join("a.lua")).unwrap();
        remember_recent_in(&data.0, &mine).unwrap();
        let picker = PickerState::load_in(Some(&samples.0), &data.0);
        let names: Vec<String> = picker
            .entries
            .iter()
            .map(|(p, d)| format!("{}:{d}", p.file_name().unwrap().to_string_lossy()))
            .collect();
        // Missing recent files and samples already listed are left out.
        assert_eq!(names, vec!["a.lua:first", "b.lua:", "mine.lua:"]);
        assert_eq!(picker.samples, 2);
        // Without a samples directory, the built-in samples.
        let picker = PickerState::load_in(None, &data.0);
        assert_eq!(picker.samples, EMBEDDED_SAMPLES.len());
        assert!(picker.entries[0]
            .0
            .to_string_lossy()
            .starts_with(EMBEDDED_PREFIX));
        assert!(!picker.entries[0].1.is_empty());
    }

    /// The whole flow through `App`, in this process's test data directory: type, autosave,
    /// "crash", recover with y, save (which removes the autosave), open with a broken sidecar.
    #[test]
    fn app_recovers_after_a_crash_and_saves() {
        use crate::tui::app::{App, Confirm, Overlay};
        use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
        let work = TempDir::new("app");
        let path = work.0.join("app.lua");
        std::fs::write(&path, "return 1").unwrap();
        let mut app = App::new("", None, Config::default());
        app.open_file(path.clone());
        assert_eq!(app.editor.text(), "return 1");
        app.autosave();
        let script = Slot::File(path.as_path());
        assert!(!autosave_exists(script), "nothing typed, nothing autosaved");
        app.on_key(KeyEvent::new(KeyCode::Char('x'), KeyModifiers::NONE));
        app.autosave();
        assert!(autosave_exists(script));
        drop(app); // killed: no clean exit
        release_autosave(script); // as the kernel does for a killed process

        // Another script offers nothing; this one, when opened again, offers its autosave.
        let mut app = App::new("", None, Config::default());
        app.offer_recovery();
        assert!(app.overlay.is_none());
        app.open_file(path.clone());
        assert!(matches!(
            app.overlay,
            Some(Overlay::Confirm(Confirm::Recover))
        ));
        app.autosave(); // the pending question protects the old autosave
        assert!(autosave_exists(script));
        // Only the explicit key answers it.
        app.on_key(KeyEvent::new(KeyCode::Char('y'), KeyModifiers::NONE));
        assert!(app.overlay.is_some());
        app.on_key(KeyEvent::new(KeyCode::Char('r'), KeyModifiers::NONE));
        assert!(app.overlay.is_none());
        assert_eq!(app.editor.text(), "xreturn 1");
        assert_eq!(app.editor.path.as_deref(), Some(path.as_path()));
        assert!(app.editor.modified);
        app.on_key(KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL));
        assert!(!app.editor.modified, "{}", app.status);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "xreturn 1");
        assert!(work.0.join("app.json").is_file());
        assert!(!autosave_exists(script), "saving removes the autosave");
        let recent = recent();
        assert_eq!(recent.first(), Some(&std::fs::canonicalize(&path).unwrap()));

        // A broken sidecar: the script opens anyway, the status says why.
        std::fs::write(work.0.join("app.json"), "{oops").unwrap();
        let mut app = App::new("", None, Config::default());
        app.open_file(path.clone());
        assert_eq!(app.editor.text(), "xreturn 1");
        assert!(app.status.contains("sidecar ignored"), "{}", app.status);
        // An untitled buffer asks for a path.
        let mut app = App::new("return 2", None, Config::default());
        app.on_key(KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL));
        assert!(matches!(app.overlay, Some(Overlay::Prompt(_))));
        if let Some(dir) = data_dir() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }

    /// A script that is not UTF-8 (Latin-1, a stray byte, a control character, a character of the
    /// private-use range the buffer uses for raw bytes), CRLF or mixed line endings: open, edit
    /// and save keep every other byte.
    #[test]
    fn non_utf8_scripts_survive_open_edit_save_byte_for_byte() {
        use crate::tui::editor::EditorState;
        use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
        let dir = TempDir::new("bytes");
        let crlf: &[u8] =
            b"-- caf\xe9 \xff\xfe\r\nreturn '\x1b[2J' .. '\xf4\x8f\xbe\x80' .. '\xc3'\r\n";
        let mixed: &[u8] = b"-- caf\xe9\r\nreturn 1\n\xff\rlone CR\n";
        for (name, bytes) in [("crlf.lua", crlf), ("mixed.lua", mixed)] {
            let path = dir.0.join(name);
            std::fs::write(&path, bytes).unwrap();
            let opened = open_script(&path, 0).unwrap();
            let mut editor = EditorState::new(&opened.text, Some(path.clone()));
            assert_eq!(editor.bytes(), bytes, "{name}");
            let copy = dir.0.join(format!("copy-{name}"));
            save_script(
                &copy,
                &editor.text(),
                &InputsState::default(),
                &Db::new(),
                0,
            )
            .unwrap();
            assert_eq!(std::fs::read(&copy).unwrap(), bytes, "{name}");

            // An edit at the end of the first line (after 0xfe; in the mixed file the line's CR
            // is part of it, shown as `\r`): one character typed, then one Backspace removes it,
            // a second removes exactly the one byte before it.
            let key = |code| KeyEvent::new(code, KeyModifiers::NONE);
            editor.on_key(key(KeyCode::End));
            editor.on_key(key(KeyCode::Char('x')));
            let end = if name == "crlf.lua" { b'\r' } else { b'\n' };
            let first_end = bytes.iter().position(|&b| b == end).unwrap();
            let mut expected = bytes.to_vec();
            expected.insert(first_end, b'x');
            assert_eq!(editor.bytes(), expected, "{name}");
            editor.on_key(key(KeyCode::Backspace));
            editor.on_key(key(KeyCode::Backspace));
            expected.remove(first_end);
            expected.remove(first_end - 1);
            assert_eq!(editor.bytes(), expected, "{name}");
            save_script(
                &path,
                &editor.text(),
                &InputsState::default(),
                &Db::new(),
                0,
            )
            .unwrap();
            assert_eq!(std::fs::read(&path).unwrap(), expected, "{name}");
        }
        // The SHA1 is the file's, as EVAL and `evalbench run` compute it.
        let editor = EditorState::new(&crate::tui::editor::decode_script(crlf), None);
        assert_eq!(editor.sha1(), crate::engine::script::sha1_hex(crlf));
    }

    #[test]
    fn autosave_and_recent_list_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let root = TempDir::new("private");
        let dir = root.0.join("data").join("evalbench");
        write_autosave_in(&dir, &state("return 1", "k")).unwrap();
        assert_eq!(
            mode(&autosave_file(&dir, Slot::File(Path::new(X_PATH)))),
            0o600
        );
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&root.0.join("data")), 0o700);
        let script = root.0.join("s.lua");
        std::fs::write(&script, "return 1").unwrap();
        remember_recent_in(&dir, &script).unwrap();
        assert_eq!(mode(&dir.join(RECENT_FILE)), 0o600);
        // A file left world-readable by an older version is rewritten owner-only.
        std::fs::set_permissions(
            autosave_file(&dir, Slot::File(Path::new(X_PATH))),
            std::fs::Permissions::from_mode(0o644),
        )
        .unwrap();
        write_autosave_in(&dir, &state("return 2", "k")).unwrap();
        assert_eq!(
            mode(&autosave_file(&dir, Slot::File(Path::new(X_PATH)))),
            0o600
        );
        // The user's own scripts keep their mode.
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_atomically(&script, b"return 3").unwrap();
        assert_eq!(mode(&script), 0o640);
    }
}
