//! Geo commands (`src/geo.c` of Redis 7.0.15) on sorted sets whose scores are 52-bit geohashes
//! (`geohash.rs`): GEOADD (through ZADD, as Redis does), GEODIST, GEOHASH, GEOPOS, GEOSEARCH,
//! GEOSEARCHSTORE and GEORADIUS / GEORADIUSBYMEMBER with their `_RO` forms. Distances print as
//! `fixedpoint_d2string(d, 4)`, coordinates as `addReplyHumanLongDouble` (`%.17Lf` of the
//! double, trailing zeros removed; a RESP3 double under `redis.setresp(3)`).

use super::geo_sort::{merge_sort, partial_quick_sort};
use super::geohash::{self, Shape, ShapeKind};
use super::long_double::{format_human, Ld};
use super::{errors, flatten, int_arg, lower, until_nul, Command, Ctx};
use crate::engine::keyspace::{Value, ZSetValue};
use crate::engine::number;
use crate::engine::profile::Profile;
use crate::engine::reply::Reply;

pub static COMMANDS: &[Command] = &[
    Command::new("geoadd", geoadd),
    Command::new("geodist", geodist),
    Command::new("geohash", geohash_cmd),
    Command::new("geopos", geopos),
    Command::with_keys("georadius", georadius, georadius_keys),
    Command::new("georadius_ro", georadius_ro),
    Command::with_keys("georadiusbymember", georadiusbymember, georadius_keys),
    Command::new("georadiusbymember_ro", georadiusbymember_ro),
    Command::new("geosearch", geosearch),
    Command::new("geosearchstore", geosearchstore),
];

const BAD_UNIT: &str = "ERR unsupported unit provided. please use M, KM, FT, MI";
const NEGATIVE_RADIUS: &str = "ERR radius cannot be negative";
const NEGATIVE_BOX: &str = "ERR height or width cannot be negative";
const BAD_MEMBER: &str = "ERR could not decode requested zset member";
const COUNT_POSITIVE: &str = "ERR COUNT must be > 0";
const ANY_NEEDS_COUNT: &str = "ERR the ANY argument requires COUNT argument";

/// `georadiusGetKeys`: the source key and the last STORE/STOREDIST destination.
fn georadius_keys(args: &[Vec<u8>]) -> Vec<usize> {
    let mut stored = None;
    let mut i = 5;
    while i < args.len() {
        if matches!(lower(&args[i]).as_str(), "store" | "storedist") && i + 1 < args.len() {
            stored = Some(i + 1);
            i += 1;
        }
        i += 1;
    }
    std::iter::once(1).chain(stored).collect()
}

/// The sorted set at `key` (None when missing), or WRONGTYPE.
fn zset<'a>(ctx: &'a mut Ctx, key: &[u8]) -> Result<Option<&'a ZSetValue>, Reply> {
    match ctx.value(key) {
        None => Ok(None),
        Some(Value::ZSet(z)) => Ok(Some(z)),
        Some(_) => Err(Reply::err(errors::WRONGTYPE)),
    }
}

/// `getDoubleFromObjectOrReply`: the profile's `string2d` (fast_float on Redis 8.0 and Valkey 9).
fn float_arg(profile: &Profile, arg: &[u8]) -> Result<f64, Reply> {
    number::string2d(profile.numbers.string2d, arg).ok_or_else(|| Reply::err(errors::NOT_FLOAT))
}

/// `extractLongLatOrReply`: two floats, then the range check with Redis's `%f` message.
fn long_lat(profile: &Profile, args: &[Vec<u8>]) -> Result<[f64; 2], Reply> {
    let lon = float_arg(profile, &args[0])?;
    let lat = float_arg(profile, &args[1])?;
    if !(geohash::LONG_MIN..=geohash::LONG_MAX).contains(&lon)
        || !(geohash::LAT_MIN..=geohash::LAT_MAX).contains(&lat)
    {
        return Err(Reply::err(format!(
            "ERR invalid longitude,latitude pair {lon:.6},{lat:.6}"
        )));
    }
    Ok([lon, lat])
}

