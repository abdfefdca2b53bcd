//! The typed shape of the configuration, deserialized from the merged layers.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};

use super::routing::RoutingMode;
pub use super::session::{SessionConfig, DEFAULT_HARD_LIMIT};

crate::names::named! {
    /// The wire protocol a provider speaks, by the name `providers.<name>.protocol`
    /// takes; each has one adapter in `model::adapter`.
    pub enum Protocol: "a protocol", written snake_case {
        /// OpenAI chat completions, spoken by most servers (vLLM, llama.cpp, Ollama, xAI, ...).
        Openai,
        /// Anthropic Messages.
        Anthropic,
        /// Google Gemini generateContent.
        Gemini,
    }
}

crate::names::named! {
    /// A model role, by the name config keys and prompts write (`implementer`): the
    /// pipeline's roles in pipeline order with the arbiter and tiebreaker last, then a
    /// session's.
    #[derive(PartialOrd, Ord)]
    pub enum Role: "a role", written snake_case {
        /// Designs the scaffold: structure, interfaces, file layout.
        Architect,
        /// Wires the logic.
        Implementer,
        /// Improves quality, adds tests and edge cases.
        Refactorer,
        /// Validates the result and writes the implementation summary.
        Verifier,
        /// Reviews other models' work; never generates.
        Arbiter,
        /// Breaks ties of a consensus vote; defaults to a model that did not vote.
        Tiebreaker,
        /// Talks to the human in a `git triad session` and summons orchestrators (seed 002's
        /// "Arbiter"; named manager here, since the arbiter is the reviewer).
        Manager,
        /// Does a session's work through blocking git triad tools, under the manager.
        Orchestrator,
    }
}

impl Role {
    /// The pipeline's roles, in pipeline order with the arbiter last: the ones
    /// `git triad bench` measures and routing picks models for.
    pub const PIPELINE: [Role; 6] = [
        Role::Architect,
        Role::Implementer,
        Role::Refactorer,
        Role::Verifier,
        Role::Arbiter,
        Role::Tiebreaker,
    ];

    /// The roles of a hierarchical session (`git triad session`): not pipeline roles, so
    /// neither measured by `git triad bench` nor routed by fitness.
    pub const SESSION: [Role; 2] = [Role::Manager, Role::Orchestrator];
}

/// The entry of a role's model list that asks for the model with the best measured fitness
/// (see [`crate::routing`]); models listed after it are the fallback order.
pub const AUTO: &str = "auto";

/// A list of model names that may also be written as one string (`"a"` or `"a, b"`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct ModelList(pub Vec<String>);

impl ModelList {
    /// Whether the list starts with [`AUTO`]: the role is routed by measured fitness.
    pub fn is_auto(&self) -> bool {
        self.0.first().is_some_and(|m| m == AUTO)
    }

    /// The models named, without [`AUTO`].
    pub fn listed(&self) -> Vec<String> {
        self.0.iter().filter(|m| *m != AUTO).cloned().collect()
    }
}

impl<'de> Deserialize<'de> for ModelList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            One(String),
            Many(Vec<String>),
        }
        Ok(match Raw::deserialize(d)? {
            Raw::One(s) => ModelList(
                s.split(',')
                    .map(|p| p.trim().to_string())
                    .filter(|p| !p.is_empty())
                    .collect(),
            ),
            Raw::Many(v) => ModelList(v),
        })
    }
}

