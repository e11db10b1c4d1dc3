//! The value inspector over a large reply: only a page of its elements is formatted when it
//! opens (a million-element reply is not turned into text whole, on opening nor on any frame);
//! going down past the end formats the next page, and the last line says how many are left.
#![cfg(feature = "tui")]

use evalbench::engine::Reply;
use evalbench::tui::app::Overlay;
use evalbench::tui::harness::Harness;
use evalbench::tui::value_view::{Line, Part, ValueView, PAGE};

#[test]
fn a_million_element_reply_is_formatted_one_page_at_a_time() {
    let reply = Reply::Array((0..1_000_000).map(Reply::Int).collect());
    let mut view = ValueView::new("the last run's reply", vec![Part::reply("reply", &reply)]);
    // What the first frame formats: one page, not a million lines.
    let lines = view.lines(80);
    assert_eq!(lines.len(), PAGE + 1);
    assert!(
        view.parts[0].text.len() < 30 * PAGE,
        "{}",
        view.parts[0].text.len()
    );
    assert_eq!(lines[0], Line::Body("   1) (integer) 0".into()));
    assert_eq!(lines[PAGE - 1], Line::Body("1000) (integer) 999".into()));
    assert_eq!(
        lines[PAGE],
        Line::Note("… 999,000 more of 1,000,000 elements (End or ↓ here: the next 1,000)".into())
    );
    // The next page on demand: numbered on from the first.
    assert!(view.next_page());
    let lines = view.lines(80);
    assert_eq!(lines.len(), 2 * PAGE + 1);
    assert_eq!(
        lines[2 * PAGE - 1],
        Line::Body("2000) (integer) 1999".into())
    );
    assert_eq!(
        lines[2 * PAGE],
        Line::Note("… 998,000 more of 1,000,000 elements (End or ↓ here: the next 1,000)".into())
    );
}

#[test]
fn going_down_past_the_end_shows_the_next_page() {
    let mut h = Harness::new(
        "local t = {}\nfor i = 1, 2500 do t[i] = i end\nreturn t",
        &[],
        &[],
        "",
    );
    h.keys("<F5> <A-2> v");
    assert!(matches!(h.app.overlay, Some(Overlay::Value(_))));
    let screen = h.render(100, 30);
    assert!(screen.contains("   1) (integer) 1"), "{screen}");
    h.press("<End>");
    let screen = h.render(100, 30);
    assert!(
        screen.contains("… 1,500 more of 2,500 elements (End or ↓ here: the next 1,000)"),
        "{screen}"
    );
    // At the end: End again formats the next page and goes to its end.
    h.press("<End>");
    assert_eq!(h.app.status, "2,000 of 2,500 elements shown");
    h.keys("<End> <End>");
    assert_eq!(h.app.status, "2,500 of 2,500 elements shown");
    let Some(Overlay::Value(view)) = &h.app.overlay else {
        panic!("the inspector closed");
    };
    let lines = view.lines(98);
    assert!(lines.contains(&Line::Body("2500) (integer) 2500".into())));
    assert!(!lines.iter().any(|l| l.text().contains("more of 2,500")));
}
