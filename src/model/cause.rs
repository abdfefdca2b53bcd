//! Why a provider gave no answer, as a kind a person can act on: nothing listening at its
//! URL, a key it refused, a model it does not serve, a server failing. The model layer
//! names the kind with every failure; the command line turns it into what to do next.

use serde::{Deserialize, Serialize};

use super::transport::TransportError;

/// The kind of a provider failure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Cause {
    /// Nothing accepts connections at the provider's URL (connection refused): the server
    /// is not running there, or the URL's host or port is wrong.
    Refused {
        /// The provider's registry name.
        provider: String,
        /// Its base URL.
        url: String,
    },
    /// The host could not be reached at all (its name does not resolve, no route, TLS).
    Unreachable {
        /// The provider's registry name.
        provider: String,
        /// Its base URL.
        url: String,
    },
    /// No complete answer within the call's timeout.
    Timeout,
    /// The server refused the key (401, 403).
    KeyRefused {
        /// The variable the key came from, if the provider has one.
        var: Option<String>,
    },
    /// The key's variable is not set, so nothing was sent.
    KeyMissing {
        /// The variable.
        var: String,
    },
    /// The server does not serve that model or endpoint (404).
    NotFound,
    /// The server failed or turned the request away for now (429, 5xx).
    Server {
        /// The status.
        status: u16,
    },
    /// The server answered with something that is not an answer of its protocol.
    Malformed,
    /// Anything else (a request the server refused as malformed, ...).
    Other,
}

impl Cause {
    /// The kind of `err`, a failure of `provider` (at `url`, its key in `var`).
    pub fn of(err: &TransportError, provider: &str, url: &str, var: Option<&str>) -> Cause {
        let at = || (provider.to_string(), url.to_string());
        match err {
            TransportError::Refused(_) => {
                let (provider, url) = at();
                Cause::Refused { provider, url }
            }
            TransportError::Connect(_) => {
                let (provider, url) = at();
                Cause::Unreachable { provider, url }
            }
            TransportError::Timeout(_) => Cause::Timeout,
            TransportError::Status { status, .. } => match status {
                401 | 403 => Cause::KeyRefused {
                    var: var.map(str::to_string),
                },
                404 => Cause::NotFound,
                429 | 500..=599 => Cause::Server { status: *status },
                _ => Cause::Other,
            },
            TransportError::Body(_) | TransportError::Adapter(_) => Cause::Malformed,
        }
    }

    /// Whether the server is not there at all (refused or unreachable): the same for every
    /// model it serves, and for every retry until someone starts it or fixes the URL.
    pub fn no_server(&self) -> bool {
        matches!(self, Cause::Refused { .. } | Cause::Unreachable { .. })
    }
}

/// One model of a call that gave no answer, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// The model's registry name.
    pub model: String,
    /// What happened, in the provider's own words where it gave any.
    pub why: String,
    /// Its kind.
    pub cause: Cause,
}

impl Failure {
    /// A failure of `model` that no provider error explains (no model left to ask, ...).
    pub fn other(model: impl Into<String>, why: impl Into<String>) -> Failure {
        Failure {
            model: model.into(),
            why: why.into(),
            cause: Cause::Other,
        }
    }
}

/// The failures of one call, as one clause: models that failed the same way are named
/// together (`gpt-5 and gpt-4.1: connection refused at …`), so the cause is read once.
pub fn summarize(failures: &[Failure]) -> String {
    let mut groups: Vec<(Vec<&str>, &str)> = Vec::new();
    for f in failures {
        match groups.iter_mut().find(|(_, why)| *why == f.why) {
            Some((models, _)) => models.push(&f.model),
            None => groups.push((vec![&f.model], &f.why)),
        }
    }
    groups
        .into_iter()
        .map(|(models, why)| {
            let names: Vec<String> = models.iter().map(|m| m.to_string()).collect();
            format!("{}: {why}", crate::bounded::and_list(&names))
        })
        .collect::<Vec<_>>()
        .join("; ")
}
