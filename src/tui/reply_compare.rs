//! The Reply tab side by side: the last sandbox run, re-run under a second profile
//! the user picks (`p` in the right-hand panes cycles through the profiles, then off), shown
//! next to the reply of the workbench's own profile. The re-run is the engine's
//! (`engine::compare`), on the engine thread; this module keeps the choice and the answer.

use super::app::{App, Effect};
use crate::engine::compare::ProfileComparison;
use crate::engine::keyspace::Db;
use crate::engine::profile::{Profile, PROFILES};
use crate::engine::{RunReport, RunRequest};

/// What the engine thread runs for a comparison.
#[derive(Debug)]
pub struct CompareJob {
    /// The id of the run compared.
    pub id: u64,
    pub request: RunRequest,
    /// Database 0 before that run.
    pub seed: Db,
    /// The run clock of that run (Unix ms).
    pub clock_ms: i64,
    pub busy_threshold_ms: u64,
    pub profile: &'static Profile,
    pub first: RunReport,
}

impl CompareJob {
    /// Run it (the engine thread and the test harness).
    pub fn run(self) -> ProfileComparison {
        let config = crate::engine::SandboxConfig {
            busy_threshold_ms: self.busy_threshold_ms,
            ..Default::default()
        };
        crate::engine::compare::run_under_profile(
            &self.request,
            &self.seed,
            self.clock_ms,
            &config,
            self.profile,
            &self.first,
        )
    }
}

#[derive(Debug, Default)]
pub struct CompareState {
    /// The profile the Reply tab compares with (None: no comparison).
    pub profile: Option<&'static Profile>,
    /// The run (id) and profile last asked of the engine thread.
    requested: Option<(u64, &'static Profile)>,
    /// The answer, for the run with this id.
    pub result: Option<(u64, ProfileComparison)>,
}

impl CompareState {
    /// The comparison for run `id` under the chosen profile, once the engine answered.
    pub fn shown_for(&self, id: u64) -> Option<&ProfileComparison> {
        let profile = self.profile?;
        self.result
            .as_ref()
            .filter(|(rid, c)| *rid == id && std::ptr::eq(c.profile, profile))
            .map(|(_, c)| c)
    }
}

/// `p`: the next profile other than the workbench's own, then off.
pub fn cycle(app: &mut App) {
    let own = app.config.profile;
    let others: Vec<&'static Profile> =
        PROFILES.iter().filter(|p| !std::ptr::eq(*p, own)).collect();
    let next = match app.reply_compare.profile {
        None => others.first().copied(),
        Some(current) => others
            .iter()
            .position(|p| std::ptr::eq(*p, current))
            .and_then(|i| others.get(i + 1).copied()),
    };
    app.reply_compare.profile = next;
    app.status = match next {
        Some(p) => format!(
            "Reply tab: the last run beside {} ({} {}); p: next profile",
            p.id,
            p.product.name(),
            p.version_tested
        ),
        None => "Reply tab: no comparison (p: compare with another profile)".into(),
    };
}

/// Between frames: ask the engine thread for the comparison of the last sandbox run, once.
pub fn housekeeping(app: &mut App) -> Vec<Effect> {
    let Some(profile) = app.reply_compare.profile else {
        return Vec::new();
    };
    let Some(run) = app
        .last_run
        .as_ref()
        .filter(|r| !r.live && r.question.is_none())
    else {
        return Vec::new();
    };
    if app
        .reply_compare
        .requested
        .is_some_and(|(id, p)| id == run.id && std::ptr::eq(p, profile))
    {
        return Vec::new();
    }
    app.reply_compare.requested = Some((run.id, profile));
    vec![Effect::Compare(Box::new(CompareJob {
        id: run.id,
        request: run.request.clone(),
        seed: run.before.clone(),
        clock_ms: run.now_ms,
        busy_threshold_ms: app.config.busy_threshold_ms,
        profile,
        first: run.report.clone(),
    }))]
}

/// The engine thread's answer.
pub fn on_result(app: &mut App, id: u64, comparison: ProfileComparison) {
    app.reply_compare.result = Some((id, comparison));
}
