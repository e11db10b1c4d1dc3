//! LSP's base protocol on a byte stream: `Content-Length: N` headers, a blank line, N bytes of
//! JSON-RPC. lsp-server's own stdio reader ends the connection on the first malformed message and
//! allocates whatever length a header claims; this one answers a malformed message with a
//! JSON-RPC error, skips what it cannot read, and bounds what it holds.

use lsp_server::{ErrorCode, Message};
use std::io::{self, BufRead, Read, Write};

/// The largest message read: a document of 10 MB with JSON's escapes fits; larger is skipped.
pub const MAX_MESSAGE: usize = 64 << 20;
/// A header line longer than this is no header.
const MAX_HEADER_LINE: u64 = 8 << 10;

/// What one read gives.
#[derive(Debug)]
pub enum Incoming {
    Message(Message),
    /// A message that could not be read: the error to answer (its id when one could be read).
    Malformed {
        id: Option<lsp_server::RequestId>,
        code: ErrorCode,
        message: String,
    },
    /// The input ended.
    End,
}

/// Read the next message.
pub fn read(input: &mut impl BufRead) -> io::Result<Incoming> {
    let mut length: Option<Result<usize, String>> = None;
    let mut line = Vec::new();
    let mut seen_header = false;
    loop {
        line.clear();
        let n = input
            .by_ref()
            .take(MAX_HEADER_LINE)
            .read_until(b'\n', &mut line)?;
        if n == 0 {
            return Ok(if seen_header {
                malformed(
                    ErrorCode::ParseError,
                    "the input ended inside a message's headers",
                )
            } else {
                Incoming::End
            });
        }
        if !line.ends_with(b"\n") {
            // A line without an end within the bound: skip the rest of it.
            skip_line(input)?;
            return Ok(malformed(
                ErrorCode::ParseError,
                "a header line of more than 8 KiB: each message starts with `Content-Length: N`, a blank line, then N bytes of JSON",
            ));
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if !seen_header {
                // Blank lines between messages are harmless.
                continue;
            }
            break;
        }
        seen_header = true;
        match text.split_once(':') {
            Some((name, value)) if name.trim().eq_ignore_ascii_case("content-length") => {
                let value = value.trim();
                length = Some(
                    value
                        .parse::<usize>()
                        .map_err(|_| format!("Content-Length `{value}` is not a number of bytes")),
                );
            }
            Some(_) => {} // Content-Type and other headers change nothing.
            None => {
                return Ok(malformed(
                    ErrorCode::ParseError,
                    &format!(
                        "`{}` is not a header: each message starts with `Content-Length: N`, a blank line, then N bytes of JSON",
                        shorten(text)
                    ),
                ))
            }
        }
    }
    let length = match length {
        Some(Ok(n)) => n,
        Some(Err(e)) => return Ok(malformed(ErrorCode::ParseError, &e)),
        None => {
            return Ok(malformed(
                ErrorCode::ParseError,
                "a message without a Content-Length header: its body cannot be told from the next message",
            ))
        }
    };
    if length > MAX_MESSAGE {
        // Read past it in pieces: the stream stays in step and nothing large is held.
        io::copy(&mut input.by_ref().take(length as u64), &mut io::sink())?;
        return Ok(malformed(
            ErrorCode::InvalidRequest,
            &format!(
                "a message of {length} bytes is over the {} MiB evalbench lsp reads; it was skipped",
                MAX_MESSAGE >> 20
            ),
        ));
    }
    let mut body = Vec::new();
    input.by_ref().take(length as u64).read_to_end(&mut body)?;
    if body.len() < length {
        return Ok(malformed(
            ErrorCode::ParseError,
            &format!(
                "the input ended after {} of the {length} bytes a message announced",
                body.len()
            ),
        ));
    }
    Ok(parse(&body))
}

/// A message's JSON body: a request, a notification or a response.
fn parse(body: &[u8]) -> Incoming {
    let value: serde_json::Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => {
            return malformed(
                ErrorCode::ParseError,
                &format!("the message is not JSON: {e}"),
            )
        }
    };
    let id = value
        .get("id")
        .and_then(|id| serde_json::from_value::<lsp_server::RequestId>(id.clone()).ok());
    if !value.is_object() {
        return malformed(
            ErrorCode::InvalidRequest,
            "the message is not a JSON object with a `method` (a request or a notification)",
        );
    }
    match serde_json::from_value::<Message>(value) {
        Ok(message) => Incoming::Message(message),
        Err(e) => Incoming::Malformed {
            id,
            code: ErrorCode::InvalidRequest,
            message: format!("not a JSON-RPC request, notification or response: {e}"),
        },
    }
}

fn malformed(code: ErrorCode, message: &str) -> Incoming {
    Incoming::Malformed {
        id: None,
        code,
        message: message.to_string(),
    }
}

fn skip_line(input: &mut impl BufRead) -> io::Result<()> {
    loop {
        let buf = input.fill_buf()?;
        if buf.is_empty() {
            return Ok(());
        }
        match buf.iter().position(|&b| b == b'\n') {
            Some(i) => {
                input.consume(i + 1);
                return Ok(());
            }
            None => {
                let n = buf.len();
                input.consume(n);
            }
        }
    }
}

fn shorten(text: &str) -> String {
    let mut out: String = text.chars().take(60).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    out
}

/// Write a message with its header.
pub fn write(output: &mut impl Write, message: Message) -> io::Result<()> {
    message.write(output)
}

/// An error answer to a message whose id could not be read (`"id": null`, as JSON-RPC says).
pub fn write_error_without_id(
    output: &mut impl Write,
    code: ErrorCode,
    message: &str,
) -> io::Result<()> {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": { "code": code as i32, "message": message },
    })
    .to_string();
    write!(output, "Content-Length: {}\r\n\r\n", body.len())?;
    output.write_all(body.as_bytes())?;
    output.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(body: &str) -> Vec<u8> {
        format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
    }

    fn errors(input: &[u8]) -> Vec<String> {
        let mut input = io::BufReader::new(input);
        let mut out = Vec::new();
        loop {
            match read(&mut input).unwrap() {
                Incoming::End => return out,
                Incoming::Message(m) => out.push(format!("ok {m:?}").chars().take(20).collect()),
                Incoming::Malformed { code, message, .. } => {
                    out.push(format!("{} {message}", code as i32))
                }
            }
        }
    }

    #[test]
    fn malformed_messages_are_answered_and_the_stream_goes_on() {
        let mut input = frame("{not json");
        input.extend(b"Content-Length: x\r\n\r\n");
        input.extend(frame(
            r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#,
        ));
        input.extend(b"Content-Length: 999999999\r\n\r\nshort");
        assert_eq!(
            errors(&input),
            [
                "-32700 the message is not JSON: key must be a string at line 1 column 2",
                "-32700 Content-Length `x` is not a number of bytes",
                "ok Notification(Noti",
                "-32600 a message of 999999999 bytes is over the 64 MiB evalbench lsp reads; it was skipped",
            ]
        );
    }

    #[test]
    fn a_header_without_end_and_a_short_body_are_errors() {
        let mut long = vec![b'x'; 10_000];
        long.push(b'\n');
        long.extend(frame("[1, 2]"));
        long.extend(b"Content-Length: 10\r\n\r\n{}");
        assert_eq!(
            errors(&long),
            [
                "-32700 a header line of more than 8 KiB: each message starts with `Content-Length: N`, a blank line, then N bytes of JSON",
                "-32600 the message is not a JSON object with a `method` (a request or a notification)",
                "-32700 the input ended after 2 of the 10 bytes a message announced",
            ]
        );
    }
}
