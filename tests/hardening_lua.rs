//! A script cannot escape the sandbox or outrun the busy threshold: bytecode is refused on every
//! path that loads a chunk, and the threshold stops scripts whose time is spent inside one long C
//! function (allocations, string.rep, table.concat, cjson, ...).

use evalbench::engine::report::Outcome;
use evalbench::engine::{Reply, RunReport, RunRequest, Sandbox};

fn run(sandbox: &mut Sandbox, script: &str) -> RunReport {
    sandbox.run(&RunRequest::new(script))
}

fn bulk(text: &str) -> Reply {
    Reply::Bulk(text.as_bytes().to_vec())
}

/// Peter Cawley's `asnum`: bytecode of `function(x) for i = x, x, 0 do return i end end` whose
/// FORPREP (the check that the loop's start is a number) became a JMP. It passes Lua 5.1's
/// bytecode verifier; FORLOOP then reads a table's address as a double and returns it (the first
/// step of reading and writing memory at will). Redis refuses the chunk.
const LEAK_BYTECODE: &str = r"
local dump = string.dump(function(x) for i = x, x, 0 do return i end end)
local patched, n = dump:gsub('\96%z%z\128', '\22\0\0\128')
assert(n == 1, 'FORPREP not found')
";

#[test]
fn bytecode_through_load_with_a_reader_is_refused() {
    let mut sandbox = Sandbox::new();
    let script = format!(
        "{LEAK_BYTECODE}
local done = false
local f, e = load(function() if done then return nil end done = true return patched end)
if not f then return e end
return string.format('leaked %.17g', f({{}}))"
    );
    assert_eq!(
        run(&mut sandbox, &script).reply,
        bulk("(load):1: unexpected symbol near 'char(27)'")
    );
}

