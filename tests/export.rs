//! Export a run: the Markdown and HTML of two samples as snapshots, hostile text
//! escaped, and `evalbench run --export FILE` (format, refusing to overwrite).

use evalbench::engine::clock::ManualClock;
use evalbench::engine::export::{Format, RunExport};
use evalbench::engine::keyspace::Db;
use evalbench::engine::{RunReport, RunRequest, Sandbox};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;

/// A fixed time: TTLs and the report are the same on every machine.
const START_US: i64 = 1_700_000_000_000_000;

/// Run `script` in a sandbox on a manual clock from `seed`; the report's times are made fixed
/// (they are measured, and the snapshots are of the layout, not of this machine's speed).
fn run(request: &RunRequest, seed: Db) -> (RunReport, Db, Db, i64) {
    let mut sandbox = Sandbox::with_clock(Box::new(ManualClock::new(START_US)));
    sandbox.set_db0(seed.clone());
    let mut report = sandbox.run(request);
    for e in &mut report.trace {
        e.elapsed_ns = 1_000 * e.seq as u64;
        e.at_ns = 10_000 * e.seq as u64;
    }
    report.elapsed_ns = 250_000;
    if report.first_write_ns.is_some() {
        report.first_write_ns = Some(120_000);
    }
    let after = sandbox.keyspace().db(0).clone();
    (report, seed, after, sandbox.now_ms())
}

/// A sample with its sidecar's KEYS, ARGV and seed, run and exported in `format`.
fn export_sample(name: &str, format: Format) -> String {
    let path = PathBuf::from(format!("samples/{name}.lua"));
    let input = evalbench::cli::common::read_sandbox_input(
        &[path.clone().into_os_string()],
        true,
        None,
        2,
        false,
        START_US / 1000,
    )
    .unwrap_or_else(|e| panic!("{name}: {}", e.message));
    let (report, before, after, now_ms) = run(&input.request, input.seed);
    format.render(&RunExport {
        title: &format!("{name}.lua"),
        script: &input.request.script,
        keys: &input.request.keys,
        argv: &input.request.argv,
        report: &report,
        backend: "sandbox",
        keyspace: Some((&before, &after)),
        now_ms,
    })
}

#[test]
fn stock_decrement_markdown() {
    insta::assert_snapshot!(export_sample("stock_decrement", Format::Markdown));
}

#[test]
fn stock_decrement_html() {
    insta::assert_snapshot!(export_sample("stock_decrement", Format::Html));
}

#[test]
fn rate_limiter_markdown() {
    insta::assert_snapshot!(export_sample("rate_limiter", Format::Markdown));
}

#[test]
fn rate_limiter_html() {
    insta::assert_snapshot!(export_sample("rate_limiter", Format::Html));
}

/// A script that writes `<script>` and ESC into a key, returns them, and names them in its text.
const HOSTILE: &str = "-- <script>alert(1)</script> | `x` *y*\nredis.call('SET', KEYS[1], ARGV[1])\nredis.log(redis.LOG_WARNING, ARGV[1])\nreturn {ARGV[1], '\\27[2J'}\n";

fn hostile_export(format: Format) -> String {
    let request = RunRequest {
        script: HOSTILE.as_bytes().to_vec(),
        keys: vec![b"k<b>\x1b]0;t\x07".to_vec()],
        argv: vec![b"<script>alert('x')</script>\x1b[31m\xe2\x80\xae|`".to_vec()],
        ..RunRequest::default()
    };
    let (report, before, after, now_ms) = run(&request, Db::new());
    format.render(&RunExport {
        title: "<evil>\u{1b}.lua",
        script: &request.script,
        keys: &request.keys,
        argv: &request.argv,
        report: &report,
        backend: "sandbox",
        keyspace: Some((&before, &after)),
        now_ms,
    })
}

fn assert_no_controls(text: &str) {
    let bad: Vec<char> = text
        .chars()
        .filter(|&c| c != '\n' && evalbench::engine::display::is_unsafe(c))
        .collect();
    assert!(bad.is_empty(), "control characters {bad:?} in:\n{text}");
}

