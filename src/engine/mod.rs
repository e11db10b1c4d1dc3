//! The UI-free engine: the Redis-faithful Lua sandbox, the mocked keyspace, the typed reply,
//! the trace and the run report. It never names a terminal crate.

pub mod analysis;
pub mod budget;
pub mod clock;
pub mod commands;
pub mod compare; // a run under a second profile (issue 12)
pub mod debug;
pub mod display;
pub mod export; // a run as Markdown / HTML to share (issue 14)
/// The files users write, read in one place for the engine and both front ends.
pub mod formats;
// Redis Functions: libraries and FCALL (issue 13).
pub mod function;
mod grisu; // doubles as Redis 7.2+ and Valkey write them (fpconv_dtoa)
pub mod input;
pub mod keyspace;
pub mod keyspace_diff; // two keyspaces compared per key, typed
pub mod lessons; // the guided path of samples/lessons (issue 14)
pub mod lint;
pub mod live;
pub mod lua;
pub mod output; // writing user files: atomic, through symlinks, modes kept
pub mod profile; // server profiles (issue 12)
                 // The race lab: one logic, N clients, every interleaving (issue 14).
pub mod race;
pub mod reply;
pub mod report;
pub mod sandbox;
pub mod script;
pub mod testing;
pub mod value_text; // readable forms of one value: pretty JSON, cmsgpack, hex

pub use reply::{Protocol, Reply};
pub use report::RunReport;
pub use sandbox::{FunctionCall, RunRequest, Sandbox, SandboxConfig};
