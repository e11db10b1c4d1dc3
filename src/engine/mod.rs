//! The UI-free engine: the Redis-faithful Lua sandbox, the mocked keyspace, the typed reply,
//! the trace and the run report. It never names a terminal crate.

pub mod analysis;
pub mod budget;
pub mod clock;
pub mod command_line; // one command typed at the workbench's prompt
pub mod commands;
pub mod compare; // a run under a second profile
pub mod debug;
pub mod display;
pub mod export; // a run as Markdown / HTML to share
/// The files users write, read in one place for the engine and both front ends.
pub mod formats;
// Redis Functions: libraries and FCALL.
pub mod function;
mod grisu; // doubles as Redis 7.2+ and Valkey write them (fpconv_dtoa)
pub mod input;
pub mod keyspace;
pub mod keyspace_diff; // two keyspaces compared per key, typed
pub mod lessons; // the guided path of samples/lessons
pub mod lint;
pub mod live;
pub mod lua;
pub mod number; // Redis's number parsers (string2ll, strtod), below commands and keyspace
pub mod output; // writing user files: atomic, through symlinks, modes kept
pub mod profile; // server profiles
/// The race lab: one logic, N clients, every interleaving.
pub mod race;
pub mod reply;
pub mod report;
pub mod request; // one EVAL or FCALL, as data
pub mod sandbox;
pub mod script;
pub mod testing;
pub mod value_text; // readable forms of one value: pretty JSON, cmsgpack, hex

pub use reply::{Protocol, Reply};
pub use report::RunReport;
pub use sandbox::{FunctionCall, RunRequest, Sandbox, SandboxConfig};
