//! What Redis does with a script body before running it: its SHA1 and the `#!lua flags=...` shebang.

use sha1::{Digest, Sha1};

/// Lowercase hex SHA1 of the exact bytes (what EVALSHA and error suffixes use).
pub fn sha1_hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digest = Sha1::digest(bytes);
    let mut out = String::with_capacity(40);
    for b in digest {
        out.push(HEX[(b >> 4) as usize] as char);
        out.push(HEX[(b & 15) as usize] as char);
    }
    out
}

/// Flags a script can declare in its shebang.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct ScriptFlags {
    /// A shebang was present (no "compat mode").
    pub shebang: bool,
    pub no_writes: bool,
    pub allow_oom: bool,
    pub allow_stale: bool,
    pub no_cluster: bool,
    pub allow_cross_slot_keys: bool,
}

/// Parse the shebang as Redis 7.0's `evalExtractShebangFlags` does; `Err` is the full error text.
/// Returns the flags and the number of bytes of the shebang line (without its newline).
pub fn parse_shebang(body: &[u8]) -> Result<(ScriptFlags, usize), String> {
    parse_shebang_in(super::profile::DEFAULT, body)
}

/// `parse_shebang` as the profile's server reads the line (`ShebangRules`): how it splits the
/// words, and whether it looks the engine up (Valkey) or wants `#!lua` exactly (Redis).
pub fn parse_shebang_in(
    profile: &super::profile::Profile,
    body: &[u8],
) -> Result<(ScriptFlags, usize), String> {
    let mut flags = ScriptFlags::default();
    if !body.starts_with(b"#!") {
        return Ok((flags, 0));
    }
    let rules = profile.shebang;
    let line = first_line(body).ok_or_else(|| "ERR Invalid script shebang".to_string())?;
    let parts = split_words(line, rules.words)
        .filter(|parts| !parts.is_empty())
        .ok_or_else(|| "ERR Invalid engine in script shebang".to_string())?;
    if !rules.engine_lookup && c_str(&parts[0]) != b"#!lua" {
        return Err(format!(
            "ERR Unexpected engine in script shebang: {}",
            lossy(&parts[0])
        ));
    }
    flags.shebang = true;
    for part in &parts[1..] {
        let Some(list) = part.strip_prefix(b"flags=") else {
            return Err(format!("ERR Unknown lua shebang option: {}", lossy(part)));
        };
        if list.is_empty() {
            continue;
        }
        for flag in list.split(|&b| b == b',') {
            match c_str(flag) {
                b"no-writes" => flags.no_writes = true,
                b"allow-oom" => flags.allow_oom = true,
                b"allow-stale" => flags.allow_stale = true,
                b"no-cluster" => flags.no_cluster = true,
                b"allow-cross-slot-keys" => flags.allow_cross_slot_keys = true,
                other => {
                    return Err(format!(
                        "ERR Unexpected flag in script shebang: {}",
                        lossy(other)
                    ))
                }
            }
        }
    }
    // Valkey looks the engine up only once the options were read.
    let engine = parts[0].get(2..).unwrap_or_default();
    if rules.engine_lookup && !c_str(engine).eq_ignore_ascii_case(b"lua") {
        return Err(format!(
            "ERR Could not find scripting engine '{}'",
            lossy(engine)
        ));
    }
    Ok((flags, line.len()))
}

/// The bytes before the first newline, as the server's `strchr(body, '\n')` finds them: `None`
/// when there is no newline, or a NUL comes first (the C string ends there).
pub fn first_line(body: &[u8]) -> Option<&[u8]> {
    let end = body.iter().position(|&b| b == b'\n' || b == 0)?;
    (body[end] == b'\n').then(|| &body[..end])
}

/// A word as the C string the server compares or prints: up to its first NUL (a `"\x00"` escape).
fn c_str(word: &[u8]) -> &[u8] {
    word.split(|&b| b == 0).next().unwrap_or_default()
}

fn lossy(word: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(c_str(word))
}

