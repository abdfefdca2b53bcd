//! Reading a model's limits from the server that serves it, so a model registered with only
//! `provider` and `id` works: what the server says is used and said; what it does not say is
//! the stated default, and said too.
//!
//! OpenAI-compatible servers are asked, in order, until one answers with a context window:
//! - `GET {base}/models`: the model's entry may carry `context_length` (OpenRouter, LM
//!   Studio), `max_model_len` (vLLM) or `context_window` (Groq), and
//!   `top_provider.max_completion_tokens` or `max_completion_tokens` for the output cap;
//! - `GET {root}/props` (llama.cpp's server): `default_generation_settings.n_ctx`;
//! - `POST {root}/api/show` (Ollama): `model_info.<arch>.context_length`, and `num_ctx` in
//!   `parameters`, which is the window the server really runs the model with.
//!
//! `{root}` is the base URL without its trailing `/v1`. Other protocols' servers do not
//! report limits.

use std::time::Duration;

use serde_json::Value;

use crate::config::{ModelConfig, Protocol, ProviderConfig};

/// How long each probe may take.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// A value read from a server, and where.
#[derive(Debug, Clone, PartialEq)]
pub struct Found<T> {
    /// The value.
    pub value: T,
    /// The route and field it came from (`GET /props: n_ctx`).
    pub source: String,
}

/// What a server said about a model's limits.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Limits {
    /// The context window.
    pub context_window: Option<Found<u64>>,
    /// The output cap.
    pub max_output_tokens: Option<Found<u32>>,
    /// What else is worth knowing about what was found.
    pub notes: Vec<String>,
}

fn found<T>(value: T, source: impl Into<String>) -> Option<Found<T>> {
    Some(Found {
        value,
        source: source.into(),
    })
}

/// The limits of `id` in an OpenAI-style model list.
pub fn from_models_list(body: &Value, id: &str) -> Limits {
    let mut l = Limits::default();
    let Some(entry) = body["data"]
        .as_array()
        .and_then(|d| d.iter().find(|m| m["id"] == id))
    else {
        return l;
    };
    for field in ["context_length", "max_model_len", "context_window"] {
        if let Some(v) = entry[field].as_u64().filter(|v| *v > 0) {
            l.context_window = found(v, format!("GET /models: {field}"));
            break;
        }
    }
    let out = entry["top_provider"]["max_completion_tokens"]
        .as_u64()
        .map(|v| (v, "top_provider.max_completion_tokens"))
        .or_else(|| {
            entry["max_completion_tokens"]
                .as_u64()
                .map(|v| (v, "max_completion_tokens"))
        });
    if let Some((v, field)) = out.filter(|(v, _)| *v > 0) {
        l.max_output_tokens = found(
            u32::try_from(v).unwrap_or(u32::MAX),
            format!("GET /models: {field}"),
        );
    }
    l
}

/// The context window in llama.cpp's `/props`.
pub fn from_props(body: &Value) -> Limits {
    let n = body["default_generation_settings"]["n_ctx"]
        .as_u64()
        .map(|v| (v, "default_generation_settings.n_ctx"))
        .or_else(|| body["n_ctx"].as_u64().map(|v| (v, "n_ctx")));
    Limits {
        context_window: n
            .filter(|(v, _)| *v > 0)
            .and_then(|(v, f)| found(v, format!("GET /props: {f}"))),
        ..Limits::default()
    }
}

/// The context window in Ollama's `/api/show`: `num_ctx` when the model sets it (the window
/// the server uses), else the model's own `context_length`, with a note that Ollama may run
/// it with less.
pub fn from_ollama_show(body: &Value) -> Limits {
    let mut l = Limits::default();
    let num_ctx = body["parameters"].as_str().and_then(|p| {
        p.lines().find_map(|line| {
            let mut parts = line.split_whitespace();
            (parts.next() == Some("num_ctx"))
                .then(|| parts.next()?.parse::<u64>().ok())
                .flatten()
        })
    });
    let trained = body["model_info"].as_object().and_then(|info| {
        info.iter()
            .find(|(k, _)| k.ends_with(".context_length"))
            .and_then(|(k, v)| Some((v.as_u64()?, k.clone())))
    });
    match (num_ctx, trained) {
        (Some(n), _) if n > 0 => {
            l.context_window = found(n, "POST /api/show: parameters num_ctx");
        }
        (_, Some((n, key))) if n > 0 => {
            l.context_window = found(n, format!("POST /api/show: model_info.{key}"));
            l.notes.push(format!(
                "Ollama runs a model with its num_ctx parameter (2048 or 4096 unless set), not always its full {n}: set context_window to what your server uses"
            ));
        }
        _ => {}
    }
    l
}

/// The base URL without a trailing `/v1`: where llama.cpp and Ollama serve their own routes.
fn root_of(base_url: &str) -> &str {
    let b = base_url.trim_end_matches('/');
    b.strip_suffix("/v1").unwrap_or(b)
}

