//! Which profile is in effect, why, and which roles it may decide.
//!
//! A profile (`[profiles.<name>]`) is a ready-made role assignment: the built-in `local` one
//! runs everything on the offline default's small models. It fills in only what the user left
//! unset: a role the user configured (in any layer above the built-in defaults) keeps the
//! user's models, and `profile = "auto"` picks `local` only for a user who chose no models of
//! their own — no role configured, no model named on the command line — and has no key set.

use super::{LoadedConfig, Role};

/// The profile in effect and why, as `git triad config show --origin` says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileChoice {
    /// The profile applied to the roles the user left unset, if any.
    pub name: Option<String>,
    /// Why: the configured name, or what `auto` saw.
    pub reason: String,
}

/// The built-in profile that needs no key and no network.
pub const LOCAL_PROFILE: &str = "local";

/// The `profile` value (the default) that picks one: [`LOCAL_PROFILE`] for a user with no key
/// and no models of their own, else none (the `[roles]`).
pub const AUTO_PROFILE: &str = "auto";

impl LoadedConfig {
    /// The profile in effect, for a command that names no models of its own.
    pub fn active_profile(&self, env: &[(String, String)]) -> Option<String> {
        self.profile_choice(env, &[]).name
    }

    /// The profile in effect and why. `explicit` are the models the command line names
    /// (`--implementer M`, `--candidates ...`): like configured roles, they are the user's own
    /// choice, which `auto` never replaces by the local profile.
    pub fn profile_choice(&self, env: &[(String, String)], explicit: &[String]) -> ProfileChoice {
        let c = &self.config;
        if c.profile != AUTO_PROFILE {
            let from = self
                .origin("profile")
                .map(|l| format!(" (set by {l})"))
                .unwrap_or_default();
            return ProfileChoice {
                name: Some(c.profile.clone()),
                reason: format!(
                    "`profile = \"{}\"`{from}; it applies to the roles you did not configure",
                    c.profile
                ),
            };
        }
        let own = self.user_roles();
        if !own.is_empty() {
            let names: Vec<String> = own.iter().map(|r| format!("roles.{r}")).collect();
            return ProfileChoice {
                name: None,
                reason: format!(
                    "auto: you configured {} yourself, so the roles are yours ([roles] and the built-in defaults)",
                    names.join(", ")
                ),
            };
        }
        if !explicit.is_empty() {
            return ProfileChoice {
                name: None,
                reason: format!(
                    "auto: the command line names {}, so the roles are [roles] (use `-c profile=local` to keep the local profile for the rest)",
                    explicit.join(", ")
                ),
            };
        }
        if let Some(var) = self.key_in_use(env) {
            return ProfileChoice {
                name: None,
                reason: format!(
                    "auto: {var} is set, so the roles are [roles], on models you can call"
                ),
            };
        }
        if !c.profiles.contains_key(LOCAL_PROFILE) {
            return ProfileChoice {
                name: None,
                reason: "auto: no API key is set and there is no `local` profile, so the roles are [roles]".into(),
            };
        }
        let declared: Vec<String> = self
            .declared_without_role()
            .into_iter()
            .filter(|m| self.callable(m))
            .collect();
        let reason = if declared.is_empty() {
            "auto: no API key is set and you configured no roles of your own, so the built-in `local` profile runs everything on this machine".to_string()
        } else {
            format!(
                "auto: no API key is set and you configured no roles of your own; the models you declared with no role ({}) come first in every role, and the built-in `local` profile's models follow",
                declared.join(", ")
            )
        };
        ProfileChoice {
            name: Some(LOCAL_PROFILE.to_string()),
            reason,
        }
    }

    /// The roles whose models a layer above the built-in defaults sets (user file, repository,
    /// git config, environment, `-c`): a profile never replaces them.
    pub fn user_roles(&self) -> Vec<Role> {
        Role::PIPELINE
            .into_iter()
            .chain(Role::SESSION)
            .filter(|r| self.user_set_role(*r))
            .collect()
    }

    fn user_set_role(&self, role: Role) -> bool {
        self.user_layer_of(role).is_some()
    }

    /// The variable of the first key of a registered model's provider that is set: with it,
    /// the roles run on what the user can call (see [`Self::role_in_effect`]).
    fn key_in_use(&self, env: &[(String, String)]) -> Option<String> {
        let c = &self.config;
        c.models.values().find_map(|m| {
            let var = c.providers.get(&m.provider)?.api_key_env.as_ref()?;
            env.iter()
                .any(|(n, v)| n == var && !v.is_empty())
                .then(|| var.clone())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::LoadOptions;

    #[test]
    fn the_profile_names_are_those_the_config_writes() {
        // The default configuration asks for `auto`, and the built-in profiles name `local`.
        let plain = load(&[]);
        assert_eq!(plain.config.profile, AUTO_PROFILE);
        assert!(plain.config.profiles.contains_key(LOCAL_PROFILE));
        assert_eq!((AUTO_PROFILE, LOCAL_PROFILE), ("auto", "local"));
    }

    fn load(overrides: &[&str]) -> LoadedConfig {
        LoadedConfig::load(&LoadOptions {
            user_file: Some("/nonexistent/x.toml".into()),
            overrides: overrides.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        })
        .unwrap()
    }

    #[test]
    fn auto_picks_local_only_for_a_user_without_keys_roles_or_named_models() {
        let none: &[(String, String)] = &[];
        let plain = load(&[]);
        assert_eq!(plain.active_profile(none).as_deref(), Some("local"));
        let key = [("OPENAI_API_KEY".to_string(), "sk-x".to_string())];
        let keyed = plain.profile_choice(&key, &[]);
        assert_eq!(keyed.name, None);
        assert!(keyed.reason.contains("OPENAI_API_KEY"), "{}", keyed.reason);
        let named = plain.profile_choice(none, &["ollama-qwen2-5-coder".to_string()]);
        assert_eq!(named.name, None);
        assert!(
            named.reason.contains("ollama-qwen2-5-coder"),
            "{}",
            named.reason
        );
        // A role's other settings are not a choice of models.
        let tuned = load(&["roles.implementer.max_output_tokens=512"]);
        assert_eq!(tuned.active_profile(none).as_deref(), Some("local"));
        let own = load(&["roles.arbiter.models=ollama-qwen2-5-coder"]);
        let choice = own.profile_choice(none, &[]);
        assert_eq!(choice.name, None);
        assert!(choice.reason.contains("roles.arbiter"), "{}", choice.reason);
        assert_eq!(own.user_roles(), vec![Role::Arbiter]);
    }

    #[test]
    fn a_profile_fills_only_the_roles_the_user_left_unset() {
        let c = load(&[
            "profile=local",
            "roles.implementer.models=ollama-qwen2-5-coder",
        ]);
        let profile = c.active_profile(&[]);
        assert_eq!(profile.as_deref(), Some("local"));
        assert_eq!(
            c.role_models(Role::Implementer, profile.as_deref()),
            vec!["ollama-qwen2-5-coder"]
        );
        assert_eq!(
            c.role_models(Role::Architect, profile.as_deref()),
            vec!["local-qwen-coder-1-5b"]
        );
        let why = c.profile_choice(&[], &[]).reason;
        assert!(why.contains("command line -c"), "{why}");
    }
}
