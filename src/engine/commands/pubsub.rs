//! Pub/Sub introspection a script may call, and SPUBLISH (Redis 7.0.15 `src/pubsub.c`): a
//! sandbox has no subscribers, so every channel list is empty and every count 0. PUBLISH is in
//! server.rs.

use super::{Command, Ctx};
use crate::engine::reply::Reply;

pub static COMMANDS: &[Command] = &[
    Command::new("spublish", spublish),
    Command::new("pubsub|channels", no_channels),
    Command::new("pubsub|shardchannels", no_channels),
    Command::new("pubsub|numpat", numpat),
    Command::new("pubsub|numsub", numsub),
    Command::new("pubsub|shardnumsub", numsub),
];

/// SPUBLISH shardchannel message: the number of receivers.
fn spublish(_ctx: &mut Ctx, _args: &[Vec<u8>]) -> Reply {
    Reply::Int(0)
}

/// PUBSUB CHANNELS / SHARDCHANNELS [pattern]: the active channels (none).
fn no_channels(_ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    if args.len() > 3 {
        return super::stream_groups::subcommand_syntax(args);
    }
    Reply::Array(Vec::new())
}

/// PUBSUB NUMPAT: patterns subscribed to (none).
fn numpat(_ctx: &mut Ctx, _args: &[Vec<u8>]) -> Reply {
    Reply::Int(0)
}

/// PUBSUB NUMSUB / SHARDNUMSUB [channel ...]: each named channel (repeats included) and its
/// subscriber count, in a flat array (a flat array under RESP3 too).
fn numsub(_ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    Reply::Array(
        args[2..]
            .iter()
            .flat_map(|channel| [Reply::Bulk(channel.clone()), Reply::Int(0)])
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use crate::engine::commands::TestServer;
    use crate::engine::reply::Reply;

    #[test]
    fn no_subscribers() {
        let mut s = TestServer::new();
        assert_eq!(s.call(&["SPUBLISH", "ch", "m"]), Reply::Int(0));
        assert_eq!(s.call(&["PUBSUB", "CHANNELS"]), Reply::Array(vec![]));
        assert_eq!(s.call(&["PUBSUB", "NUMPAT"]), Reply::Int(0));
        assert_eq!(
            s.call(&["PUBSUB", "NUMSUB", "a", "a"]),
            Reply::Array(vec![
                Reply::bulk("a"),
                Reply::Int(0),
                Reply::bulk("a"),
                Reply::Int(0)
            ])
        );
        assert_eq!(
            s.call(&["PUBSUB", "channels", "a", "b"]),
            Reply::Error(
                "ERR unknown subcommand or wrong number of arguments for 'channels'. Try PUBSUB HELP."
                    .into()
            )
        );
    }
}
