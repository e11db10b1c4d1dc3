//! What Redis 7.0.15 says about each of its commands (`COMMAND`), as data.

pub const F_WRITE: u32 = 1 << 0;
pub const F_READONLY: u32 = 1 << 1;
pub const F_DENYOOM: u32 = 1 << 2;
pub const F_ADMIN: u32 = 1 << 3;
pub const F_PUBSUB: u32 = 1 << 4;
pub const F_NOSCRIPT: u32 = 1 << 5;
pub const F_BLOCKING: u32 = 1 << 6;
pub const F_LOADING: u32 = 1 << 7;
pub const F_STALE: u32 = 1 << 8;
pub const F_SKIP_MONITOR: u32 = 1 << 9;
pub const F_SKIP_SLOWLOG: u32 = 1 << 10;
pub const F_ASKING: u32 = 1 << 11;
pub const F_FAST: u32 = 1 << 12;
pub const F_NO_AUTH: u32 = 1 << 13;
pub const F_MAY_REPLICATE: u32 = 1 << 14;
pub const F_NO_MANDATORY_KEYS: u32 = 1 << 15;
pub const F_NO_ASYNC_LOADING: u32 = 1 << 16;
pub const F_NO_MULTI: u32 = 1 << 17;
pub const F_MOVABLEKEYS: u32 = 1 << 18;
pub const F_ALLOW_BUSY: u32 = 1 << 19;

#[derive(Debug, Clone, Copy)]
pub struct RedisCommandInfo {
    /// Lower case; `parent|sub` for a subcommand.
    pub name: &'static str,
    /// Positive: exact argument count (name included); negative: at least that many.
    pub arity: i32,
    pub flags: u32,
    pub first_key: i32,
    pub last_key: i32,
    pub step: i32,
}

impl RedisCommandInfo {
    pub fn arity_ok(&self, argc: usize) -> bool {
        let argc = argc as i32;
        if self.arity >= 0 {
            argc == self.arity
        } else {
            argc >= -self.arity
        }
    }
    pub fn has(&self, flag: u32) -> bool {
        self.flags & flag != 0
    }
    /// Commands that `EVAL_RO` and `no-writes` scripts refuse: flagged `write` or `may-replicate`
    /// (the latter is not reported by `COMMAND` in 7.0, so it is listed here from the sources).
    pub fn is_write(&self) -> bool {
        self.has(F_WRITE)
            || matches!(
                self.name,
                "publish"
                    | "spublish"
                    | "pfcount"
                    | "eval"
                    | "evalsha"
                    | "fcall"
                    | "script|flush"
                    | "script|load"
                    | "function|delete"
                    | "function|flush"
                    | "function|load"
                    | "function|restore"
            )
    }
    /// Key positions from the legacy (first, last, step) spec.
    pub fn key_positions(&self, argc: usize) -> Vec<usize> {
        if self.first_key <= 0 || self.step <= 0 {
            return Vec::new();
        }
        let last = if self.last_key < 0 {
            argc as i32 + self.last_key
        } else {
            self.last_key
        };
        let mut out = Vec::new();
        let mut i = self.first_key;
        while i <= last && (i as usize) < argc {
            out.push(i as usize);
            i += self.step;
        }
        out
    }
}

/// Commands whose reply differs from run to run (a random pick, the clock): the lint warns of
/// them, and a dry run in the sandbox cannot tell what they answer on a server.
pub const NONDETERMINISTIC: &[&str] = &[
    "time",
    "randomkey",
    "srandmember",
    "spop",
    "hrandfield",
    "zrandmember",
    "scan",
    "lastsave",
];

/// Options whose argument is a key pattern (`SORT list BY weight_* GET obj_*->name`): the command
/// reads the keys the pattern makes, beyond its key positions.
pub const PATTERN_OPTIONS: &[(&str, &[&str])] =
    &[("sort", &["by", "get"]), ("sort_ro", &["by", "get"])];

impl RedisCommandInfo {
    /// Why a call's reply depends on more than the keys it names (None: its keys decide it). From
    /// the flags: a keyless `readonly` command reads the keyspace as a whole (KEYS, SCAN, DBSIZE,
    /// RANDOMKEY); a keyless command that is neither `fast` nor a write serves the server's own
    /// state (INFO, MEMORY STATS, PUBSUB, CLUSTER, SLOWLOG, COMMAND); NONDETERMINISTIC differ
    /// from run to run; `args` give SORT's key patterns.
    pub fn beyond_its_keys(&self, args: &[Vec<u8>]) -> Option<&'static str> {
        let keyless = self.first_key <= 0 && !self.has(F_MOVABLEKEYS);
        if NONDETERMINISTIC.contains(&self.name) {
            return Some("its reply differs from run to run");
        }
        if keyless && self.has(F_READONLY) {
            return Some("it reads the whole keyspace");
        }
        if keyless && !self.has(F_FAST) && !self.is_write() && !self.name.ends_with("|help") {
            return Some("it reads the server's own state");
        }
        if let Some((_, options)) = PATTERN_OPTIONS.iter().find(|(n, _)| *n == self.name) {
            let reads = args.windows(2).skip(2).any(|w| {
                options
                    .iter()
                    .any(|o| w[0].eq_ignore_ascii_case(o.as_bytes()))
                    && w[1].contains(&b'*')
            });
            if reads {
                return Some("a BY or GET pattern reads keys it does not name");
            }
        }
        None
    }
}

