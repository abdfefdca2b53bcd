//! Layered configuration: built-in defaults, user file, repo file (restricted), git config,
//! environment, command line.
//!
//! A cloned repository is untrusted: its committed `.triad/config.toml` may choose models,
//! roles and prompts and tighten limits (lower budgets, more review, fewer retries, more
//! verdicts that block a push), but may not redirect endpoints, name the environment variable
//! a key is read from, set commands, prices, transport settings or more retries — unless this
//! clone was marked trusted in its own `.git/config` with `git config triad.trusted true`
//! (git config is never cloned). See [`repo`].

mod effective;
mod error;
pub mod layers;
mod profile;
mod prompts;
pub mod repo;
mod routing;
pub mod schema;
mod session;
mod validate;

use std::path::{Path, PathBuf};

use toml::{Table, Value};

pub use effective::{RoleInEffect, RoleSource, Uncallable};
pub use error::ConfigError;
pub use layers::{Layer, Origins};
pub use profile::{ProfileChoice, AUTO_PROFILE, LOCAL_PROFILE};
pub use prompts::{default_prompt, prompt};
pub use repo::{restricted_keys, IgnoredValue, RESTRICTED_REPO_KEYS};
pub use routing::{RoutingMode, TOURNAMENT_K};
pub use schema::*;

/// The built-in defaults, compiled in. A broken default is a bug caught by the tests.
pub const DEFAULTS_TOML: &str = include_str!("../../config/defaults.toml");
/// The built-in model registry, compiled in.
pub const MODELS_TOML: &str = include_str!("../../config/models.toml");

/// Environment variable naming the user config file (overrides the XDG location).
pub const USER_CONFIG_ENV: &str = "GIT_TRIAD_CONFIG";
/// Prefix of environment variables that set config keys (`GIT_TRIAD_ARBITER__MODE=full`).
pub const ENV_PREFIX: &str = "GIT_TRIAD_";

/// `GIT_TRIAD_*` variables that are settings of the program or its scripts, not config keys.
pub const RESERVED_ENV: &[&str] = &[
    "LOG",
    "NO_PROGRESS",
    "LOCAL_CACHE",
    "SKIP_E2E",
    "BUILD_JOBS",
];

/// The top-level sections of the configuration.
pub const TOP_LEVEL_KEYS: &[&str] = &[
    "profile",
    "routing",
    "roles",
    "profiles",
    "arbiter",
    "budget",
    "transport",
    "breaker",
    "verify",
    "hooks",
    "notes",
    "privacy",
    "prompts",
    "providers",
    "models",
];

/// What to read, besides the built-in defaults.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// The user config file; `None` means the default location from the environment.
    pub user_file: Option<PathBuf>,
    /// Root of the work tree whose `.triad/config.toml` is the repo layer.
    pub repo_root: Option<PathBuf>,
    /// `triad.*` entries of git config, as (full git key, value).
    pub git_config: Vec<(String, String)>,
    /// Whether `git config triad.trusted` is true for this clone.
    pub trusted: bool,
    /// Environment variables (all of them; only `GIT_TRIAD_*` are used).
    pub env: Vec<(String, String)>,
    /// `-c key=value` arguments, in order.
    pub overrides: Vec<String>,
}

/// The effective configuration with the layer each value came from.
#[derive(Debug, Clone)]
pub struct LoadedConfig {
    /// The typed configuration.
    pub config: Config,
    /// The merged table (for `config show`).
    pub merged: Table,
    /// Dotted key → layer.
    pub origins: Origins,
    /// Whether the clone is trusted.
    pub trusted: bool,
    /// Values of the repository layer that were not applied because they would loosen a
    /// limit of the layers below (each was also logged as a warning).
    pub ignored: Vec<IgnoredValue>,
    /// The providers' key variables that are set (names only, never values): which models
    /// this user can call ([`LoadedConfig::callable`]).
    pub keys: std::collections::BTreeSet<String>,
}

