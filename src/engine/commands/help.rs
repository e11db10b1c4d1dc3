//! `addReplyHelp`: a subcommand container's HELP reply, its own lines followed by the HELP entry
//! whose wording is the profile's (`Prints this help.` on 7.0, `Print this help.` later).

use super::Ctx;
use crate::engine::reply::Reply;

pub(super) fn help_reply(ctx: &Ctx, lines: &[&str]) -> Reply {
    let own = lines.iter().copied();
    let footer = ["HELP", ctx.profile.help_line];
    Reply::Array(own.chain(footer).map(|l| Reply::Status(l.into())).collect())
}
