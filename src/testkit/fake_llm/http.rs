//! A deliberately tiny HTTP/1.1 server side: read one request, write one response, close.
//!
//! Written by hand on a raw `TcpStream` (no hyper) because the point of the fake server is to
//! misbehave on purpose: cut a body short, reset the connection, or never answer. A framework
//! would fight every one of those.

use std::collections::BTreeMap;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};

/// Headers larger than this are refused; real clients send a few hundred bytes.
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Bodies larger than this are refused, so a confused client cannot eat the test machine.
const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;

/// One parsed request.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    pub method: String,
    /// The full request target as sent, query string included.
    pub target: String,
    /// The target without the query string.
    pub path: String,
    /// The query string without the `?`, if any.
    pub query: Option<String>,
    /// Header names lowercased; repeated headers joined with `", "`.
    pub headers: BTreeMap<String, String>,
    pub body: Vec<u8>,
}

/// Why no request could be read.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// The client closed (or reset) the connection before sending a request.
    Closed,
    /// The bytes were not an HTTP/1.x request we understand; answer 400.
    Bad(String),
}

impl From<std::io::Error> for ReadError {
    fn from(_: std::io::Error) -> Self {
        // A read error mid-request means the client is gone; nothing useful to answer.
        ReadError::Closed
    }
}

/// Reads one request (head, then a `Content-Length` or chunked body).
pub(crate) async fn read_request<S>(stream: &mut S) -> Result<Request, ReadError>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let mut reader = BufReader::new(stream);
    let mut head_bytes = 0usize;
    let mut line = String::new();

    // Tolerate stray blank lines before the request line, as RFC 9112 suggests.
    let request_line = loop {
        let trimmed = read_head_line(&mut reader, &mut line, &mut head_bytes).await?;
        if !trimmed.is_empty() {
            break trimmed.to_string();
        }
    };

    let mut parts = request_line.split_whitespace();
    let (method, target, version) = match (parts.next(), parts.next(), parts.next()) {
        (Some(m), Some(t), Some(v)) => (m.to_string(), t.to_string(), v),
        _ => return Err(ReadError::Bad(format!("bad request line {request_line:?}"))),
    };
    if !version.starts_with("HTTP/1.") {
        return Err(ReadError::Bad(format!("unsupported version {version}")));
    }

    let mut headers: BTreeMap<String, String> = BTreeMap::new();
    loop {
        let trimmed = read_head_line(&mut reader, &mut line, &mut head_bytes).await?;
        if trimmed.is_empty() {
            break;
        }
        let Some((name, value)) = trimmed.split_once(':') else {
            return Err(ReadError::Bad(format!("bad header line {trimmed:?}")));
        };
        let name = name.trim().to_ascii_lowercase();
        let value = value.trim().to_string();
        headers
            .entry(name)
            .and_modify(|v| {
                v.push_str(", ");
                v.push_str(&value);
            })
            .or_insert(value);
    }

    if headers
        .get("expect")
        .is_some_and(|v| v.eq_ignore_ascii_case("100-continue"))
    {
        // curl waits for this before sending large bodies.
        reader.write_all(b"HTTP/1.1 100 Continue\r\n\r\n").await?;
        reader.flush().await?;
    }

    let chunked = headers
        .get("transfer-encoding")
        .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    let body = if chunked {
        read_chunked(&mut reader).await?
    } else if let Some(len) = headers.get("content-length") {
        let len: usize = len
            .parse()
            .map_err(|_| ReadError::Bad(format!("bad content-length {len:?}")))?;
        if len > MAX_BODY_BYTES {
            return Err(ReadError::Bad("request body too large".into()));
        }
        let mut body = vec![0u8; len];
        reader.read_exact(&mut body).await?;
        body
    } else {
        Vec::new()
    };

    let (path, query) = match target.split_once('?') {
        Some((p, q)) => (p.to_string(), Some(q.to_string())),
        None => (target.clone(), None),
    };
    Ok(Request {
        method,
        target,
        path,
        query,
        headers,
        body,
    })
}

/// Reads the next line of the request head into `line`, adding its length to `head_bytes`
/// (refused past [`MAX_HEAD_BYTES`]); returns it without its line ending.
async fn read_head_line<'a, R>(
    reader: &mut R,
    line: &'a mut String,
    head_bytes: &mut usize,
) -> Result<&'a str, ReadError>
where
    R: tokio::io::AsyncBufRead + Unpin,
{
    line.clear();
    let n = reader.read_line(line).await?;
    if n == 0 {
        return Err(ReadError::Closed);
    }
    *head_bytes += n;
    if *head_bytes > MAX_HEAD_BYTES {
        return Err(ReadError::Bad("request head too large".into()));
    }
    Ok(line.trim_end_matches(['\r', '\n']))
}

/// Decodes a chunked request body, skipping extensions and trailers.
async fn read_chunked<R>(reader: &mut R) -> Result<Vec<u8>, ReadError>
where
    R: tokio::io::AsyncBufRead + Unpin,
{
    let mut body = Vec::new();
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).await? == 0 {
            return Err(ReadError::Closed);
        }
        let size_text = line.trim().split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| ReadError::Bad(format!("bad chunk size {size_text:?}")))?;
        if size == 0 {
            // Trailers, then the final blank line.
            loop {
                line.clear();
                if reader.read_line(&mut line).await? == 0 || line.trim().is_empty() {
                    return Ok(body);
                }
            }
        }
        if body.len() + size > MAX_BODY_BYTES {
            return Err(ReadError::Bad("request body too large".into()));
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader.read_exact(&mut body[start..]).await?;
        let mut crlf = [0u8; 2];
        reader.read_exact(&mut crlf).await?;
    }
}

