//! The one HTTP transport every adapter shares: send, time out, classify failures.
//!
//! Retry *policy* lives in [`RetryPolicy`], apart from the sending, so callers decide.

use std::borrow::Cow;
use std::time::{Duration, SystemTime};

use rand::Rng;
use reqwest::header::{HeaderMap, HeaderValue, AUTHORIZATION, RETRY_AFTER};

use super::adapter::{self, AdapterError, Auth, WireRequest};
use super::sse::SseDecoder;
use super::types::ChatResponse;
use crate::config::{Protocol, TransportConfig};
use crate::redact::{redact, Redactor, Secret};

/// One failed HTTP exchange, classified for the retry policy.
#[derive(Debug, Clone, thiserror::Error)]
pub enum TransportError {
    /// No complete answer within the call's timeout.
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    /// Nothing accepted the connection: the server is not running at that address.
    #[error("connection refused: nothing listens at {0}")]
    Refused(String),
    /// The connection could not be made or was cut before an answer.
    #[error("connection failed: {0}")]
    Connect(String),
    /// The server answered with an error status.
    #[error("HTTP {status}: {message}")]
    Status {
        /// The status code.
        status: u16,
        /// The server's message (secrets redacted).
        message: String,
        /// `Retry-After`, when the server sent one.
        retry_after: Option<Duration>,
    },
    /// The body broke off or could not be read.
    #[error("reading the answer failed: {0}")]
    Body(String),
    /// The body was read but is not what the protocol promises.
    #[error(transparent)]
    Adapter(#[from] AdapterError),
}

impl TransportError {
    /// Whether another attempt may succeed: 408/409/429/5xx, connection errors, timeouts,
    /// broken bodies and streams. Never 400/401/403/404 or a well-formed but wrong answer.
    pub fn is_transient(&self) -> bool {
        match self {
            TransportError::Timeout(_)
            | TransportError::Refused(_)
            | TransportError::Connect(_)
            | TransportError::Body(_) => true,
            TransportError::Status { status, .. } => {
                matches!(status, 408 | 409 | 429) || *status >= 500
            }
            TransportError::Adapter(AdapterError::Incomplete) => true,
            // A 200 with a body that is not JSON is what a proxy or a crashing server sends.
            TransportError::Adapter(AdapterError::Malformed(_)) => true,
            TransportError::Adapter(AdapterError::Api(_)) => false,
        }
    }

    /// The same error with every registered key taken out of its messages.
    pub fn redacted(self) -> TransportError {
        let r = |s: String| redact(&s).into_owned();
        match self {
            TransportError::Timeout(d) => TransportError::Timeout(d),
            TransportError::Refused(m) => TransportError::Refused(r(m)),
            TransportError::Connect(m) => TransportError::Connect(r(m)),
            TransportError::Status {
                status,
                message,
                retry_after,
            } => TransportError::Status {
                status,
                message: r(message),
                retry_after,
            },
            TransportError::Body(m) => TransportError::Body(r(m)),
            TransportError::Adapter(AdapterError::Malformed(m)) => {
                TransportError::Adapter(AdapterError::Malformed(r(m)))
            }
            TransportError::Adapter(AdapterError::Api(m)) => {
                TransportError::Adapter(AdapterError::Api(r(m)))
            }
            TransportError::Adapter(AdapterError::Incomplete) => {
                TransportError::Adapter(AdapterError::Incomplete)
            }
        }
    }

    /// The HTTP status, when there was one.
    pub fn status(&self) -> Option<u16> {
        match self {
            TransportError::Status { status, .. } => Some(*status),
            _ => None,
        }
    }
}

/// When and how long to wait before trying a call again.
#[derive(Debug, Clone)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// Backoff base.
    pub base: Duration,
    /// Backoff ceiling.
    pub max: Duration,
    /// Longest `Retry-After` honoured; a longer one ends the retries.
    pub retry_after_max: Duration,
}

impl RetryPolicy {
    /// The policy the configuration describes.
    pub fn from_config(c: &TransportConfig) -> Self {
        RetryPolicy {
            max_retries: c.max_retries,
            base: Duration::from_millis(c.backoff_base_ms),
            max: Duration::from_millis(c.backoff_max_ms),
            retry_after_max: Duration::from_secs(c.retry_after_max_secs),
        }
    }