/// The whole effective configuration.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// `auto`, or the name of a `[profiles.*]` table whose roles override `[roles]`.
    pub profile: String,
    /// How roles whose models are `auto` pick by measured fitness.
    #[serde(default)]
    pub routing: RoutingMode,
    /// How many of a run's stages one model may hold while its role lists another that
    /// holds fewer; 0 is no limit.
    #[serde(default)]
    pub max_stages_per_model: u32,
    /// Whether a run also asks the stages a task leaves nothing to do (the architect's plan
    /// and the refactor of a bug fix whose failing test is its specification); by default
    /// they are skipped, each said with why.
    #[serde(default)]
    pub run_idle_stages: bool,
    /// Model preferences per role.
    pub roles: Roles,
    /// Named alternative role assignments.
    #[serde(default)]
    pub profiles: BTreeMap<String, Profile>,
    /// Arbiter behaviour.
    pub arbiter: ArbiterConfig,
    /// Spending caps.
    pub budget: BudgetConfig,
    /// HTTP timeouts and retries.
    pub transport: TransportConfig,
    /// Per-provider circuit breaker.
    pub breaker: BreakerConfig,
    /// The verify command (trusted clones only).
    pub verify: VerifyConfig,
    /// The formatter run on the result before Verify (trusted clones only).
    #[serde(default)]
    pub format: FormatConfig,
    /// The box model-written code runs in: whether it is required, its limits, more
    /// toolchain paths it may read (a repository may only tighten).
    #[serde(default)]
    pub sandbox: crate::sandbox::Policy,
    /// Git hook policy.
    pub hooks: HooksConfig,
    /// Verdict notes shared with remotes.
    #[serde(default)]
    pub notes: NotesConfig,
    /// The consensus stage between refactor and verify.
    #[serde(default)]
    pub consensus: ConsensusConfig,
    /// Files never shown to a model, beyond the built-in deny-list.
    #[serde(default)]
    pub privacy: PrivacyConfig,
    /// The deliberation chamber: its panel, its arbiter and its caps (seed 003).
    #[serde(default)]
    pub chamber: ChamberConfig,
    /// Hierarchical sessions: hand-off limit, loop guards and their cap (seed 002).
    #[serde(default)]
    pub session: SessionConfig,
    /// Prompt overrides: role name → file path (relative to the repo root) or inline text.
    #[serde(default)]
    pub prompts: BTreeMap<String, String>,
    /// Provider registry.
    pub providers: BTreeMap<String, ProviderConfig>,
    /// Model registry.
    pub models: BTreeMap<String, ModelConfig>,
}

/// Model preferences for each role.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Roles {
    /// Architect stage.
    pub architect: RoleConfig,
    /// Implement stage.
    pub implementer: RoleConfig,
    /// Refactor stage.
    pub refactorer: RoleConfig,
    /// Verify stage.
    pub verifier: RoleConfig,
    /// The reviewer.
    pub arbiter: RoleConfig,
    /// Who breaks a consensus tie (empty: the first arbiter-role model that did not vote).
    #[serde(default)]
    pub tiebreaker: RoleConfig,
    /// The manager of `git triad session`.
    #[serde(default)]
    pub manager: RoleConfig,
    /// The orchestrators of `git triad session`.
    #[serde(default)]
    pub orchestrator: RoleConfig,
}

impl Roles {
    /// The settings of one role.
    pub fn get(&self, role: Role) -> &RoleConfig {
        match role {
            Role::Architect => &self.architect,
            Role::Implementer => &self.implementer,
            Role::Refactorer => &self.refactorer,
            Role::Verifier => &self.verifier,
            Role::Arbiter => &self.arbiter,
            Role::Tiebreaker => &self.tiebreaker,
            Role::Manager => &self.manager,
            Role::Orchestrator => &self.orchestrator,
        }
    }

    /// The settings of one role, mutable.
    pub fn get_mut(&mut self, role: Role) -> &mut RoleConfig {
        match role {
            Role::Architect => &mut self.architect,
            Role::Implementer => &mut self.implementer,
            Role::Refactorer => &mut self.refactorer,
            Role::Verifier => &mut self.verifier,
            Role::Arbiter => &mut self.arbiter,
            Role::Tiebreaker => &mut self.tiebreaker,
            Role::Manager => &mut self.manager,
            Role::Orchestrator => &mut self.orchestrator,
        }
    }
}

/// Settings of one role.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RoleConfig {
    /// Models in order of preference; later ones are fallbacks. `"auto"` first picks the
    /// model with the best measured fitness under `routing`.
    #[serde(default)]
    pub models: ModelList,
    /// Per-call timeout for this role, overriding `transport.timeout_secs`.
    pub timeout_secs: Option<u64>,
    /// Cap on output tokens per call for this role.
    pub max_output_tokens: Option<u32>,
    /// Sampling temperature.
    pub temperature: Option<f32>,
}

/// A named role assignment.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// What the profile is for, shown by `git triad models list`.
    #[serde(default)]
    pub description: String,
    /// Role → models; roles not named keep `[roles]`.
    #[serde(default)]
    pub roles: BTreeMap<Role, ModelList>,
    /// The chamber's panel and arbiter under this profile, when `[chamber]` names none.
    #[serde(default)]
    pub chamber: ProfileChamber,
}

