//! Redis Functions (7.0 `functions.c`): libraries loaded with `FUNCTION LOAD [REPLACE]`, their
//! functions by name, FUNCTION LIST / DELETE / FLUSH, and what FCALL looks up. The Lua side (the
//! function VM and `redis.register_function`) is engine/lua/function.rs.

pub mod library;

use super::lua::function::{FunctionVm, Registered};
use super::profile::Profile;
use super::script::ScriptFlags;
use std::collections::BTreeMap;

/// A function of a loaded library.
#[derive(Debug, Clone, serde::Serialize)]
pub struct FunctionInfo {
    pub name: String,
    pub library: String,
    #[serde(serialize_with = "lossy")]
    pub description: Option<Vec<u8>>,
    pub flags: ScriptFlags,
    #[serde(skip)]
    pub(crate) function_ref: std::ffi::c_int,
}

fn lossy<S: serde::Serializer>(v: &Option<Vec<u8>>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(b) => s.serialize_some(&String::from_utf8_lossy(b)),
        None => s.serialize_none(),
    }
}

/// A loaded library: its name, engine, code (shebang included, as FUNCTION LIST WITHCODE shows it)
/// and its functions in registration order.
#[derive(Debug, Clone, serde::Serialize)]
pub struct LibraryInfo {
    pub name: String,
    pub engine: String,
    #[serde(skip)]
    pub code: Vec<u8>,
    pub functions: Vec<FunctionInfo>,
}

/// The libraries of a sandbox and the Lua state their functions live in (created on first use).
pub struct Functions {
    vm: Option<FunctionVm>,
    libraries: BTreeMap<String, LibraryInfo>,
    /// The server profile the function VM's environment follows (the sandbox's).
    profile: &'static Profile,
}

impl Default for Functions {
    fn default() -> Self {
        Functions {
            vm: None,
            libraries: BTreeMap::new(),
            profile: crate::engine::profile::DEFAULT,
        }
    }
}

impl Functions {
    pub fn vm(&mut self, memory_limit: usize) -> &mut FunctionVm {
        let profile = self.profile;
        let vm = self
            .vm
            .get_or_insert_with(|| FunctionVm::with_profile(memory_limit, profile));
        vm.vm().set_memory_limit(memory_limit);
        vm
    }

    /// Follow another server profile: a fresh function VM with its environment, and every
    /// library loaded into it again (one that no longer loads there is dropped, as that
    /// server would refuse it).
    pub fn set_profile(&mut self, profile: &'static Profile, memory_limit: usize) {
        if std::ptr::eq(self.profile, profile) {
            return;
        }
        self.profile = profile;
        self.vm = None;
        let libraries = std::mem::take(&mut self.libraries);
        for lib in libraries.values() {
            let _ = self.load(&lib.code, false, memory_limit);
        }
    }

    pub fn libraries(&self) -> impl Iterator<Item = &LibraryInfo> {
        self.libraries.values()
    }

    /// FCALL's lookup: function names are case-insensitive.
    pub fn find(&self, name: &str) -> Option<&FunctionInfo> {
        self.libraries
            .values()
            .flat_map(|lib| lib.functions.iter())
            .find(|f| f.name.eq_ignore_ascii_case(name))
    }

    /// `FUNCTION LOAD [REPLACE] code` (`functionsCreateWithLibraryCtx`): the library's name, or
    /// the error reply's full text.
    pub fn load(
        &mut self,
        code: &[u8],
        replace: bool,
        memory_limit: usize,
    ) -> Result<String, String> {
        let meta =
            library::parse_metadata_in(self.profile, code).map_err(|e| format!("ERR {e}"))?;
        if !super::lua::function::is_valid_name(meta.name.as_bytes()) {
            return Err(format!("ERR {}", super::lua::function::BAD_NAME_TEXT));
        }
        if !meta.engine.eq_ignore_ascii_case("lua") {
            return Err(format!("ERR Engine '{}' not found", meta.engine));
        }
        if self.libraries.contains_key(&meta.name) && !replace {
            return Err(format!("ERR Library '{}' already exists", meta.name));
        }
        let registered = self.vm(memory_limit).load(&code[meta.code_start..]);
        let registered = registered.map_err(|e| format!("ERR {e}"))?;
        let check = if registered.is_empty() {
            Err("ERR No functions registered".to_string())
        } else {
            // Names of the other libraries (the replaced one no longer counts).
            match registered.iter().find(|f| {
                self.libraries
                    .values()
                    .filter(|lib| lib.name != meta.name)
                    .flat_map(|lib| lib.functions.iter())
                    .any(|g| g.name.eq_ignore_ascii_case(&f.name))
            }) {
                Some(f) => Err(format!("ERR Function {} already exists", f.name)),
                None => Ok(()),
            }
        };
        if let Err(e) = check {
            self.release(&registered);
            return Err(e);
        }
        if let Some(old) = self.libraries.remove(&meta.name) {
            for f in &old.functions {
                self.vm(memory_limit).release(f.function_ref);
            }
        }
        let functions = registered
            .into_iter()
            .map(|r| FunctionInfo {
                name: r.name,
                library: meta.name.clone(),
                description: r.description,
                flags: r.flags,
                function_ref: r.function_ref,
            })
            .collect();
        self.libraries.insert(
            meta.name.clone(),
            LibraryInfo {
                name: meta.name.clone(),
                engine: "LUA".into(),
                code: code.to_vec(),
                functions,
            },
        );
        Ok(meta.name)
    }

    fn release(&mut self, registered: &[Registered]) {
        if let Some(vm) = self.vm.as_mut() {
            for r in registered {
                vm.release(r.function_ref);
            }
        }
    }

    /// FUNCTION DELETE: `Err` is the error reply's text.
    pub fn delete(&mut self, name: &str) -> Result<(), String> {
        let lib = self
            .libraries
            .remove(name)
            .ok_or_else(|| "ERR Library not found".to_string())?;
        if let Some(vm) = self.vm.as_mut() {
            for f in &lib.functions {
                vm.release(f.function_ref);
            }
        }
        Ok(())
    }

    /// FUNCTION FLUSH: every library gone, and a fresh Lua state (as Redis creates one).
    pub fn flush(&mut self) {
        self.libraries.clear();
        self.vm = None;
    }
}