/// `extractUnitOrReply`: metres per unit.
fn unit(arg: &[u8]) -> Result<f64, Reply> {
    match lower(arg).as_str() {
        "m" => Ok(1.0),
        "km" => Ok(1000.0),
        "ft" => Ok(0.3048),
        "mi" => Ok(1609.34),
        _ => Err(Reply::err(BAD_UNIT)),
    }
}

/// A float argument with the custom message of `getDoubleFromObjectOrReply`.
fn float_or(profile: &Profile, arg: &[u8], msg: &str) -> Result<f64, Reply> {
    float_arg(profile, arg).map_err(|_| Reply::err(msg))
}

/// `extractDistanceOrReply`: radius and metres per unit.
fn radius_arg(profile: &Profile, args: &[Vec<u8>]) -> Result<(f64, f64), Reply> {
    let radius = float_or(profile, &args[0], "ERR need numeric radius")?;
    if radius < 0.0 {
        return Err(Reply::err(NEGATIVE_RADIUS));
    }
    Ok((radius, unit(&args[1])?))
}

/// `extractBoxOrReply`: width, height and metres per unit.
fn box_arg(profile: &Profile, args: &[Vec<u8>]) -> Result<(f64, f64, f64), Reply> {
    let width = float_or(profile, &args[0], "ERR need numeric width")?;
    let height = float_or(profile, &args[1], "ERR need numeric height")?;
    if height < 0.0 || width < 0.0 {
        return Err(Reply::err(NEGATIVE_BOX));
    }
    Ok((width, height, unit(&args[2])?))
}

/// `fixedpoint_d2string(d, 4)`: `llrint(d * 10000)` printed with 4 decimals.
fn distance_text(d: f64) -> Vec<u8> {
    if d == 0.0 {
        return b"0.0000".to_vec();
    }
    let scaled = (d * 10000.0).round_ties_even();
    let v = if scaled.is_nan() || scaled.abs() >= 9.2e18 {
        i64::MIN
    } else {
        scaled as i64
    };
    let sign = if v < 0 { "-" } else { "" };
    let abs = v.unsigned_abs();
    format!("{sign}{}.{:04}", abs / 10000, abs % 10000).into_bytes()
}

/// `addReplyHumanLongDouble` of a double: a bulk string in RESP2, a double in RESP3; a plain
/// double reply where the profile says so (Redis 8.0).
fn coordinate(profile: &Profile, resp3: bool, v: f64) -> Reply {
    if profile.geo_coordinates_double {
        return Reply::Double(v);
    }
    let text = format_human(ld_of(v));
    if resp3 {
        Reply::Double(text.parse().unwrap_or(v))
    } else {
        Reply::Bulk(text.into_bytes())
    }
}

/// An f64 as the x87 long double it widens to.
fn ld_of(v: f64) -> Ld {
    if v.is_nan() {
        return Ld::NaN;
    }
    let neg = v.is_sign_negative();
    if v.is_infinite() {
        return Ld::Inf { neg };
    }
    let bits = v.to_bits();
    let exp_bits = ((bits >> 52) & 0x7ff) as i64;
    let frac = bits & ((1u64 << 52) - 1);
    let (mant, exp) = if exp_bits == 0 {
        (frac, -1074)
    } else {
        (frac | (1u64 << 52), exp_bits - 1075)
    };
    Ld::Finite { neg, mant, exp }
}

// ---- GEOADD ----

/// `geoaddCommand`: options, coordinates checked, then ZADD with the geohash scores.
fn geoadd(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let (mut nx, mut xx) = (false, false);
        let mut longidx = 2;
        while longidx < args.len() {
            match lower(&args[longidx]).as_str() {
                "nx" => nx = true,
                "xx" => xx = true,
                "ch" => {}
                _ => break,
            }
            longidx += 1;
        }
        if !(args.len() - longidx).is_multiple_of(3) || (xx && nx) {
            return Err(Reply::err(errors::SYNTAX));
        }
        let mut zadd_args: Vec<Vec<u8>> =
            Vec::with_capacity(longidx + (args.len() - longidx) / 3 * 2);
        zadd_args.push(b"zadd".to_vec());
        zadd_args.extend(args[1..longidx].iter().cloned());
        for triple in args[longidx..].chunks(3) {
            let [lon, lat] = long_lat(ctx.profile, triple)?;
            let hash = geohash::encode_wgs84(lon, lat, geohash::STEP_MAX).unwrap_or_default();
            zadd_args.push(geohash::align52(hash).to_string().into_bytes());
            zadd_args.push(triple[2].clone());
        }
        Ok(super::zsets::zadd(ctx, &zadd_args))
    })())
}

