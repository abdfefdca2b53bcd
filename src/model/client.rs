//! The model client: role → models with fallback, retries, circuit breakers, budget,
//! accounting, and structured output with one repair round.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::adapter;
use super::breaker::{Breakers, Permit};
use super::budget::{self, BudgetExceeded, BudgetGuard, CallRecord, Ledger, Spend};
use super::cause::{Cause, Failure};
use super::error::ModelError;
use super::structured;
use super::transport::{RetryPolicy, Transport, TransportError};
use super::types::{ChatRequest, ChatResponse, Message, Usage};
use super::window::{self, Calibration, Estimator, Overflow, Room, Window};
use crate::config::{Config, ModelConfig, ProviderConfig, Role};
use crate::redact::Secret;

/// Looks up environment variables (injectable so tests need not touch the process env).
pub type EnvLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// A successful call.
#[derive(Debug, Clone)]
pub struct Completion {
    /// The translated answer.
    pub response: ChatResponse,
    /// The registry name of the model that answered.
    pub model: String,
    /// Accounting for this call (a repaired structured call has two records).
    pub records: Vec<CallRecord>,
    /// For an answer to a schema: its strings that reached the length the schema sent to
    /// the server allowed, as (JSON pointer, limit); such text was likely cut there (see
    /// [`structured::strings_at_limit`]).
    pub at_limit: Vec<(String, u64)>,
}

impl Completion {
    /// What this call cost (all its records, a repair included).
    pub fn spend(&self) -> Spend {
        Spend::of(&self.records)
    }
}

/// A successful structured call.
#[derive(Debug, Clone)]
pub struct Structured<T> {
    /// The typed answer.
    pub value: T,
    /// The raw JSON that was validated.
    pub json: Value,
    /// The underlying completion.
    pub completion: Completion,
}

/// A resolved model: registry entry plus its provider.
#[derive(Debug, Clone)]
pub struct ResolvedModel {
    /// Registry name.
    pub name: String,
    /// Model entry.
    pub model: ModelConfig,
    /// Provider name.
    pub provider_name: String,
    /// Provider entry.
    pub provider: ProviderConfig,
}

impl ResolvedModel {
    /// The id sent on the wire.
    pub fn wire_id(&self) -> &str {
        self.model.wire_id(&self.name)
    }
}

/// Calls models on behalf of the pipeline. Cheap to share behind an `Arc`.
pub struct ModelClient {
    models: BTreeMap<String, ModelConfig>,
    providers: BTreeMap<String, ProviderConfig>,
    role_timeouts: BTreeMap<Role, Duration>,
    default_timeout: Duration,
    transport: Transport,
    retry: RetryPolicy,
    breakers: Breakers,
    budget: Mutex<BudgetGuard>,
    calibration: Mutex<Calibration>,
    ledger: Option<Ledger>,
    records: Mutex<Vec<CallRecord>>,
    run: Mutex<Option<String>>,
    env: EnvLookup,
}

impl ModelClient {
    /// A client for the effective configuration. `env` supplies API keys.
    pub fn new(config: &Config, env: EnvLookup) -> Self {
        let mut role_timeouts = BTreeMap::new();
        for role in Role::ALL {
            if let Some(t) = config.roles.get(role).timeout_secs {
                role_timeouts.insert(role, Duration::from_secs(t));
            }
        }
        ModelClient {
            models: config.models.clone(),
            providers: config.providers.clone(),
            role_timeouts,
            default_timeout: Duration::from_secs(config.transport.timeout_secs),
            transport: Transport::new(),
            retry: RetryPolicy::from_config(&config.transport),
            breakers: Breakers::new(
                config.breaker.failure_threshold,
                Duration::from_secs(config.breaker.open_secs),
            ),
            budget: Mutex::new(BudgetGuard::new(config.budget.run_usd)),
            calibration: Mutex::new(Calibration::default()),
            ledger: None,
            records: Mutex::new(Vec::new()),
            run: Mutex::new(None),
            env,
        }
    }

