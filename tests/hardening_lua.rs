//! A script cannot escape the sandbox or outrun the busy threshold: bytecode is refused on every
//! path that loads a chunk, and the threshold stops scripts whose time is spent inside one long C
//! function (allocations, string.rep, table.concat, cjson, ...).

use evalbench::engine::report::Outcome;
use evalbench::engine::{Reply, RunRequest, RunReport, Sandbox};

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
    let dump = run(
        &mut sandbox,
        "return string.dump(loadstring('return 42'))",
    )
    .reply;
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
