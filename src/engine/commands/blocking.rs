//! Blocking commands called from a script. Redis 7.0 flags BLPOP, BRPOP, BRPOPLPUSH,
//! BLMOVE, BZPOPMIN, BZPOPMAX and WAIT `noscript`; 7.2 and later, and Valkey, let a script call
//! them and they never block there: they act at once, or answer as if the timeout had passed.
//! Which profiles reach these handlers is the command table's business (commands/profiles).

use super::lists::{elements_removed, end_arg, list_mut, move_generic, pop_end, End};
use super::{flatten, float_arg, int_arg, zsets, Command, Ctx};
use crate::engine::reply::Reply;

pub static COMMANDS: &[Command] = &[
    Command::new("blpop", blpop),
    Command::new("brpop", brpop),
    Command::new("brpoplpush", brpoplpush),
    Command::new("blmove", blmove),
    Command::new("bzpopmin", bzpopmin),
    Command::new("bzpopmax", bzpopmax),
    Command::new("wait", wait),
    Command::new("waitaof", waitaof),
];

const TIMEOUT_NOT_FLOAT: &str = "ERR timeout is not a float or out of range";
const TIMEOUT_NOT_INTEGER: &str = "ERR timeout is not an integer or out of range";
const TIMEOUT_NEGATIVE: &str = "ERR timeout is negative";
const TIMEOUT_OUT_OF_RANGE: &str = "ERR timeout is out of range";

/// `getTimeoutFromObjectOrReply` of Redis 7.2 and later: seconds (a long double, rounded up to
/// milliseconds) or milliseconds (an integer); never negative, and the deadline must fit.
pub(super) fn check_timeout(ctx: &Ctx, arg: &[u8], seconds: bool) -> Result<(), Reply> {
    const LLONG_MAX: f64 = 9.223_372_036_854_776e18;
    let ms: i64 = if seconds {
        let t = float_arg(arg).map_err(|_| Reply::err(TIMEOUT_NOT_FLOAT))? * 1000.0;
        if t > LLONG_MAX {
            return Err(Reply::err(TIMEOUT_OUT_OF_RANGE));
        }
        // C's cast of -inf (or anything below LLONG_MIN) gives LLONG_MIN: negative.
        let t = t.ceil();
        if t < -LLONG_MAX {
            i64::MIN
        } else {
            t as i64
        }
    } else {
        int_arg(arg).map_err(|_| Reply::err(TIMEOUT_NOT_INTEGER))?
    };
    if ms < 0 {
        return Err(Reply::err(TIMEOUT_NEGATIVE));
    }
    if ms > 0 && ms > i64::MAX - ctx.now_ms {
        return Err(Reply::err(TIMEOUT_OUT_OF_RANGE));
    }
    Ok(())
}

/// BLPOP/BRPOP key [key ...] timeout: the first non-empty list's end, as [key, element].
fn blocking_pop(ctx: &mut Ctx, args: &[Vec<u8>], end: End) -> Reply {
    flatten((|| {
        let (timeout, keys) = args[1..].split_last().expect("arity -3");
        check_timeout(ctx, timeout, true)?;
        for key in keys {
            let Some(list) = list_mut(ctx, key)? else {
                continue;
            };
            let Some(item) = pop_end(list, end) else {
                continue;
            };
            elements_removed(ctx, key);
            return Ok(Reply::Array(vec![
                Reply::Bulk(key.clone()),
                Reply::Bulk(item),
            ]));
        }
        Ok(Reply::NilArray)
    })())
}

fn blpop(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    blocking_pop(ctx, args, End::Left)
}
fn brpop(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    blocking_pop(ctx, args, End::Right)
}

// BRPOPLPUSH source destination timeout
fn brpoplpush(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        check_timeout(ctx, &args[3], true)?;
        move_generic(ctx, &args[1], &args[2], End::Right, End::Left)
    })())
}

// BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout
fn blmove(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let from = end_arg(&args[3])?;
        let to = end_arg(&args[4])?;
        check_timeout(ctx, &args[5], true)?;
        move_generic(ctx, &args[1], &args[2], from, to)
    })())
}

/// BZPOPMIN/BZPOPMAX key [key ...] timeout: [key, member, score] of the first non-empty set.
fn blocking_zpop(ctx: &mut Ctx, args: &[Vec<u8>], max: bool) -> Reply {
    flatten((|| {
        let (timeout, keys) = args[1..].split_last().expect("arity -3");
        check_timeout(ctx, timeout, true)?;
        for key in keys {
            let Some(items) = zsets::pop(ctx, key, max, 1)? else {
                continue;
            };
            let Some((member, score)) = items.into_iter().next() else {
                continue;
            };
            return Ok(Reply::Array(vec![
                Reply::Bulk(key.clone()),
                Reply::Bulk(member),
                Reply::Double(score),
            ]));
        }
        Ok(Reply::NilArray)
    })())
}

fn bzpopmin(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    blocking_zpop(ctx, args, false)
}
fn bzpopmax(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    blocking_zpop(ctx, args, true)
}

/// WAIT numreplicas timeout: the sandbox is a primary without replicas, so none acknowledge.
fn wait(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        int_arg(&args[1])?;
        check_timeout(ctx, &args[2], false)?;
        Ok(Reply::Int(0))
    })())
}

/// WAITAOF numlocal numreplicas timeout: with `appendonly no` (the default) no local fsync can
/// be waited for, and there are no replicas.
fn waitaof(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let positive = |a: &[u8]| {
            int_arg(a).and_then(|n| {
                if n < 0 {
                    Err(Reply::err("ERR value is out of range, must be positive"))
                } else {
                    Ok(n)
                }
            })
        };
        let numlocal = int_arg(&args[1])?;
        if !(0..=1).contains(&numlocal) {
            return Err(Reply::err(
                "ERR value is out of range, value must between 0 and 1",
            ));
        }
        positive(&args[2])?;
        check_timeout(ctx, &args[3], false)?;
        if numlocal > 0 {
            return Err(Reply::err(
                "ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled.",
            ));
        }
        Ok(Reply::Array(vec![Reply::Int(0), Reply::Int(0)]))
    })())
}
