//! A library's first line, `#!<engine> name=<name>` (`functionExtractLibMetaData`).

/// What the shebang line of a library says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metadata {
    /// The engine as written (`lua`, matched case-insensitively).
    pub engine: String,
    pub name: String,
    /// Where the code starts: at the newline ending the shebang, so line numbers stay the file's.
    pub code_start: usize,
}

/// Parse the shebang as Redis 7.0 does; `Err` is the server's message (without `ERR `).
pub fn parse_metadata(code: &[u8]) -> Result<Metadata, String> {
    parse_metadata_in(crate::engine::profile::DEFAULT, code)
}

/// `parse_metadata` with the profile's way of splitting the line into words.
pub fn parse_metadata_in(
    profile: &crate::engine::profile::Profile,
    code: &[u8],
) -> Result<Metadata, String> {
    if !code.starts_with(b"#!") {
        return Err("Missing library metadata".into());
    }
    let line = crate::engine::script::first_line(code)
        .ok_or_else(|| "Invalid library metadata".to_string())?;
    let parts = crate::engine::script::split_words(line, profile.shebang.words)
        .filter(|p| !p.is_empty())
        .ok_or_else(|| "Invalid library metadata".to_string())?;
    let text = |word: &[u8]| {
        let c_str = word.split(|&b| b == 0).next().unwrap_or_default();
        String::from_utf8_lossy(c_str).into_owned()
    };
    let engine = text(parts[0].get(2..).unwrap_or_default());
    let mut name = None;
    for part in &parts[1..] {
        if part.len() >= 5 && part[..5].eq_ignore_ascii_case(b"name=") {
            if name.is_some() {
                return Err(
                    "Invalid metadata value, name argument was given multiple times".into(),
                );
            }
            name = Some(text(&part[5..]));
            continue;
        }
        return Err(format!("Invalid metadata value given: {}", text(part)));
    }
    let name = name.ok_or_else(|| "Library name was not given".to_string())?;
    Ok(Metadata {
        engine,
        name,
        code_start: line.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata() {
        let m = parse_metadata(b"#!lua name=mylib\nreturn").unwrap();
        assert_eq!(
            (m.engine.as_str(), m.name.as_str(), m.code_start),
            ("lua", "mylib", 16)
        );
        assert_eq!(
            parse_metadata(b"return 1").unwrap_err(),
            "Missing library metadata"
        );
        assert_eq!(
            parse_metadata(b"#!lua name=x").unwrap_err(),
            "Invalid library metadata"
        );
        assert_eq!(
            parse_metadata(b"#!lua\n").unwrap_err(),
            "Library name was not given"
        );
        assert_eq!(
            parse_metadata(b"#!lua name=a foo=bar\n").unwrap_err(),
            "Invalid metadata value given: foo=bar"
        );
        assert_eq!(
            parse_metadata(b"#!lua name=a NAME=b\n").unwrap_err(),
            "Invalid metadata value, name argument was given multiple times"
        );
    }
}
