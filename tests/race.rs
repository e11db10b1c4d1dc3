//! The race lab: outcomes checked against interleavings enumerated by hand, under each
//! strategy; the CLI's text, JSON and errors (bad lab files at file:line:column).

use evalbench::engine::race::{self, parse_lab, replay, RaceOptions, Runner, Strategy};
use serde_json::{json, Value as Json};
use std::path::Path;
use std::process::{Command, Output};

/// The classic race: 2 clients GET the stock, then SET it to stock-1 if any is left; stock = 1.
const STOCK_SET: &str = r#"
name = "stock by GET then SET"
clients = 2
keys = ["stock"]
logic = '''
local stock = tonumber(redis.call('GET', KEYS[1]))
if stock > 0 then
  redis.call('SET', KEYS[1], stock - 1)
  return 1
end
return 0
'''
seed = { stock = "1" }
"#;

fn runner(text: &str) -> Runner {
    let lab = parse_lab(Path::new("lab.toml"), text).expect("lab parses");
    Runner::new(&lab).expect("lab compiles")
}

fn report_of(text: &str, strategy: Strategy) -> race::StrategyReport {
    let report = race::race(
        &runner(text),
        &RaceOptions {
            strategies: vec![strategy],
            ..RaceOptions::default()
        },
    );
    report.strategies.into_iter().next().expect("one strategy")
}

fn evalbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_evalbench"))
        .args(args)
        .output()
        .expect("run evalbench")
}

#[test]
fn plain_commands_lose_the_update_in_exactly_the_interleavings_where_both_read_before_either_writes(
) {
    // By hand: each client makes GET then (if it read 1) SET. A client that runs both its
    // commands before the other's GET sells; the other reads 0 and stops (3 steps). When both
    // GETs come before both SETs (4 orders of the SETs and GETs), both read 1 and both sell.
    let plain = report_of(STOCK_SET, Strategy::Plain);
    assert!(plain.exhaustive);
    assert_eq!(plain.schedules, 6);
    let mut lost: Vec<Vec<usize>> = plain
        .outcomes
        .iter()
        .filter(|o| !o.serializable)
        .flat_map(|o| o.schedule_list.clone())
        .collect();
    lost.sort();
    assert_eq!(
        lost,
        vec![
            vec![1, 2, 1, 2],
            vec![1, 2, 2, 1],
            vec![2, 1, 1, 2],
            vec![2, 1, 2, 1]
        ]
    );
    assert_eq!(plain.lost_updates, 4);
    let mut fine: Vec<Vec<usize>> = plain
        .outcomes
        .iter()
        .filter(|o| o.serializable)
        .flat_map(|o| o.schedule_list.clone())
        .collect();
    fine.sort();
    assert_eq!(fine, vec![vec![1, 1, 2], vec![2, 2, 1]]);
    // The lost update: one item, two sales; the stock reads 0 as after a serial order.
    let lost = plain.outcomes.iter().find(|o| !o.serializable).unwrap();
    assert_eq!(lost.keyspace, json!({"stock": "0"}));
    let results: Vec<&str> = lost.clients.iter().map(|c| c.result.as_str()).collect();
    assert_eq!(results, ["(integer) 1", "(integer) 1"]);
    let steps: Vec<String> = lost
        .steps
        .iter()
        .map(|s| format!("{} {} -> {}", s.client, s.command, s.reply))
        .collect();
    assert_eq!(
        steps,
        [
            "1 GET stock -> \"1\"",
            "2 GET stock -> \"1\"",
            "1 SET stock 0 -> OK",
            "2 SET stock 0 -> OK"
        ]
    );
}

