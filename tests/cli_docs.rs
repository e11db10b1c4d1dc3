//! `evalbench completions SHELL`, `evalbench man` and `evalbench --version`: generated from the
//! clap definitions and the profile table, and usable by the tools that read them.

use std::process::{Command, Output};

fn evalbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_evalbench"))
        .args(args)
        .env_remove("REDIS_URL")
        .output()
        .expect("run evalbench")
}

fn stdout_of(out: &Output) -> String {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).expect("UTF-8")
}

/// What bash's completion offers for `words` (the last one is the word being completed), with the
/// script `evalbench completions bash` prints sourced.
fn bash_offers(words: &[&str]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("evalbench.bash");
    std::fs::write(&script, stdout_of(&evalbench(&["completions", "bash"]))).unwrap();
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let program = format!(
        "source \"$1\" || exit 9\nCOMP_WORDS=({words})\nCOMP_CWORD={cword}\nCOMP_LINE=\"${{COMP_WORDS[*]}}\"\nCOMP_POINT=${{#COMP_LINE}}\n_evalbench evalbench '{cur}' '{prev}'\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"",
        words = quoted.join(" "),
        cword = words.len() - 1,
        cur = words[words.len() - 1],
        prev = words[words.len() - 2],
    );
    let out = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &program, "bash"])
        .arg(&script)
        .output()
        .expect("bash");
    let text = stdout_of(&out);
    let mut offers: Vec<String> = text.lines().map(str::to_string).collect();
    offers.sort();
    offers
}

#[test]
fn bash_completion_offers_the_subcommands_and_options() {
    assert_eq!(bash_offers(&["evalbench", "r"]), ["race", "run"]);
    assert_eq!(bash_offers(&["evalbench", "ru"]), ["run"]);
    assert_eq!(
        bash_offers(&["evalbench", "run", "--dump"]),
        ["--dump-keyspace"]
    );
    assert_eq!(
        bash_offers(&["evalbench", "completions", "p"]),
        ["powershell"]
    );
}

#[test]
fn completion_scripts_for_each_shell_name_the_subcommands() {
    for (shell, marker) in [
        ("bash", "complete -F _evalbench"),
        ("zsh", "#compdef evalbench"),
        ("fish", "complete -c evalbench"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let text = stdout_of(&evalbench(&["completions", shell]));
        assert!(text.contains(marker), "{shell}: no {marker:?}");
        for sub in ["run", "debug", "test", "lint", "function", "man"] {
            assert!(text.contains(sub), "{shell}: no {sub}");
        }
    }
    let out = evalbench(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "invalid value 'tcsh' for '<SHELL>'\n  [possible values: bash, zsh, fish, powershell]"
        ),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn man_page_is_roff_and_renders() {
    let version = env!("CARGO_PKG_VERSION");
    let page = stdout_of(&evalbench(&["man"]));
    let lines: Vec<&str> = page.lines().collect();
    assert_eq!(
        lines[2],
        format!(".TH evalbench 1  \"evalbench {version}\" "),
        "{page}"
    );
    assert_eq!(lines[3], ".SH NAME");
    assert_eq!(
        lines[4],
        "evalbench \\- A workbench for writing and debugging Redis Lua scripts (EVAL), with a Redis\\-faithful embedded sandbox"
    );
    assert!(page.contains("\n.SH SUBCOMMANDS\n"), "{page}");
    assert!(page.contains("evalbench\\-run(1)"), "{page}");
    let run = stdout_of(&evalbench(&["man", "run"]));
    assert!(
        run.contains(&format!(
            ".TH evalbench-run 1  \"evalbench-run {version}\" "
        )),
        "{run}"
    );
    assert!(run.contains("\\fB\\-\\-dump\\-keyspace\\fR"), "{run}");
    let out = evalbench(&["man", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "evalbench: man: no subcommand \"nope\"; give one of run, copy, debug, test, lint, lsp, lesson, race, function, completions, man (or none for evalbench's own page)\n"
    );

    // `man -l` reads the page as a user's man would.
    let has_man = Command::new("man")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_man {
        println!("skipped `man -l`: no man on this machine (apt-get install man-db); the roff was checked above");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("evalbench.1");
    std::fs::write(&file, &page).unwrap();
    let out = Command::new("man")
        .arg("-l")
        .arg(&file)
        .env("MANWIDTH", "200")
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .env("LANG", "C.UTF-8")
        .output()
        .expect("man");
    let rendered = stdout_of(&out);
    assert!(
        rendered.starts_with("evalbench(1)"),
        "{rendered}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        rendered.contains("NAME\n       evalbench - A workbench for writing and debugging Redis Lua scripts (EVAL), with a Redis-faithful embedded sandbox\n"),
        "{rendered}"
    );
    assert!(rendered.contains("evalbench-run(1)"), "{rendered}");
}

#[test]
fn version_names_the_profiles_of_the_table() {
    let version = env!("CARGO_PKG_VERSION");
    let table = &evalbench::engine::profile::PROFILES;
    let ids: Vec<&str> = table.iter().map(|p| p.id).collect();
    assert_eq!(
        stdout_of(&evalbench(&["-V"])),
        format!("evalbench {version} (profiles: {})\n", ids.join(", "))
    );
    let long = stdout_of(&evalbench(&["--version"]));
    let lines: Vec<&str> = long.lines().collect();
    assert_eq!(lines[0], format!("evalbench {version}"));
    assert_eq!(lines.len(), 2 + table.len(), "{long}");
    for (line, p) in lines[2..].iter().zip(table.iter()) {
        assert_eq!(
            line.split_whitespace().collect::<Vec<_>>(),
            [p.id, p.product.name(), p.version_tested]
        );
    }
}