/// The standard reason phrase, so status lines look like a real server's.
fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        409 => "Conflict",
        413 => "Payload Too Large",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        529 => "Overloaded",
        _ => "Status",
    }
}

/// How the body is delimited on the wire.
enum Framing {
    /// `Content-Length` of this many bytes (may exceed what is sent, for the truncate fault).
    Length(usize),
    /// `Transfer-Encoding: chunked`.
    Chunked,
}

/// Renders the status line and headers. Scripted headers replace defaults of the same name,
/// except the framing headers, which must stay truthful for the body we actually write.
fn head(
    status: u16,
    content_type: &str,
    extra: &BTreeMap<String, String>,
    framing: Framing,
) -> Vec<u8> {
    let mut headers: Vec<(String, String)> = vec![
        ("content-type".into(), content_type.into()),
        ("connection".into(), "close".into()),
        ("server".into(), "triad-fake-llm".into()),
    ];
    for (name, value) in extra {
        let lower = name.to_ascii_lowercase();
        if lower == "content-length" || lower == "transfer-encoding" {
            continue;
        }
        headers.retain(|(n, _)| *n != lower);
        headers.push((lower, value.clone()));
    }
    match framing {
        Framing::Length(n) => headers.push(("content-length".into(), n.to_string())),
        Framing::Chunked => headers.push(("transfer-encoding".into(), "chunked".into())),
    }
    let mut out = format!("HTTP/1.1 {status} {}\r\n", reason(status));
    for (name, value) in headers {
        out.push_str(&name);
        out.push_str(": ");
        out.push_str(&value);
        out.push_str("\r\n");
    }
    out.push_str("\r\n");
    out.into_bytes()
}

/// A response body, and how it goes on the wire.
pub(crate) enum Body<'a> {
    /// The whole body with its `Content-Length`.
    Full(&'a [u8]),
    /// Chunked, one chunk per SSE event, each flushed so the client really receives the
    /// stream piece by piece.
    Chunked(&'a [Vec<u8>]),
    /// The full length announced but only the first half sent (at least one byte short), for
    /// the `truncate` fault. The caller then closes the connection.
    Truncated(&'a [u8]),
}

/// Writes one response: the status line, the headers (`extra` as [`head`] merges them) and
/// `body`.
pub(crate) async fn write<S: AsyncWrite + Unpin>(
    stream: &mut S,
    status: u16,
    content_type: &str,
    extra: &BTreeMap<String, String>,
    body: Body<'_>,
) -> std::io::Result<()> {
    let (announced, sent) = match body {
        Body::Full(body) => (body.len(), body),
        Body::Truncated(body) => {
            let announced = body.len().max(2);
            (announced, &body[..(body.len() / 2).min(announced - 1)])
        }
        Body::Chunked(chunks) => {
            stream
                .write_all(&head(status, content_type, extra, Framing::Chunked))
                .await?;
            stream.flush().await?;
            for chunk in chunks.iter().filter(|c| !c.is_empty()) {
                let mut out = format!("{:x}\r\n", chunk.len()).into_bytes();
                out.extend_from_slice(chunk);
                out.extend_from_slice(b"\r\n");
                stream.write_all(&out).await?;
                stream.flush().await?;
            }
            stream.write_all(b"0\r\n\r\n").await?;
            return stream.flush().await;
        }
    };
    let mut out = head(status, content_type, extra, Framing::Length(announced));
    out.extend_from_slice(sent);
    stream.write_all(&out).await?;
    stream.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn parses_content_length_and_chunked_bodies() {
        let (mut client, mut server) = tokio::io::duplex(4096);
        client
            .write_all(b"POST /v1/x?a=b HTTP/1.1\r\nHost: h\r\nX-A: 1\r\nx-a: 2\r\nContent-Length: 5\r\n\r\nhello")
            .await
            .unwrap();
        let req = read_request(&mut server).await.unwrap();
        assert_eq!(req.method, "POST");
        assert_eq!(req.path, "/v1/x");
        assert_eq!(req.query.as_deref(), Some("a=b"));
        assert_eq!(req.headers["x-a"], "1, 2");
        assert_eq!(req.body, b"hello");

        let (mut client, mut server) = tokio::io::duplex(4096);
        client
            .write_all(b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nTrailer: x\r\n\r\n")
            .await
            .unwrap();
        let req = read_request(&mut server).await.unwrap();
        assert_eq!(req.body, b"abcde");
    }

    #[tokio::test]
    async fn rejects_garbage_and_reports_close() {
        let (mut client, mut server) = tokio::io::duplex(4096);
        client.write_all(b"NONSENSE\r\n\r\n").await.unwrap();
        assert!(matches!(
            read_request(&mut server).await,
            Err(ReadError::Bad(_))
        ));
        let (client, mut server) = tokio::io::duplex(4096);
        drop(client);
        assert!(matches!(
            read_request(&mut server).await,
            Err(ReadError::Closed)
        ));
    }

    #[test]
    fn scripted_headers_replace_defaults_but_not_framing() {
        let mut extra = BTreeMap::new();
        extra.insert("Content-Type".to_string(), "text/plain".to_string());
        extra.insert("content-length".to_string(), "999".to_string());
        extra.insert("retry-after".to_string(), "1".to_string());
        let text =
            String::from_utf8(head(429, "application/json", &extra, Framing::Length(3))).unwrap();
        assert!(text.starts_with("HTTP/1.1 429 Too Many Requests\r\n"));
        assert!(text.contains("content-type: text/plain\r\n"));
        assert!(!text.contains("application/json"));
        assert!(text.contains("retry-after: 1\r\n"));
        assert!(text.contains("content-length: 3\r\n"));
        assert!(!text.contains("999"));
    }
}
