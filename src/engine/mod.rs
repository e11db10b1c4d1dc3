//! The UI-free engine: the Redis-faithful Lua sandbox, the mocked keyspace, the typed reply,
//! the trace and the run report. It never names a terminal crate.

pub mod analysis;
pub mod budget;
pub mod clock;
pub mod commands;
pub mod debug;
pub mod display;
pub mod input;
pub mod keyspace;
pub mod lint;
pub mod live;
pub mod lua;
pub mod reply;
pub mod report;
pub mod sandbox;
pub mod script;
pub mod testing;

pub use reply::{Protocol, Reply};
pub use report::RunReport;
pub use sandbox::{RunRequest, Sandbox, SandboxConfig};