crate::names::named! {
    /// Which stages the arbiter reviews (seed 000 §B6): the name `--arbiter` takes, the
    /// configuration writes (`arbiter.mode`) and a comparison calls its arm by.
    pub enum ArbiterMode: "a mode", written snake_case {
        /// No review.
        Off,
        /// Verify stage only.
        Final,
        /// Architect and Verify (the recommended default).
        Bookend,
        /// Every stage.
        Full,
    }
}

crate::names::named! {
    /// What happens when a stage uses up its retries (`arbiter.on_exhausted`).
    pub enum OnExhausted: "an escalation", written snake_case {
        /// Stop for a human (exit 3).
        Halt,
        /// Re-run the previous stage with the accumulated feedback and the role's next model.
        Rewind,
    }
}

/// Arbiter behaviour.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ArbiterConfig {
    /// Review depth.
    pub mode: ArbiterMode,
    /// Arbiter-triggered retries per stage.
    pub max_retries: u32,
    /// Escalation after the retries.
    pub on_exhausted: OnExhausted,
    /// Arbiter model for the architect stage (else the first arbiter model that differs).
    pub architect: Option<String>,
    /// Arbiter model for the implement stage.
    pub implement: Option<String>,
    /// Arbiter model for the refactor stage.
    pub refactor: Option<String>,
    /// Arbiter model for the verify stage.
    pub verify: Option<String>,
}

/// Spending caps in USD.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetConfig {
    /// Cap for one run; `0` or absent means no cap.
    pub run_usd: Option<f64>,
    /// Cap per calendar day (UTC) across runs, from the local ledger.
    pub daily_usd: Option<f64>,
    /// Cap per calendar month (UTC) across runs, from the local ledger.
    pub monthly_usd: Option<f64>,
}

/// HTTP behaviour of the shared transport.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TransportConfig {
    /// Per-call timeout.
    pub timeout_secs: u64,
    /// Retries of one call on transient failures.
    pub max_retries: u32,
    /// Backoff base.
    pub backoff_base_ms: u64,
    /// Backoff ceiling.
    pub backoff_max_ms: u64,
    /// Longest `Retry-After` honoured.
    pub retry_after_max_secs: u64,
}

/// The consensus stage (seed 000 §B9 row 4).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ConsensusConfig {
    /// Hold a consensus vote of the stage models on the refactored result in every run
    /// (`git triad run --consensus` asks for it once).
    #[serde(default)]
    pub enabled: bool,
}

/// Per-provider circuit breaker.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BreakerConfig {
    /// Consecutive failures that open the circuit.
    pub failure_threshold: u32,
    /// Seconds the circuit stays open before one probe.
    pub open_secs: u64,
}

/// The verify command.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct VerifyConfig {
    /// Shell command; empty means none.
    pub command: String,
    /// Seconds before the command is killed.
    pub timeout_secs: u64,
    /// Whether the command also runs after each building stage (implement, refactor), whose
    /// change is asked again with the output when it makes a passing command fail.
    #[serde(default = "yes")]
    pub while_building: bool,
}

/// `true`, for settings that are on unless turned off.
fn yes() -> bool {
    true
}

/// The formatter (seed 001 §9): a trusted command, like the verify command, run on the
/// result after the refactor stage and the consensus, before Verify; what it changes is
/// its own commit, so style never depends on the models agreeing.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FormatConfig {
    /// Shell command run in the box at the root of a scratch copy of the result; empty means
    /// none.
    #[serde(default)]
    pub command: String,
    /// Seconds before the command is killed.
    #[serde(default = "default_format_timeout")]
    pub timeout_secs: u64,
}

impl Default for FormatConfig {
    fn default() -> Self {
        FormatConfig {
            command: String::new(),
            timeout_secs: default_format_timeout(),
        }
    }
}

fn default_format_timeout() -> u64 {
    300
}

/// Git hook policy.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct HooksConfig {
    /// The pre-push gate.
    pub pre_push: PrePushConfig,
}

/// The pre-push gate.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PrePushConfig {
    /// Verdicts that block: `HALT`, `REJECT`, `FLAG`, `missing` (see
    /// [`crate::verdict::Blocker`]).
    pub block_on: Vec<String>,
}