// ---- GEODIST GEOHASH GEOPOS ----

fn geodist(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let to_meter = match args.len() {
            5 => unit(&args[4])?,
            n if n > 5 => return Err(Reply::err(errors::SYNTAX)),
            _ => 1.0,
        };
        let Some(z) = zset(ctx, &args[1])? else {
            return Ok(Reply::Nil);
        };
        let (Some(s1), Some(s2)) = (z.score(&args[2]), z.score(&args[3])) else {
            return Ok(Reply::Nil);
        };
        let [x1, y1] = geohash::decode_score(s1);
        let [x2, y2] = geohash::decode_score(s2);
        Ok(Reply::Bulk(distance_text(
            geohash::distance(x1, y1, x2, y2) / to_meter,
        )))
    })())
}

fn geohash_cmd(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let z = zset(ctx, &args[1])?;
        Ok(Reply::Array(
            args[2..]
                .iter()
                .map(|m| {
                    z.and_then(|z| z.score(m))
                        .and_then(|s| geohash::standard_text(geohash::decode_score(s)))
                        .map_or(Reply::Nil, |t| Reply::Bulk(t.into_bytes()))
                })
                .collect(),
        ))
    })())
}

fn geopos(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let scores: Vec<Option<f64>> = {
            let z = zset(ctx, &args[1])?;
            args[2..]
                .iter()
                .map(|m| z.and_then(|z| z.score(m)))
                .collect()
        };
        Ok(Reply::Array(
            scores
                .into_iter()
                .map(|s| match s {
                    None => Reply::NilArray,
                    Some(s) => {
                        let [lon, lat] = geohash::decode_score(s);
                        Reply::Array(vec![
                            coordinate(ctx.profile, ctx.resp3, lon),
                            coordinate(ctx.profile, ctx.resp3, lat),
                        ])
                    }
                })
                .collect(),
        ))
    })())
}

// ---- GEORADIUS* / GEOSEARCH* ----

/// Which command `search` runs (the `RADIUS_*` / `GEOSEARCH*` flags of geo.c).
#[derive(Clone, Copy, PartialEq)]
enum Variant {
    /// GEORADIUS / GEORADIUS_RO (`nostore`).
    Coords { nostore: bool },
    /// GEORADIUSBYMEMBER / GEORADIUSBYMEMBER_RO.
    Member { nostore: bool },
    /// GEOSEARCH / GEOSEARCHSTORE.
    Search { store: bool },
}

fn georadius(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten(search(ctx, args, Variant::Coords { nostore: false }))
}
fn georadius_ro(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten(search(ctx, args, Variant::Coords { nostore: true }))
}
fn georadiusbymember(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten(search(ctx, args, Variant::Member { nostore: false }))
}
fn georadiusbymember_ro(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten(search(ctx, args, Variant::Member { nostore: true }))
}
fn geosearch(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten(search(ctx, args, Variant::Search { store: false }))
}
fn geosearchstore(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten(search(ctx, args, Variant::Search { store: true }))
}

/// A point found by a search (`geoPoint`).
#[derive(Clone)]
struct Found {
    xy: [f64; 2],
    dist: f64,
    score: f64,
    member: Vec<u8>,
}

#[derive(Clone, Copy, PartialEq)]
enum Order {
    None,
    Asc,
    Desc,
}

