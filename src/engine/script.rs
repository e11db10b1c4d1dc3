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

/// Parse the shebang as `evalExtractShebangFlags` does; `Err` is the full error text.
/// Returns the flags and the number of bytes of the shebang line (without its newline).
pub fn parse_shebang(body: &[u8]) -> Result<(ScriptFlags, usize), String> {
    let mut flags = ScriptFlags::default();
    if !body.starts_with(b"#!") {
        return Ok((flags, 0));
    }
    let Some(end) = body.iter().position(|&b| b == b'\n') else {
        return Err("ERR Invalid script shebang".into());
    };
    let line = String::from_utf8_lossy(&body[..end]);
    let parts =
        split_args(&line).ok_or_else(|| "ERR Invalid engine in script shebang".to_string())?;
    if parts.is_empty() {
        return Err("ERR Invalid engine in script shebang".into());
    }
    if parts[0] != "#!lua" {
        return Err(format!(
            "ERR Unexpected engine in script shebang: {}",
            parts[0]
        ));
    }
    flags.shebang = true;
    for part in &parts[1..] {
        let Some(list) = part.strip_prefix("flags=") else {
            return Err(format!("ERR Unknown lua shebang option: {part}"));
        };
        if list.is_empty() {
            continue;
        }
        for flag in list.split(',') {
            match flag {
                "no-writes" => flags.no_writes = true,
                "allow-oom" => flags.allow_oom = true,
                "allow-stale" => flags.allow_stale = true,
                "no-cluster" => flags.no_cluster = true,
                "allow-cross-slot-keys" => flags.allow_cross_slot_keys = true,
                other => return Err(format!("ERR Unexpected flag in script shebang: {other}")),
            }
        }
    }
    Ok((flags, end))
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