/// The default user config path: `$XDG_CONFIG_HOME/git-triad/config.toml`, else
/// `~/.config/git-triad/config.toml`.
pub fn default_user_file(env: &[(String, String)]) -> Option<PathBuf> {
    let get = |k: &str| {
        env.iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
            .filter(|v| !v.is_empty())
    };
    if let Some(p) = get(USER_CONFIG_ENV) {
        return Some(PathBuf::from(p));
    }
    if let Some(x) = get("XDG_CONFIG_HOME") {
        return Some(Path::new(&x).join("git-triad").join("config.toml"));
    }
    get("HOME").map(|h| Path::new(&h).join(".config/git-triad/config.toml"))
}

fn parse_toml(text: &str, path: &str) -> Result<Table, ConfigError> {
    text.parse::<Table>().map_err(|e| ConfigError::Parse {
        path: path.to_string(),
        message: e.message().to_string(),
    })
}

/// Reads the committed `.triad/config.toml` under `root`, refusing one that is (or lies
/// behind) a symbolic link: a clone's config is read from the clone, never from elsewhere.
fn read_repo_file(root: &Path, path: &Path) -> Result<Option<Table>, ConfigError> {
    match crate::fsguard::read_to_string(root, ".triad/config.toml") {
        Ok(text) => Ok(Some(parse_toml(&text, &path.display().to_string())?)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(ConfigError::Read {
            path: path.to_path_buf(),
            source: e.into_io(),
        }),
    }
}

fn read_optional(path: &Path) -> Result<Option<Table>, ConfigError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(parse_toml(&text, &path.display().to_string())?)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(ConfigError::Read {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Whether `triad.trusted` is true in the repository's own git config file (`$GIT_DIR/config`,
/// libgit2's local level); global, system and worktree-level settings never count.
pub fn trusted_locally(repo: &git2::Repository) -> bool {
    repo.config()
        .and_then(|c| c.open_level(git2::ConfigLevel::Local))
        .and_then(|local| local.get_bool(TRUSTED_GIT_KEY))
        .unwrap_or(false)
}

/// The git config key that marks a clone trusted (read from the local level only).
pub const TRUSTED_GIT_KEY: &str = "triad.trusted";

/// Maps a git config name (`triad.budget.run-usd`) to a config key (`budget.run_usd`).
///
/// Git allows neither `_` in variable names nor case in section/variable names, so `-`
/// stands for `_` in the last segment. Returns `None` for `triad.trusted`, which is not a
/// config key but the trust switch itself.
pub fn git_key_to_config_key(git_key: &str) -> Option<String> {
    let rest = git_key.strip_prefix("triad.")?;
    if rest == "trusted" || rest.is_empty() {
        return None;
    }
    let mut parts: Vec<String> = rest.split('.').map(str::to_string).collect();
    if let Some(last) = parts.last_mut() {
        *last = last.replace('-', "_");
    }
    Some(layers::join_key(&parts))
}

/// Maps `GIT_TRIAD_BUDGET__RUN_USD` to `budget.run_usd`.
pub fn env_key_to_config_key(var: &str) -> Option<String> {
    let rest = var.strip_prefix(ENV_PREFIX)?;
    if rest.is_empty() || var == USER_CONFIG_ENV || rest.starts_with("TEST_") {
        return None;
    }
    // Variables the program and its scripts read, not config keys.
    if RESERVED_ENV.contains(&rest) {
        return None;
    }
    let parts: Vec<String> = rest.split("__").map(|p| p.to_ascii_lowercase()).collect();
    if parts.iter().any(|p| p.is_empty()) {
        return None;
    }
    if !TOP_LEVEL_KEYS.contains(&parts[0].as_str()) {
        tracing::warn!(
            "ignoring {var}: `{}` is not a configuration section (use `__` between levels, e.g. GIT_TRIAD_ARBITER__MODE)",
            parts[0]
        );
        return None;
    }
    Some(layers::join_key(&parts))
}

impl LoadedConfig {
    /// Loads and validates every layer.
    pub fn load(opts: &LoadOptions) -> Result<LoadedConfig, ConfigError> {
        let mut merged = Table::new();
        let mut origins = Origins::new();
        for (text, name) in [
            (DEFAULTS_TOML, "config/defaults.toml"),
            (MODELS_TOML, "config/models.toml"),
        ] {
            layers::merge(
                &mut merged,
                parse_toml(text, name)?,
                &Layer::Default,
                &mut origins,
            );
        }

        let user_file = opts
            .user_file
            .clone()
            .or_else(|| default_user_file(&opts.env));
        if let Some(path) = user_file {
            if let Some(t) = read_optional(&path)? {
                layers::merge(&mut merged, t, &Layer::User(path), &mut origins);
            }
        }

        let mut ignored = Vec::new();
        if let Some(root) = &opts.repo_root {
            let path = root.join(".triad").join("config.toml");
            if let Some(t) = read_repo_file(root, &path)? {
                let r = repo::restrict(t, &merged, opts.trusted, &path)?;
                for i in &r.ignored {
                    tracing::warn!("{i}");
                }
                ignored = r.ignored;
                layers::merge(&mut merged, r.table, &Layer::Repo(path), &mut origins);
            }
        }

        for (git_key, value) in &opts.git_config {
            if let Some(key) = git_key_to_config_key(git_key) {
                let t = layers::table_from_key(&key, layers::parse_value(value))?;
                layers::merge(
                    &mut merged,
                    t,
                    &Layer::GitConfig(git_key.clone()),
                    &mut origins,
                );
            }
        }

        let mut env: Vec<&(String, String)> = opts.env.iter().collect();
        env.sort();
        for (var, value) in env {
            if let Some(key) = env_key_to_config_key(var) {
                let t = layers::table_from_key(&key, layers::parse_value(value))?;
                layers::merge(&mut merged, t, &Layer::Env(var.clone()), &mut origins);
            }
        }

        for item in &opts.overrides {
            let (key, value) = item
                .split_once('=')
                .ok_or_else(|| ConfigError::BadOverride(item.clone()))?;
            let t = layers::table_from_key(key.trim(), layers::parse_value(value.trim()))?;
            layers::merge(&mut merged, t, &Layer::CommandLine, &mut origins);
        }

        let config: Config =
            Value::Table(merged.clone())
                .try_into()
                .map_err(|e: toml::de::Error| ConfigError::Invalid {
                    message: describe_de_error(&e, &origins),
                })?;
        register_keys(&config, &opts.env);
        let keys = keys_set(&config, &opts.env);
        let loaded = LoadedConfig {
            config,
            merged,
            origins,
            trusted: opts.trusted,
            ignored,
            keys,
        };
        loaded.validate()?;
        Ok(loaded)
    }

    /// The layer a dotted key came from.
    pub fn origin(&self, key: &str) -> Option<&Layer> {
        self.origins.get(key)
    }

    fn invalid(&self, key: &str, what: String) -> ConfigError {
        let from = self
            .origin(key)
            .map(|l| format!(" (set by {l})"))
            .unwrap_or_default();
        ConfigError::Invalid {
            message: format!("`{key}`{from}: {what}"),
        }
    }

    /// The models a role uses after the active profile and what this user can call (see
    /// [`Self::role_in_effect`]), without `auto`: for a role routed by fitness these are
    /// its fallbacks, see [`Self::role_is_auto`].
    pub fn role_models(&self, role: Role, profile: Option<&str>) -> Vec<String> {
        self.role_in_effect(role, profile).models.listed()
    }

    /// Whether the role's list (after the active profile) starts with `auto`: its model is
    /// chosen by measured fitness ([`crate::routing`]).
    pub fn role_is_auto(&self, role: Role, profile: Option<&str>) -> bool {
        self.role_in_effect(role, profile).models.is_auto()
    }

    /// The chamber's configured panel and arbiter: `[chamber]`, else the active profile's
    /// `[profiles.<name>.chamber]` (either may be empty: the roles decide then). Where the
    /// user's models declared with no role come first ([`Self::declared_first`]), they take
    /// the profile's panel seats and its arbiter's place first, as they do the roles'.
    pub fn chamber_defaults(&self, profile: Option<&str>) -> (Vec<String>, String) {
        let c = &self.config.chamber;
        let p = profile
            .and_then(|p| self.config.profiles.get(p))
            .map(|p| &p.chamber);
        let declared = self.declared_first(profile);
        let panel = match (c.panel.listed(), p) {
            (v, Some(p)) if v.is_empty() => {
                let seats = p.panel.listed();
                let mut panel: Vec<String> = declared.clone();
                panel.extend(seats.iter().filter(|m| !declared.contains(m)).cloned());
                panel.truncate(seats.len());
                panel
            }
            (v, _) => v,
        };
        let arbiter = match (&c.arbiter, p) {
            (a, Some(p)) if a.is_empty() => declared.first().unwrap_or(&p.arbiter).clone(),
            (a, _) => a.clone(),
        };
        (panel, arbiter)
    }

    /// A role's models as the built-in defaults list them: the order an `auto` role with no
    /// models of its own falls back to when nothing is measured.
    pub fn builtin_role_models(role: Role) -> Vec<String> {
        DEFAULTS_TOML
            .parse::<Table>()
            .ok()
            .and_then(|t| {
                t.get("roles")?
                    .get(role.as_str())?
                    .get("models")?
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(|v| v.as_str().map(str::to_string))
                            .collect()
                    })
            })
            .unwrap_or_default()
    }
}

/// Registers with the redactor the key of every configured provider whose key variable is
/// set, whether or not this command will call it: an error body, a log line or a model may
/// echo any of them.
fn register_keys(config: &Config, env: &[(String, String)]) {
    for provider in config.providers.values() {
        let Some(var) = &provider.api_key_env else {
            continue;
        };
        for (_, value) in env.iter().filter(|(name, _)| name == var) {
            crate::redact::Redactor::global().register(value);
        }
    }
}

/// The key variables of the configured providers that are set to something.
fn keys_set(config: &Config, env: &[(String, String)]) -> std::collections::BTreeSet<String> {
    config
        .providers
        .values()
        .filter_map(|p| p.api_key_env.as_ref())
        .filter(|var| env.iter().any(|(n, v)| n == *var && !v.is_empty()))
        .cloned()
        .collect()
}

impl LoadedConfig {
    /// Whether `key` (dotted, as `config show` and `-c` take it) names a setting the
    /// configuration has, set or not: the schema decides, by reading the effective table
    /// with a value put at `key` (an unknown field is refused by name; a known one at most
    /// for the value's type). A key below a value that is not a table names nothing.
    pub fn knows_key(&self, key: &str) -> bool {
        let Ok(path) = layers::split_key(key) else {
            return false;
        };
        let mut at = &self.merged;
        for part in &path {
            match at.get(part) {
                Some(Value::Table(t)) => at = t,
                Some(_) => return part == path.last().unwrap_or(part),
                None => break,
            }
        }
        let Ok(put) = layers::table_from_key(key, Value::String(String::new())) else {
            return false;
        };
        let mut probe = self.merged.clone();
        layers::merge(&mut probe, put, &Layer::CommandLine, &mut Origins::new());
        match Value::Table(probe).try_into::<Config>() {
            Ok(_) => true,
            Err(e) => !e.message().trim().starts_with("unknown field `"),
        }
    }
}

fn describe_de_error(e: &toml::de::Error, origins: &Origins) -> String {
    let msg = e.message().trim().to_string();
    // Point at the layer of an unknown field when we can find it.
    if let Some(field) = msg
        .strip_prefix("unknown field `")
        .and_then(|r| r.split('`').next())
    {
        if let Some((key, layer)) = origins
            .iter()
            .find(|(k, _)| k.ends_with(&format!(".{field}")) || k.as_str() == field)
        {
            return format!("{msg} (key `{key}` set by {layer})");
        }
    }
    msg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_arbiter_mode_is_written_by_the_name_it_is_read_by() {
        for m in ArbiterMode::ALL {
            assert_eq!(serde_json::to_value(m).unwrap(), m.as_str());
            let back: ArbiterMode = serde_json::from_value(m.as_str().into()).unwrap();
            assert_eq!(back, m);
            assert_eq!(m.as_str().parse::<ArbiterMode>(), Ok(m));
        }
        // The names `arbiter.mode`, `--arbiter` and `bench --compare` have always taken.
        assert_eq!(ArbiterMode::NAMES, ["off", "final", "bookend", "full"]);
        assert_eq!(
            "sometimes".parse::<ArbiterMode>().unwrap_err(),
            "`sometimes` is not a mode (off, final, bookend, full)"
        );
    }

    #[test]
    fn routing_modes_and_escalations_are_written_by_the_names_they_are_read_by() {
        for m in RoutingMode::ALL {
            assert_eq!(serde_json::to_value(m).unwrap(), m.as_str());
            assert_eq!(
                serde_json::from_value::<RoutingMode>(m.as_str().into()).unwrap(),
                m
            );
            assert_eq!(m.as_str().parse::<RoutingMode>(), Ok(m));
        }
        assert_eq!(
            RoutingMode::NAMES,
            ["quality", "cost", "speed", "hybrid", "tournament"]
        );
        assert_eq!(RoutingMode::default(), RoutingMode::Quality);
        assert_eq!(
            "fast".parse::<RoutingMode>().unwrap_err(),
            "`fast` is not a routing mode (quality, cost, speed, hybrid, tournament)"
        );
        for e in OnExhausted::ALL {
            assert_eq!(serde_json::to_value(e).unwrap(), e.as_str());
            assert_eq!(
                serde_json::from_value::<OnExhausted>(e.as_str().into()).unwrap(),
                e
            );
        }
        assert_eq!(OnExhausted::NAMES, ["halt", "rewind"]);
    }

    fn load(opts: LoadOptions) -> Result<LoadedConfig, ConfigError> {
        LoadedConfig::load(&LoadOptions {
            user_file: Some(
                opts.user_file
                    .unwrap_or_else(|| "/nonexistent/x.toml".into()),
            ),
            ..opts
        })
    }

    #[test]
    fn built_in_defaults_are_valid() {
        let c = load(LoadOptions::default()).unwrap();
        assert_eq!(c.config.arbiter.mode, ArbiterMode::Bookend);
        assert_eq!(c.origin("arbiter.mode"), Some(&Layer::Default));
        assert!(c.config.models.contains_key("gpt-4.1"));
    }

    #[test]
    fn later_layers_win_and_are_recorded() {
        let c = load(LoadOptions {
            git_config: vec![("triad.budget.run-usd".into(), "3.5".into())],
            env: vec![("GIT_TRIAD_ARBITER__MODE".into(), "full".into())],
            overrides: vec!["arbiter.max_retries=1".into()],
            ..Default::default()
        })
        .unwrap();
        assert_eq!(c.config.budget.run_usd, Some(3.5));
        assert_eq!(c.config.arbiter.mode, ArbiterMode::Full);
        assert_eq!(c.config.arbiter.max_retries, 1);
        assert_eq!(c.origin("arbiter.max_retries"), Some(&Layer::CommandLine));
        assert!(matches!(c.origin("arbiter.mode"), Some(Layer::Env(_))));
    }

    #[test]
    fn unknown_keys_and_models_are_errors() {
        let e = load(LoadOptions {
            overrides: vec!["arbiter.mood=full".into()],
            ..Default::default()
        })
        .unwrap_err();
        assert!(e.to_string().contains("mood"), "{e}");
        let e = load(LoadOptions {
            overrides: vec!["roles.architect.models=gpt-9".into()],
            ..Default::default()
        })
        .unwrap_err();
        assert!(e.to_string().contains("gpt-9"), "{e}");
    }

    #[test]
    fn git_and_env_names_map_to_keys() {
        assert_eq!(
            git_key_to_config_key("triad.budget.run-usd").as_deref(),
            Some("budget.run_usd")
        );
        assert_eq!(git_key_to_config_key("triad.trusted"), None);
        assert_eq!(
            env_key_to_config_key("GIT_TRIAD_HOOKS__PRE_PUSH__BLOCK_ON").as_deref(),
            Some("hooks.pre_push.block_on")
        );
        assert_eq!(env_key_to_config_key("GIT_TRIAD_CONFIG"), None);
        assert_eq!(env_key_to_config_key("GIT_TRIAD_LOCAL_CACHE"), None);
        assert_eq!(env_key_to_config_key("GIT_TRIAD_ARBITER_MODE"), None);
    }
}
