//! One structured model call a step makes (a vote, a ruling, an observation, a cross-review):
//! the role's prompt, the answer validated against its schema, its spend added to the run's
//! and its transcript kept.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use super::step::{BlockOn, Cx, Journal};
use crate::config::{prompt, Role};
use crate::model::{ChatRequest, Exchange, ModelError, Spend};
use crate::pipeline::record::Transcript;

/// Output tokens for one structured answer.
const MAX_TOKENS: u32 = 2048;

/// One structured call to `model` with the `system` role prompt and the `user` message,
/// its transcript kept as `(stage, label)`'s; its spend is added to the run's.
pub(in crate::pipeline) fn structured_call<T: DeserializeOwned + JsonSchema>(
    cx: &Cx<'_>,
    j: &mut Journal<'_>,
    (stage, label): (&str, &str),
    role: Role,
    model: &str,
    system: &str,
    user: String,
) -> Result<(T, Spend), ModelError> {
    let system = prompt(&cx.env.config.config, system, Some(&cx.env.repo_root()));
    let req = ChatRequest::new(Some(system), user, MAX_TOKENS);
    let result = cx
        .env
        .client
        .chat_structured::<T>(role, &[model.to_string()], &req)
        .await_blocking()?;
    let spend = result.completion.spend();
    j.state.add_spend(spend);
    let transcript = Transcript::new(stage, label, Exchange::structured(&req, &result));
    j.transcript(&transcript);
    Ok((result.value, spend))
}
