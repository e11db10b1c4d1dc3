//! The Reply tab side by side: `p` in the right-hand panes re-runs the last run under
//! another profile (the engine's `compare::run_under_profile`) and shows its reply beside this
//! one. Snapshot with insta (`INSTA_UPDATE=always cargo test --test tui_reply_compare`).
#![cfg(feature = "tui")]

mod common;

use evalbench::tui::harness::Harness;

const SCRIPT: &str = "redis.call('HSET', KEYS[1], 'a', '1')\n\
                      return redis.pcall('HEXPIRE', KEYS[1], 100, 'FIELDS', 2, 'a', 'b')\n";

#[test]
fn p_shows_the_reply_under_another_profile_beside_this_one() {
    common::isolate_app_dirs();
    let mut h = Harness::new(SCRIPT, &["h"], &[], "");
    h.keys("<F5> <A-2>");
    assert_eq!(h.app.config.profile.id, "redis-7.0");
    let id = h.app.last_run.as_ref().unwrap().id;
    // First profile after the workbench's own: Redis 7.2, which lacks HEXPIRE as 7.0 does.
    h.press("p");
    let c = h.app.reply_compare.shown_for(id).expect("compared");
    assert_eq!((c.profile.id, c.differs), ("redis-7.2", false));
    let screen = h.render(160, 40);
    assert!(screen.contains("on redis-7.2 (7.2.4)"), "{screen}");
    assert!(screen.contains("same as redis-7.0"), "{screen}");
    // Next: Redis 7.4, which has it.
    h.press("p");
    let c = h.app.reply_compare.shown_for(id).expect("compared");
    assert_eq!((c.profile.id, c.differs), ("redis-7.4", true));
    let screen = h.render(160, 40);
    assert!(screen.contains("differs from redis-7.0"), "{screen}");
    insta::assert_snapshot!("reply_compare_120x40", h.render(120, 40));
    // A new run is compared again, under the profile chosen.
    h.press("<F5>");
    let id2 = h.app.last_run.as_ref().unwrap().id;
    assert_ne!(id, id2);
    assert!(h
        .app
        .reply_compare
        .shown_for(id2)
        .is_some_and(|c| c.differs));
    // Past the last profile: off, and the Reply tab is whole again.
    h.keys("p p p p");
    assert_eq!(h.app.reply_compare.profile, None);
    let screen = h.render(160, 40);
    assert!(!screen.contains("on redis-"), "{screen}");
}
