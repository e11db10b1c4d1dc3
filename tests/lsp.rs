//! `evalbench lsp` driven as an editor drives it: the built binary over stdio, Content-Length
//! framed JSON-RPC (initialize, didOpen, didChange, hover, completion, codeAction, shutdown,
//! exit), with the exact diagnostics, hovers, completions and edits asserted; malformed input,
//! unknown methods and a 10 MB document get errors and the server goes on.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;
use tempfile::TempDir;

/// A guard against a server that never answers (the test fails instead of hanging); no
/// assertion depends on it.
const NO_ANSWER: Duration = Duration::from_secs(120);

struct Client {
    child: Child,
    stdin: ChildStdin,
    messages: Receiver<Value>,
    /// Notifications read while waiting for a response.
    queued: Vec<Value>,
    next_id: i64,
    _config: TempDir,
}

fn read_frame(out: &mut impl BufRead) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if out.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(n) = line.strip_prefix("Content-Length: ") {
            length = n.parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length?];
    out.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

impl Client {
    fn start(args: &[&str]) -> Client {
        // The user's own config.toml is never read: an empty config directory.
        let config = TempDir::new().unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_evalbench"))
            .arg("lsp")
            .args(args)
            .env("EVALBENCH_CONFIG_DIR", config.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start evalbench lsp");
        let stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let (sender, messages) = channel();
        std::thread::spawn(move || {
            while let Some(message) = read_frame(&mut stdout) {
                if sender.send(message).is_err() {
                    return;
                }
            }
        });
        Client {
            child,
            stdin,
            messages,
            queued: Vec::new(),
            next_id: 0,
            _config: config,
        }
    }

    /// Started and initialized, as an editor does.
    fn initialized(args: &[&str]) -> Client {
        let mut client = Client::start(args);
        let init = client.request(
            "initialize",
            json!({ "processId": null, "rootUri": null, "capabilities": {} }),
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "evalbench");
        client.notify("initialized", json!({}));
        client
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).unwrap();
        self.stdin.flush().unwrap();
    }

    fn send(&mut self, message: Value) {
        let body = message.to_string();
        self.send_raw(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes());
    }

    fn next(&mut self) -> Value {
        self.messages
            .recv_timeout(NO_ANSWER)
            .expect("the server answers")
    }

    /// The response to a request (the whole message: `result` or `error`).
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        self.response(json!(id))
    }

    fn response(&mut self, id: Value) -> Value {
        loop {
            let message = self.next();
            if message.get("method").is_none() && message["id"] == id {
                return message;
            }
            self.queued.push(message);
        }
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }

    /// The next diagnostics published for a document.
    fn diagnostics(&mut self, uri: &str) -> Vec<String> {
        loop {
            let message = match self
                .queued
                .iter()
                .position(|m| m["method"] == "textDocument/publishDiagnostics")
            {
                Some(i) => self.queued.remove(i),
                None => self.next(),
            };
            if message["method"] == "textDocument/publishDiagnostics"
                && message["params"]["uri"] == uri
            {
                return message["params"]["diagnostics"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(diagnostic_line)
                    .collect();
            }
        }
    }

    fn open(&mut self, uri: &str, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": uri, "languageId": "lua", "version": 1, "text": text } }),
        );
    }

    fn at(&mut self, method: &str, uri: &str, line: u32, character: u32) -> Value {
        self.request(
            method,
            json!({ "textDocument": { "uri": uri }, "position": { "line": line, "character": character } }),
        )
    }

    /// shutdown then exit: the exit status.
    fn finish(mut self) -> i32 {
        assert_eq!(self.request("shutdown", Value::Null)["result"], Value::Null);
        self.notify("exit", Value::Null);
        self.child.wait().unwrap().code().unwrap_or(-1)
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `line:col-line:col severity code: message` (0-based, as LSP counts).
fn diagnostic_line(d: &Value) -> String {
    let r = &d["range"];
    format!(
        "{}:{}-{}:{} {} {}: {}",
        r["start"]["line"],
        r["start"]["character"],
        r["end"]["line"],
        r["end"]["character"],
        d["severity"],
        d["code"].as_str().unwrap_or("-"),
        d["message"].as_str().unwrap()
    )
}

fn uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    uri(&path)
}