impl PrePushConfig {
    /// The entries as the gate reads them; validation has refused any it cannot read, and
    /// one that still cannot be read blocks nothing less: it is returned as the error.
    pub fn blockers(&self) -> Result<Vec<crate::verdict::Blocker>, String> {
        self.block_on
            .iter()
            .map(|w| crate::verdict::Blocker::parse(w))
            .collect()
    }
}

/// Verdict notes shared with remotes.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NotesConfig {
    /// Remotes whose fetched notes may relax a verdict (their overrides count, and
    /// `git triad notes fetch` merges them into yours). Notes from any other remote only add
    /// verdicts. Only the user's own config may set it, never a repository's.
    #[serde(default)]
    pub trusted_remotes: Vec<String>,
}

/// Private files (see [`crate::privacy`]).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PrivacyConfig {
    /// Globs of files withheld from models on top of the built-in deny-list (`.env`, keys,
    /// certificates, credentials files), which cannot be turned off. A committed repo config
    /// may only add patterns.
    #[serde(default)]
    pub withhold: Vec<String>,
}

/// How to reach one API.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    /// Wire protocol.
    pub protocol: Protocol,
    /// Base URL including the API version path (`https://api.openai.com/v1`).
    pub base_url: String,
    /// Environment variable holding the API key; absent for keyless local servers.
    pub api_key_env: Option<String>,
    /// A server on this machine (availability is probed, not assumed).
    #[serde(default)]
    pub local: bool,
    /// Per-call timeout of this provider's calls, replacing `transport.timeout_secs` (a
    /// role's own `timeout_secs` still wins): a model on this machine's CPU answers slowly
    /// when the machine is busy, and a call cut off must start its answer again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<u64>,
}

/// The context window assumed for a model that sets none and whose server does not say.
pub const DEFAULT_CONTEXT_WINDOW: u64 = 8192;

/// The output cap assumed for a model that sets none and whose server does not say.
pub const DEFAULT_MAX_OUTPUT_TOKENS: u32 = 4096;

/// What a model costs and can do. Only `provider` (and `id`, when the registry name is not
/// the wire id) are needed: the limits are read from the server when it says them, else
/// [`DEFAULT_CONTEXT_WINDOW`] and [`DEFAULT_MAX_OUTPUT_TOKENS`]; prices default to 0 on a
/// `local = true` provider and must be given for any other.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    /// Provider key in `[providers]`.
    pub provider: String,
    /// Model id sent on the wire; defaults to the registry name.
    pub id: Option<String>,
    /// Context window in tokens; unset: read from the server, else the default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
    /// Largest output the model accepts per call; unset: read from the server, else the
    /// default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    /// USD per million input tokens (unset: 0 on a local provider; required otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price_in: Option<f64>,
    /// USD per million output tokens (unset: 0 on a local provider; required otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price_out: Option<f64>,
    /// `json_schema`, `tools`, `gbnf` (the server constrains decoding to a GBNF grammar).
    #[serde(default)]
    pub capabilities: Vec<String>,
    /// Fitness per role in [0, 1], used to rank models in listings.
    #[serde(default)]
    pub fitness: BTreeMap<String, f64>,
    /// How the model writes edits: SEARCH/REPLACE blocks (strong models) or whole files
    /// (small models, which cannot copy lines exactly); unset, it follows the model's size
    /// as its id names it ([`ModelConfig::edits`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edit_format: Option<EditFormat>,
}

/// How a model is asked to write its edits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EditFormat {
    /// SEARCH/REPLACE blocks: small answers, exact copies of the lines to change.
    #[default]
    Diff,
    /// The whole new content of every changed file: longer answers, nothing to copy exactly.
    Whole,
}

/// The most parameters (in billions) of a model that writes whole files when its
/// registration does not say: small models copy lines inexactly, so their SEARCH blocks miss
/// (seen: five of six implement attempts of a 1.5B model ended "no edit changed a file"),
/// and mature tools pick whole files for weak models.
const WHOLE_FILES_UP_TO_BILLIONS: f64 = 14.0;

