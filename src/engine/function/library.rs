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

/// Parse the shebang; `Err` is Redis's message (without `ERR `).
pub fn parse_metadata(code: &[u8]) -> Result<Metadata, String> {
    if !code.starts_with(b"#!") {
        return Err("Missing library metadata".into());
    }
    let Some(end) = code.iter().position(|&b| b == b'\n') else {
        return Err("Invalid library metadata".into());
    };
    let line = String::from_utf8_lossy(&code[..end]);
    let parts = crate::engine::script::split_args(&line)
        .filter(|p| !p.is_empty())
        .ok_or_else(|| "Invalid library metadata".to_string())?;
    let engine = parts[0].get(2..).unwrap_or_default().to_string();
    let mut name = None;
    for part in &parts[1..] {
        if part.len() >= 5 && part[..5].eq_ignore_ascii_case("name=") {
            if name.is_some() {
                return Err(
                    "Invalid metadata value, name argument was given multiple times".into(),
                );
            }
            name = Some(part[5..].to_string());
            continue;
        }
        return Err(format!("Invalid metadata value given: {part}"));
    }
    let name = name.ok_or_else(|| "Library name was not given".to_string())?;
    Ok(Metadata {
        engine,
        name,
        code_start: end,
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