#[test]
fn bytecode_through_load_in_pieces_and_loadstring_is_refused() {
    let mut sandbox = Sandbox::new();
    let script = format!(
        "{LEAK_BYTECODE}
local i = 0
local f, e = load(function() i = i + 1 if i <= #patched then return patched:sub(i, i) end end, 'x')
local g, e2 = loadstring(patched, '=named')
return {{tostring(f), e, tostring(g), e2}}"
    );
    assert_eq!(
        run(&mut sandbox, &script).reply,
        Reply::Array(vec![
            bulk("nil"),
            bulk("[string \"x\"]:1: unexpected symbol near 'char(27)'"),
            bulk("nil"),
            bulk("named:1: unexpected symbol near 'char(27)'"),
        ])
    );
}

#[test]
fn a_script_that_is_bytecode_does_not_compile() {
    let mut sandbox = Sandbox::new();
    // The dump of a chunk, sent as the script itself.
    let dump = run(&mut sandbox, "return string.dump(loadstring('return 42'))").reply;
    let Reply::Bulk(bytecode) = dump else {
        panic!("{dump:?}")
    };
    assert_eq!(bytecode[0], 0x1b);
    let report = sandbox.run(&RunRequest::new(bytecode));
    assert_eq!(report.outcome, Outcome::Refused);
    assert_eq!(
        report.reply,
        Reply::Error(
            "ERR Error compiling script (new function): user_script:1: unexpected symbol near 'char(27)'"
                .into()
        )
    );
}

#[test]
fn string_dump_output_never_loads_back() {
    let mut sandbox = Sandbox::new();
    let script = "local s = string.dump(function() return 1 end)
local f1 = loadstring(s)
local f2 = load(function() local r = s s = nil return r end)
return {tostring(f1), tostring(f2)}";
    assert_eq!(
        run(&mut sandbox, script).reply,
        Reply::Array(vec![bulk("nil"), bulk("nil")])
    );
}

/// Scripts whose time goes into long C functions and allocations, each on one line (the kill
/// reports line 1 wherever it lands). Each must stop at the busy threshold.
pub const HOSTILE_LOOPS: &[(&str, &str)] = &[
    ("string.rep 40 times", "for i = 1, 40 do local s = string.rep('x', 2^26) end"),
    ("string.rep forever", "while true do local s = string.rep('x', 2^26) end"),
    (
        "string.rep under pcall",
        "while true do local ok, e = pcall(string.rep, 'x', 2^26) end",
    ),
    (
        "table.concat",
        "local t = {} for i = 1, 2^16 do t[i] = string.rep('x', 256) end while true do local s = table.concat(t) end",
    ),
    (
        "string.format %s",
        "local big = string.rep('x', 2^24) while true do local s = string.format('%s%s%s%s', big, big, big, big) end",
    ),
    (
        "gsub",
        "local s = string.rep('x', 2^22) while true do local r = s:gsub('x', 'yy') end",
    ),
    (
        "concatenation",
        "while true do local s = string.rep('x', 2^25) .. string.rep('y', 2^25) end",
    ),
    (
        "pattern backtracking",
        "local s = string.rep('a', 2^20) local i = s:find('.-.-.-b')",
    ),
    (
        "cjson.encode",
        "local t = {} for i = 1, 2^16 do t[i] = i end local big = {} for i = 1, 64 do big[i] = t end while true do local s = cjson.encode(big) end",
    ),
    (
        "cjson.encode of a string",
        "local s = string.rep('\"', 2^25) while true do local j = cjson.encode(s) end",
    ),
    (
        "cjson.decode",
        "local j = '[' .. string.rep('1,', 2^20) .. '1]' while true do local t = cjson.decode(j) end",
    ),
    (
        "cmsgpack.pack",
        "local t = {} for i = 1, 2^16 do t[i] = i end local big = {} for i = 1, 64 do big[i] = t end while true do local s = cmsgpack.pack(big) end",
    ),
];

/// Run `script` on a fresh sandbox in a thread; None when it has not returned after `limit`.
fn run_with_limit(
    script: &'static str,
    threshold_ms: u64,
    limit: std::time::Duration,
    configure: impl FnOnce(&mut Sandbox) + Send + 'static,
) -> Option<RunReport> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut sandbox = Sandbox::new();
        sandbox.config.busy_threshold_ms = threshold_ms;
        configure(&mut sandbox);
        let _ = tx.send(run(&mut sandbox, script));
    });
    rx.recv_timeout(limit).ok()
}

#[test]
fn the_busy_threshold_stops_time_spent_in_c_functions() {
    // One at a time: each loop allocates a few hundred MB.
    for (name, script) in HOSTILE_LOOPS {
        let report = run_with_limit(script, 150, std::time::Duration::from_secs(60), |_| {})
            .unwrap_or_else(|| panic!("{name}: still running 60 s after a 150 ms threshold"));
        assert_killed_on_line_1(&report, name);
    }
}

/// The run ended with Redis's kill error, raised on the script's line 1.
fn assert_killed_on_line_1(report: &RunReport, what: &str) {
    assert_eq!(
        report.outcome,
        Outcome::Killed,
        "{what}: {:?}",
        report.reply
    );
    assert_eq!(
        report.reply,
        Reply::Error(format!(
            "ERR Script killed by user with SCRIPT KILL... script: {}, on @user_script:1.",
            report.sha1
        )),
        "{what}"
    );
}