impl ModelConfig {
    /// How the model registered as `name` writes its edits: as configured, else whole files
    /// when its wire id names a size of at most 14 billion parameters (`qwen2.5-coder:7b`,
    /// `Qwen2.5-Coder-1.5B-Instruct`), else SEARCH/REPLACE blocks.
    pub fn edits(&self, name: &str) -> EditFormat {
        if let Some(f) = self.edit_format {
            return f;
        }
        let id = self.wire_id(name).to_lowercase();
        let small = id
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '.'))
            .filter_map(|t| t.strip_suffix('b')?.parse::<f64>().ok())
            .any(|b| b > 0.0 && b <= WHOLE_FILES_UP_TO_BILLIONS);
        if small {
            EditFormat::Whole
        } else {
            EditFormat::Diff
        }
    }

    /// The id to send on the wire for the model registered as `name`.
    pub fn wire_id<'a>(&'a self, name: &'a str) -> &'a str {
        self.id.as_deref().unwrap_or(name)
    }

    /// Whether the model declares a capability.
    pub fn has(&self, capability: &str) -> bool {
        self.capabilities.iter().any(|c| c == capability)
    }

    /// The context window: as configured (or read from the server into the configuration),
    /// else [`DEFAULT_CONTEXT_WINDOW`].
    pub fn window(&self) -> u64 {
        self.context_window.unwrap_or(DEFAULT_CONTEXT_WINDOW)
    }

    /// The output cap: as configured (or read from the server), else
    /// [`DEFAULT_MAX_OUTPUT_TOKENS`].
    pub fn max_output(&self) -> u32 {
        self.max_output_tokens.unwrap_or(DEFAULT_MAX_OUTPUT_TOKENS)
    }

    /// USD per million (input, output) tokens; an unset price is 0, which validation allows
    /// only on a local provider.
    pub fn prices(&self) -> (f64, f64) {
        (self.price_in.unwrap_or(0.0), self.price_out.unwrap_or(0.0))
    }
}

/// The deliberation chamber (seed 003): who sits on the panel, who arbitrates, and what it
/// may spend.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ChamberConfig {
    /// Two or three registry models answering independently (empty: the distinct models of
    /// the effective roles, at most three).
    #[serde(default)]
    pub panel: ModelList,
    /// The model that synthesizes (empty: the first model of the arbiter role).
    #[serde(default)]
    pub arbiter: String,
    /// Sessions a day in this repository (0: no limit).
    #[serde(default = "default_sessions_per_day")]
    pub sessions_per_day: u32,
    /// Hard stop per session in USD, checked before every call (0: no cap).
    #[serde(default = "default_session_usd")]
    pub session_usd: f64,
    /// Chamber spending a calendar month in USD (0: no cap).
    #[serde(default = "default_chamber_monthly_usd")]
    pub monthly_usd: f64,
    /// Output token cap of each chamber call.
    #[serde(default = "default_chamber_max_tokens")]
    pub max_tokens: u32,
}

fn default_sessions_per_day() -> u32 {
    10
}
fn default_session_usd() -> f64 {
    3.0
}
fn default_chamber_monthly_usd() -> f64 {
    100.0
}
fn default_chamber_max_tokens() -> u32 {
    1024
}

impl Default for ChamberConfig {
    fn default() -> Self {
        ChamberConfig {
            panel: ModelList::default(),
            arbiter: String::new(),
            sessions_per_day: default_sessions_per_day(),
            session_usd: default_session_usd(),
            monthly_usd: default_chamber_monthly_usd(),
            max_tokens: default_chamber_max_tokens(),
        }
    }
}

/// A profile's chamber: the panel and the arbiter that work with its models.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileChamber {
    /// Two or three distinct models.
    #[serde(default)]
    pub panel: ModelList,
    /// The model that synthesizes.
    #[serde(default)]
    pub arbiter: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_writes_whole_files_when_it_says_so_or_its_id_names_a_small_size() {
        let model = |id: &str, format: &str| -> ModelConfig {
            toml::from_str(&format!("provider = \"p\"\nid = \"{id}\"\n{format}")).unwrap()
        };
        for (id, format, want) in [
            ("qwen2.5-coder:7b", "", EditFormat::Whole),
            ("Qwen2.5-Coder-1.5B-Instruct", "", EditFormat::Whole),
            ("deepseek-coder-v2:16b", "", EditFormat::Diff),
            ("llama-3.3-70b-versatile", "", EditFormat::Diff),
            ("gpt-5", "", EditFormat::Diff),
            (
                "qwen2.5-coder:7b",
                "edit_format = \"diff\"",
                EditFormat::Diff,
            ),
            ("gpt-5", "edit_format = \"whole\"", EditFormat::Whole),
        ] {
            assert_eq!(model(id, format).edits("name"), want, "{id} {format}");
        }
    }
}