#[test]
fn html_escapes_markup_and_control_characters() {
    let html = hostile_export(Format::Html);
    assert_no_controls(&html);
    // The only tags are the page's own: none comes from the script, its arguments or the keyspace.
    assert!(!html.contains("<script"), "{html}");
    assert!(!html.contains("<b>"), "{html}");
    assert!(!html.contains("<evil>"), "{html}");
    // What the script wrote is shown, escaped (the escapes of the text report, then HTML's).
    assert!(
        html.contains("<title>evalbench run: &lt;evil&gt;\\x1b.lua</title>"),
        "{html}"
    );
    assert!(
        html.contains("<pre class=\"script\"><code><span class=\"l\">-- &lt;script&gt;alert(1)&lt;/script&gt; | `x` *y*</span>\n"),
        "{html}"
    );
    assert!(
        html.contains("<li><code>&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;\\x1b[31m\\u{202e}|`</code></li>"),
        "{html}"
    );
    assert!(
        html.contains("<tr class=\"added\"><td><code>k&lt;b&gt;\\x1b]0;t\\a</code></td><td>added</td><td></td><td><code>{&quot;type&quot;:&quot;string&quot;,&quot;value&quot;:&quot;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;\\u001b[31m\\u{202e}|`&quot;}</code></td></tr>"),
        "{html}"
    );
    assert!(html.contains("2) &quot;\\x1b[2J&quot;"), "{html}");
}

#[test]
fn markdown_escapes_markup_and_control_characters() {
    let md = hostile_export(Format::Markdown);
    assert_no_controls(&md);
    // Text outside code is backslash-escaped; code spans are delimited past any backtick run and
    // a table cell's `|` is escaped.
    assert!(
        md.starts_with("# evalbench run: \\<evil\\>\\\\x1b.lua\n"),
        "{md}"
    );
    assert!(
        md.contains("  1. `` <script>alert('x')</script>\\x1b[31m\\u{202e}\\|` ``\n"),
        "{md}"
    );
    assert!(
        md.contains("| `k<b>\\x1b]0;t\\a` | added |  | ``{\"type\":\"string\",\"value\":\"<script>alert('x')</script>\\u001b[31m\\u{202e}\\|`\"}`` |"),
        "{md}"
    );
    // The script is in a fenced block: its text is literal there.
    assert!(
        md.contains("```lua\n-- <script>alert(1)</script> | `x` *y*\n"),
        "{md}"
    );
}

fn evalbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_evalbench"))
        .args(args)
        .env_remove("REDIS_URL")
        .output()
        .expect("run evalbench")
}

fn temp_dir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("evalbench-export-{name}-"))
        .tempdir()
        .unwrap()
}

fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn run_export_writes_the_format_of_the_extension() {
    let dir_tmp = temp_dir("ext");
    let dir = dir_tmp.path().to_path_buf();
    let md = dir.join("run.md");
    let out = evalbench(&[
        "run",
        "--sidecar",
        "--export",
        path_str(&md),
        "samples/stock_decrement.lua",
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(
        text.starts_with("# evalbench run: stock\\_decrement.lua\n"),
        "{text}"
    );
    assert!(text.contains("| `stock:sku-123` | changed | `{\"type\":\"string\",\"value\":\"10\"}` | `{\"type\":\"string\",\"value\":\"7\"}` |"), "{text}");

    let html = dir.join("run.page");
    let out = evalbench(&[
        "run",
        "--sidecar",
        "--export",
        path_str(&html),
        "--export-format",
        "html",
        "samples/stock_decrement.lua",
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(text.starts_with("<!DOCTYPE html>\n"), "{text}");
}

#[test]
fn run_export_keeps_an_existing_file_unless_overwrite() {
    let dir_tmp = temp_dir("keep");
    let dir = dir_tmp.path().to_path_buf();
    let file = dir.join("run.html");
    std::fs::write(&file, "mine").unwrap();
    let args = [
        "run",
        "--export",
        path_str(&file),
        "samples/stock_decrement.lua",
        "stock:1",
        ",",
        "1",
    ];
    let out = evalbench(&args);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "evalbench: --export {}: the file exists; choose another name, or add --overwrite to replace it\n",
            file.display()
        )
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");
    assert!(out.stdout.is_empty(), "refused before running");
    let mut args = args.to_vec();
    args.insert(1, "--overwrite");
    let out = evalbench(&args);
    assert_eq!(out.status.code(), Some(1), "an error reply: {out:?}");
    assert!(std::fs::read_to_string(&file)
        .unwrap()
        .contains("<pre>(error) ERR unknown item stock:1</pre>"));
}

#[test]
fn run_export_with_an_unknown_format_is_refused_before_running() {
    let dir_tmp = temp_dir("fmt");
    let dir = dir_tmp.path().to_path_buf();
    let file = dir.join("run.txt");
    let out = evalbench(&[
        "run",
        "--export",
        path_str(&file),
        "samples/stock_decrement.lua",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!("evalbench: --export {}: the format is taken from the extension (.md or .html); name the file so, or add --export-format md|html\n", file.display())
    );
    assert!(out.stdout.is_empty(), "nothing ran");
    let out = evalbench(&[
        "run",
        "--export",
        path_str(&file),
        "--export-format",
        "pdf",
        "samples/stock_decrement.lua",
    ]);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "evalbench: --export-format \"pdf\": unknown format (use one of: md, html)\n"
    );
    assert!(!file.exists());
}

/// The workbench's export key: a prompt prefilled with a free name after the script; Enter writes
/// the page; a name that exists is refused, the file kept.
#[cfg(feature = "tui")]
#[test]
fn workbench_exports_the_last_run_to_a_file_named_after_the_script() {
    use evalbench::tui::app::{Overlay, PromptPurpose};
    use evalbench::tui::harness::Harness;
    common::isolate_app_dirs();
    let dir_tmp = temp_dir("tui");
    let dir = dir_tmp.path().to_path_buf();
    let mut h = Harness::new(
        "return redis.call('INCR', KEYS[1])",
        &["hits"],
        &[],
        r#"{"hits": "41"}"#,
    );
    h.app.editor.path = Some(dir.join("counter.lua"));
    h.press("<A-e>");
    assert_eq!(
        h.app.status,
        "nothing to export yet: run the script first (F5)"
    );
    assert!(h.app.overlay.is_none());

    h.press("<F5>");
    h.press("<A-e>");
    let prefilled = dir.join("counter.html");
    match &h.app.overlay {
        Some(Overlay::Prompt(p)) => {
            assert_eq!(p.purpose, PromptPurpose::ExportRun);
            assert_eq!(p.input, prefilled.display().to_string());
        }
        _ => panic!("no prompt: {}", h.app.status),
    }
    h.press("<Enter>");
    assert_eq!(
        h.app.status,
        format!("run exported to {}", prefilled.display())
    );
    let page = std::fs::read_to_string(&prefilled).unwrap();
    assert!(
        page.contains("<h1>evalbench run: counter.lua</h1>"),
        "{page}"
    );
    assert!(page.contains("<tr class=\"changed\"><td><code>hits</code></td><td>changed</td><td><code>{&quot;type&quot;:&quot;string&quot;,&quot;value&quot;:&quot;41&quot;}</code></td><td><code>{&quot;type&quot;:&quot;string&quot;,&quot;value&quot;:&quot;42&quot;}</code></td></tr>"), "{page}");

    // The next export is offered a free name; Markdown by its extension; an existing name is refused.
    h.press("<A-e>");
    match &h.app.overlay {
        Some(Overlay::Prompt(p)) => {
            assert_eq!(p.input, dir.join("counter-2.html").display().to_string())
        }
        _ => panic!("no prompt"),
    }
    h.press("<Esc>");
    let md = dir.join("notes.md");
    h.press("<A-e>");
    h.type_text(&format!("{}\n", md.display()));
    assert!(std::fs::read_to_string(&md)
        .unwrap()
        .starts_with("# evalbench run: counter.lua\n"));
    h.press("<A-e>");
    h.type_text(&format!("{}\n", prefilled.display()));
    assert_eq!(
        h.app.status,
        format!(
            "not exported: {} exists (choose another name)",
            prefilled.display()
        )
    );
    assert_eq!(std::fs::read_to_string(&prefilled).unwrap(), page);
}

/// `--export FIFO --overwrite` is refused before the run, never opened (opening a FIFO to write
/// blocks until a reader comes): the child is killed and the test fails if it does not end.
#[test]
fn run_export_to_a_fifo_is_refused_without_hanging() {
    let dir_tmp = temp_dir("fifo");
    let dir = dir_tmp.path().to_path_buf();
    let fifo = dir.join("run.md");
    let c = std::ffi::CString::new(path_str(&fifo)).unwrap();
    // SAFETY: mkfifo with a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let mut child = Command::new(env!("CARGO_BIN_EXE_evalbench"))
        .args([
            "run",
            "--export",
            path_str(&fifo),
            "--overwrite",
            "samples/stock_decrement.lua",
            "stock:1",
            ",",
            "1",
        ])
        .env_remove("REDIS_URL")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut waited = std::time::Duration::ZERO;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if waited > std::time::Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("evalbench run --export FIFO --overwrite did not end");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
        waited += std::time::Duration::from_millis(50);
    };
    let out = child.wait_with_output().unwrap();
    assert_eq!(status.code(), Some(2), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "evalbench: --export: cannot write {}: it is a FIFO (named pipe), not a regular file (evalbench writes regular files only; give the path of one)\n",
            fifo.display()
        )
    );
    assert!(out.stdout.is_empty(), "refused before running");
}

#[test]
fn run_export_overwrite_writes_through_a_symlink() {
    let dir_tmp = temp_dir("link");
    let dir = dir_tmp.path().to_path_buf();
    let real = dir.join("real.md");
    std::fs::write(&real, "old").unwrap();
    let link = dir.join("run.md");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let out = evalbench(&[
        "run",
        "--sidecar",
        "--overwrite",
        "--export",
        path_str(&link),
        "samples/stock_decrement.lua",
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::read_to_string(&real)
        .unwrap()
        .starts_with("# evalbench run: stock\\_decrement.lua\n"));
}

/// A large value is shown by its first 64 KiB with its true size, never copied whole: the export
/// of a run's reply, Lua value and keyspace stays the size of what it shows.
#[test]
fn large_values_are_cut_with_their_size() {
    let request = RunRequest {
        keys: vec![b"big".to_vec()],
        ..RunRequest::new(
            "redis.call('SET', KEYS[1], string.rep('x', 1048576))\nreturn redis.call('GET', KEYS[1])",
        )
    };
    let (report, before, after, now_ms) = run(&request, Db::new());
    let text = Format::Markdown.render(&RunExport {
        title: "big.lua",
        script: &request.script,
        keys: &request.keys,
        argv: &request.argv,
        report: &report,
        backend: "sandbox",
        keyspace: Some((&before, &after)),
        now_ms,
    });
    assert!(text.len() < 300_000, "{} bytes", text.len());
    assert!(text.contains("| `big` | added |  | `(a string of 1,048,576 bytes: not shown; an export shows values up to 65,536 bytes)` |"), "{}", &text[..2000]);
    // The reply's bounded copy marks the cut inside the string (as the trace's copies do).
    let reply = format!(
        "RESP2 (the caller's):\n\n```\n\"{}\\xe2\\x80\\xa6 (1,048,576 bytes)\"\n```",
        "x".repeat(65536)
    );
    assert!(text.contains(&reply), "the reply cut with its size");
    assert!(
        text.contains("\"… (1,048,576 bytes)\n```\n"),
        "the Lua value cut with its size"
    );
}

/// `race --export` and `debug --export`: the lab (logic, outcomes, every schedule, a replay) and
/// the session (every stop with its variables, the result), code blocks without line numbers.
#[test]
fn race_lab_and_debug_session_export_from_the_cli() {
    let dir = tempfile::TempDir::new().unwrap();
    let md = dir.path().join("counter.md");
    let out = evalbench(&[
        "race",
        "counter",
        "--strategy",
        "plain",
        "--export",
        path_str(&md),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(
        text.starts_with("# evalbench race lab: counter\n"),
        "{text}"
    );
    // The logic copies as it is.
    assert!(
        text.contains("## Logic\n\n```lua\nlocal n = tonumber(redis.call('GET', KEYS[1]) or '0')\nredis.call('SET', KEYS[1], n + 1)\nreturn n + 1\n```\n"),
        "{text}"
    );
    assert!(
        text.contains("| 1 | 4 | LOST UPDATE: no serial order ends so | `counter: \"0\" → \"1\"` | `client 1 success: (integer) 1; client 2 success: (integer) 1` |\n"),
        "{text}"
    );
    assert!(
        text.contains("```\n1 2 1 2\n1 2 2 1\n2 1 1 2\n2 1 2 1\n```\n"),
        "{text}"
    );
    assert!(
        text.contains("| 3 | client 1 | `SET counter 1` | `OK` | `counter: \"0\" → \"1\"` |\n"),
        "{text}"
    );
    // An existing file is kept, before the lab runs.
    let out = evalbench(&["race", "counter", "--export", path_str(&md)]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(std::fs::read_to_string(&md).unwrap(), text);

    let html = dir.path().join("session.html");
    let out = evalbench(&[
        "debug",
        "--sidecar",
        "--commands",
        "b 14; c; n",
        "--export",
        path_str(&html),
        "samples/rate_limiter.lua",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("<h1>evalbench debug session: rate_limiter.lua</h1>\n<p>3 stops; the run ended.</p>\n<h2>Script</h2>\n<pre><code>-- Fixed-window rate limiter with input validation.\n"),
        "{page}"
    );
    assert!(
        page.contains("<h3>Stop 2: line 14 (breakpoint 1)</h3>\n<pre><code>local count = redis.call(&#39;INCR&#39;, KEYS[1])</code></pre>\n"),
        "{page}"
    );
    assert!(page.contains("<h3>Stop 3: line 15 (a step)</h3>"), "{page}");
    assert!(
        page.contains("<tr><td><code>count</code></td><td>local</td><td>number</td><td><code>4</code></td></tr>"),
        "{page}"
    );
    assert!(
        page.contains("<h2>Result</h2>\n<pre><code>1) (integer) 1\n2) (integer) 6\n3) (integer) 60</code></pre>"),
        "{page}"
    );
}

/// Alt-E exports what is shown: on the Race tab the lab, on the Debug tab the session's stops.
#[cfg(feature = "tui")]
#[test]
fn workbench_exports_the_race_lab_and_the_debug_session_shown() {
    use evalbench::tui::app::{Overlay, Tab};
    use evalbench::tui::harness::Harness;
    common::isolate_app_dirs();
    let dir = tempfile::TempDir::new().unwrap();
    let mut h = Harness::new(
        "local n = redis.call('INCR', KEYS[1])\nreturn n",
        &["hits"],
        &[],
        r#"{"hits": "41"}"#,
    );
    h.app.editor.path = Some(dir.path().join("hits.lua"));
    h.press("<A-8>");
    for _ in 0..3000 {
        h.settle();
        if h.app.race_pending.is_none() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(h.app.tab, Tab::Race);
    h.press("<A-e>");
    let race_page = dir.path().join("hits-race.html");
    match &h.app.overlay {
        Some(Overlay::Prompt(p)) => {
            assert_eq!(p.title, "Export the race lab to (.html page or .md)");
            assert_eq!(p.input, race_page.display().to_string());
        }
        _ => panic!("no prompt: {}", h.app.status),
    }
    h.press("<Enter>");
    assert_eq!(
        h.app.status,
        format!("race lab exported to {}", race_page.display())
    );
    let page = std::fs::read_to_string(&race_page).unwrap();
    assert!(
        page.contains("<h2>Logic</h2>\n<pre><code>local n = redis.call(&#39;INCR&#39;, KEYS[1])\nreturn n</code></pre>"),
        "{page}"
    );
    assert!(page.contains("<h2>Strategy watch</h2>"), "{page}");

    // A debug session: the first line, a step, then the end.
    h.press("<F10>");
    h.press("<F10>");
    assert_eq!(h.app.tab, Tab::Debug);
    let md = dir.path().join("session.md");
    h.press("<A-e>");
    match &h.app.overlay {
        Some(Overlay::Prompt(p)) => assert_eq!(
            p.title,
            "Export the debug session (its stops and variables) to (.html page or .md)"
        ),
        _ => panic!("no prompt: {}", h.app.status),
    }
    h.type_text(&format!("{}\n", md.display()));
    assert_eq!(
        h.app.status,
        format!("debug session exported to {}", md.display())
    );
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(
        text.starts_with("# evalbench debug session: hits.lua\n\n2 stops; the run was still paused at the last one.\n\n## Script\n\n```lua\nlocal n = redis.call('INCR', KEYS[1])\nreturn n\n```\n"),
        "{text}"
    );
    assert!(
        text.contains("### Stop 2: line 2 (a step)\n\n```lua\nreturn n\n```\n\n| variable | kind | type | value |\n|---|---|---|---|\n| `n` | local | number | `42` |\n"),
        "{text}"
    );
    h.press("<F5>");
    let end = dir.path().join("ended.md");
    h.press("<A-e>");
    h.type_text(&format!("{}\n", end.display()));
    let text = std::fs::read_to_string(&end).unwrap();
    assert!(text.contains("2 stops; the run ended."), "{text}");
    assert!(
        text.ends_with("## Result\n\n```\n(integer) 42\n```\n"),
        "{text}"
    );
}
