//! SORT and SORT_RO (`src/sort.c` of Redis 7.0.15): lists, sets and sorted sets sorted
//! numerically or with ALPHA, by the element or by `BY` pattern keys (`*` replaced by the element,
//! `->field` reading a hash field), with LIMIT, GET patterns (`#` is the element) and STORE.
//! In a script, `BY` without `*` (no sorting) on a set sorts it with ALPHA anyway, as Redis does
//! so that a script's result does not depend on a hash table's order.

use super::{errors, flatten, int_arg, lower, until_nul, Command, Ctx};
use crate::engine::keyspace::{ListValue, Value};
use crate::engine::number;
use crate::engine::number::FloatError;
use crate::engine::profile::{FloatSyntax, NumberRules};
use crate::engine::reply::Reply;
use std::cmp::Ordering;

pub static COMMANDS: &[Command] = &[
    Command::with_keys("sort", sort, sort_keys),
    Command::new("sort_ro", sort_ro),
];

const NOT_DOUBLE: &str = "ERR One or more scores can't be converted into double";

/// The sorted key and, with STORE, the destination (what `sortGetKeys` reports).
fn sort_keys(args: &[Vec<u8>]) -> Vec<usize> {
    let mut keys = vec![1];
    let mut j = 2;
    while j < args.len() {
        let skip = match lower(&args[j]).as_str() {
            "limit" => 2,
            "get" | "by" => 1,
            "store" if j + 1 < args.len() => {
                keys.push(j + 1);
                1
            }
            _ => 0,
        };
        j += 1 + skip;
    }
    keys
}

/// `lookupKeyByPattern`: `#` is the element; otherwise the first `*` is replaced by it and the
/// key read as a string, or as a hash field after `->`. `None` when any of that is missing.
fn by_pattern(ctx: &mut Ctx, pattern: &[u8], element: &[u8]) -> Option<Vec<u8>> {
    let c_pattern = until_nul(pattern);
    if c_pattern == b"#" {
        return Some(element.to_vec());
    }
    let star = c_pattern.iter().position(|&b| b == b'*')?;
    let arrow = c_pattern[star + 1..]
        .windows(2)
        .position(|w| w == b"->")
        .map(|i| star + 1 + i)
        .filter(|&f| f + 2 < c_pattern.len());
    let (key_end, field) = match arrow {
        Some(f) => (f, Some(&pattern[f + 2..])),
        None => (pattern.len(), None),
    };
    let mut key = pattern[..star].to_vec();
    key.extend_from_slice(element);
    key.extend_from_slice(&pattern[star + 1..key_end]);
    match (ctx.value(&key)?, field) {
        (Value::Hash(h), Some(field)) => h.get(field).cloned(),
        (Value::Str(s), None) => Some(s.clone()),
        _ => None,
    }
}

/// The score of a sort key (sort.c): the profile's parser over the C string, `None` when
/// something is left over, it is NaN, or the parser set an `errno` the server checks (ERANGE
/// for `strtod`; any, Valkey 9).
fn sort_score(numbers: &NumberRules, text: &[u8]) -> Option<f64> {
    let c = until_nul(text);
    let read = number::float_prefix(numbers.sort_scores, c);
    let refused = match read.error {
        Some(FloatError::OutOfRange | FloatError::InexactSubnormal) => {
            numbers.sort_refuses_errno || numbers.sort_scores == FloatSyntax::Strtod
        }
        Some(FloatError::Invalid) => numbers.sort_refuses_errno,
        None => false,
    };
    (read.len == c.len() && !refused && !read.value.is_nan()).then_some(read.value)
}

struct Item {
    element: Vec<u8>,
    score: f64,
    /// The BY value for ALPHA with a pattern (`None` sorts first).
    by: Option<Vec<u8>>,
}

fn sort(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    sort_generic(ctx, args, false)
}

fn sort_ro(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    sort_generic(ctx, args, true)
}

/// SORT's options as read, in Redis's order.
struct SortOptions<'a> {
    desc: bool,
    alpha: bool,
    limit_start: i64,
    limit_count: i64,
    by: Option<&'a [u8]>,
    /// BY a pattern without `*`: no sorting.
    dont_sort: bool,
    store: Option<&'a Vec<u8>>,
    gets: Vec<&'a [u8]>,
}

/// `sortCommandGeneric`: the options, the elements in the order Redis iterates them, sorted
/// (or not), the LIMIT range with its GET patterns, then the reply or the stored list.
fn sort_generic(ctx: &mut Ctx, args: &[Vec<u8>], read_only: bool) -> Reply {
    flatten((|| {
        let mut opts = sort_options(args, read_only)?;
        let (mut elements, is_set) = elements_of(ctx, &args[1])?;
        if opts.dont_sort && is_set {
            // Scripts must be deterministic: a set is sorted even when BY asks for no sorting.
            opts.dont_sort = false;
            opts.alpha = true;
            opts.by = None;
        }
        let (start, end) = limit_range(elements.len() as i64, opts.limit_start, opts.limit_count);
        if opts.dont_sort {
            // Lists and sorted sets keep their order (reversed with DESC).
            if opts.desc {
                elements.reverse();
            }
        } else {
            elements = sorted(ctx, elements, &opts)?;
        }
        let range: &[Vec<u8>] = if end >= start {
            &elements[start as usize..=end as usize]
        } else {
            &[]
        };
        let mut out: Vec<Option<Vec<u8>>> = Vec::new();
        for element in range {
            if opts.gets.is_empty() {
                out.push(Some(element.clone()));
            }
            for pattern in &opts.gets {
                out.push(by_pattern(ctx, pattern, element));
            }
        }
        let Some(dest) = opts.store else {
            return Ok(Reply::Array(
                out.into_iter()
                    .map(|v| v.map_or(Reply::Nil, Reply::Bulk))
                    .collect(),
            ));
        };
        let stored = out.len() as i64;
        if out.is_empty() {
            let now = ctx.now_ms;
            ctx.db().remove(dest, now);
        } else {
            // Built as a quicklist, then a listpack when it fits one node (7.2+).
            let mut list: ListValue = out.into_iter().map(Option::unwrap_or_default).collect();
            list.after_build(ctx.profile.listpack_collections);
            ctx.db().set(dest.clone(), Value::List(list));
        }
        Ok(Reply::Int(stored))
    })())
}