const PROBLEMS: &str = "\
local v = redis.call('GET', KEYS[1])
local n = redis.call('HSET', KEYS[1], ARGV[1])
redis.call('SUBSCRIBE', 'news')
local d = redis.call('HGETDEL', KEYS[2], 'FIELDS', 1, 'f')
local w = redis.call('SET', 'foo', ARGV[1])
local o = redis.call('GET', KEYS[3])
count = 1
return {v, n, d, w, o}
";

#[test]
fn diagnostics_of_each_kind_with_the_sidecars_keys() {
    let dir = TempDir::new().unwrap();
    let script = write(dir.path(), "problems.lua", PROBLEMS);
    write(
        dir.path(),
        "problems.json",
        r#"{ "keys": ["{user}:1", "{user}:2"] }"#,
    );
    let mut client = Client::initialized(&[]);
    client.open(&script, PROBLEMS);
    assert_eq!(
        client.diagnostics(&script),
        [
            "1:10-1:20 1 wrong-arity: HSET takes at least 4 arguments counting its name, this call passes 3: the server answers ERR Wrong number of args calling Redis command from script",
            "2:0-2:10 2 command-not-in-profile: SUBSCRIBE is refused in scripts by redis-7.0, as by every profile: scripts cannot call it",
            "3:10-3:20 2 command-not-in-profile: HGETDEL is not a command of redis-7.0: scripts can call it on redis-8.0, valkey-9.1",
            "4:28-4:33 2 key-not-from-keys: SET uses the key \"foo\" written in the script, not passed in KEYS",
            "4:28-4:33 2 cross-slot: \"foo\" hashes to slot 12182 and \"{user}:1\" to slot 5474: a Redis Cluster answers CROSSSLOT; give them one {hash tag}",
            "5:28-5:32 2 undeclared-key: KEYS[3] is not declared: the sidecar passes 2 keys (\"{user}:1\", \"{user}:2\"), so KEYS[3] is nil",
            "6:0-6:5 1 global-variable: `count` is a global: Redis refuses it (Script attempted to create global variable 'count')",
        ]
    );
    // A compile error, at its place, as the server's Lua says it; then fixed as one types.
    client.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": script, "version": 2 }, "contentChanges": [{ "text": "local x = = 2\nreturn x" }] }),
    );
    assert_eq!(
        client.diagnostics(&script),
        ["0:10-0:11 1 syntax: unexpected symbol near '='"]
    );
    client.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": script, "version": 3 }, "contentChanges": [{ "text": "local x = 2\nreturn x" }] }),
    );
    assert_eq!(client.diagnostics(&script), Vec::<String>::new());
    client.notify(
        "textDocument/didClose",
        json!({ "textDocument": { "uri": script } }),
    );
    assert_eq!(client.diagnostics(&script), Vec::<String>::new());
    assert_eq!(client.finish(), 0);
}

#[test]
fn the_profile_comes_from_the_flag_or_the_projects_file() {
    let dir = TempDir::new().unwrap();
    let text = "local d = redis.call('HGETDEL', KEYS[1], 'FIELDS', 1, ARGV[1])\nreturn d\n";
    let nested = dir.path().join("scripts");
    std::fs::create_dir(&nested).unwrap();
    let script = write(&nested, "getdel.lua", text);
    let mut client = Client::initialized(&[]);
    client.open(&script, text);
    assert_eq!(
        client.diagnostics(&script),
        ["0:10-0:20 2 command-not-in-profile: HGETDEL is not a command of redis-7.0: scripts can call it on redis-8.0, valkey-9.1"]
    );
    drop(client);
    // The project's evalbench.toml, in a folder above the script.
    std::fs::write(
        dir.path().join("evalbench.toml"),
        "profile = \"redis-8.0\"\n",
    )
    .unwrap();
    let mut client = Client::initialized(&[]);
    client.open(&script, text);
    assert_eq!(client.diagnostics(&script), Vec::<String>::new());
    drop(client);
    // --profile wins over the file.
    let mut client = Client::initialized(&["--profile", "valkey-8.1"]);
    client.open(&script, text);
    assert_eq!(
        client.diagnostics(&script),
        ["0:10-0:20 2 command-not-in-profile: HGETDEL is not a command of valkey-8.1: scripts can call it on redis-8.0, valkey-9.1"]
    );
}

