//! Smoke test of the real binary in a real terminal: tmux runs `evalbench` in a detached 120x40
//! session; the test sends keys and reads the screen with `capture-pane`. Skipped (with a notice)
//! when tmux is missing, unless CI is set: there a missing tmux is a failure.
#![cfg(feature = "tui")]

use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// The longest any one wait may take.
const WAIT: Duration = Duration::from_secs(10);

/// A tmux server of its own (its socket in the temporary directory), killed with everything in it
/// on drop, and the temporary directory (socket, data and config directories of the app).
struct Session {
    socket: PathBuf,
    target: String,
    /// The session's folder (socket, data, config): removed after the tmux server is killed.
    _dir: tempfile::TempDir,
}

impl Session {
    fn tmux(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("run tmux")
    }

    fn capture(&self) -> String {
        let out = self.tmux(&["capture-pane", "-p", "-t", &self.target]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn send(&self, key: &str) {
        let out = self.tmux(&["send-keys", "-t", &self.target, key]);
        assert!(out.status.success(), "send-keys {key}: {out:?}");
    }

    fn display(&self, format: &str) -> String {
        let out = self.tmux(&["display-message", "-p", "-t", &self.target, format]);
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Poll the screen until `ok` holds, at most `WAIT`; the screen on success.
    fn wait_for(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.capture();
            if ok(&screen) {
                return screen;
            }
            if start.elapsed() > WAIT {
                panic!("timed out after {WAIT:?} waiting for {what}; the screen:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
    }
}

fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

fn tmux_present() -> bool {
    Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn real_binary_in_tmux() {
    if !tmux_present() {
        if std::env::var_os("CI").is_some() {
            panic!("tmux is required on CI for the terminal smoke test");
        }
        eprintln!("notice: tmux not found, skipping the terminal smoke test (tui_smoke)");
        return;
    }
    let dir_tmp = tempfile::tempdir().unwrap();
    let dir = dir_tmp.path().to_path_buf();
    let data = dir.join("data");
    let config = dir.join("config");
    std::fs::create_dir_all(&data).expect("temp data dir");
    std::fs::create_dir_all(&config).expect("temp config dir");
    let session = Session {
        socket: dir.join("tmux.sock"),
        target: "smoke".into(),
        _dir: dir_tmp,
    };
    // After the app exits, its status and the terminal modes stay on screen for the checks.
    let script = format!(
        "cd {dir} && EVALBENCH_DATA_DIR={data} EVALBENCH_CONFIG_DIR={config} {bin}; \
         echo \"evalbench exited $?\"; stty -a; echo stty-done; exec sleep 60",
        dir = sh_quote(&dir.to_string_lossy()),
        data = sh_quote(&data.to_string_lossy()),
        config = sh_quote(&config.to_string_lossy()),
        bin = sh_quote(env!("CARGO_BIN_EXE_evalbench")),
    );
    let out = session.tmux(&[
        "new-session",
        "-d",
        "-s",
        "smoke",
        "-x",
        "120",
        "-y",
        "40",
        &script,
    ]);
    assert!(out.status.success(), "tmux new-session: {out:?}");

    // The editor with the bundled sample.
    session.wait_for("the editor", |s| {
        s.contains("rate limiter") && s.contains("redis.call")
    });
    assert_eq!(
        session.display("#{alternate_on}"),
        "1",
        "the UI uses the alternate screen"
    );

    // F5 runs: the trace lists the calls.
    session.send("F5");
    // (The script's text names INCR and TTL too: look for the trace's own rows.)
    let screen = session.wait_for("the trace", |s| {
        !s.contains("No run yet") && s.contains("(integer)") && s.contains("call(s)")
    });
    assert!(screen.contains("done"), "{screen}");

    // F1 shows the help, generated from the keymap; Esc closes it.
    session.send("F1");
    session.wait_for("the help", |s| {
        s.contains("Help") && s.contains("run the script (sandbox, or the live server guarded)")
    });
    session.send("Escape");
    session.wait_for("the help to close", |s| {
        !s.contains("run the script (sandbox, or the live server guarded)")
    });

    // Alt-Right steps onto the first call of the run.
    session.send("M-Right");
    session.wait_for("a step", |s| s.contains("step 1/"));

    // F10 starts the debugger, stopped at the first line.
    session.send("F10");
    session.wait_for("a stop", |s| s.contains("stopped at line 5"));

    // Ctrl-Q quits (nothing was edited), even with the script paused in the debugger, and the
    // terminal is back to normal.
    session.send("C-q");
    let screen = session.wait_for("the exit and stty's report", |s| {
        s.contains("evalbench exited") && s.contains("stty-done")
    });
    assert!(screen.contains("evalbench exited 0"), "{screen}");
    assert!(
        !screen.contains("INCR"),
        "the UI is still on screen:\n{screen}"
    );
    assert_eq!(
        session.display("#{alternate_on}"),
        "0",
        "alternate screen left"
    );
    assert_eq!(session.display("#{cursor_flag}"), "1", "cursor shown again");
    let modes: Vec<&str> = screen.split_whitespace().collect();
    for mode in ["icanon", "echo", "isig"] {
        assert!(modes.contains(&mode), "{mode} not restored:\n{screen}");
    }
}

/// A tmux session of its own running the binary on `file` (in the session's temporary directory)
/// at `width` x `height`; None (with a notice) when tmux is missing outside CI.
fn start(name: &str, width: u16, height: u16, file: &str) -> Option<Session> {
    if !tmux_present() {
        if std::env::var_os("CI").is_some() {
            panic!("tmux is required on CI for the terminal tests");
        }
        eprintln!("notice: tmux not found, skipping {name}");
        return None;
    }
    let dir_tmp = tempfile::tempdir().unwrap();
    let dir = dir_tmp.path().to_path_buf();
    for sub in ["data", "config"] {
        std::fs::create_dir_all(dir.join(sub)).expect("temp dirs");
    }
    let session = Session {
        socket: dir.join("tmux.sock"),
        target: name.into(),
        _dir: dir_tmp,
    };
    let script = format!(
        "cd {dir} && EVALBENCH_DATA_DIR=data EVALBENCH_CONFIG_DIR=config {bin} {file}; exec sleep 60",
        dir = sh_quote(&dir.to_string_lossy()),
        bin = sh_quote(env!("CARGO_BIN_EXE_evalbench")),
        file = sh_quote(file),
    );
    let (w, h) = (width.to_string(), height.to_string());
    let out = session.tmux(&["new-session", "-d", "-s", name, "-x", &w, "-y", &h, &script]);
    assert!(out.status.success(), "tmux new-session: {out:?}");
    // The terminal's clipboard takes what the application sends (OSC 52).
    session.tmux(&["set-option", "-g", "set-clipboard", "on"]);
    Some(session)
}

/// A paste arrives bracketed with CR line ends (as terminals send it) and becomes lines; a copy
/// reaches the terminal's clipboard through OSC 52; SGR mouse reports place the cursor, select
/// and switch tabs.
#[test]
fn paste_clipboard_and_mouse_in_a_real_terminal() {
    let Some(session) = start("editor", 80, 24, "new.lua") else {
        return;
    };
    session.wait_for("the editor", |s| s.contains("new.lua is a new file"));
    assert_eq!(
        session.display("#{mouse_any_flag}"),
        "1",
        "mouse reporting on"
    );
    // tmux sends the buffer's newlines as CR inside the bracketed-paste markers (-p).
    session.tmux(&["set-buffer", "local a = 1\nlocal bb = 2\nreturn a + bb"]);
    session.tmux(&["paste-buffer", "-p", "-t", &session.target]);
    let screen = session.wait_for("three lines", |s| s.contains("  3 return a + bb"));
    assert!(screen.contains("  1 local a = 1"), "{screen}");
    assert!(screen.contains("  2 local bb = 2"), "{screen}");
    assert!(!screen.contains("\\r"), "{screen}");

    // A click on "bb" of line 2 (x, y are 1-based in SGR reports), a drag to the end of it.
    let line2 = screen
        .lines()
        .position(|l| l.contains("  2 local bb"))
        .unwrap()
        + 1;
    let column_of = |line: &str, needle: &str| line[..line.find(needle).unwrap()].chars().count();
    let col = column_of(screen.lines().nth(line2 - 1).unwrap(), "bb") + 1;
    let report = |button: u8, x: usize, press: bool| {
        format!(
            "\x1b[<{button};{x};{line2}{}",
            if press { 'M' } else { 'm' }
        )
    };
    for seq in [
        report(0, col, true),
        report(32, col + 2, true),
        report(0, col + 2, false),
    ] {
        session.tmux(&["send-keys", "-t", &session.target, "-l", &seq]);
    }
    session.send("C-c");
    session.wait_for("the copy", |s| s.contains("copied 2 bytes"));
    let out = session.tmux(&["show-buffer"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "bb");

    // Ctrl-Z undoes the paste in one step.
    session.send("C-z");
    session.wait_for("the empty buffer", |s| !s.contains("local a = 1"));

    // A click on a tab title shows it.
    let screen = session.capture();
    let row = screen
        .lines()
        .position(|l| l.contains("3 Keyspace"))
        .unwrap()
        + 1;
    let x = column_of(screen.lines().nth(row - 1).unwrap(), "3 Keyspace") + 2;
    let press = format!("\x1b[<0;{x};{row}M");
    session.tmux(&["send-keys", "-t", &session.target, "-l", &press]);
    session.wait_for("the keyspace tab", |s| s.contains("No keys."));
}
