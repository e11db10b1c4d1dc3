//! What XREAD and XREADGROUP make of the `+` ID, and how they word an unbalanced STREAMS list:
//! both changed after 7.0 and differ between the servers (issue 12, found by the differential
//! fuzzer). The profile's `xread_plus_id` and `xread_unbalanced_ids` decide.

use super::streams::{INVALID_ID, UNBALANCED};
use crate::engine::keyspace::{StreamId, StreamValue};
use crate::engine::profile::{Profile, XreadPlusId};
use crate::engine::reply::Reply;

const LAST_ID_ZERO: &str = "ERR the stream last element ID is 0-0";
const PLUS_IN_GROUP: &str = "ERR The + ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The + ID would just return an empty result set.";

/// The error for a STREAMS list with a key and no ID (or the reverse).
pub(super) fn unbalanced(profile: &Profile, xreadgroup: bool) -> Reply {
    let Some(xread_ids) = profile.xread_unbalanced_ids else {
        return Reply::err(UNBALANCED);
    };
    let (name, ids) = if xreadgroup {
        ("xreadgroup", "an ID or '>'")
    } else {
        ("xread", xread_ids)
    };
    Reply::err(format!(
        "ERR Unbalanced '{name}' list of streams: for each stream key {ids} must be specified."
    ))
}

/// XREAD's `+`: the ID after which `stream` is read, so that its last entry is served.
pub(super) fn xread_plus(
    profile: &Profile,
    stream: Option<&StreamValue>,
) -> Result<StreamId, Reply> {
    match profile.xread_plus_id {
        XreadPlusId::Invalid => Err(Reply::err(INVALID_ID)),
        XreadPlusId::BeforeLastId { zero_is_error } => {
            let Some(stream) = stream else {
                return Ok(StreamId::default());
            };
            match stream.last_id.decr() {
                Some(id) => Ok(id),
                None if zero_is_error => Err(Reply::err(LAST_ID_ZERO)),
                None => Ok(StreamId::MAX),
            }
        }
        XreadPlusId::LastEntry => Ok(stream
            .and_then(|s| s.entries.last_key_value())
            .and_then(|(id, _)| id.decr())
            .unwrap_or(StreamId::MAX)),
    }
}

/// XREADGROUP's `+`: an invalid ID where XREAD does not know it either, else its own error.
pub(super) fn xreadgroup_plus(profile: &Profile) -> Reply {
    match profile.xread_plus_id {
        XreadPlusId::Invalid => Reply::err(INVALID_ID),
        _ => Reply::err(PLUS_IN_GROUP),
    }
}
