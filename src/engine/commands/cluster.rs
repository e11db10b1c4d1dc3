//! Cluster commands a script may call, on a standalone server (the sandbox is one): every
//! `CLUSTER` subcommand, `ASKING`, `READONLY` and `READWRITE` answer that cluster support is
//! disabled (Redis 7.0.15 `src/cluster.c`). Valkey accepts READONLY/READWRITE there ("OK"),
//! and Valkey 9 answers `CLUSTER KEYSLOT` (it needs no cluster state).

use super::{Command, Ctx};
use crate::engine::profile::Product;
use crate::engine::reply::Reply;

const CLUSTER_DISABLED: &str = "ERR This instance has cluster support disabled";

/// Subcommands of every profile's `CLUSTER` (a name a profile's server lacks stays unknown there).
pub static COMMANDS: &[Command] = &[
    Command::new("asking", disabled),
    Command::new("clusterscan", disabled), // Valkey 9.1
    Command::new("readonly", read_only_or_write),
    Command::new("readwrite", read_only_or_write),
    Command::new("cluster|addslots", disabled),
    Command::new("cluster|addslotsrange", disabled),
    Command::new("cluster|bumpepoch", disabled),
    Command::new("cluster|cancelslotmigrations", disabled),
    Command::new("cluster|count-failure-reports", disabled),
    Command::new("cluster|countkeysinslot", disabled),
    Command::new("cluster|delslots", disabled),
    Command::new("cluster|delslotsrange", disabled),
    Command::new("cluster|failover", disabled),
    Command::new("cluster|flushslot", disabled),
    Command::new("cluster|flushslots", disabled),
    Command::new("cluster|forget", disabled),
    Command::new("cluster|getkeysinslot", disabled),
    Command::new("cluster|getslotmigrations", disabled),
    Command::new("cluster|help", disabled),
    Command::new("cluster|info", disabled),
    Command::new("cluster|keyslot", keyslot),
    Command::new("cluster|links", disabled),
    Command::new("cluster|meet", disabled),
    Command::new("cluster|migrateslots", disabled),
    Command::new("cluster|myid", disabled),
    Command::new("cluster|myshardid", disabled),
    Command::new("cluster|nodes", disabled),
    Command::new("cluster|replicas", disabled),
    Command::new("cluster|replicate", disabled),
    Command::new("cluster|saveconfig", disabled),
    Command::new("cluster|set-config-epoch", disabled),
    Command::new("cluster|setslot", disabled),
    Command::new("cluster|shards", disabled),
    Command::new("cluster|slaves", disabled),
    Command::new("cluster|slot-stats", disabled),
    Command::new("cluster|slots", disabled),
    Command::new("cluster|syncslots", disabled),
];

fn disabled(_ctx: &mut Ctx, _args: &[Vec<u8>]) -> Reply {
    Reply::err(CLUSTER_DISABLED)
}

/// CLUSTER KEYSLOT key: the key's hash slot where the profile answers it without a cluster.
fn keyslot(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    if !ctx.profile.keyslot_without_cluster {
        return Reply::err(CLUSTER_DISABLED);
    }
    Reply::Int(i64::from(crate::engine::lint::hash_slot(&args[2])))
}

/// READONLY / READWRITE: Redis refuses them without cluster support; Valkey answers OK.
fn read_only_or_write(ctx: &mut Ctx, _args: &[Vec<u8>]) -> Reply {
    match ctx.profile.product {
        Product::Redis => Reply::err(CLUSTER_DISABLED),
        Product::Valkey => Reply::Status("OK".into()),
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::commands::TestServer;
    use crate::engine::reply::Reply;

    #[test]
    fn cluster_is_disabled() {
        let mut s = TestServer::new();
        for args in [
            &["CLUSTER", "INFO"][..],
            &["CLUSTER", "KEYSLOT", "a"],
            &["cluster", "help"],
            &["ASKING"],
            &["READONLY"],
            &["READWRITE"],
        ] {
            assert_eq!(
                s.call(args),
                Reply::Error("ERR This instance has cluster support disabled".into()),
                "{args:?}"
            );
        }
    }

    #[test]
    fn valkey_9_answers_keyslot() {
        let mut s = TestServer::new();
        s.profile = crate::engine::profile::Profile::by_id("valkey-9.1").unwrap();
        // Each slot is what Valkey 9.1.2 answered.
        for (key, slot) in [
            ("a", 15495),
            ("user:{42}:name", 8000),
            ("", 0),
            ("a\0b", 8383),
            ("{}x", 10595),
        ] {
            assert_eq!(
                s.call(&["CLUSTER", "KEYSLOT", key]),
                Reply::Int(slot),
                "{key:?}"
            );
        }
        assert_eq!(
            s.call(&["CLUSTER", "INFO"]),
            Reply::Error("ERR This instance has cluster support disabled".into())
        );
    }
}