/// Asks the server of `provider` for the limits of the model it serves as `wire_id`. Never
/// fails: a probe that does not answer tells nothing.
pub async fn discover(provider: &ProviderConfig, wire_id: &str, key: Option<&str>) -> Limits {
    if provider.protocol != Protocol::Openai {
        return Limits {
            notes: vec![format!(
                "{} servers do not report model limits",
                provider.protocol
            )],
            ..Limits::default()
        };
    }
    let mut builder = reqwest::Client::builder().timeout(PROBE_TIMEOUT);
    if provider.local {
        // A server on this machine is never reached through a proxy.
        builder = builder.no_proxy();
    }
    let Ok(http) = builder.build() else {
        return Limits::default();
    };
    let auth = |r: reqwest::RequestBuilder| match key {
        Some(k) => r.bearer_auth(k),
        None => r,
    };
    let get_json = |r: reqwest::RequestBuilder| async move {
        let resp = r.send().await.ok()?;
        if !resp.status().is_success() {
            return None;
        }
        resp.json::<Value>().await.ok()
    };
    let base = provider.base_url.trim_end_matches('/');
    let mut limits = match get_json(auth(http.get(format!("{base}/models")))).await {
        Some(body) => from_models_list(&body, wire_id),
        None => Limits::default(),
    };
    if limits.context_window.is_none() && provider.local {
        let root = root_of(base);
        if let Some(body) = get_json(http.get(format!("{root}/props"))).await {
            limits.context_window = from_props(&body).context_window;
        }
        if limits.context_window.is_none() {
            let show = http
                .post(format!("{root}/api/show"))
                .json(&serde_json::json!({ "model": wire_id }));
            if let Some(body) = get_json(show).await {
                let l = from_ollama_show(&body);
                limits.context_window = l.context_window;
                limits.notes.extend(l.notes);
            }
        }
    }
    limits
}

/// Puts what was found into a model's configuration where it sets nothing itself; returns
/// a sentence per limit saying where its value comes from: `context window 32768 tokens:
/// from the server (GET /props: n_ctx)`, `... : assumed (the server does not say; set
/// models.<name>.context_window)`, or `... : configured`.
pub fn fill(name: &str, m: &mut ModelConfig, found: &Limits) -> Vec<String> {
    let mut said = Vec::new();
    let window = match (&m.context_window, &found.context_window) {
        (Some(_), _) => "configured".to_string(),
        (None, Some(f)) => {
            m.context_window = Some(f.value);
            format!("from the server ({})", f.source)
        }
        (None, None) => {
            format!("assumed (the server does not say; set models.{name}.context_window)")
        }
    };
    said.push(format!("context window {} tokens: {window}", m.window()));
    let out = match (&m.max_output_tokens, &found.max_output_tokens) {
        (Some(_), _) => "configured".to_string(),
        (None, Some(f)) => {
            m.max_output_tokens = Some(f.value);
            format!("from the server ({})", f.source)
        }
        (None, None) => {
            format!("assumed (the server does not say; set models.{name}.max_output_tokens)")
        }
    };
    said.push(format!("max output {} tokens: {out}", m.max_output()));
    said.extend(found.notes.iter().cloned());
    said
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_server_shape_gives_its_window() {
        let openrouter = json!({"data": [{"id": "x"}, {"id": "q/coder", "context_length": 262144,
            "top_provider": {"context_length": 262144, "max_completion_tokens": 65536}}]});
        let l = from_models_list(&openrouter, "q/coder");
        assert_eq!(l.context_window.unwrap().value, 262144);
        assert_eq!(
            l.max_output_tokens.unwrap().source,
            "GET /models: top_provider.max_completion_tokens"
        );
        let vllm = json!({"data": [{"id": "m", "max_model_len": 32768}]});
        assert_eq!(
            from_models_list(&vllm, "m").context_window.unwrap().source,
            "GET /models: max_model_len"
        );
        assert_eq!(from_models_list(&vllm, "other"), Limits::default());
        let props = json!({"default_generation_settings": {"n_ctx": 8192}});
        assert_eq!(from_props(&props).context_window.unwrap().value, 8192);
        let ollama = json!({"parameters": "stop \"x\"\nnum_ctx 4096", "model_info": {"qwen2.context_length": 32768}});
        assert_eq!(
            from_ollama_show(&ollama).context_window.unwrap().value,
            4096
        );
        let trained = from_ollama_show(&json!({"model_info": {"llama.context_length": 131072}}));
        assert_eq!(trained.context_window.unwrap().value, 131072);
        assert!(trained.notes[0].contains("num_ctx"));
        assert_eq!(
            root_of("http://127.0.0.1:11434/v1/"),
            "http://127.0.0.1:11434"
        );
    }
}