/// The position of `member` in `z`, or the profile's error.
fn member_xy(profile: &Profile, z: &ZSetValue, member: &[u8]) -> Result<[f64; 2], Reply> {
    z.score(member).map(geohash::decode_score).ok_or_else(|| {
        if profile.geo_member_named {
            Reply::err(format!(
                "ERR member {} does not exist",
                String::from_utf8_lossy(until_nul(member))
            ))
        } else {
            Reply::err(BAD_MEMBER)
        }
    })
}

/// What a GEORADIUS* / GEOSEARCH* call asks for, its arguments read.
struct Query<'a> {
    shape: Shape,
    storekey: Option<&'a [u8]>,
    storedist: bool,
    withdist: bool,
    withhash: bool,
    withcoords: bool,
    order: Order,
    any: bool,
    count: i64,
}

/// `georadiusGeneric`: argument parsing in Redis's order (errors included), the 9-box search,
/// sorting, and the reply or the stored sorted set.
fn search(ctx: &mut Ctx, args: &[Vec<u8>], variant: Variant) -> Result<Reply, Reply> {
    let src_index = if variant == (Variant::Search { store: true }) {
        2
    } else {
        1
    };
    let (resp3, now, profile) = (ctx.resp3, ctx.now_ms, ctx.profile);
    let src = zset(ctx, &args[src_index])?;
    let mut query = read_query(profile, src, args, variant)?;
    let Some(z) = src else {
        return Ok(match query.storekey {
            Some(dst) => {
                ctx.db().remove(dst, now);
                Reply::Int(0)
            }
            None => Reply::Array(vec![]),
        });
    };
    if query.count != 0 && query.order == Order::None && !query.any {
        query.order = Order::Asc;
    }
    let limit = if query.any { query.count as usize } else { 0 };
    let mut found = points_in_boxes(z, &query.shape, limit);
    let returned = if query.count == 0 || (found.len() as i64) < query.count {
        found.len()
    } else {
        query.count as usize
    };
    sort_found(&mut found, query.order, returned);
    found.truncate(returned);
    match query.storekey {
        None => Ok(found_reply(profile, resp3, &query, found)),
        Some(dst) => {
            let mut out = ZSetValue::new();
            for p in found {
                let score = if query.storedist {
                    p.dist / query.shape.conversion
                } else {
                    p.score
                };
                out.insert(p.member, score);
            }
            if returned > 0 {
                ctx.db().set(dst.to_vec(), Value::ZSet(out));
            } else {
                ctx.db().remove(dst, now);
            }
            Ok(Reply::Int(returned as i64))
        }
    }
}

/// The query's arguments in Redis's order, with its errors: the center and shape the variant
/// takes first, then the options, then the combinations Redis refuses.
fn read_query<'a>(
    profile: &Profile,
    src: Option<&ZSetValue>,
    args: &'a [Vec<u8>],
    variant: Variant,
) -> Result<Query<'a>, Reply> {
    let mut q = Query {
        shape: Shape {
            xy: [0.0, 0.0],
            conversion: 0.0,
            kind: ShapeKind::Radius(0.0),
        },
        storekey: None,
        storedist: false,
        withdist: false,
        withhash: false,
        withcoords: false,
        order: Order::None,
        any: false,
        count: 0,
    };
    let base_args = read_center_and_shape(profile, src, args, variant, &mut q)?;
    let given = read_search_options(profile, src, args, base_args, variant, &mut q)?;
    check_query(&q, &given, args, variant)?;
    Ok(q)
}

/// Which of GEOSEARCH's center and shape options were given.
#[derive(Default)]
struct Given {
    from_member: bool,
    from_lonlat: bool,
    by_radius: bool,
    by_box: bool,
}

/// What GEORADIUS and GEORADIUSBYMEMBER take before their options (GEOSEARCHSTORE: its
/// destination); where the options start.
fn read_center_and_shape<'a>(
    profile: &Profile,
    src: Option<&ZSetValue>,
    args: &'a [Vec<u8>],
    variant: Variant,
    q: &mut Query<'a>,
) -> Result<usize, Reply> {
    Ok(match variant {
        Variant::Coords { .. } => {
            q.shape.xy = long_lat(profile, &args[2..4])?;
            let (radius, conversion) = radius_arg(profile, &args[4..6])?;
            q.shape.kind = ShapeKind::Radius(radius);
            q.shape.conversion = conversion;
            6
        }
        Variant::Member { .. } => {
            if let Some(z) = src {
                q.shape.xy = member_xy(profile, z, &args[2])?;
                let (radius, conversion) = radius_arg(profile, &args[3..5])?;
                q.shape.kind = ShapeKind::Radius(radius);
                q.shape.conversion = conversion;
            }
            5
        }
        Variant::Search { store } => {
            if store {
                q.storekey = Some(&args[1]);
                3
            } else {
                2
            }
        }
    })
}