#[test]
fn the_kill_of_a_refused_allocation_survives_pcall_and_the_vm_stays_usable() {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut sandbox = Sandbox::new();
        sandbox.config.busy_threshold_ms = 100;
        // The memory error of the refused allocation is caught; the kill is not.
        let script = "local caught = 0\nwhile true do\nlocal ok, e = pcall(string.rep, 'x', 2^26)\nif not ok then caught = caught + 1 end\nend";
        let killed = run(&mut sandbox, script);
        // No threshold for the follow-up: on a loaded machine a debug build may take 100 ms for it,
        // and what is checked here is that the VM still works.
        sandbox.config.busy_threshold_ms = 0;
        let after = run(&mut sandbox, "return #string.rep('x', 2^20)");
        let _ = tx.send((killed, after));
    });
    let (killed, after) = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the run returns");
    assert_eq!(killed.outcome, Outcome::Killed);
    let Reply::Error(text) = &killed.reply else {
        panic!("{:?}", killed.reply)
    };
    assert!(
        text.starts_with("ERR Script killed by user with SCRIPT KILL... script: "),
        "{text}"
    );
    assert_eq!(after.outcome, Outcome::Returned);
    assert_eq!(after.reply, Reply::Int(1 << 20));
}

/// `string.format` of big `%s` arguments builds its result with stop checks between chunks:
/// the kill, also through `pcall`, leaves a VM whose `string.format` still works.
#[test]
fn a_string_format_loop_is_killed_and_the_vm_stays_usable() {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut sandbox = Sandbox::new();
        sandbox.config.busy_threshold_ms = 100;
        let direct = run(&mut sandbox, HOSTILE_LOOPS[4].1);
        let under_pcall = run(
            &mut sandbox,
            "local big = string.rep('x', 2^24) while true do local ok, s = pcall(string.format, '%s%s%s%s', big, big, big, big) end",
        );
        // No threshold for the follow-up (a debug build on a loaded machine may be slow).
        sandbox.config.busy_threshold_ms = 0;
        let after = run(
            &mut sandbox,
            "local big = string.rep('ab', 2^20) local s = string.format('%s%%%s', big, big) return {#s, s:sub(2^21 - 1, 2^21 + 2), string.format('%s=%d', 'n', 5)}",
        );
        let _ = tx.send((direct, under_pcall, after));
    });
    let (direct, under_pcall, after) = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the runs return");
    assert_eq!(HOSTILE_LOOPS[4].0, "string.format %s");
    assert_killed_on_line_1(&direct, "string.format");
    assert_killed_on_line_1(&under_pcall, "string.format under pcall");
    assert_eq!(after.outcome, Outcome::Returned, "{:?}", after.reply);
    assert_eq!(
        after.reply,
        Reply::Array(vec![Reply::Int((1 << 22) + 1), bulk("ab%a"), bulk("n=5")])
    );
}

/// Concatenations and interning copy and compare long strings in 1 MiB chunks, and pattern
/// matching counts its steps, asking the stop check between them (the vendored Lua's
/// `lua_stopcheck`): each kill, also through `pcall`, leaves whole strings and gives the memory of
/// the string it was building back.
#[test]
fn a_concatenation_or_pattern_loop_is_killed_and_the_vm_stays_usable() {
    let loop_named = |name: &str| {
        HOSTILE_LOOPS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, script)| *script)
            .unwrap()
    };
    let killers = [
        loop_named("concatenation"),
        loop_named("gsub"),
        loop_named("pattern backtracking"),
        "local a, b = string.rep('x', 2^25), string.rep('y', 2^25) while true do local ok, s = pcall(function() return a .. b end) end",
    ];
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut sandbox = Sandbox::new();
        sandbox.config.busy_threshold_ms = 100;
        let killed: Vec<RunReport> = killers.iter().map(|s| run(&mut sandbox, s)).collect();
        // No threshold for the follow-up (a debug build on a loaded machine may be slow). It
        // collects several times: Lua keeps its concatenation buffer (64 MiB after the first
        // killer) and halves it once per collection, as the real server's Lua does.
        sandbox.config.busy_threshold_ms = 0;
        let after = run(
            &mut sandbox,
            "local a = string.rep('x', 2^21) .. string.rep('y', 2^21) local r, n = a:gsub('y', 'z') \
             for _ = 1, 8 do collectgarbage() end return {#a, r:sub(2^21, 2^21 + 1), n, a:find('xy', 1, true), collectgarbage('count') < 16 * 1024}",
        );
        let _ = tx.send((killed, after));
    });
    let (killed, after) = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the runs return");
    for (report, script) in killed.iter().zip(killers) {
        assert_killed_on_line_1(report, script);
    }
    assert_eq!(after.outcome, Outcome::Returned, "{:?}", after.reply);
    // Live after the collection: `a` and `r` (4 MiB each) and the VM's own; a string a kill left
    // behind would be 64 MiB.
    assert_eq!(
        after.reply,
        Reply::Array(vec![
            Reply::Int(1 << 22),
            bulk("xz"),
            Reply::Int(1 << 21),
            Reply::Int(1 << 21),
            Reply::Int(1),
        ])
    );
}