/// The options after the key; SORT_RO knows no STORE.
fn sort_options(args: &[Vec<u8>], read_only: bool) -> Result<SortOptions<'_>, Reply> {
    let mut opts = SortOptions {
        desc: false,
        alpha: false,
        limit_start: 0,
        limit_count: -1,
        by: None,
        dont_sort: false,
        store: None,
        gets: Vec::new(),
    };
    let mut j = 2;
    while j < args.len() {
        let left = args.len() - j - 1;
        match lower(&args[j]).as_str() {
            "asc" => opts.desc = false,
            "desc" => opts.desc = true,
            "alpha" => opts.alpha = true,
            "limit" if left >= 2 => {
                opts.limit_start = int_arg(&args[j + 1])?;
                opts.limit_count = int_arg(&args[j + 2])?;
                j += 2;
            }
            "store" if !read_only && left >= 1 => {
                opts.store = Some(&args[j + 1]);
                j += 1;
            }
            "by" if left >= 1 => {
                opts.by = Some(&args[j + 1]);
                opts.dont_sort = !until_nul(&args[j + 1]).contains(&b'*');
                j += 1;
            }
            "get" if left >= 1 => {
                opts.gets.push(&args[j + 1]);
                j += 1;
            }
            _ => return Err(Reply::err(errors::SYNTAX)),
        }
        j += 1;
    }
    Ok(opts)
}

/// The elements of the list, set or sorted set at `key` in the order Redis iterates them, and
/// whether it is a set.
fn elements_of(ctx: &mut Ctx, key: &[u8]) -> Result<(Vec<Vec<u8>>, bool), Reply> {
    Ok(match ctx.value(key) {
        None => (Vec::new(), false),
        Some(Value::List(l)) => (l.iter().cloned().collect(), false),
        Some(Value::Set(s)) => (s.iter().cloned().collect(), true),
        Some(Value::ZSet(z)) => (z.iter().map(|(m, _)| m.clone()).collect(), false),
        Some(_) => return Err(Reply::err(errors::WRONGTYPE)),
    })
}

/// LIMIT's start and count as the first and last index into `len` elements (end before start:
/// nothing).
fn limit_range(len: i64, limit_start: i64, limit_count: i64) -> (i64, i64) {
    let start = limit_start.max(0).min(len);
    let count = limit_count.max(-1).min(len);
    let (mut start, mut end) = (
        start,
        if count < 0 {
            len - 1
        } else {
            start + count - 1
        },
    );
    if start >= len {
        start = len - 1;
        end = len - 2;
    }
    (start, end.min(len - 1))
}

/// The elements sorted by score, or (ALPHA) as text, each by itself or by its BY value; an
/// element whose score is no number fails the sort once it is done, as Redis does.
fn sorted(
    ctx: &mut Ctx,
    elements: Vec<Vec<u8>>,
    opts: &SortOptions,
) -> Result<Vec<Vec<u8>>, Reply> {
    let mut items = Vec::with_capacity(elements.len());
    let mut bad_score = false;
    for element in elements {
        let by_value = match opts.by {
            Some(pattern) => by_pattern(ctx, pattern, &element),
            None => Some(element.clone()),
        };
        let mut item = Item {
            element,
            score: 0.0,
            by: None,
        };
        if let Some(value) = by_value {
            if opts.alpha {
                item.by = opts.by.map(|_| value);
            } else {
                match sort_score(ctx.profile.numbers, &value) {
                    Some(score) => item.score = score,
                    None => bad_score = true,
                }
            }
        }
        items.push(item);
    }
    let binary = opts.store.is_some();
    // strcoll in the C locale: bytes up to the first NUL; STORE compares binary.
    let text_cmp = |a: &[u8], b: &[u8]| {
        if binary {
            a.cmp(b)
        } else {
            until_nul(a).cmp(until_nul(b))
        }
    };
    items.sort_by(|a, b| {
        let cmp = if !opts.alpha {
            a.score
                .partial_cmp(&b.score)
                .unwrap_or(Ordering::Equal)
                .then_with(|| a.element.cmp(&b.element))
        } else if opts.by.is_some() {
            match (&a.by, &b.by) {
                (Some(x), Some(y)) => text_cmp(x, y),
                (x, y) => x.is_some().cmp(&y.is_some()),
            }
        } else {
            text_cmp(&a.element, &b.element)
        };
        if opts.desc {
            cmp.reverse()
        } else {
            cmp
        }
    });
    if bad_score {
        return Err(Reply::err(NOT_DOUBLE));
    }
    Ok(items.into_iter().map(|i| i.element).collect())
}