    /// The wait before retry number `retry` (0-based) after `err`, or `None` to give up.
    ///
    /// Exponential backoff with full jitter (a uniform wait in `[0, min(max, base·2ⁿ)]`),
    /// except that a server's `Retry-After` is honoured exactly when it is not too long.
    pub fn delay(&self, retry: u32, err: &TransportError) -> Option<Duration> {
        if retry >= self.max_retries || !err.is_transient() {
            return None;
        }
        if let TransportError::Status {
            retry_after: Some(wait),
            ..
        } = err
        {
            return (*wait <= self.retry_after_max).then_some(*wait);
        }
        let cap = self
            .base
            .saturating_mul(2u32.saturating_pow(retry))
            .min(self.max);
        let ms = cap.as_millis() as u64;
        Some(Duration::from_millis(if ms == 0 {
            0
        } else {
            rand::rng().random_range(0..=ms)
        }))
    }
}

/// Parses `Retry-After`: delay-seconds (digits, with a decimal fraction tolerated) or an
/// HTTP date. Never panics on what a server sends.
///
/// A number too large for a `Duration` saturates (and so is longer than any
/// `retry_after_max`: the call fails over instead of waiting). Anything else — a sign, an
/// exponent (`1e30`), `NaN`, `inf`, text — is not a `Retry-After` at all and is ignored
/// (`None`), so the ordinary backoff applies. A date in the past means now.
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    let (whole, fraction) = value.split_once('.').unwrap_or((value, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if !whole.is_empty() && digits(whole) && digits(fraction) && !value.ends_with('.') {
        let Ok(secs) = whole.parse::<u64>() else {
            return Some(Duration::MAX);
        };
        // Nanoseconds from the first nine digits of the fraction.
        let nanos = fraction
            .bytes()
            .chain(std::iter::repeat(b'0'))
            .take(9)
            .fold(0u32, |n, b| n * 10 + u32::from(b - b'0'));
        return Some(Duration::new(secs, nanos));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(
        when.duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

/// Sends requests built by the adapters.
#[derive(Clone)]
pub struct Transport {
    http: reqwest::Client,
    /// For servers on this machine: never through a proxy from `HTTP(S)_PROXY`.
    loopback: reqwest::Client,
}

impl Transport {
    /// A transport with its own connection pool.
    pub fn new() -> Self {
        let builder = || {
            reqwest::Client::builder()
                .user_agent(concat!("git-triad/", env!("CARGO_PKG_VERSION")))
                // Redirects could carry the key to another host; providers never need them.
                .redirect(reqwest::redirect::Policy::none())
        };
        let http = builder().build().unwrap_or_else(|_| reqwest::Client::new());
        let loopback = builder()
            .no_proxy()
            .build()
            .unwrap_or_else(|_| reqwest::Client::new());
        Transport { http, loopback }
    }

    fn client_for(&self, url: &str) -> &reqwest::Client {
        let host = reqwest::Url::parse(url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string));
        match host.as_deref() {
            Some("127.0.0.1" | "localhost" | "[::1]" | "::1") => &self.loopback,
            _ => &self.http,
        }
    }

    /// Sends one request and parses the answer; the whole exchange is bounded by `timeout`.
    pub async fn send(
        &self,
        protocol: Protocol,
        wire: &WireRequest,
        key: Option<&Secret>,
        stream: bool,
        timeout: Duration,
    ) -> Result<ChatResponse, TransportError> {
        let result =
            match tokio::time::timeout(timeout, self.exchange(protocol, wire, key, stream)).await {
                Ok(result) => result,
                Err(_) => Err(TransportError::Timeout(timeout)),
            };
        // The ingress door: nothing a server sent is parsed further, stored or shown before
        // every registered key is out of it (a streamed key may be split over events, so the
        // assembled answer is redacted too).
        result
            .map(redacted_response)
            .map_err(TransportError::redacted)
    }

    async fn exchange(
        &self,
        protocol: Protocol,
        wire: &WireRequest,
        key: Option<&Secret>,
        stream: bool,
    ) -> Result<ChatResponse, TransportError> {
        let mut headers = HeaderMap::new();
        for (name, value) in &wire.headers {
            if let Ok(v) = HeaderValue::from_str(value) {
                headers.insert(*name, v);
            }
        }
        if let Some(key) = key {
            let (name, raw) = match wire.auth {
                Auth::Bearer => (AUTHORIZATION.as_str(), format!("Bearer {}", key.expose())),
                Auth::Header(name) => (name, key.expose().to_string()),
            };
            let mut v = HeaderValue::from_str(&raw).map_err(|_| {
                TransportError::Connect(
                    "the API key contains characters not allowed in an HTTP header".into(),
                )
            })?;
            v.set_sensitive(true);
            headers.insert(name, v);
        }
        let resp = self
            .client_for(&wire.url)
            .post(&wire.url)
            .headers(headers)
            .json(&wire.body)
            .send()
            .await
            .map_err(|e| connect_error(&e, &wire.url))?;
        let status = resp.status();
        if !status.is_success() {
            let retry_after = resp
                .headers()
                .get(RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(parse_retry_after);
            let body = resp.bytes().await.unwrap_or_default();
            // Redacted whole, before a snippet or a clip could cut a key into pieces.
            let body = Redactor::global().redact_bytes(&body);
            let message = adapter::error_message(&body).unwrap_or_else(|| {
                status
                    .canonical_reason()
                    .map(str::to_string)
                    .unwrap_or_else(|| adapter::snippet(&body))
            });
            // The body is the server's to size; an error carries a bounded part of it.
            let message = crate::bounded::clip(&message, super::adapter::MAX_MESSAGE_BYTES);
            return Err(TransportError::Status {
                status: status.as_u16(),
                message: redact(&message).into_owned(),
                retry_after,
            });
        }
        let is_sse = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if stream && is_sse {
            let mut resp = resp;
            let mut decoder = SseDecoder::default();
            let mut acc = adapter::stream_accumulator(protocol);
            let mut complete = false;
            while !complete {
                match resp.chunk().await {
                    Ok(Some(bytes)) => {
                        for ev in decoder.push(&bytes) {
                            complete |= acc.event(&ev)?;
                        }
                    }
                    Ok(None) => {
                        if let Some(ev) = decoder.finish() {
                            acc.event(&ev)?;
                        }
                        break;
                    }
                    Err(e) => return Err(TransportError::Body(describe(&e))),
                }
            }
            return Ok(adapter::tools::settle(
                acc.finish()?,
                wire.answer_tool.as_deref(),
            ));
        }
        let body = resp
            .bytes()
            .await
            .map_err(|e| TransportError::Body(describe(&e)))?;
        let body = Redactor::global().redact_bytes(&body);
        let parsed = adapter::parse(protocol, &body)?;
        Ok(adapter::tools::settle(parsed, wire.answer_tool.as_deref()))
    }
}

impl Default for Transport {
    fn default() -> Self {
        Transport::new()
    }
}

/// A reqwest error with its causes (keys travel in headers, never in URLs, so the URL in
/// the message is safe; the redactor still runs over the result).
/// A request that got no answer: [`TransportError::Refused`] when the connection was
/// refused (nothing listens at that host and port), else [`TransportError::Connect`] with
/// every cause in the chain.
fn connect_error(e: &reqwest::Error, url: &str) -> TransportError {
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::ConnectionRefused {
                let at = reqwest::Url::parse(url)
                    .ok()
                    .and_then(|u| {
                        let host = u.host_str()?.to_string();
                        Some(match u.port_or_known_default() {
                            Some(p) => format!("{host}:{p}"),
                            None => host,
                        })
                    })
                    .unwrap_or_else(|| url.to_string());
                return TransportError::Refused(redact(&at).into_owned());
            }
        }
        source = s.source();
    }
    TransportError::Connect(describe(e))
}

fn describe(e: &reqwest::Error) -> String {
    let mut msg = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let s_text = s.to_string();
        if !msg.contains(&s_text) {
            msg.push_str(": ");
            msg.push_str(&s_text);
        }
        source = s.source();
    }
    redact(&msg).into_owned()
}

/// A translated answer with every string in it redacted: the JSON body was redacted as text
/// before parsing, and this catches what decoding revealed (a key written with `\u`
/// escapes) and what a stream assembled from pieces.
fn redacted_response(mut r: ChatResponse) -> ChatResponse {
    let clean = |s: &mut String| {
        if let Cow::Owned(t) = redact(s) {
            *s = t;
        }
    };
    clean(&mut r.text);
    if let Some(v) = &mut r.structured {
        Redactor::global().redact_value(v);
    }
    for call in &mut r.tool_calls {
        clean(&mut call.id);
        clean(&mut call.name);
        Redactor::global().redact_value(&mut call.arguments);
    }
    r.model.iter_mut().for_each(clean);
    r.finish_reason.iter_mut().for_each(clean);
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> RetryPolicy {
        RetryPolicy {
            max_retries: 3,
            base: Duration::from_millis(100),
            max: Duration::from_millis(250),
            retry_after_max: Duration::from_secs(5),
        }
    }

    fn status(s: u16, retry_after: Option<Duration>) -> TransportError {
        TransportError::Status {
            status: s,
            message: String::new(),
            retry_after,
        }
    }

    #[test]
    fn retries_only_transient_failures() {
        let p = policy();
        for s in [408, 409, 429, 500, 502, 503] {
            assert!(p.delay(0, &status(s, None)).is_some(), "{s}");
        }
        for s in [400, 401, 403, 404] {
            assert!(p.delay(0, &status(s, None)).is_none(), "{s}");
        }
        assert!(
            p.delay(3, &status(500, None)).is_none(),
            "budget of retries"
        );
        assert!(p
            .delay(0, &TransportError::Timeout(Duration::ZERO))
            .is_some());
    }

    #[test]
    fn backoff_is_jittered_and_capped() {
        let p = policy();
        for n in 0..3 {
            let d = p.delay(n, &status(503, None)).unwrap();
            assert!(d <= Duration::from_millis(250));
        }
    }

    #[test]
    fn retry_after_is_honoured_unless_too_long() {
        let p = policy();
        assert_eq!(
            p.delay(0, &status(429, Some(Duration::from_secs(2)))),
            Some(Duration::from_secs(2))
        );
        assert_eq!(
            p.delay(0, &status(429, Some(Duration::from_secs(60)))),
            None
        );
        assert_eq!(parse_retry_after("7"), Some(Duration::from_secs(7)));
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon"), None);
    }

    #[test]
    fn retry_after_never_panics_and_saturates() {
        assert_eq!(
            parse_retry_after(" 1.5 "),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            parse_retry_after("0.0000000019"),
            Some(Duration::from_nanos(1))
        );
        for junk in [
            "1e30", "-5", "-0", "NaN", "nan", "inf", "+3", "1.", ".5", "1.2.3", "", "٣",
        ] {
            assert_eq!(parse_retry_after(junk), None, "{junk}");
        }
        for huge in [
            "99999999999999999999999999999",
            "18446744073709551616",
            "99999999999999999999.5",
        ] {
            assert_eq!(parse_retry_after(huge), Some(Duration::MAX), "{huge}");
        }
        assert_eq!(
            parse_retry_after("18446744073709551615"),
            Some(Duration::from_secs(u64::MAX))
        );
        let far = parse_retry_after("Fri, 31 Dec 9999 23:59:59 GMT").unwrap();
        assert!(far > Duration::from_secs(60 * 60 * 24 * 365 * 7000));
        // Whatever was parsed, the policy decides without panicking: too long fails over.
        let p = policy();
        for v in [
            "99999999999999999999999999999",
            "Fri, 31 Dec 9999 23:59:59 GMT",
        ] {
            assert_eq!(p.delay(0, &status(429, parse_retry_after(v))), None, "{v}");
        }
        let d = p.delay(0, &status(429, parse_retry_after("1e30"))).unwrap();
        assert!(d <= Duration::from_millis(250), "ordinary backoff: {d:?}");
    }
}
