//! The UI-free engine: the Redis-faithful Lua sandbox, the mocked keyspace, the typed reply,
//! the trace and the run report. It never names a terminal crate.

pub mod commands;
pub mod lua;
pub mod keyspace;
pub mod reply;
