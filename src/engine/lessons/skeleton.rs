//! `evalbench lesson new NAME`: a lesson folder a trainer edits, in the documented format, whose
//! reference solution passes its own checks and whose starting script does not.

use std::path::{Path, PathBuf};

/// The files of a new lesson, in the order they are written: (file name, text).
pub fn files(name: &str) -> [(&'static str, String); 4] {
    let text = include_str!("skeleton/lesson.toml")
        .replace("{title}", &title_of(name).replace('"', "'"))
        .replace("DIR/NAME", &format!("DIR/{name}"))
        .replace("check NAME", &format!("check {name}"));
    [
        ("lesson.toml", text),
        ("start.lua", include_str!("skeleton/start.lua").to_string()),
        (
            "solution.lua",
            include_str!("skeleton/solution.lua").to_string(),
        ),
        (
            "solution.test.toml",
            include_str!("skeleton/solution.test.toml").to_string(),
        ),
    ]
}

/// `05-highest-score` is titled "Highest score": the number that orders the folders dropped.
fn title_of(name: &str) -> String {
    let rest = match name.split_once('-') {
        Some((n, rest)) if !rest.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => rest,
        _ => name,
    };
    let words = rest.replace(['-', '_'], " ");
    let mut chars = words.trim().chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => name.to_string(),
    }
}

/// A lesson's folder name: letters, digits, `-`, `_` and `.`, not starting with a dot (it
/// becomes a folder, and `lesson check NAME` finds it by that name).
pub fn valid_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("a lesson needs a name (its folder's: 05-highest-score)".into());
    }
    if name.starts_with('.') {
        return Err(format!(
            "{name}: a lesson's name may not start with a dot (its folder would be hidden)"
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
    {
        return Err(format!(
            "{name}: {c:?} cannot be in a lesson's name; use letters, digits, - and _ (05-highest-score)"
        ));
    }
    if name.len() > 100 {
        return Err(format!(
            "{name}: a lesson's name has at most 100 characters"
        ));
    }
    Ok(())
}

/// Write a new lesson in `dir/name/` (making `dir` when missing; never over a folder that
/// exists). Gives the lesson's folder.
pub fn write(dir: &Path, name: &str) -> Result<PathBuf, String> {
    valid_name(name)?;
    let folder = dir.join(name);
    if folder.exists() {
        return Err(format!(
            "{}: already exists; give another name, or remove it first",
            folder.display()
        ));
    }
    std::fs::create_dir_all(&folder)
        .map_err(|e| format!("{}: cannot make the folder: {e}", folder.display()))?;
    for (file, text) in files(name) {
        let path = folder.join(file);
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(folder)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_drop_the_ordering_number() {
        assert_eq!(title_of("05-highest-score"), "Highest score");
        assert_eq!(title_of("rate_limit"), "Rate limit");
        assert_eq!(title_of("2024"), "2024");
        assert_eq!(title_of("05-"), "05");
    }

    #[test]
    fn names_that_cannot_be_a_folder_are_refused() {
        assert_eq!(
            valid_name("a/b").unwrap_err(),
            "a/b: '/' cannot be in a lesson's name; use letters, digits, - and _ (05-highest-score)"
        );
        assert_eq!(
            valid_name("..").unwrap_err(),
            "..: a lesson's name may not start with a dot (its folder would be hidden)"
        );
        assert!(valid_name("05-highest_score").is_ok());
    }
}
