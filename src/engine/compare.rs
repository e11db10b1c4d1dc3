//! The same run under a second profile: someone moving from Redis 7.0 to Valkey 9.1
//! sees "on valkey-9.1 this reads ..." next to the reply they have. The request runs again in a
//! fresh sandbox of the other profile, seeded with database 0 as it was before the first run and
//! with the clock at the first run's time, so only the server's behaviour differs.

use super::clock::ManualClock;
use super::keyspace::Db;
use super::profile::Profile;
use super::report::RunReport;
use super::sandbox::{RunRequest, Sandbox, SandboxConfig};

/// A run's result under another profile.
#[derive(Debug, Clone)]
pub struct ProfileComparison {
    pub profile: &'static Profile,
    pub report: RunReport,
    /// The reply (or error text) as the caller's protocol receives it differs from the first
    /// run's.
    pub differs: bool,
}

impl ProfileComparison {
    /// The other profile's reply as the CLI and the Reply tab write replies.
    pub fn reply_text(&self) -> String {
        self.report.reply_for(self.report.protocol).to_cli()
    }

    /// One line for a report: `on valkey-9.1 (Valkey 9.1.2) this reads: ...` or the same reply.
    pub fn summary(&self) -> String {
        let who = format!(
            "on {} ({} {})",
            self.profile.id,
            self.profile.product.name(),
            self.profile.version_tested
        );
        if self.differs {
            format!("{who} this reads: {}", self.reply_text())
        } else {
            format!("{who}: the same reply")
        }
    }
}

/// Run `request` under `profile` on a copy of `seed` (database 0 before the first run) at
/// `now_ms`, with `config`'s limits; compare its reply with `first`'s.
pub fn run_under_profile(
    request: &RunRequest,
    seed: &Db,
    now_ms: i64,
    config: &SandboxConfig,
    profile: &'static Profile,
    first: &RunReport,
) -> ProfileComparison {
    let mut sandbox = Sandbox::with_clock(Box::new(ManualClock::new(now_ms.saturating_mul(1000))));
    sandbox.config = config.clone();
    sandbox.set_profile(profile);
    sandbox.set_db0(seed.clone());
    let report = sandbox.run(request);
    let protocol = first.protocol;
    let differs = report.reply_for(protocol) != first.reply_for(protocol);
    ProfileComparison {
        profile,
        report,
        differs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::profile::Profile;

    fn first_run(script: &str, profile: &'static Profile) -> (RunRequest, RunReport, i64) {
        let mut sandbox = Sandbox::with_clock(Box::new(ManualClock::new(1_700_000_000_000_000)));
        sandbox.set_profile(profile);
        let request = RunRequest::new(script);
        let report = sandbox.run(&request);
        (request, report, sandbox.now_ms())
    }

    #[test]
    fn another_profile_reads_differently() {
        let (request, first, now) = first_run(
            "return redis.pcall('HEXPIRE', 'h', 10, 'FIELDS', 1, 'a')",
            Profile::by_id("redis-7.0").unwrap(),
        );
        let valkey = Profile::by_id("valkey-9.1").unwrap();
        let other = run_under_profile(
            &request,
            &Db::new(),
            now,
            &SandboxConfig::default(),
            valkey,
            &first,
        );
        assert!(other.differs);
        assert_eq!(
            first.reply_for(first.protocol).to_cli(),
            "(error) ERR Unknown Redis command called from script"
        );
        assert_eq!(
            other.summary(),
            "on valkey-9.1 (valkey 9.1.2) this reads: 1) (integer) -2"
        );
    }

    #[test]
    fn the_same_reply_says_so() {
        let (request, first, now) = first_run("return 1 + 1", Profile::by_id("redis-7.0").unwrap());
        let other = run_under_profile(
            &request,
            &Db::new(),
            now,
            &SandboxConfig::default(),
            Profile::by_id("redis-8.0").unwrap(),
            &first,
        );
        assert!(!other.differs);
        assert_eq!(
            other.summary(),
            "on redis-8.0 (redis 8.0.2): the same reply"
        );
    }
}
