//! Cluster-only commands a script may call (issue 12). The sandbox is a server without cluster
//! support, so they answer as such a server does.

use super::{Command, Ctx};
use crate::engine::reply::Reply;

pub static COMMANDS: &[Command] = &[
    Command::new("clusterscan", cluster_disabled), // Valkey 9.1
];

/// What a server started without `cluster-enabled` answers, whatever the arguments.
fn cluster_disabled(_ctx: &mut Ctx, _args: &[Vec<u8>]) -> Reply {
    Reply::err("ERR This instance has cluster support disabled")
}