#[test]
fn hover_shows_a_command_and_a_library_function() {
    let dir = TempDir::new().unwrap();
    let text = "local n = redis.call('hset', KEYS[1], ARGV[1], ARGV[2])\nlocal t = cjson.decode(ARGV[3])\nlocal e = redis.call('OBJECT', 'ENCODING', KEYS[1])\nreturn {n, t, e}\n";
    let script = write(dir.path(), "hover.lua", text);
    let mut client = Client::initialized(&[]);
    client.open(&script, text);
    let hover = client.at("textDocument/hover", &script, 0, 23);
    assert_eq!(
        hover["result"]["contents"]["value"].as_str().unwrap(),
        "**HSET** · hash · since 2.0.0\n\nCreates or modifies the value of a field in a hash.\n```\nHSET key field value [field value ...]\n```\n\
         \n- Arity: at least 4 arguments, counting the name\n- Keys: argument 1\n- Flags: write, denyoom, fast\n\
         - Profiles: redis-7.0, redis-7.2, redis-7.4, redis-8.0, valkey-8.1, valkey-9.1\n\
         - In Lua: integer → number, bulk string → string, nil → false, array → table, status → `{ok = \"…\"}`; an error reply raises a Lua error (`redis.call`) or comes back as `{err = \"…\"}` (`redis.pcall`). After `redis.setresp(3)`: map → `{map = {…}}`, set → `{set = {…}}`, double → `{double = n}`, null → nil, booleans as such.\n"
    );
    assert_eq!(
        hover["result"]["range"],
        json!({ "start": { "line": 0, "character": 22 }, "end": { "line": 0, "character": 26 } })
    );
    let hover = client.at("textDocument/hover", &script, 1, 18);
    assert_eq!(
        hover["result"]["contents"]["value"].as_str().unwrap(),
        "```lua\ncjson.decode(text)\n```\nJSON text as a Lua value: objects and arrays become tables, `null` becomes `cjson.null` (a lightuserdata, not nil); invalid JSON raises an error."
    );
    // A container's subcommand.
    let hover = client.at("textDocument/hover", &script, 2, 34);
    let value = hover["result"]["contents"]["value"].as_str().unwrap();
    assert!(
        value.starts_with("**OBJECT ENCODING** · generic · since 2.2.3\n\nReturns the internal encoding of a Redis object.\n```\nOBJECT ENCODING key\n```\n"),
        "{value}"
    );
    // Nothing to say on a plain variable.
    assert_eq!(
        client.at("textDocument/hover", &script, 3, 9)["result"],
        Value::Null
    );
}