#[test]
fn cancel_stops_time_spent_in_c_functions() {
    let (cancel_tx, cancel_rx) = std::sync::mpsc::channel();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut sandbox = Sandbox::new();
        sandbox.config.busy_threshold_ms = 0;
        cancel_tx.send(sandbox.cancel_handle()).unwrap();
        let _ = tx.send(run(
            &mut sandbox,
            "while true do local s = string.rep('x', 2^26) end",
        ));
    });
    let cancel = cancel_rx.recv().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(100));
    cancel.store(true, std::sync::atomic::Ordering::Relaxed);
    let report = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("a cancelled run returns");
    assert_eq!(report.outcome, Outcome::Cancelled);
    assert_eq!(
        report.reply,
        Reply::Error(format!(
            "ERR evalbench: the run was cancelled script: {}, on @user_script:1.",
            report.sha1
        ))
    );
}

mod workbench {
    use evalbench::engine::keyspace::Db;
    use evalbench::engine::report::Outcome;
    use evalbench::engine::RunRequest;
    use evalbench::tui::worker::{EngineCommand, EngineEvent, Worker};
    use std::time::Duration;

    fn start_run(worker: &Worker, script: &str) {
        worker.send(EngineCommand::Run {
            id: 1,
            request: RunRequest::new(script),
            seed: Db::new(),
            busy_threshold_ms: 0,
            consent: Default::default(),
            live: false,
            clock_ms: 0,
        });
        // Let the engine thread enter the script.
        std::thread::sleep(Duration::from_millis(200));
    }

    #[test]
    fn esc_stops_a_script_busy_in_a_c_function() {
        let worker = Worker::start();
        start_run(&worker, "while true do local s = string.rep('x', 2^26) end");
        worker.cancel();
        let EngineEvent::Finished(result) = worker
            .events
            .recv_timeout(Duration::from_secs(60))
            .expect("the cancelled run finishes")
        else {
            panic!("expected a finished run")
        };
        assert_eq!(result.report.outcome, Outcome::Cancelled);
    }

    fn finished(worker: &Worker) -> Box<evalbench::tui::worker::RunResult> {
        loop {
            match worker.events.recv_timeout(Duration::from_secs(60)) {
                Ok(EngineEvent::Finished(result)) => return result,
                Ok(_) => continue,
                Err(e) => panic!("no finished run within 60 s: {e}"),
            }
        }
    }

    fn send_run(worker: &Worker, script: &str, busy_threshold_ms: u64) {
        worker.send(EngineCommand::Run {
            id: 1,
            request: RunRequest::new(script),
            seed: Db::new(),
            busy_threshold_ms,
            consent: Default::default(),
            live: false,
            clock_ms: 0,
        });
    }

    #[test]
    fn esc_stops_a_run_queued_before_it_starts() {
        // The second run is still queued when Esc is pressed; it must not clear the stop on its way
        // in (it never stops by itself: no busy threshold).
        let worker = Worker::start();
        send_run(&worker, "while true do end", 2_000);
        send_run(&worker, "while true do end", 0);
        std::thread::sleep(Duration::from_millis(100));
        worker.cancel();
        assert_eq!(finished(&worker).report.outcome, Outcome::Cancelled);
        assert_eq!(finished(&worker).report.outcome, Outcome::Cancelled);
    }

