//! Which profile the sandbox's dry runs follow for a live server: the one `Profile::for_server`
//! picks from INFO's product and version (engine/profile.rs); the status bar names it.

/// The name of the default profile, shown before a server is connected.
pub const PROFILE: &str = "Redis 7.0";
