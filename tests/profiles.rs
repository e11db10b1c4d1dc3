//! The server profiles as data: every field of every profile, pinned. A profile is written as
//! the server it follows plus what changed; this snapshot shows the whole of each, so a change
//! to one field of one profile is a one-line diff here and nothing else moves.

use evalbench::engine::profile::PROFILES;

#[test]
fn every_field_of_every_profile() {
    let text: String = PROFILES
        .iter()
        .map(|profile| format!("{profile:#?}\n"))
        .collect();
    insta::assert_snapshot!(text);
}