/// `sdssplitargs` on the bytes of a line, with the profile's `WordSplit`; `None` on unbalanced
/// quotes. Blanks before a word are C's `isspace`, but only space, tab, CR and LF end an unquoted
/// word (`a\vb` is one word); double quotes take `\xHH`, `\n`, `\r`, `\t`, `\b`, `\a` and `\<c>`,
/// single quotes only `\'`.
pub fn split_words(line: &[u8], rules: &super::profile::WordSplit) -> Option<Vec<Vec<u8>>> {
    let is_space = |b: u8| matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r');
    let at = |i: usize| line.get(i).copied();
    let mut words = Vec::new();
    let mut i = 0;
    loop {
        while at(i).is_some_and(is_space) {
            i += 1;
        }
        if i >= line.len() {
            return Some(words);
        }
        let mut word = Vec::new();
        let push = |word: &mut Vec<u8>, b: u8| {
            if !(rules.drops_byte_ff && b == 0xff) {
                word.push(b);
            }
        };
        let mut quote = None;
        loop {
            match (quote, at(i)) {
                (Some(_), None) => return None,
                (None, None) => break,
                (None, Some(b' ' | b'\t' | b'\n' | b'\r')) => {
                    i += 1;
                    break;
                }
                (None, Some(q @ (b'"' | b'\''))) => {
                    quote = Some(q);
                    i += 1;
                }
                (Some(q), Some(c)) if c == q => {
                    i += 1;
                    if !rules.closing_quote_ends_word {
                        quote = None;
                        continue;
                    }
                    if at(i).is_some_and(|n| !is_space(n)) {
                        return None;
                    }
                    break;
                }
                (Some(b'"'), Some(b'\\'))
                    if at(i + 1) == Some(b'x') && hex_pair(at(i + 2), at(i + 3)).is_some() =>
                {
                    word.push(hex_pair(at(i + 2), at(i + 3)).unwrap_or_default());
                    i += 4;
                }
                (Some(b'"'), Some(b'\\')) if at(i + 1).is_some() => {
                    let c = at(i + 1).unwrap_or_default();
                    let escaped = match c {
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'b' => 0x08,
                        b'a' => 0x07,
                        other => other,
                    };
                    push(&mut word, escaped);
                    i += 2;
                }
                (Some(b'\''), Some(b'\\')) if at(i + 1) == Some(b'\'') => {
                    word.push(b'\'');
                    i += 2;
                }
                (_, Some(c)) => {
                    push(&mut word, c);
                    i += 1;
                }
            }
        }
        words.push(word);
    }
}

/// The byte `\xHH` stands for, when both are hex digits.
fn hex_pair(high: Option<u8>, low: Option<u8>) -> Option<u8> {
    let digit = |d: Option<u8>| (d? as char).to_digit(16);
    Some((digit(high)? * 16 + digit(low)?) as u8)
}

/// `sdssplitargs`: split on spaces with double/single quotes; None on unbalanced quotes.
pub fn split_args(line: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.peek().is_none() {
            return Some(out);
        }
        let mut current = String::new();
        let mut quote: Option<char> = None;
        loop {
            match (quote, chars.next()) {
                (None, None) => break,
                (Some(_), None) => return None,
                (None, Some(c)) if c.is_whitespace() => break,
                (None, Some(c @ ('"' | '\''))) => quote = Some(c),
                (None, Some(c)) => current.push(c),
                (Some(q), Some(c)) if c == q => {
                    // A closing quote must be followed by a space or the end.
                    if chars.peek().is_some_and(|n| !n.is_whitespace()) {
                        return None;
                    }
                    break;
                }
                (Some('"'), Some('\\')) => match chars.next() {
                    Some('n') => current.push('\n'),
                    Some('r') => current.push('\r'),
                    Some('t') => current.push('\t'),
                    Some(c) => current.push(c),
                    None => return None,
                },
                (Some(_), Some(c)) => current.push(c),
            }
        }
        out.push(current);
    }
}

/// The error reply Redis (`luaCallFunction`) builds from a raised error table: the `err` text (a C
/// string: it ends at the first NUL), then ` script: <sha>, on <source>:<line>.` when both are known,
/// with CR and LF turned into spaces.
pub fn raised_error_text(
    sha: &str,
    err: &[u8],
    source: Option<&[u8]>,
    line: Option<&[u8]>,
) -> String {
    raised_error_text_in(super::profile::DEFAULT, sha, err, source, line)
}