    #[test]
    fn esc_after_a_run_ended_does_not_stop_the_next_one() {
        let worker = Worker::start();
        send_run(&worker, "return 1", 0);
        finished(&worker);
        worker.cancel();
        send_run(&worker, "return 2", 0);
        let result = finished(&worker);
        assert_eq!(result.report.outcome, Outcome::Returned);
        assert_eq!(result.report.reply, evalbench::engine::reply::Reply::Int(2));
    }

    #[test]
    fn quitting_does_not_wait_on_a_busy_engine_thread() {
        // table.sort without a comparator neither allocates nor returns to the VM for a long time,
        // and 500 iterations are too few instructions for the count hook: no stop check runs.
        let worker = Worker::start();
        start_run(
            &worker,
            "local t = {} for i = 1, 2^18 do t[i] = i end for i = 1, 500 do table.sort(t) end",
        );
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            drop(worker);
            let _ = tx.send(());
        });
        rx.recv_timeout(Duration::from_secs(10))
            .expect("dropping the worker (quitting) returns while the engine is busy");
    }
}

#[test]
fn string_rep_of_nothing_is_made_at_once() {
    // Two billion empty appends in stock Lua: seconds no stop check could interrupt.
    let report = run_with_limit(
        "local s for i = 1, 1000 do s = string.rep('', 2^31 - 1) end return {#s, string.rep('ab', 3), string.rep('x', 0), string.rep('x', -1)}",
        0,
        std::time::Duration::from_secs(60),
        |_| {},
    )
    .expect("the run returns");
    assert_eq!(
        report.reply,
        Reply::Array(vec![Reply::Int(0), bulk("ababab"), bulk(""), bulk("")])
    );
}

/// C calls that allocate nothing (here `table.sort` of an already sorted table, about 30 ms each
/// in a debug build) give the count hook a chance only every ~2,000 calls: minutes. The watchdog
/// thread sets the stop hook at the deadline, so the run ends after the call in progress.
#[test]
fn a_c_call_that_allocates_nothing_is_stopped_at_the_deadline() {
    let script = "local t = {} for i = 1, 2^18 do t[i] = i end while true do table.sort(t) end";
    let report = run_with_limit(script, 500, std::time::Duration::from_secs(60), |_| {})
        .expect("table.sort loop still running 60 s after a 500 ms threshold");
    assert_eq!(report.outcome, Outcome::Killed, "{:?}", report.reply);
    // Esc (cancel) reaches it the same way.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut sandbox = Sandbox::new();
        sandbox.config.busy_threshold_ms = 0;
        let cancel = sandbox.cancel_handle();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(300));
            cancel.store(true, std::sync::atomic::Ordering::Relaxed);
        });
        let _ = tx.send(run(&mut sandbox, script));
    });
    let report = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("table.sort loop still running 60 s after a cancel");
    assert_eq!(report.outcome, Outcome::Cancelled, "{:?}", report.reply);
}

/// A 2 MiB transparent huge page is faulted in (zeroed) in one step no stop check can split:
/// 6 ms median, up to 53 ms each on a 2-core VM, most of how late `string.rep` loops stopped.
/// A sandbox switches them off for the process; mimalloc keeps freed memory 10 s (its purge of
/// everything expired took 41-69 ms in one `madvise` inside a running script) and purges after
/// runs that made big blocks.
#[cfg(target_os = "linux")]
#[test]
fn no_huge_pages_and_no_purge_inside_a_run() {
    extern "C" {
        fn mi_option_get(option: std::ffi::c_int) -> std::ffi::c_long;
    }
    let _sandbox = Sandbox::new();
    assert_eq!(
        unsafe { libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0) },
        1
    );
    // mi_option_purge_delay (mimalloc 3's mi_option_t)
    assert_eq!(unsafe { mi_option_get(15) }, 10_000);
}