fn labels(completion: &Value) -> Vec<String> {
    completion["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["label"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn completion_of_commands_subcommands_functions_and_keys() {
    let dir = TempDir::new().unwrap();
    let text = "local a = redis.call('hs\nlocal b = redis.call('OBJECT', '\nlocal c = redis.sha\nlocal d = redis.call('GET', KEYS[\n";
    let script = write(dir.path(), "complete.lua", text);
    write(
        dir.path(),
        "complete.json",
        r#"{ "keys": ["user:1", "user:2"], "argv": ["10"] }"#,
    );
    let mut client = Client::initialized(&[]);
    client.open(&script, text);
    let commands = client.at("textDocument/completion", &script, 0, 24);
    assert_eq!(labels(&commands), ["hscan", "hset", "hsetnx", "hstrlen"]);
    assert_eq!(
        commands["result"][1]["textEdit"],
        json!({ "range": { "start": { "line": 0, "character": 22 }, "end": { "line": 0, "character": 24 } }, "newText": "hset" })
    );
    assert_eq!(
        commands["result"][1]["detail"],
        "Creates or modifies the value of a field in a hash."
    );
    let subs = client.at("textDocument/completion", &script, 1, 32);
    assert_eq!(
        labels(&subs),
        ["ENCODING", "FREQ", "HELP", "IDLETIME", "REFCOUNT"]
    );
    let members = client.at("textDocument/completion", &script, 2, 19);
    assert_eq!(labels(&members), ["sha1hex"]);
    assert_eq!(members["result"][0]["detail"], "redis.sha1hex(text)");
    let keys = client.at("textDocument/completion", &script, 3, 33);
    assert_eq!(labels(&keys), ["1", "2"]);
    assert_eq!(
        keys["result"][1]["detail"],
        "KEYS[2] = \"user:2\" (the sidecar's)"
    );
}

#[test]
fn code_actions_wrap_in_pcall_and_declare_a_key() {
    let dir = TempDir::new().unwrap();
    let text =
        "local v = redis.call('GET', KEYS[1])\nredis.call('SET', 'audit:log', v)\nreturn v\n";
    let script = write(dir.path(), "act.lua", text);
    let sidecar = write(
        dir.path(),
        "act.json",
        "{\n  \"keys\": [\"user:1\"],\n  \"argv\": []\n}\n",
    );
    let mut client = Client::initialized(&[]);
    client.open(&script, text);
    let range = |line: u32| json!({ "start": { "line": line, "character": 0 }, "end": { "line": line, "character": 0 } });
    let actions = client.request(
        "textDocument/codeAction",
        json!({ "textDocument": { "uri": script }, "range": range(0), "context": { "diagnostics": [] } }),
    );
    assert_eq!(
        actions["result"][0]["title"],
        "Call with redis.pcall and check its error"
    );
    assert_eq!(
        actions["result"][0]["edit"]["changes"][&script],
        json!([
            { "range": { "start": { "line": 0, "character": 10 }, "end": { "line": 0, "character": 20 } }, "newText": "redis.pcall" },
            { "range": { "start": { "line": 0, "character": 36 }, "end": { "line": 0, "character": 36 } },
              "newText": "\nif type(v) == 'table' and v.err then\n  return v -- the command's error, as the script's error reply\nend" }
        ])
    );
    let actions = client.request(
        "textDocument/codeAction",
        json!({ "textDocument": { "uri": script }, "range": range(1), "context": { "diagnostics": [] } }),
    );
    let titles: Vec<&str> = actions["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["title"].as_str().unwrap())
        .collect();
    assert_eq!(
        titles,
        [
            "Call with redis.pcall and check its error",
            "Declare \"audit:log\" in KEYS (KEYS[2])"
        ]
    );
    let declare = &actions["result"][1];
    assert_eq!(declare["kind"], "quickfix");
    assert_eq!(
        declare["edit"]["changes"][&script],
        json!([{ "range": { "start": { "line": 1, "character": 18 }, "end": { "line": 1, "character": 29 } }, "newText": "KEYS[2]" }])
    );
    assert_eq!(
        declare["edit"]["changes"][&sidecar],
        json!([{ "range": { "start": { "line": 0, "character": 0 }, "end": { "line": 4, "character": 0 } },
                 "newText": "{\n  \"keys\": [\n    \"user:1\",\n    \"audit:log\"\n  ],\n  \"argv\": []\n}\n" }])
    );
}

#[test]
fn malformed_input_unknown_methods_and_huge_documents_get_errors() {
    let dir = TempDir::new().unwrap();
    let mut client = Client::start(&[]);
    // Before initialize.
    let early = client.request("textDocument/hover", json!({}));
    assert_eq!(early["error"]["code"], -32002);
    client.request("initialize", json!({ "capabilities": {} }));
    // Not JSON, and a header without a length: answered with id null, and the server goes on.
    client.send_raw(b"Content-Length: 9\r\n\r\n{not json");
    let error = client.response(Value::Null);
    assert_eq!(
        error["error"],
        json!({ "code": -32700, "message": "the message is not JSON: key must be a string at line 1 column 2" })
    );
    client.send_raw(b"Content-Type: text/plain\r\n\r\n");
    let error = client.response(Value::Null);
    assert_eq!(error["error"]["code"], -32700);
    let unknown = client.request("workspace/symbol", json!({ "query": "x" }));
    assert_eq!(
        unknown["error"],
        json!({ "code": -32601, "message": "evalbench lsp does not answer workspace/symbol" })
    );
    let bad = client.request("textDocument/hover", json!({ "textDocument": 3 }));
    assert_eq!(bad["error"]["code"], -32602);
    // A 10 MB document: a finding saying why it is not checked, and errors for requests on it.
    let huge = "local x = 1\n".repeat(900_000); // 10.8 MB
    let script = uri(&dir.path().join("huge.lua"));
    client.open(&script, &huge);
    assert_eq!(
        client.diagnostics(&script),
        ["0:0-0:0 2 -: the document is 10.3 MiB: evalbench lsp checks scripts up to 4 MiB (a script goes to the server whole in every EVAL)"]
    );
    let hover = client.at("textDocument/hover", &script, 0, 6);
    assert_eq!(hover["error"]["code"], -32803);
    // Still serving.
    let small = uri(&dir.path().join("small.lua"));
    client.open(&small, "return redis.call('GET', KEYS[1])\n");
    assert_eq!(
        client.diagnostics(&small),
        ["0:7-0:17 2 one-command: the whole script is one GET call"]
    );
    // exit without shutdown: status 1, as LSP says.
    client.notify("exit", Value::Null);
    assert_eq!(client.child.wait().unwrap().code(), Some(1));
}

const LIBRARY: &str = "\
#!lua name=stock
local function take(keys, args)
  return redis.call('DECRBY', keys[1], args[1])
end
redis.register_function{function_name='take', callback=take, flags={'no-writes'}}
redis.register_function('peek', function(keys) return redis.call('GET', keys[1]) end)
redis.register_function{function_name='count', callback=function(keys) return redis.call('LLEN', keys[1]) end, flags={'no-writes', 'allow-stale'}}
local probe = redis.call('FCALL_RO', 'c')
local again = redis.call('FCALL', 'p')
";

/// A function library: its findings (read, never run), hover on a registered function (its
/// flags), and its function names completed in FCALL / FCALL_RO.
#[test]
fn a_function_library_is_linted_hovered_and_completed() {
    let dir = TempDir::new().unwrap();
    let script = write(dir.path(), "stock.lua", LIBRARY);
    let mut client = Client::initialized(&[]);
    client.open(&script, LIBRARY);
    assert_eq!(
        client.diagnostics(&script),
        [
            "2:9-2:19 1 write-in-no-writes: DECRBY writes, in `take` flagged no-writes: FCALL answers 'Write commands are not allowed from read-only scripts'",
            "7:14-7:24 1 wrong-arity: FCALL_RO takes at least 3 arguments counting its name, this call passes 2: the server answers ERR Wrong number of args calling Redis command from script",
            "7:14-7:24 1 load-time: redis.call at load time: FUNCTION LOAD fails with 'Script attempted to access nonexistent global variable 'call''; call commands inside a registered function",
            "8:14-8:24 1 wrong-arity: FCALL takes at least 3 arguments counting its name, this call passes 2: the server answers ERR Wrong number of args calling Redis command from script",
            "8:14-8:24 1 load-time: redis.call at load time: FUNCTION LOAD fails with 'Script attempted to access nonexistent global variable 'call''; call commands inside a registered function",
        ]
    );
    // Hover where a function is registered, and where FCALL names it.
    let hover = client.at("textDocument/hover", &script, 6, 41);
    assert_eq!(
        hover["result"]["contents"]["value"].as_str().unwrap(),
        "**count** · function of library `stock` · registered on line 7\n\n- Flags: no-writes, allow-stale\n- Callable with FCALL_RO (and on a read-only replica); its writes are refused\n- Called as `FCALL count numkeys key... arg...`: `function(keys, args)`"
    );
    assert_eq!(
        hover["result"]["range"],
        json!({ "start": { "line": 6, "character": 39 }, "end": { "line": 6, "character": 44 } })
    );
    let hover = client.at("textDocument/hover", &script, 5, 26);
    assert_eq!(
        hover["result"]["contents"]["value"].as_str().unwrap(),
        "**peek** · function of library `stock` · registered on line 6\n\n- Flags: none (FCALL only: FCALL_RO refuses a function that may write)\n- Called as `FCALL peek numkeys key... arg...`: `function(keys, args)`"
    );
    // FCALL_RO offers the no-writes functions, FCALL every one; as typed.
    let ro = client.at("textDocument/completion", &script, 7, 39);
    assert_eq!(labels(&ro), ["count"]);
    assert_eq!(
        ro["result"][0]["textEdit"],
        json!({ "range": { "start": { "line": 7, "character": 38 }, "end": { "line": 7, "character": 39 } }, "newText": "count" })
    );
    assert_eq!(
        ro["result"][0]["detail"],
        "function of this library · no-writes, allow-stale"
    );
    let all = client.at("textDocument/completion", &script, 8, 36);
    assert_eq!(labels(&all), ["peek"]);
    let all = client.at("textDocument/completion", &script, 8, 35);
    assert_eq!(labels(&all), ["take", "peek", "count"]);
}