/// `raised_error_text` as a profile's server writes it (Valkey 9 leaves the SHA out:
/// ` script: on @user_script:1.`).
pub fn raised_error_text_in(
    profile: &super::profile::Profile,
    sha: &str,
    err: &[u8],
    source: Option<&[u8]>,
    line: Option<&[u8]>,
) -> String {
    let sha = if profile.sha_in_error_suffix {
        format!("{sha}, ")
    } else {
        String::new()
    };
    let mut text =
        String::from_utf8_lossy(err.split(|&b| b == 0).next().unwrap_or_default()).into_owned();
    if let (Some(source), Some(line)) = (source, line) {
        text.push_str(&format!(
            " script: {sha}on {}:{}.",
            String::from_utf8_lossy(source),
            String::from_utf8_lossy(line)
        ));
    }
    text.replace(['\r', '\n'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checked against Valkey 8.1.1 and 9.1.2 (bytes a case file cannot hold: NUL, 0xff).
    #[test]
    fn valkey_shebangs() {
        let v8 = crate::engine::profile::Profile::by_id("valkey-8.1").unwrap();
        let v9 = crate::engine::profile::Profile::by_id("valkey-9.1").unwrap();
        let err = |p, body: &[u8]| parse_shebang_in(p, body).unwrap_err();
        for p in [v8, v9] {
            assert!(parse_shebang_in(p, b"#!LUA\nreturn 1").is_ok());
            assert!(parse_shebang_in(p, b"#!lua\xff\nreturn 1").is_ok());
            assert!(parse_shebang_in(p, b"#!\"lu\xffa\"\nreturn 1").is_ok());
            assert_eq!(
                err(p, b"#!lu\xfea\n"),
                "ERR Could not find scripting engine 'lu\u{fffd}a'"
            );
            assert_eq!(err(p, b"#!lua \xff\n"), "ERR Unknown lua shebang option: ");
            assert_eq!(
                err(p, b"#!python\n"),
                "ERR Could not find scripting engine 'python'"
            );
            assert_eq!(err(p, b"#! lua\n"), "ERR Unknown lua shebang option: lua");
            assert_eq!(err(p, b"#!lua\0x\nreturn 1"), "ERR Invalid script shebang");
        }
        assert_eq!(
            err(v8, b"#!\"lu\"a\n"),
            "ERR Invalid engine in script shebang"
        );
        assert!(parse_shebang_in(v9, b"#!\"lu\"a\nreturn 1").is_ok());
        // Redis keeps 0xff and stops at a NUL before the newline too.
        assert_eq!(
            parse_shebang(b"#!lua\xff\n").unwrap_err(),
            "ERR Unexpected engine in script shebang: #!lua\u{fffd}"
        );
        assert_eq!(
            parse_shebang(b"#!lua\0\nreturn 1").unwrap_err(),
            "ERR Invalid script shebang"
        );
    }

    #[test]
    fn shebangs() {
        assert_eq!(parse_shebang(b"return 1").unwrap().1, 0);
        let (f, len) = parse_shebang(b"#!lua flags=no-writes,allow-oom\nreturn 1").unwrap();
        assert!(f.no_writes && f.allow_oom && f.shebang);
        assert_eq!(len, 31);
        assert_eq!(
            parse_shebang(b"#!lua flags=bogus\nreturn 1").unwrap_err(),
            "ERR Unexpected flag in script shebang: bogus"
        );
        assert_eq!(
            parse_shebang(b"#!lua name=mylib\n").unwrap_err(),
            "ERR Unknown lua shebang option: name=mylib"
        );
        assert_eq!(
            parse_shebang(b"#!python\n").unwrap_err(),
            "ERR Unexpected engine in script shebang: #!python"
        );
        assert_eq!(
            parse_shebang(b"#! lua\n").unwrap_err(),
            "ERR Unexpected engine in script shebang: #!"
        );
        assert_eq!(
            parse_shebang(b"#!lua").unwrap_err(),
            "ERR Invalid script shebang"
        );
        assert!(parse_shebang(b"#!lua flags=\nreturn 1").is_ok());
    }

    #[test]
    fn sha1() {
        assert_eq!(
            sha1_hex(b"return 1"),
            "e0e1f9fabfc9d4800c877a703b823ac0578ff8db"
        );
    }
}