#[test]
fn as_one_script_the_update_is_never_lost() {
    let script = report_of(STOCK_SET, Strategy::Script);
    assert!(script.exhaustive);
    // Two orders of two atomic scripts.
    assert_eq!(script.schedules, 2);
    assert_eq!(script.lost_updates, 0);
    assert!(script.outcomes.iter().all(|o| o.serializable));
    let ends: Vec<(Vec<usize>, Vec<String>)> = script
        .outcomes
        .iter()
        .map(|o| {
            (
                o.schedule.clone(),
                o.clients.iter().map(|c| c.result.clone()).collect(),
            )
        })
        .collect();
    assert_eq!(
        ends,
        vec![
            (
                vec![1, 1, 2],
                vec!["(integer) 1".into(), "(integer) 0".into()]
            ),
            (
                vec![2, 2, 1],
                vec!["(integer) 0".into(), "(integer) 1".into()]
            ),
        ]
    );
}

#[test]
fn watch_with_retries_makes_it_correct_and_counts_the_retries() {
    let watch = report_of(STOCK_SET, Strategy::Watch);
    assert!(watch.exhaustive);
    assert_eq!(watch.lost_updates, 0);
    assert_eq!(watch.failed, 0);
    assert!(watch.outcomes.iter().all(|o| o.serializable));
    assert!(watch.retries > 0);
    assert_eq!(watch.max_retries_in_a_schedule, 1);
    // A losing interleaving of plain commands, under WATCH: client 2's EXEC goes first, client
    // 1's EXEC answers nil, it retries, reads 0 and sells nothing.
    let r = replay(
        &runner(STOCK_SET),
        Strategy::Watch,
        &[0, 0, 1, 1, 1, 0, 0, 0],
    );
    let steps: Vec<String> = r
        .steps
        .iter()
        .map(|s| format!("{} {} -> {}", s.client, s.command, s.reply))
        .collect();
    assert_eq!(
        steps,
        [
            "1 WATCH stock -> OK",
            "1 GET stock -> \"1\"",
            "1 MULTI -> OK",
            "1 SET stock 0 -> QUEUED",
            "2 WATCH stock -> OK",
            "2 GET stock -> \"1\"",
            "2 MULTI -> OK",
            "2 SET stock 0 -> QUEUED",
            "2 EXEC -> [OK]",
            "1 EXEC -> (nil) a watched key changed: retry",
            "1 WATCH stock -> OK",
            "1 GET stock -> \"0\"",
        ]
    );
    assert_eq!(r.clients[0].retries, 1);
    assert_eq!(r.clients[0].result, "(integer) 0");
    assert_eq!(r.clients[1].result, "(integer) 1");
    // The keyspace after each step: client 2's EXEC is where the stock changes.
    assert_eq!(r.steps[7].keyspace, Some(json!({"stock": "1"})));
    assert_eq!(r.steps[8].keyspace, Some(json!({"stock": "0"})));
}

#[test]
fn multi_exec_alone_cannot_read_its_reads_answer_queued() {
    let multi = report_of(STOCK_SET, Strategy::Multi);
    assert_eq!(multi.schedules, 1);
    let o = &multi.outcomes[0];
    // Nothing was written: both clients failed on the QUEUED placeholder where a number was read.
    assert_eq!(o.keyspace, json!({"stock": "1"}));
    assert!(!o.serializable);
    let results: Vec<(&str, bool)> = o
        .clients
        .iter()
        .map(|c| (c.result.as_str(), c.failed))
        .collect();
    assert_eq!(
        results,
        [
            ("logic:2: attempt to compare number with nil", true),
            ("logic:2: attempt to compare number with nil", true)
        ]
    );
    let steps: Vec<String> = o
        .steps
        .iter()
        .map(|s| format!("{} {} -> {}", s.client, s.command, s.reply))
        .collect();
    assert_eq!(
        steps,
        [
            "1 MULTI -> OK",
            "1 GET stock -> QUEUED",
            "1 DISCARD -> OK",
            "2 MULTI -> OK",
            "2 GET stock -> QUEUED",
            "2 DISCARD -> OK"
        ]
    );
    // Blind writes work in MULTI, and a returned QUEUED is the EXEC reply of that command.
    let incr = STOCK_SET.replace(
        "local stock = tonumber(redis.call('GET', KEYS[1]))\nif stock > 0 then\n  redis.call('SET', KEYS[1], stock - 1)\n  return 1\nend\nreturn 0",
        "return redis.call('DECR', KEYS[1])",
    );
    let multi = report_of(&incr, Strategy::Multi);
    assert_eq!(multi.outcomes.len(), 2);
    assert_eq!(multi.outcomes[0].keyspace, json!({"stock": "-1"}));
    let results: Vec<&str> = multi.outcomes[0]
        .clients
        .iter()
        .map(|c| c.result.as_str())
        .collect();
    assert_eq!(results, ["(integer) 0", "(integer) -1"]);
}