/// `COMMAND`'s flag names and their bits (names a server reports beyond these, such as `module`,
/// change nothing the sandbox checks).
pub const FLAG_NAMES: [(&str, u32); 20] = [
    ("write", F_WRITE),
    ("readonly", F_READONLY),
    ("denyoom", F_DENYOOM),
    ("admin", F_ADMIN),
    ("pubsub", F_PUBSUB),
    ("noscript", F_NOSCRIPT),
    ("blocking", F_BLOCKING),
    ("loading", F_LOADING),
    ("stale", F_STALE),
    ("skip_monitor", F_SKIP_MONITOR),
    ("skip_slowlog", F_SKIP_SLOWLOG),
    ("asking", F_ASKING),
    ("fast", F_FAST),
    ("no_auth", F_NO_AUTH),
    ("may_replicate", F_MAY_REPLICATE),
    ("no_mandatory_keys", F_NO_MANDATORY_KEYS),
    ("no_async_loading", F_NO_ASYNC_LOADING),
    ("no_multi", F_NO_MULTI),
    ("movablekeys", F_MOVABLEKEYS),
    ("allow_busy", F_ALLOW_BUSY),
];

/// Bits of `COMMAND` flag names.
pub fn flag_bits<'a>(names: impl IntoIterator<Item = &'a str>) -> u32 {
    names
        .into_iter()
        .filter_map(|n| FLAG_NAMES.iter().find(|(name, _)| *name == n))
        .fold(0, |acc, (_, bit)| acc | bit)
}

/// `write|fast` for bits (`-` for none), in `FLAG_NAMES` order.
pub fn flag_text(bits: u32) -> String {
    let names: Vec<&str> = FLAG_NAMES
        .iter()
        .filter(|(_, bit)| bits & bit != 0)
        .map(|(name, _)| *name)
        .collect();
    if names.is_empty() {
        "-".into()
    } else {
        names.join("|")
    }
}

impl RedisCommandInfo {
    /// One row of a profile delta file: `name arity first last step flags`.
    pub fn delta_row(&self) -> String {
        format!(
            "{} {} {} {} {} {}",
            self.name,
            self.arity,
            self.first_key,
            self.last_key,
            self.step,
            flag_text(self.flags)
        )
    }
}

/// A profile's command table: Redis 7.0.15's with the delta applied. A delta line is `+ row`
/// (a command the server has, new or changed) or `- name` (one it does not have); `#` comments.
pub fn apply_delta(
    base: &'static [RedisCommandInfo],
    delta: &'static str,
) -> Result<Vec<RedisCommandInfo>, String> {
    let mut table: Vec<RedisCommandInfo> = base.to_vec();
    for (n, line) in delta.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = || {
            format!(
                "line {}: '{line}': expected '+ name arity first last step flags' or '- name'",
                n + 1
            )
        };
        let (op, rest) = line.split_once(' ').ok_or_else(bad)?;
        let fields: Vec<&'static str> = rest.split_whitespace().collect();
        match (op, fields.as_slice()) {
            ("-", [name]) => table.retain(|c| c.name != *name),
            ("+", [name, arity, first, last, step, flags]) => {
                let num = |s: &str| s.parse::<i32>().map_err(|_| bad());
                let row = RedisCommandInfo {
                    name,
                    arity: num(arity)?,
                    first_key: num(first)?,
                    last_key: num(last)?,
                    step: num(step)?,
                    flags: flag_bits(flags.split('|')),
                };
                match table.iter_mut().find(|c| c.name == *name) {
                    Some(existing) => *existing = row,
                    None => table.push(row),
                }
            }
            _ => return Err(bad()),
        }
    }
    Ok(table)
}

#[cfg(test)]
mod tests {
    use crate::engine::commands::resolve;

    fn beyond(args: &[&str]) -> Option<&'static str> {
        let args: Vec<Vec<u8>> = args.iter().map(|a| a.as_bytes().to_vec()).collect();
        resolve(&args)
            .expect("a command")
            .info
            .beyond_its_keys(&args)
    }

    #[test]
    fn what_a_copy_of_the_keys_cannot_predict_comes_from_the_flags() {
        for (args, why) in [
            (&["KEYS", "*"][..], Some("it reads the whole keyspace")),
            (&["DBSIZE"], Some("it reads the whole keyspace")),
            (&["SCAN", "0"], Some("its reply differs from run to run")),
            (&["RANDOMKEY"], Some("its reply differs from run to run")),
            (&["TIME"], Some("its reply differs from run to run")),
            (
                &["SRANDMEMBER", "s"],
                Some("its reply differs from run to run"),
            ),
            (&["INFO"], Some("it reads the server's own state")),
            (
                &["MEMORY", "STATS"],
                Some("it reads the server's own state"),
            ),
            (
                &["PUBSUB", "CHANNELS"],
                Some("it reads the server's own state"),
            ),
            (
                &["SORT_RO", "l", "BY", "w_*"],
                Some("a BY or GET pattern reads keys it does not name"),
            ),
            (
                &["SORT", "l", "GET", "#", "GET", "o_*->f"],
                Some("a BY or GET pattern reads keys it does not name"),
            ),
            // Their keys decide them (or nothing does): the copy previews them.
            (&["GET", "k"], None),
            (&["SORT_RO", "l", "BY", "nosort", "GET", "#"], None),
            (&["PING"], None),
            (&["ECHO", "x"], None),
            (&["SELECT", "1"], None),
            (&["MEMORY", "HELP"], None),
            (&["ZUNION", "2", "a", "b"], None),
        ] {
            assert_eq!(beyond(args), why, "{args:?}");
        }
    }
}
