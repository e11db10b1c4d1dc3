//! File commands: a new script, save-as that asks before overwriting, samples saved under a new
//! name, and the picker's filter and paths.
#![cfg(feature = "tui")]

mod common;

use evalbench::tui::app::{Confirm, Overlay};
use evalbench::tui::harness::Harness;
use std::path::PathBuf;

fn temp_dir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("evalbench-files-{name}-"))
        .tempdir()
        .unwrap()
}

fn text(h: &Harness) -> String {
    h.app.editor.textarea.lines().join("\n")
}

#[test]
fn ctrl_n_starts_a_new_script_in_a_buffer_of_its_own() {
    common::isolate_app_dirs();
    let mut h = Harness::sample();
    h.press("<End>");
    h.type_text(" -- edited");
    h.press("<C-n>");
    assert!(h.app.overlay.is_none());
    assert_eq!(text(&h), "");
    assert_eq!(h.app.editor.path, None);
    assert_eq!(h.app.inputs.keys_text(), "");
    assert_eq!(
        h.app.status,
        "a new script: Ctrl-S saves it under a name you give"
    );
    // The edited script is still open, edits and all.
    h.press("<C-PageUp>");
    assert!(text(&h).contains("-- edited"));
    assert!(h.app.editor.modified);
}

#[test]
fn save_as_asks_before_overwriting_another_file() {
    common::isolate_app_dirs();
    let dir_tmp = temp_dir("overwrite");
    let dir = dir_tmp.path().to_path_buf();
    let other = dir.join("other.lua");
    std::fs::write(&other, "return 'keep me'").unwrap();
    let mut h = Harness::new("return 1", &[], &[], "");
    h.press("<C-s>");
    h.type_text(&format!("{}\n", other.display()));
    assert!(matches!(
        &h.app.overlay,
        Some(Overlay::Confirm(Confirm::Overwrite(p))) if *p == other
    ));
    h.press("n");
    assert_eq!(std::fs::read_to_string(&other).unwrap(), "return 'keep me'");
    assert_eq!(h.app.editor.path, None);
    h.press("<C-s>");
    h.type_text(&format!("{}\n", other.display()));
    h.press("y");
    assert_eq!(std::fs::read_to_string(&other).unwrap(), "return 1");
    assert_eq!(h.app.editor.path.as_ref(), Some(&other));
    // Saving again to its own file asks nothing.
    h.press("<C-s>");
    assert!(h.app.overlay.is_none());
}

#[test]
fn a_sample_is_saved_under_a_new_name() {
    common::isolate_app_dirs();
    let sample = PathBuf::from("samples/rate_limiter.lua");
    let before = std::fs::read(&sample).unwrap();
    let mut h = Harness::new("", &[], &[], "");
    h.app.open_file(sample.clone());
    h.type_text("-- mine\n");
    h.press("<C-s>");
    match &h.app.overlay {
        Some(Overlay::Prompt(p)) => {
            assert_eq!(p.title, "Samples stay as they are: save the script as");
            assert_eq!(p.input, "rate_limiter.lua");
        }
        _ => panic!("no save-as prompt"),
    }
    h.press("<Esc>");
    assert_eq!(std::fs::read(&sample).unwrap(), before);
}

#[test]
fn the_picker_filters_as_you_type_and_opens_a_typed_path() {
    common::isolate_app_dirs();
    let mut h = Harness::new("", &[], &[], "");
    h.press("<C-o>");
    let picker = |h: &Harness| match &h.app.overlay {
        Some(Overlay::Picker(p)) => (
            p.query.clone(),
            p.shown
                .iter()
                .map(|&i| p.entries[i].0.display().to_string())
                .collect::<Vec<_>>(),
        ),
        _ => panic!("no picker"),
    };
    h.type_text("acquire");
    let (_, shown) = picker(&h);
    assert_eq!(shown, ["samples/lock_acquire.lua"]);
    assert!(h.render(120, 40).contains("> acquire"));
    h.press("<Backspace>");
    h.type_text("zzz");
    assert!(picker(&h).1.is_empty());
    assert!(h
        .render(120, 40)
        .contains("Nothing matches: Enter opens what you typed as a path"));
    // A path: Tab completes it, Enter opens it.
    let dir_tmp = temp_dir("picker");
    let dir = dir_tmp.path().to_path_buf();
    std::fs::write(dir.join("mine_script.lua"), "return 'mine'").unwrap();
    h.press("<C-u>");
    h.type_text(&format!("{}/mi", dir.display()));
    h.press("<Tab>");
    assert_eq!(picker(&h).0, format!("{}/mine_script.lua", dir.display()));
    h.press("<Enter>");
    assert_eq!(text(&h), "return 'mine'");
    assert_eq!(h.app.editor.path, Some(dir.join("mine_script.lua")));
}

#[test]
fn quit_anyway_discards_the_autosave_of_that_script() {
    use evalbench::tui::files;
    common::isolate_app_dirs();
    let dir_tmp = temp_dir("quit");
    let dir = dir_tmp.path().to_path_buf();
    let path = dir.join("quit.lua");
    std::fs::write(&path, "return 1").unwrap();
    let mut h = Harness::new("", &[], &[], "");
    h.app.open_file(path.clone());
    h.type_text("x");
    h.app.autosave();
    assert!(files::autosave_exists(files::Slot::File(&path)));
    h.keys("<C-q> y");
    assert!(h.app.quit);
    assert!(!files::autosave_exists(files::Slot::File(&path)));
    files::release_autosave(files::Slot::File(&path));
}

/// Ctrl-S never replaces a sidecar it cannot parse (a description typed by hand would be lost)
/// without asking, and says where the parse failed; s saves the script alone.
#[test]
fn ctrl_s_never_replaces_a_malformed_sidecar() {
    use evalbench::tui::files;
    common::isolate_app_dirs();
    let dir_tmp = temp_dir("malformed");
    let dir = dir_tmp.path().to_path_buf();
    let path = dir.join("limiter.lua");
    let car = dir.join("limiter.json");
    std::fs::write(&path, "return 1").unwrap();
    let broken = "{\"description\": \"our limiter, keep this\"\n \"keys\": []}\n";
    std::fs::write(&car, broken).unwrap();
    let mut h = Harness::new("", &[], &[], "");
    h.app.open_file(path.clone());
    h.type_text("-- x\n");
    h.press("<C-s>");
    assert!(matches!(
        h.app.overlay,
        Some(Overlay::Confirm(Confirm::ForeignSidecar { .. }))
    ));
    assert_eq!(
        h.app.status,
        format!(
            "not saved yet: {}:2:2: malformed sidecar: expected `,` or `}}` at line 2 column 2. o overwrites it with the sidecar, s saves the script only, Esc cancels",
            car.display()
        )
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "return 1");
    h.press("s");
    assert_eq!(
        h.app.status,
        format!(
            "saved {} without its sidecar (limiter.json stays as it is)",
            path.display()
        )
    );
    assert_eq!(std::fs::read_to_string(&car).unwrap(), broken);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "-- x\nreturn 1");
    files::release_autosave(files::Slot::File(&path));
}