#[test]
fn builtin_labs_show_their_races() {
    // stock_decrement (DECR): the invariant stock >= 0 breaks in the 4 interleavings.
    let report = race::race(
        &Runner::new(&race::builtin_lab("stock_decrement").unwrap()).unwrap(),
        &RaceOptions::default(),
    );
    let plain = report.strategy(Strategy::Plain).unwrap();
    assert_eq!(
        (plain.schedules, plain.broken, plain.lost_updates),
        (6, 4, 4)
    );
    let broken = &plain.outcomes[0];
    assert_eq!(broken.keyspace, json!({"stock": "-1"}));
    assert_eq!(
        broken.broken_invariants[0].invariant,
        "tonumber(redis.call('GET', 'stock')) >= 0"
    );
    assert_eq!(broken.broken_invariants[0].why, "false");
    for strategy in [Strategy::Script, Strategy::Watch] {
        let s = report.strategy(strategy).unwrap();
        assert_eq!(
            (s.broken, s.lost_updates, s.failed),
            (0, 0, 0),
            "{strategy:?}"
        );
    }
    // lock_release: client 1's DEL lands on client 2's new lock in exactly one interleaving.
    let report = race::race(
        &Runner::new(&race::builtin_lab("lock_release").unwrap()).unwrap(),
        &RaceOptions::default(),
    );
    let plain = report.strategy(Strategy::Plain).unwrap();
    let broken: Vec<&race::Outcome> = plain
        .outcomes
        .iter()
        .filter(|o| !o.broken_invariants.is_empty())
        .collect();
    assert_eq!(broken.len(), 1);
    assert_eq!(broken[0].schedule_list, vec![vec![1, 2, 2, 1]]);
    assert_eq!(broken[0].keyspace, json!({}));
    for strategy in [Strategy::Script, Strategy::Watch] {
        assert_eq!(report.strategy(strategy).unwrap().broken, 0);
    }
    // counter and capped_counter lose updates as plain commands, never as a script.
    for name in ["counter", "capped_counter"] {
        let report = race::race(
            &Runner::new(&race::builtin_lab(name).unwrap()).unwrap(),
            &RaceOptions::default(),
        );
        assert_eq!(
            report.strategy(Strategy::Plain).unwrap().lost_updates,
            4,
            "{name}"
        );
        assert_eq!(report.strategy(Strategy::Script).unwrap().lost_updates, 0);
        assert_eq!(report.strategy(Strategy::Watch).unwrap().lost_updates, 0);
    }
}

#[test]
fn many_interleavings_are_sampled_with_the_seed() {
    let lab = race::builtin_lab("counter").unwrap();
    let lab = race::Lab { clients: 4, ..lab };
    let options = RaceOptions {
        strategies: vec![Strategy::Plain],
        schedule_limit: 100,
        samples: 200,
        seed: 7,
        ..RaceOptions::default()
    };
    // 4 clients of 2 steps: 8!/2^4 = 2520 interleavings, more than the limit of 100.
    let a = race::race(&Runner::new(&lab).unwrap(), &options);
    let b = race::race(&Runner::new(&lab).unwrap(), &options);
    let plain = &a.strategies[0];
    assert!(!plain.exhaustive);
    assert_eq!(plain.schedules, 200);
    assert_eq!(a, b, "the same seed samples the same schedules");
    let c = race::race(
        &Runner::new(&lab).unwrap(),
        &RaceOptions { seed: 8, ..options },
    );
    assert_ne!(a.strategies[0].outcomes, c.strategies[0].outcomes);
}

