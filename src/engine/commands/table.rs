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