/// The options from `args[base_args]` on, each where the variant takes it.
fn read_search_options<'a>(
    profile: &Profile,
    src: Option<&ZSetValue>,
    args: &'a [Vec<u8>],
    base_args: usize,
    variant: Variant,
    q: &mut Query<'a>,
) -> Result<Given, Reply> {
    let rest = &args[base_args.min(args.len())..];
    let nostore = matches!(
        variant,
        Variant::Coords { nostore: true } | Variant::Member { nostore: true }
    );
    let is_search = matches!(variant, Variant::Search { .. });
    let mut given = Given::default();
    let remaining = rest.len();
    let mut i = 0;
    while i < remaining {
        let arg = lower(&rest[i]);
        match arg.as_str() {
            "withdist" => q.withdist = true,
            "withhash" => q.withhash = true,
            "withcoord" => q.withcoords = true,
            "any" => q.any = true,
            "asc" => q.order = Order::Asc,
            "desc" => q.order = Order::Desc,
            "count" if i + 1 < remaining => {
                q.count = int_arg(&rest[i + 1])?;
                if q.count <= 0 {
                    return Err(Reply::err(COUNT_POSITIVE));
                }
                i += 1;
            }
            "store" | "storedist" if i + 1 < remaining && !nostore && !is_search => {
                q.storekey = Some(&rest[i + 1]);
                q.storedist = arg == "storedist";
                i += 1;
            }
            "storedist" if variant == (Variant::Search { store: true }) => q.storedist = true,
            "frommember" if i + 1 < remaining && is_search && !given.from_lonlat => {
                if let Some(z) = src {
                    q.shape.xy = member_xy(profile, z, &rest[i + 1])?;
                }
                given.from_member = true;
                i += 1;
            }
            "fromlonlat" if i + 2 < remaining && is_search && !given.from_member => {
                q.shape.xy = long_lat(profile, &rest[i + 1..i + 3])?;
                given.from_lonlat = true;
                i += 2;
            }
            "byradius" if i + 2 < remaining && is_search && !given.by_box => {
                let (radius, conversion) = radius_arg(profile, &rest[i + 1..i + 3])?;
                q.shape.kind = ShapeKind::Radius(radius);
                q.shape.conversion = conversion;
                given.by_radius = true;
                i += 2;
            }
            "bybox" if i + 3 < remaining && is_search && !given.by_radius => {
                let (width, height, conversion) = box_arg(profile, &rest[i + 1..i + 4])?;
                q.shape.kind = ShapeKind::Box { width, height };
                q.shape.conversion = conversion;
                given.by_box = true;
                i += 3;
            }
            _ => return Err(Reply::err(errors::SYNTAX)),
        }
        i += 1;
    }
    Ok(given)
}

/// The combinations Redis refuses once every option is read.
fn check_query(q: &Query, given: &Given, args: &[Vec<u8>], variant: Variant) -> Result<(), Reply> {
    let is_search = matches!(variant, Variant::Search { .. });
    if q.storekey.is_some() && (q.withdist || q.withhash || q.withcoords) {
        let what = if is_search {
            "GEOSEARCHSTORE"
        } else {
            "STORE option in GEORADIUS"
        };
        return Err(Reply::err(format!(
            "ERR {what} is not compatible with WITHDIST, WITHHASH and WITHCOORD options"
        )));
    }
    let name = String::from_utf8_lossy(until_nul(&args[0])).into_owned();
    if is_search && !(given.from_member || given.from_lonlat) {
        return Err(Reply::err(format!(
            "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for {name}"
        )));
    }
    if is_search && !(given.by_radius || given.by_box) {
        return Err(Reply::err(format!(
            "ERR exactly one of BYRADIUS and BYBOX can be specified for {name}"
        )));
    }
    if q.any && q.count == 0 {
        return Err(Reply::err(ANY_NEEDS_COUNT));
    }
    Ok(())
}