#[test]
fn a_logic_that_never_calls_the_server_again_is_stopped() {
    let lab = STOCK_SET.replace("return 0\n'''", "while true do end\n'''");
    let plain = report_of(&lab, Strategy::Plain);
    let stuck = plain
        .outcomes
        .iter()
        .flat_map(|o| &o.clients)
        .find(|c| c.failed)
        .expect("a client was stopped");
    assert_eq!(
        stuck.result,
        "evalbench: the logic ran 10000000 Lua instructions without calling the server; stopped"
    );
}

#[test]
fn json_output() {
    let out = evalbench(&["race", "stock_decrement", "--strategy", "plain", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Json = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(report["lab"], "stock decrement");
    assert_eq!(report["clients"], 2);
    assert_eq!(report["seed_keyspace"], json!({"stock": "1"}));
    let plain = &report["strategies"][0];
    assert_eq!(plain["strategy"], "plain");
    assert_eq!(plain["exhaustive"], true);
    assert_eq!(plain["schedules"], 6);
    assert_eq!(plain["lost_updates"], 4);
    assert_eq!(plain["broken"], 4);
    let first = &plain["outcomes"][0];
    assert_eq!(first["keyspace"], json!({"stock": "-1"}));
    assert_eq!(first["serializable"], false);
    assert_eq!(first["schedule"], json!([1, 2, 1, 2]));
    assert_eq!(
        first["steps"][0],
        json!({"client": 1, "command": "GET stock", "reply": "\"1\"", "keyspace": {"stock": "1"}})
    );
    assert_eq!(
        first["steps"][3],
        json!({"client": 2, "command": "DECR stock", "reply": "(integer) -1", "keyspace": {"stock": "-1"}})
    );
    assert_eq!(
        first["broken_invariants"],
        json!([{"invariant": "tonumber(redis.call('GET', 'stock')) >= 0", "why": "false"}])
    );
}

#[test]
fn text_output_and_help() {
    let out = evalbench(&["race", "counter", "--strategy", "script"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("script: the whole logic as one EVAL: no other client runs until it ends\n  2 schedules (every interleaving), 2 outcomes; lost updates in 0"), "{text}");
    assert!(
        text.contains(
            "       1. client 1: GET counter -> \"0\"\n       2. client 1: SET counter 1 -> OK\n"
        ),
        "{text}"
    );
    let help = evalbench(&["race", "--help"]);
    let help = String::from_utf8(help.stdout).unwrap();
    assert!(help.contains("evalbench race counter --clients 3 --strategy plain"));
    assert!(help.contains("--clients <N>"));
}

fn lab_error(text: &str) -> String {
    let dir_tmp = tempfile::tempdir().unwrap();
    let dir = dir_tmp.path().to_path_buf();
    let path = dir.join(format!("lab{}.toml", text.len()));
    std::fs::write(&path, text).unwrap();
    let out = evalbench(&["race", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    String::from_utf8(out.stderr)
        .unwrap()
        .replace(&format!("{}", path.display()), "LAB")
}

#[test]
fn a_bad_lab_file_says_where() {
    assert_eq!(
        lab_error("clients = 9\nlogic = 'return 1'\n"),
        "evalbench: LAB:1:11: 9 clients: a lab runs 2 to 8 clients\n"
    );
    assert_eq!(
        lab_error("logic = 'return 1'\nclients = \"two\"\n"),
        "evalbench: LAB:2:11: invalid type: string \"two\", expected i64\n"
    );
    // A Lua syntax error at its line in the file.
    assert_eq!(
        lab_error("name = \"x\"\nlogic = '''\nlocal a = 1\nlocal b = = 2\n'''\n"),
        "evalbench: LAB:4:1: logic:2: unexpected symbol near '='\n"
    );
    assert_eq!(
        lab_error("logic = 'return 1'\ninvariants = [\"x >\"]\n"),
        "evalbench: LAB:2:15: invariant: invariant:1: unexpected symbol near '<eof>'\n"
    );
    assert_eq!(
        lab_error("logic = 'return 1'\nseed = { k = { type = \"nope\", value = 1 } }\n"),
        "evalbench: LAB:2:8: seed: key \"k\": unknown type \"nope\" (string, hash, list, set, zset or stream)\n"
    );
    let unknown = evalbench(&["race", "no_such_lab"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&unknown.stderr),
        "evalbench: no_such_lab: no such lab file, and no built-in lab of that name (they are: stock_decrement, counter, lock_release, capped_counter)\n"
    );
    let clients = evalbench(&["race", "counter", "--clients", "1"]);
    assert_eq!(
        String::from_utf8_lossy(&clients.stderr),
        "evalbench: --clients 1 clients: a lab runs 2 to 8 clients\n"
    );
}

#[test]
fn a_lab_that_is_not_a_regular_file_is_refused_at_once() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_evalbench"))
        .args(["race", "/dev/zero"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "evalbench: cannot read /dev/zero: it is a character device, not a regular file (evalbench reads a race lab from a regular file only; give the path of one)\n"
    );
}

/// 8 clients of many INCRs: every interleaving would never end; each strategy stops at the step
/// limit, says so, and counts what it ran.
const MANY_INCR: &str = r#"
name = "many incr"
clients = 8
keys = ["c"]
logic = '''
for i = 1, 200 do redis.call('INCR', KEYS[1]) end
return 1
'''
"#;

#[test]
fn each_strategy_stops_at_the_step_limit_and_says_so() {
    let mut progress = Vec::new();
    let report = race::race_with(
        &runner(MANY_INCR),
        &RaceOptions {
            strategies: vec![Strategy::Plain, Strategy::Multi],
            step_limit: 5_000,
            ..RaceOptions::default()
        },
        &mut |p| progress.push(*p),
    )
    .expect("not cancelled");
    // The serial orders (8! = 40,320) were not all run either.
    assert_eq!(
        report.serial_stopped.as_deref(),
        Some("stopped at the step limit (5,000 steps over all schedules) after 4 schedules")
    );
    // Plain: 1,600 steps a schedule, the fourth passes 5,000. Multi: 1,600 commands queued and
    // one EXEC per client, 1,608 steps.
    for (s, schedules, steps) in [
        (&report.strategies[0], 4, 6_400),
        (&report.strategies[1], 4, 6_432),
    ] {
        assert_eq!(s.schedules, schedules, "{:?}", s.strategy);
        assert_eq!(s.steps, steps, "{:?}", s.strategy);
        assert!(!s.exhaustive);
        assert_eq!(
            s.stopped,
            Some(format!("stopped at the step limit (5,000 steps over all schedules) after {schedules} schedules"))
        );
        assert_eq!(s.outcomes[0].keyspace, json!({"c": "1600"}));
        // A replay keeps the first 1,000 steps of the schedule, and counts the rest.
        let o = &s.outcomes[0];
        assert_eq!(o.steps.len(), 1000);
        assert_eq!(
            o.steps.len() + o.steps_not_shown,
            o.schedule.len()
                + if s.strategy == Strategy::Multi {
                    8 * 201
                } else {
                    0
                }
        );
    }
    let last = progress.last().expect("progress was reported");
    assert_eq!((last.strategy, last.step_limit), (Strategy::Multi, 5_000));
    assert!(progress.iter().any(|p| p.strategy == Strategy::Plain));
    assert_eq!(
        progress[0].text(),
        format!("race lab: script: 1 schedules, 1,600 of 5,000 steps")
    );
}

#[test]
fn a_cancelled_lab_gives_no_report() {
    let runner = runner(MANY_INCR);
    let flag = runner.cancel_flag();
    let mut reports = 0;
    let result = race::race_with(&runner, &RaceOptions::default(), &mut |_| {
        reports += 1;
        flag.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    assert_eq!(result, Err(race::Cancelled));
    assert_eq!(reports, 1, "stopped at the next step after the flag");
}

#[test]
fn a_lab_past_the_memory_budget_stops_with_the_budget_in_the_output() {
    let dir_tmp = tempfile::tempdir().unwrap();
    let dir = dir_tmp.path().to_path_buf();
    let lab = dir.join("setrange.toml");
    std::fs::write(
        &lab,
        "name = \"setrange\"\nclients = 8\nkeys = [\"k\"]\nlogic = '''\nlocal n = redis.call('INCR', 'n')\nredis.call('SETRANGE', KEYS[1] .. n, 536870911, 'x')\nreturn n\n'''\n",
    )
    .unwrap();
    let out = evalbench(&[
        "race",
        lab.to_str().unwrap(),
        "--max-memory",
        "64",
        "--strategy",
        "plain",
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let why = "the race lab used more than the memory budget (64 MiB: keyspaces, outcomes and Lua together) after 0 schedules; raise it with --max-memory MIB, or memory_limit_mb in the workbench's config.toml";
    assert!(
        text.contains(&format!("serial orders not all run: {why}; an outcome called a lost update may be a serial order not run\n")),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "\n  {why}\n  0 schedules (enumerated, not all), 0 outcomes;"
        )),
        "{text}"
    );
}

#[test]
fn eight_clients_queueing_two_thousand_commands_each_run() {
    let text = MANY_INCR.replace("1, 200", "1, 2000");
    let report = race::race(
        &runner(&text),
        &RaceOptions {
            strategies: vec![Strategy::Multi],
            step_limit: 1,
            ..RaceOptions::default()
        },
    );
    let multi = &report.strategies[0];
    assert_eq!(multi.schedules, 1);
    assert_eq!(multi.outcomes[0].keyspace, json!({"c": "16000"}));
    assert!(multi.outcomes[0].clients.iter().all(|c| !c.failed));
}

/// samples/stock_decrement.lua as a lab's logic, with the sample's own inputs.
fn stock_script_lab() -> String {
    let logic = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/stock_decrement.lua"),
    )
    .unwrap();
    format!(
        "name = \"stock decrement script\"\nclients = 2\nkeys = [\"stock:sku-123\"]\nargv = [\"3\"]\nlogic = '''\n{logic}'''\nseed = {{ \"stock:sku-123\" = \"10\" }}\n"
    )
}

#[test]
fn a_client_that_got_an_error_is_an_error_not_a_lost_update() {
    // Under MULTI the GET answers QUEUED, so the script returns its own error reply and writes
    // nothing: each client got an error, and no update was lost.
    let multi = report_of(&stock_script_lab(), Strategy::Multi);
    assert_eq!(multi.outcome_count, 1);
    let outcome = &multi.outcomes[0];
    assert_eq!(outcome.verdict, race::Verdict::Error);
    assert!(!outcome.wrote);
    assert_eq!(outcome.keyspace, json!({"stock:sku-123": "10"}));
    let ends: Vec<(race::ClientOutcome, &str)> = outcome
        .clients
        .iter()
        .map(|c| (c.outcome, c.result.as_str()))
        .collect();
    assert_eq!(
        ends,
        vec![
            (
                race::ClientOutcome::Error,
                "(error) ERR stock value is not an integer"
            ),
            (
                race::ClientOutcome::Error,
                "(error) ERR stock value is not an integer"
            )
        ]
    );
    assert_eq!((multi.lost_updates, multi.errors), (0, 2));
    // The lost update itself stays one: every client succeeded and the SETs were applied.
    let plain = report_of(STOCK_SET, Strategy::Plain);
    let lost = plain.outcomes.iter().find(|o| !o.serializable).unwrap();
    assert_eq!(lost.verdict, race::Verdict::LostUpdate);
    assert!(lost.wrote);
    // And the CLI says so.
    let dir_tmp = tempfile::tempdir().unwrap();
    let dir = dir_tmp.path().to_path_buf();
    let path = dir.join("stock.toml");
    std::fs::write(&path, stock_script_lab()).unwrap();
    let out = evalbench(&["race", path.to_str().unwrap(), "--strategy", "multi"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("LOST"), "{text}");
    assert!(
        text.contains("  outcome 1: 2 schedules: keyspace as seeded; ERROR: a client got an error (nothing of it is a lost update)\n    client 1 error: (error) ERR stock value is not an integer\n    client 2 error: (error) ERR stock value is not an integer\n    schedules: 1 2 | 2 1\n"),
        "{text}"
    );
    assert!(
        text.contains("lost updates in 0, invariants broken in 0, a client got an error in 2"),
        "{text}"
    );
}

#[test]
fn retried_clients_are_their_own_outcomes_with_their_retry_counts() {
    let watch = report_of(&stock_script_lab(), Strategy::Watch);
    assert_eq!(watch.schedules, 20);
    let mut seen: Vec<(race::Verdict, Vec<usize>, usize)> = watch
        .outcomes
        .iter()
        .map(|o| {
            (
                o.verdict,
                o.clients.iter().map(|c| c.retries).collect(),
                o.schedules,
            )
        })
        .collect();
    seen.sort_by_key(|(_, r, n)| (r.clone(), *n));
    assert_eq!(
        seen,
        vec![
            (race::Verdict::Success, vec![0, 0], 1),
            (race::Verdict::Success, vec![0, 0], 1),
            (race::Verdict::Retried, vec![0, 1], 9),
            (race::Verdict::Retried, vec![1, 0], 9),
        ]
    );
    let out = evalbench(&["race", "stock_decrement", "--strategy", "watch"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("as a serial order, after WATCH retries\n    client 1 success: (integer) 1\n    client 2 retried (1 WATCH retry): (integer) 0\n"),
        "{text}"
    );
}

#[test]
fn every_schedule_of_an_outcome_is_listed_and_each_replays_to_it() {
    let runner = runner(STOCK_SET);
    let plain = report_of(STOCK_SET, Strategy::Plain);
    for outcome in &plain.outcomes {
        assert_eq!(outcome.schedule_list.len(), outcome.schedules);
        for schedule in &outcome.schedule_list {
            let run = race::replay_schedule(&runner, Strategy::Plain, schedule).unwrap();
            let keyspace = race::driver::keyspace_json(&run.final_db, runner.lab().clock_ms);
            assert_eq!(keyspace, outcome.keyspace, "{schedule:?}");
            let results: Vec<&str> = run.clients.iter().map(|c| c.result.as_str()).collect();
            let expected: Vec<&str> = outcome.clients.iter().map(|c| c.result.as_str()).collect();
            assert_eq!(results, expected, "{schedule:?}");
        }
    }
    // The CLI lists the four losing orders and replays one of them.
    let out = evalbench(&["race", "counter", "--strategy", "plain"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("    schedules: 1 2 1 2 | 1 2 2 1 | 2 1 1 2 | 2 1 2 1\n"),
        "{text}"
    );
    let out = evalbench(&[
        "race",
        "counter",
        "--strategy",
        "plain",
        "--schedule",
        "2 1 1 2",
    ]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "race lab: counter; plain: clients in order 2 1 1 2\n   1. client 2: GET counter -> \"0\"\n   2. client 1: GET counter -> \"0\"\n   3. client 1: SET counter 1 -> OK\n   4. client 2: SET counter 1 -> OK\nkeyspace changes:\n  counter: \"0\" → \"1\"\nclient 1 success: (integer) 1\nclient 2 success: (integer) 1\nLOST UPDATE: no serial order ends so\n"
    );
    // A schedule the clients cannot follow says where.
    let out = evalbench(&[
        "race",
        "counter",
        "--strategy",
        "plain",
        "--schedule",
        "1 1 1",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "evalbench: --schedule \"1 1 1\": step 3: client 1 cannot go then (the clients that can: 2)\n"
    );
    let out = evalbench(&["race", "counter", "--schedule", "1 2"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("give exactly one --strategy"));
}

/// A lab written from docs/tools.md alone, in a folder of its own: client 1 reads a note and
/// writes it back with a mark; client 2 replaces the note. When client 2 writes between client
/// 1's read and its write-back, client 1 writes from a stale read and client 2's note is lost.
const STALE_WRITE_BACK: &str = r#"
name = "stale write-back"
clients = 2
keys = ["note"]
logic = '''
if ARGV[1] == 'writer' then
  redis.call('SET', KEYS[1], 'new')
  return 'wrote'
end
local v = redis.call('GET', KEYS[1])
redis.call('SET', KEYS[1], v .. '+mark')
return v
'''
seed = { note = "old" }
invariants = ["redis.call('GET', 'note') ~= 'old+mark'"]

[[client]]
argv = ["reader"]

[[client]]
argv = ["writer"]
"#;

#[test]
fn a_write_back_from_a_stale_read_is_a_lost_update_and_watch_retries_it() {
    let plain = report_of(STALE_WRITE_BACK, Strategy::Plain);
    // Reader then writer, writer then reader, and the writer between the reader's two calls.
    assert_eq!(plain.schedules, 3);
    let verdicts: Vec<(String, race::Verdict, usize)> = plain
        .outcomes
        .iter()
        .map(|o| (o.keyspace.to_string(), o.verdict, o.schedules))
        .collect();
    assert!(
        verdicts.contains(&(
            json!({"note": "old+mark"}).to_string(),
            race::Verdict::LostUpdate,
            1
        )),
        "{verdicts:?}"
    );
    assert_eq!(
        verdicts
            .iter()
            .filter(|(_, v, _)| *v == race::Verdict::Success)
            .count(),
        2,
        "{verdicts:?}"
    );
    let lost = plain
        .outcomes
        .iter()
        .find(|o| o.verdict == race::Verdict::LostUpdate)
        .unwrap();
    assert_eq!(lost.schedule, [1, 2, 1]);
    assert_eq!(lost.broken_invariants.len(), 1);
    // WATCH sees the note change under the reader and makes it read again: never lost.
    let watch = report_of(STALE_WRITE_BACK, Strategy::Watch);
    assert_eq!(watch.lost_updates, 0);
    assert!(watch.retries >= 1, "{watch:?}");
    assert!(watch
        .outcomes
        .iter()
        .all(|o| matches!(o.verdict, race::Verdict::Success | race::Verdict::Retried)));
    // The CLI, on the lab file in a folder outside the repository, and its replay.
    let dir = tempfile::TempDir::new().unwrap();
    let file = dir.path().join("stale.toml");
    std::fs::write(&file, STALE_WRITE_BACK).unwrap();
    let path = file.to_str().unwrap();
    let out = evalbench(&["race", path, "--strategy", "plain"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("  outcome 2: 1 schedule: note: \"old\" → \"old+mark\"; LOST UPDATE: no serial order ends so\n    client 1 success: \"old\"\n    client 2 success: \"wrote\"\n    BROKEN: redis.call('GET', 'note') ~= 'old+mark' (false)\n"),
        "{text}"
    );
    let out = evalbench(&["race", path, "--strategy", "plain", "--schedule", "1 2 1"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("race lab: stale write-back; plain: clients in order 1 2 1\n   1. client 1: GET note -> \"old\"\n   2. client 2: SET note new -> OK\n   3. client 1: SET note old+mark -> OK\nkeyspace changes:\n  note: \"old\" → \"old+mark\"\nclient 1 success: \"old\"\nclient 2 success: \"wrote\"\nLOST UPDATE: no serial order ends so\nBROKEN: redis.call('GET', 'note') ~= 'old+mark' (false)\n")
    );
}