    /// Appends every call to this ledger too, enforces the daily and monthly caps against
    /// what it already holds, and calibrates token estimates with the prompts it recorded.
    pub fn with_ledger(mut self, ledger: Ledger, config: &Config) -> Self {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let records = ledger.read().unwrap_or_default();
        let (day, month) = budget::spent_in_period(&records, now);
        self.calibration = Mutex::new(Calibration::from_records(&records));
        let guard = BudgetGuard::new(config.budget.run_usd)
            .with_period("day", config.budget.daily_usd, day)
            .with_period("month", config.budget.monthly_usd, month);
        self.budget = Mutex::new(guard);
        self.ledger = Some(ledger);
        self
    }

    /// Tags every later call's record with the run it serves (`git triad usage` groups by it).
    pub fn set_run(&self, run: Option<&str>) {
        *self.run.lock().unwrap_or_else(|e| e.into_inner()) = run.map(str::to_string);
    }

    fn run_tag(&self) -> Option<String> {
        self.run.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Replaces the run's budget cap (`--budget`).
    pub fn set_budget(&self, cap_usd: Option<f64>) {
        self.budget
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .set_cap(cap_usd);
    }

    /// Sets the whole cap of a run or session that spent `before_usd` before this process
    /// (see [`BudgetGuard::set_cap_after`]): resuming carries the cap and the spending over.
    pub fn set_budget_after(&self, cap_usd: Option<f64>, before_usd: f64) {
        self.budget
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .set_cap_after(cap_usd, before_usd);
    }

    /// Overrides the per-call timeout of a role.
    pub fn set_timeout(&mut self, role: Role, timeout: Duration) {
        self.role_timeouts.insert(role, timeout);
    }

    /// USD spent by this client so far.
    pub fn spent_usd(&self) -> f64 {
        self.budget
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .spent()
    }

    /// Every call made so far.
    pub fn records(&self) -> Vec<CallRecord> {
        self.records
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Total tokens so far.
    pub fn usage(&self) -> Usage {
        let mut u = Usage::default();
        for r in self.records() {
            u += Usage {
                input_tokens: r.input_tokens,
                output_tokens: r.output_tokens,
                ..Usage::default()
            };
        }
        u
    }

    /// Looks up a registry model and its provider.
    pub fn resolve(&self, name: &str) -> Result<ResolvedModel, ModelError> {
        let model = self
            .models
            .get(name)
            .ok_or_else(|| ModelError::UnknownModel(name.to_string()))?;
        let provider = self
            .providers
            .get(&model.provider)
            .ok_or_else(|| ModelError::UnknownModel(name.to_string()))?;
        Ok(ResolvedModel {
            name: name.to_string(),
            model: model.clone(),
            provider_name: model.provider.clone(),
            provider: provider.clone(),
        })
    }

    /// Why a model cannot be called right now without even trying (missing key), if so.
    pub fn unavailable_reason(&self, m: &ResolvedModel) -> Option<String> {
        let var = m.provider.api_key_env.as_ref()?;
        match (self.env)(var) {
            Some(v) if !v.is_empty() => None,
            _ => Some(format!("{var} is not set")),
        }
    }

    fn key_for(&self, m: &ResolvedModel) -> Option<Secret> {
        let var = m.provider.api_key_env.as_ref()?;
        (self.env)(var).filter(|v| !v.is_empty()).map(Secret::new)
    }

    /// The role's own timeout, else the provider's, else `transport.timeout_secs`.
    fn timeout_for(&self, role: Role, m: &ResolvedModel) -> Duration {
        self.role_timeouts
            .get(&role)
            .copied()
            .or(m.provider.timeout_secs.map(Duration::from_secs))
            .unwrap_or(self.default_timeout)
    }

    /// The window and output cap of `name` (see [`window`]).
    pub fn window(&self, name: &str) -> Result<Window, ModelError> {
        Ok(Window::of(&self.resolve(name)?.model))
    }

    /// The token estimate for `name`'s family, calibrated by what its servers reported to
    /// this client and in the ledger.
    pub fn estimator(&self, name: &str) -> Result<Estimator, ModelError> {
        Ok(self.estimator_of(&self.resolve(name)?))
    }

    fn estimator_of(&self, m: &ResolvedModel) -> Estimator {
        self.calibration
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .estimator(&window::family(m.wire_id()))
    }

    /// How `req` stands against the window of `name`: its estimated prompt tokens, whether
    /// it fits, and the tokens it leaves for more input ([`Room::left`]).
    pub fn room(&self, name: &str, req: &ChatRequest) -> Result<Room, ModelError> {
        let m = self.resolve(name)?;
        Ok(Room::measure(
            Window::of(&m.model),
            &self.estimator_of(&m),
            req,
        ))
    }

    /// The most a call of `req` to `name` can cost (every prompt character a token, every
    /// output token used), as the budget guard reckons it before sending.
    pub fn worst_case_usd(&self, name: &str, req: &ChatRequest) -> Result<f64, ModelError> {
        let m = self.resolve(name)?;
        let max_tokens = req.max_tokens.min(m.model.max_output()).max(1);
        Ok(budget::cost_usd(
            &m.model,
            budget::worst_case_input_tokens(req.prompt_chars()),
            u64::from(max_tokens),
        ))
    }

    /// Asks the first available model of `candidates`; on provider failure (retries used
    /// up, circuit open, key missing) or a window too small for the request, the next one
    /// takes over.
    pub async fn chat(
        &self,
        role: Role,
        candidates: &[String],
        req: &ChatRequest,
    ) -> Result<Completion, ModelError> {
        let mut failures = Vec::new();
        let mut overflows = Vec::new();
        for name in candidates {
            let m = self.resolve(name)?;
            if let Some(why) = self.unavailable_reason(&m) {
                tracing::warn!(model = %name, "skipping {name}: {why}");
                let var = m.provider.api_key_env.clone().unwrap_or_default();
                failures.push(Failure {
                    model: name.clone(),
                    why,
                    cause: Cause::KeyMissing { var },
                });
                continue;
            }
            let room = Room::measure(Window::of(&m.model), &self.estimator_of(&m), req);
            if !room.fits() {
                let overflow = Overflow::of(name, &room);
                tracing::warn!(model = %name, "not sending the request to {name}: {overflow}");
                failures.push(Failure::other(
                    name.clone(),
                    format!("the request does not fit: {overflow}"),
                ));
                overflows.push(overflow);
                continue;
            }
            match self.call_model(role, &m, req, room.answer_cap()).await {
                Ok(c) => return Ok(c),
                Err(CallFailure::Budget(b)) => return Err(ModelError::Budget(b)),
                Err(CallFailure::Provider(why, cause)) => {
                    if candidates.len() > 1 {
                        tracing::warn!(model = %name, "{name} failed ({why}); trying the next model of the {role} role");
                    }
                    failures.push(Failure {
                        model: name.clone(),
                        why,
                        cause,
                    });
                }
            }
        }
        let purpose = req.purpose.clone();
        if !overflows.is_empty() && overflows.len() == failures.len() {
            return Err(ModelError::TooLarge {
                role,
                purpose,
                overflows,
            });
        }
        Err(ModelError::AllFailed {
            role,
            purpose,
            failures,
        })
    }

    /// Like [`chat`](Self::chat), but the answer must be JSON following `T`'s schema.
    ///
    /// The schema goes to the provider in its own form; the answer is validated here; an
    /// invalid answer gets one repair request (to the same model) listing the errors.
    /// A request without a schema gets `T`'s generated schema under the name `answer`.
    pub async fn chat_structured<T: DeserializeOwned + JsonSchema>(
        &self,
        role: Role,
        candidates: &[String],
        req: &ChatRequest,
    ) -> Result<Structured<T>, ModelError> {
        let mut req = req.clone();
        let schema = req
            .schema
            .get_or_insert_with(|| structured::schema_for::<T>("answer"))
            .clone();
        let req = &req;
        let mut first = self.chat(role, candidates, req).await?;
        let errors = match structured::check_answer::<T>(&schema.schema, &first.response) {
            Ok((value, json)) => {
                return Ok(Structured {
                    value,
                    json,
                    completion: first,
                })
            }
            Err(errors) => errors,
        };
        tracing::warn!(model = %first.model, "answer does not follow the schema; asking once for a repair");
        let mut repair = req.clone();
        repair
            .messages
            .push(Message::assistant(first.response.text.clone()));
        repair.messages.push(Message::user(format!(
            "Your answer does not follow the required JSON schema `{}`. Errors:\n- {}\n\nReply again with only the corrected JSON object, nothing else.",
            schema.name,
            errors.join("\n- ")
        )));
        let model = first.model.clone();
        self.fit_echo(&model, &mut repair);
        let second = match self.chat(role, std::slice::from_ref(&model), &repair).await {
            // Even without its echo the repair cannot fit: the answer stays invalid.
            Err(ModelError::TooLarge { .. }) => {
                return Err(ModelError::SchemaViolation {
                    model,
                    schema: schema.name,
                    errors,
                })
            }
            other => other?,
        };
        match structured::check_answer::<T>(&schema.schema, &second.response) {
            Ok((value, json)) => {
                first.records.extend(second.records);
                Ok(Structured {
                    value,
                    json,
                    completion: Completion {
                        response: second.response,
                        model,
                        records: first.records,
                        at_limit: second.at_limit,
                    },
                })
            }
            Err(errors) => Err(ModelError::SchemaViolation {
                model,
                schema: schema.name,
                errors,
            }),
        }
    }

    /// Cuts the answer a repair request echoes (its second-to-last turn) so the request fits
    /// `model`'s window: an answer may be as long as the window left, and the errors come on
    /// top of it.
    fn fit_echo(&self, model: &str, repair: &mut ChatRequest) {
        let (Ok(room), Ok(est)) = (self.room(model, repair), self.estimator(model)) else {
            return;
        };
        let n = repair.messages.len();
        if room.fits() || n < 2 {
            return;
        }
        let excess = room.input + u64::from(room.min_answer()) - room.window.context;
        // A margin for the note saying how much was cut.
        let cut = est.bytes_for(excess + 64);
        let echoed = &mut repair.messages[n - 2].content;
        *echoed = crate::bounded::clip(echoed, echoed.len().saturating_sub(cut));
    }

    /// One model's call: `answer_cap` is the answer's token cap, already fitted to the
    /// model's output cap and to what its window leaves.
    async fn call_model(
        &self,
        role: Role,
        m: &ResolvedModel,
        req: &ChatRequest,
        answer_cap: u32,
    ) -> Result<Completion, CallFailure> {
        let mut req = req.clone();
        req.redact_secrets();
        req.max_tokens = answer_cap;
        let prompt_bytes = req.prompt_chars() as u64;
        if let Some(schema) = &mut req.schema {
            // A small output budget cannot hold long strings and lists; a schema that lets
            // the model ramble gets cut off mid-JSON. Tighter bounds still validate against
            // the caller's schema.
            structured::fit_to_budget(&mut schema.schema, req.max_tokens);
        }
        let estimate = budget::cost_usd(
            &m.model,
            budget::worst_case_input_tokens(req.prompt_chars()),
            u64::from(req.max_tokens),
        );
        self.budget
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .check(estimate)
            .map_err(CallFailure::Budget)?;

        let wire = adapter::build(m.provider.protocol, &m.provider.base_url, m.wire_id(), &req);
        let key = self.key_for(m);
        let timeout = self.timeout_for(role, m);
        let label = req.purpose.clone().unwrap_or_else(|| role.to_string());
        let ts = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let mut attempts = 0u32;
        loop {
            match self.breakers.permit(&m.name) {
                Permit::Refused(_) => {
                    // The cause, not only the circuit: "connection refused …" is what to act on.
                    let (last, cause) = self
                        .breakers
                        .last_failure(&m.name)
                        .unwrap_or_else(|| ("repeated failures".into(), Cause::Other));
                    let why = format!(
                        "{last} (offline after repeated failures: not called again for {}s)",
                        self.breakers.open_for().as_secs()
                    );
                    if attempts > 0 {
                        self.account(self.failed_record(&label, m, ts, attempts, &why));
                    }
                    return Err(CallFailure::Provider(why, cause));
                }
                Permit::Probe => {
                    tracing::info!(model = %m.name, "circuit half-open: probing");
                }
                Permit::Allowed => {}
            }
            attempts += 1;
            let started = Instant::now();
            let result = self
                .transport
                .send(
                    m.provider.protocol,
                    &wire,
                    key.as_ref(),
                    req.stream,
                    timeout,
                )
                .await;
            let latency = started.elapsed();
            match result {
                Ok(resp) => {
                    self.breakers.success(&m.name);
                    let mut record = self.ok_record(&label, m, ts, attempts, latency, &resp);
                    record.prompt_bytes = prompt_bytes;
                    self.calibration
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .observe_record(&record);
                    self.account(record.clone());
                    let at_limit = req
                        .schema
                        .as_ref()
                        .and_then(|s| {
                            let answer = resp
                                .structured
                                .clone()
                                .or_else(|| structured::extract_json(&resp.text))?;
                            Some(structured::strings_at_limit(&s.schema, &answer))
                        })
                        .unwrap_or_default();
                    return Ok(Completion {
                        response: resp,
                        model: m.name.clone(),
                        records: vec![record],
                        at_limit,
                    });
                }
                Err(err) => {
                    let cause = Cause::of(
                        &err,
                        &m.provider_name,
                        &m.provider.base_url,
                        m.provider.api_key_env.as_deref(),
                    );
                    self.breakers
                        .note_failure(&m.name, &err.to_string(), &cause);
                    if !err.is_transient() {
                        // The server answered (400, 401, ...): the provider is up, even if
                        // this request was wrong. This also ends a half-open probe.
                        self.breakers.success(&m.name);
                    } else if self.breakers.failure(&m.name) {
                        tracing::warn!(model = %m.name, "circuit opened after repeated failures");
                    }
                    match self.retry.delay(attempts - 1, &err) {
                        Some(wait) => {
                            tracing::warn!(model = %m.name, attempt = attempts, "{err}; retrying in {wait:?}");
                            tokio::time::sleep(wait).await;
                        }
                        None => {
                            let why = describe_failure(&err, attempts, m);
                            let mut rec = self.failed_record(&label, m, ts, attempts, &why);
                            rec.latency_ms = latency.as_millis() as u64;
                            self.account(rec);
                            return Err(CallFailure::Provider(why, cause));
                        }
                    }
                }
            }
        }
    }

    fn ok_record(
        &self,
        role: &str,
        m: &ResolvedModel,
        ts: u64,
        attempts: u32,
        latency: Duration,
        resp: &ChatResponse,
    ) -> CallRecord {
        let requested = m.wire_id().to_string();
        let mismatch = resp
            .model
            .as_deref()
            .is_some_and(|r| !same_model(&requested, r));
        if mismatch {
            tracing::warn!(
                "asked for model `{requested}` but the server reports `{}`",
                resp.model.as_deref().unwrap_or_default()
            );
        }
        CallRecord {
            ts,
            reported_id: resp.model.clone(),
            model_mismatch: mismatch,
            input_tokens: resp.usage.input_tokens,
            output_tokens: resp.usage.output_tokens,
            cost_usd: budget::cost_usd(&m.model, resp.usage.input_tokens, resp.usage.output_tokens),
            latency_ms: latency.as_millis() as u64,
            attempts,
            run: self.run_tag(),
            ..CallRecord::of(role, &m.name, &m.provider_name, &requested)
        }
    }

    fn failed_record(
        &self,
        role: &str,
        m: &ResolvedModel,
        ts: u64,
        attempts: u32,
        why: &str,
    ) -> CallRecord {
        CallRecord {
            ts,
            attempts,
            outcome: why.to_string(),
            run: self.run_tag(),
            ..CallRecord::of(role, &m.name, &m.provider_name, m.wire_id())
        }
    }

    fn account(&self, record: CallRecord) {
        self.budget
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .spend(record.cost_usd);
        if let Some(ledger) = &self.ledger {
            if let Err(e) = ledger.append(&record) {
                tracing::warn!("could not append to the cost ledger: {e}");
            }
        }
        self.records
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(record);
    }
}

enum CallFailure {
    Budget(BudgetExceeded),
    Provider(String, Cause),
}

fn describe_failure(err: &TransportError, attempts: u32, m: &ResolvedModel) -> String {
    let tries = if attempts == 1 {
        "1 attempt".to_string()
    } else {
        format!("{attempts} attempts")
    };
    match err.status() {
        Some(401 | 403) => format!("{err} (the API key was refused; check it)"),
        Some(404) => format!("{err} ({})", not_found(m)),
        _ if err.is_transient() => format!("{err} (after {tries})"),
        _ => err.to_string(),
    }
}

/// What a 404 from `m`'s server means: the model id is not served there, or the base URL
/// misses its version path, which OpenAI-compatible servers (Ollama, vLLM, LM Studio,
/// llama.cpp) put under `/v1`: then the request went to `<base>/chat/completions`, which
/// such a server does not have.
fn not_found(m: &ResolvedModel) -> String {
    let base = m.provider.base_url.trim_end_matches('/');
    let versioned = reqwest::Url::parse(base).is_ok_and(|u| {
        u.path_segments().is_some_and(|mut segs| {
            segs.any(|seg| {
                seg.strip_prefix('v')
                    .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
            })
        })
    });
    if m.provider.protocol == crate::config::Protocol::Openai && !versioned {
        format!(
            "nothing answers at {base}/chat/completions: the base URL has no `/v1`, under which OpenAI-compatible servers such as Ollama, vLLM and LM Studio answer; set `providers.{}.base_url = \"{base}/v1\"`",
            m.provider_name
        )
    } else {
        format!(
            "the model id `{}` or the endpoint does not exist on this server ({base})",
            m.wire_id()
        )
    }
}

/// Whether a reported model id is the requested one: equal, or a dated snapshot of it
/// (`gpt-4o` answered by `gpt-4o-2024-08-06`), or the same file name for local servers.
pub fn same_model(requested: &str, reported: &str) -> bool {
    if requested == reported {
        return true;
    }
    if let Some(rest) = reported.strip_prefix(requested) {
        return rest.starts_with('-')
            && rest[1..].chars().next().is_some_and(|c| c.is_ascii_digit());
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolved(base_url: &str, protocol: crate::config::Protocol) -> ResolvedModel {
        ResolvedModel {
            name: "my-coder".into(),
            model: toml::from_str("provider = \"mine\"\nid = \"qwen2.5-coder:7b\"").unwrap(),
            provider_name: "mine".into(),
            provider: crate::config::ProviderConfig {
                protocol,
                base_url: base_url.into(),
                api_key_env: None,
                local: true,
                timeout_secs: None,
            },
        }
    }

    #[test]
    fn a_404_without_a_version_path_suggests_v1_and_otherwise_names_the_model_id() {
        use crate::config::Protocol;
        let bare = not_found(&resolved("http://127.0.0.1:11434/", Protocol::Openai));
        assert!(
            bare.contains("set `providers.mine.base_url = \"http://127.0.0.1:11434/v1\"`"),
            "{bare}"
        );
        let versioned = not_found(&resolved("http://127.0.0.1:11434/v1", Protocol::Openai));
        assert!(
            versioned.contains("the model id `qwen2.5-coder:7b`") && !versioned.contains("/v1`"),
            "{versioned}"
        );
        let beta = not_found(&resolved("https://x.example/v1beta", Protocol::Gemini));
        assert!(beta.contains("the model id"), "{beta}");
        // Only the OpenAI protocol lives under /v1.
        let anthropic = not_found(&resolved("https://x.example", Protocol::Anthropic));
        assert!(!anthropic.contains("/v1"), "{anthropic}");
    }

    #[test]
    fn snapshots_count_as_the_same_model() {
        assert!(same_model("gpt-4o", "gpt-4o"));
        assert!(same_model("gpt-4o", "gpt-4o-2024-08-06"));
        assert!(!same_model("gpt-4o", "gpt-4o-mini"));
        assert!(!same_model("a", "b"));
    }
}