/// Sort by distance as Redis does: a merge sort of everything, or a partial quicksort of the
/// first `returned` when COUNT cuts the result.
fn sort_found(found: &mut [Found], order: Order, returned: usize) {
    if order == Order::None {
        return;
    }
    let asc = |a: &Found, b: &Found| {
        if a.dist > b.dist {
            1
        } else if a.dist == b.dist {
            0
        } else {
            -1
        }
    };
    let desc = |a: &Found, b: &Found| -asc(a, b);
    match (order, returned == found.len()) {
        (Order::Asc, true) => merge_sort(found, &asc),
        (_, true) => merge_sort(found, &desc),
        (Order::Asc, false) => partial_quick_sort(found, &asc, 0, returned - 1),
        (_, false) => partial_quick_sort(found, &desc, 0, returned - 1),
    }
}

/// The members found, each with the distance, hash and coordinates asked for.
fn found_reply(profile: &Profile, resp3: bool, q: &Query, found: Vec<Found>) -> Reply {
    Reply::Array(
        found
            .into_iter()
            .map(|p| {
                if !(q.withdist || q.withhash || q.withcoords) {
                    return Reply::Bulk(p.member);
                }
                let mut item = vec![Reply::Bulk(p.member)];
                if q.withdist {
                    item.push(Reply::Bulk(distance_text(p.dist / q.shape.conversion)));
                }
                if q.withhash {
                    item.push(Reply::Int(p.score as i64));
                }
                if q.withcoords {
                    item.push(Reply::Array(vec![
                        coordinate(profile, resp3, p.xy[0]),
                        coordinate(profile, resp3, p.xy[1]),
                    ]));
                }
                Reply::Array(item)
            })
            .collect(),
    )
}

/// `membersOfAllNeighbors`: the points of each of the 9 boxes (a box equal to the one read
/// before it is skipped) that lie inside the shape, stopping at `limit` (ANY) when non-zero.
fn points_in_boxes(z: &ZSetValue, shape: &Shape, limit: usize) -> Vec<Found> {
    let boxes = shape.search_boxes();
    let mut found = Vec::new();
    let full = |found: &Vec<Found>| limit != 0 && found.len() >= limit;
    let mut last_processed = 0;
    for (i, b) in boxes.iter().enumerate() {
        if geohash::is_zero(*b) {
            continue;
        }
        if last_processed != 0 && *b == boxes[last_processed] {
            continue;
        }
        if full(&found) {
            break;
        }
        let (min, max) = geohash::box_scores(*b);
        let start = z.partition_point(|s, _| s < min);
        for (member, score) in z.range(start, z.len()) {
            if score >= max {
                break;
            }
            let xy = geohash::decode_score(score);
            if let Some(dist) = shape.distance_if_within(xy) {
                found.push(Found {
                    xy,
                    dist,
                    score,
                    member: member.clone(),
                });
            }
            if full(&found) {
                break;
            }
        }
        last_processed = i;
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_texts() {
        assert_eq!(distance_text(0.0), b"0.0000");
        assert_eq!(distance_text(166274.1516), b"166274.1516");
        assert_eq!(distance_text(0.00004), b"0.0000");
        assert_eq!(distance_text(0.0123), b"0.0123");
        assert_eq!(distance_text(0.00005), b"0.0000"); // ties to even
        assert_eq!(distance_text(0.00015), b"0.0001"); // 1.4999999999999998 after scaling
    }

    #[test]
    fn human_coordinates() {
        assert_eq!(
            format_human(ld_of(13.361389338970184)),
            "13.36138933897018433"
        );
        assert_eq!(format_human(ld_of(-0.5)), "-0.5");
        assert_eq!(format_human(ld_of(0.0)), "0");
    }
}
