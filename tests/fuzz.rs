//! Crash and hang fuzzing, each target a libFuzzer-shaped `fn(&[u8])` in `fuzz/targets.rs`
//! driven here for a bounded time with a seeded RNG (`fuzz/driver.rs`): Lua source and bytecode
//! through `load`/`loadstring`, the cjson / cmsgpack / struct decoders, the keyspace JSON loader,
//! RESP parsing and the traced run's envelope, random command sequences on the sandbox, and
//! scripts nested to any depth through the lint, the debugger and the sandbox.
//!
//! `EVALBENCH_FUZZ_SECONDS=N` per target (default 3), `EVALBENCH_FUZZ_SEED=N` to replay a run,
//! `EVALBENCH_FUZZ_VERBOSE=1` to print each input before it runs (to find one that kills the process).
//! Longer: `EVALBENCH_FUZZ_SECONDS=600 cargo test --release --test fuzz -- --nocapture --test-threads 2`.

mod common;
#[path = "fuzz/driver.rs"]
mod driver;
#[path = "fuzz/gen.rs"]
mod gen;
#[path = "fuzz/regressions.rs"]
mod regressions;
#[path = "fuzz/targets.rs"]
mod targets;

use driver::{fuzz, Target};

fn case_seeds() -> Vec<common::Case> {
    common::all_cases()
}

fn samples(ext: &str) -> Vec<Vec<u8>> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("samples")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| std::fs::read(p).expect("sample"))
        .collect()
}

fn go(
    name: &str,
    seeds: Vec<Vec<u8>>,
    dictionary: &[&[u8]],
    mut generate: impl FnMut(&mut rand::rngs::StdRng) -> Vec<u8>,
    run: fn(&[u8]),
) {
    let mut run = run;
    fuzz(
        Target {
            name,
            seeds,
            dictionary,
            generate: &mut generate,
            run: &mut run,
        },
        driver::seed(),
        driver::budget(),
    );
}

#[test]
fn fuzz_lua_source() {
    let mut seeds: Vec<Vec<u8>> = case_seeds()
        .into_iter()
        .map(|c| c.script.into_bytes())
        .collect();
    seeds.extend(samples("lua"));
    go(
        "lua_source",
        seeds,
        targets::LUA_DICTIONARY,
        targets::gen_lua,
        targets::lua_source,
    );
}

#[test]
fn fuzz_bytecode() {
    go(
        "bytecode",
        targets::bytecode_seeds(),
        &[
            b"\x1bLua",
            b"\x51",
            b"\x00",
            b"\xff\xff\xff\xff",
            b"\x04\x08",
        ],
        targets::gen_bytecode,
        targets::bytecode,
    );
}

#[test]
fn fuzz_cjson_decode() {
    let seeds = vec![
        b"{\"a\":[1,2,{\"b\":null}],\"c\":\"\\u00e9\"}".to_vec(),
        b"[1e308, -0, 0.1, 123456789012345678]".to_vec(),
        b"\"\\ud83d\\ude00\"".to_vec(),
    ];
    go(
        "cjson_decode",
        seeds,
        targets::JSON_DICTIONARY,
        targets::gen_json,
        targets::cjson_decode,
    );
}

#[test]
fn fuzz_cmsgpack_unpack() {
    go(
        "cmsgpack_unpack",
        vec![b"\x08\x08\x93\x01\xa1x\x81\xa1y\x02".to_vec()],
        targets::MSGPACK_DICTIONARY,
        targets::gen_msgpack,
        targets::cmsgpack_unpack,
    );
}

#[test]
fn fuzz_struct_formats() {
    go(
        "struct_formats",
        vec![b"\x05>i4c2\x00\x00\x00\x07ab".to_vec()],
        targets::STRUCT_DICTIONARY,
        targets::gen_struct,
        targets::struct_formats,
    );
}

#[test]
fn fuzz_keyspace_json() {
    let mut seeds: Vec<Vec<u8>> = case_seeds()
        .into_iter()
        .filter(|c| c.seed.as_object().is_some_and(|m| !m.is_empty()))
        .map(|c| c.seed.to_string().into_bytes())
        .collect();
    seeds.dedup();
    go(
        "keyspace_json",
        seeds,
        targets::KEYSPACE_DICTIONARY,
        targets::gen_keyspace,
        targets::keyspace_json,
    );
}

#[test]
fn fuzz_resp() {
    let seeds = targets::RESP_DICTIONARY
        .iter()
        .map(|s| s.to_vec())
        .collect();
    go(
        "resp",
        seeds,
        targets::RESP_DICTIONARY,
        targets::gen_resp,
        targets::resp,
    );
}

#[test]
fn fuzz_envelope() {
    go(
        "envelope",
        Vec::new(),
        targets::RESP_DICTIONARY,
        targets::gen_envelope,
        targets::envelope,
    );
}

#[test]
fn fuzz_commands() {
    go(
        "commands",
        Vec::new(),
        &[],
        targets::gen_commands,
        targets::commands,
    );
}

#[test]
fn fuzz_glob() {
    let seeds = vec![
        b"\x0e*a*a*a*a*a*abaaaaaaaaaaaaaaaa".to_vec(),
        b"\x05[a-\xff]\xff".to_vec(),
        b"\x83H[A]h".to_vec(),
        b"\x03[^\\]".to_vec(),
        b"\x02**".to_vec(),
    ];
    go(
        "glob",
        seeds,
        targets::GLOB_DICTIONARY,
        targets::gen_glob,
        targets::glob,
    );
}

#[test]
fn fuzz_expression_depth() {
    let seeds = vec![
        format!("local a=1 return a{}", "+a".repeat(3000)).into_bytes(),
        format!("return {}1{}", "(".repeat(250), ")".repeat(250)).into_bytes(),
        format!("local a='x' return a{}", "..a".repeat(199)).into_bytes(),
    ];
    go(
        "expression_depth",
        seeds,
        targets::DEPTH_DICTIONARY,
        targets::gen_depth,
        targets::expression_depth,
    );
}
