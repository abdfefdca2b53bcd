//! Which models each role uses with what this user can call, and where that list came from.
//!
//! A role's list comes from the user (any layer above the built-in defaults), else from the
//! profile in effect, else from the built-in `[roles]`. A list the user wrote is used as
//! written. A list that came from the profile or the defaults keeps the models this user can
//! call (a keyless provider, or one whose key variable is set) and, in place of the others,
//! takes models that can be called: the user's own models declared with no role first, then
//! the registry's models whose key is set (by their built-in fitness for the role), then the
//! local profile's. So a user with one provider's key gets roles on that provider, never a
//! role whose every model needs a key that is not set.
//!
//! Under `profile = "auto"`, models the user declared with a provider but gave no role take
//! every role the local profile fills, in place of the built-in local models; and a user's
//! own models never fall back to built-in ones they did not ask for (a role they leave
//! without a model they can call is said before any call).

use std::collections::BTreeSet;

use super::{Layer, LoadedConfig, ModelList, Role, AUTO, AUTO_PROFILE, LOCAL_PROFILE};

/// Why a model cannot be called by this user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Uncallable {
    /// No such model in the registry.
    NotRegistered,
    /// Its provider is not in the registry.
    NoProvider(String),
    /// Its provider needs a key, and this variable is not set.
    KeyNotSet(String),
}

impl std::fmt::Display for Uncallable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Uncallable::NotRegistered => f.write_str("not registered"),
            Uncallable::NoProvider(p) => write!(f, "its provider `{p}` is not registered"),
            Uncallable::KeyNotSet(var) => write!(f, "{var} is not set"),
        }
    }
}

/// Where a role's list in effect came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RoleSource {
    /// A layer above the built-in defaults: the user's own choice, used as written.
    User(Layer),
    /// The profile in effect.
    Profile(String),
    /// The built-in `[roles]`.
    Default,
}

/// One role's models in effect and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoleInEffect {
    /// The role.
    pub role: Role,
    /// The models in order of preference (`auto` first when the role is routed).
    pub models: ModelList,
    /// Where the list before any replacement came from.
    pub source: RoleSource,
    /// Models of that list this user cannot call, each with why. For a user's own list they
    /// stay in it; otherwise they were replaced.
    pub uncallable: Vec<(String, Uncallable)>,
    /// Models put in the list because the source's could not all be called.
    pub substitutes: Vec<String>,
    /// The user's models declared with no role, put first under `profile = "auto"`.
    pub declared_first: Vec<String>,
}

impl RoleInEffect {
    /// Whether the list differs from its source's because of what this user can call.
    pub fn adapted(&self) -> bool {
        !self.substitutes.is_empty() || !self.declared_first.is_empty()
    }

    /// Where the list came from, in words (`default`, `profile local`, `user <path>`),
    /// followed by what was replaced or put first.
    pub fn describe(&self) -> String {
        let mut s = match &self.source {
            RoleSource::User(layer) => layer.to_string(),
            RoleSource::Profile(p) => format!("profile {p}"),
            RoleSource::Default => "default".to_string(),
        };
        if !self.declared_first.is_empty() {
            s.push_str(&format!(
                "; your models with no role, in place of its models: {}",
                self.declared_first.join(", ")
            ));
        }
        if !self.uncallable.is_empty() {
            let why: Vec<String> = self
                .uncallable
                .iter()
                .map(|(m, why)| format!("{m} ({why})"))
                .collect();
            if self.substitutes.is_empty() && matches!(self.source, RoleSource::User(_)) {
                s.push_str(&format!("; cannot be called: {}", why.join(", ")));
            } else if !self.substitutes.is_empty() {
                s.push_str(&format!(
                    "; in place of {}: {}",
                    why.join(", "),
                    self.substitutes.join(", ")
                ));
            } else {
                s.push_str(&format!("; dropped: {}", why.join(", ")));
            }
        }
        s
    }
}

impl LoadedConfig {
    /// Why `model` cannot be called by this user, or `None` when it can: it is registered,
    /// its provider is known, and the provider needs no key or its key variable is set.
    pub fn uncallable_reason(&self, model: &str) -> Option<Uncallable> {
        let c = &self.config;
        let Some(m) = c.models.get(model) else {
            return Some(Uncallable::NotRegistered);
        };
        let Some(p) = c.providers.get(&m.provider) else {
            return Some(Uncallable::NoProvider(m.provider.clone()));
        };
        match &p.api_key_env {
            Some(var) if !self.keys.contains(var) => Some(Uncallable::KeyNotSet(var.clone())),
            _ => None,
        }
    }

    /// Whether this user can call `model` ([`Self::uncallable_reason`] is `None`).
    pub fn callable(&self, model: &str) -> bool {
        self.uncallable_reason(model).is_none()
    }

    /// Models a layer above the built-in defaults registered (their `provider` set there)
    /// that no role lists: the user's own, offered by `config show` and used by
    /// `profile = "auto"` before the built-in local models.
    pub fn declared_without_role(&self) -> Vec<String> {
        let listed: BTreeSet<&String> = Role::PIPELINE
            .iter()
            .chain(Role::SESSION.iter())
            .flat_map(|r| self.config.roles.get(*r).models.0.iter())
            .collect();
        self.declared_models()
            .into_iter()
            .filter(|name| !listed.contains(name))
            .collect()
    }

    /// Every model a layer above the built-in defaults registered (its `provider` set
    /// there): the user's own, whether a role lists it or not.
    pub fn declared_models(&self) -> Vec<String> {
        self.config
            .models
            .keys()
            .filter(|name| {
                let key = super::layers::join_key(&[
                    "models".to_string(),
                    (*name).clone(),
                    "provider".to_string(),
                ]);
                self.origin(&key).is_some_and(|l| *l != Layer::Default)
            })
            .cloned()
            .collect()
    }

    /// The models `role` uses under `profile`, where that list came from, and what was
    /// replaced because this user cannot call it (see the module documentation).
    pub fn role_in_effect(&self, role: Role, profile: Option<&str>) -> RoleInEffect {
        let configured = &self.config.roles.get(role).models;
        if let Some(layer) = self.user_layer_of(role) {
            return RoleInEffect {
                role,
                models: configured.clone(),
                source: RoleSource::User(layer),
                uncallable: self.uncallable_of(&configured.listed()),
                substitutes: Vec::new(),
                declared_first: Vec::new(),
            };
        }
        let from_profile = profile.and_then(|p| {
            self.config
                .profiles
                .get(p)
                .and_then(|pr| pr.roles.get(&role))
                .map(|l| (p.to_string(), l))
        });
        let (source, base) = match from_profile {
            Some((p, list)) => (RoleSource::Profile(p), list),
            None => (RoleSource::Default, configured),
        };
        let auto = base.is_auto();
        let listed = base.listed();
        let declared_first: Vec<String> = if listed.is_empty() {
            Vec::new()
        } else {
            self.declared_first(profile)
                .into_iter()
                .filter(|m| !listed.contains(m))
                .collect()
        };
        let uncallable = self.uncallable_of(&listed);
        let mut models: Vec<String> = declared_first.clone();
        // The local profile that `auto` picked for a user without a key stands for "no
        // models of your own": once the user declared some, its built-in models are not
        // added behind them (a user who wants them sets `profile = "local"`).
        if declared_first.is_empty() {
            models.extend(listed.iter().filter(|m| self.callable(m)).cloned());
        }
        let mut substitutes = Vec::new();
        if !uncallable.is_empty() {
            let want = listed.len().max(2);
            for m in self.substitute_candidates(role) {
                if models.len() >= want {
                    break;
                }
                if !models.contains(&m) {
                    models.push(m.clone());
                    substitutes.push(m);
                }
            }
        }
        if auto {
            models.insert(0, AUTO.to_string());
        }
        RoleInEffect {
            role,
            models: ModelList(models),
            source,
            uncallable,
            substitutes,
            declared_first,
        }
    }

    /// The user's callable models declared with no role, which come first in every role the
    /// local profile fills when `profile = "auto"` chose it (no key, no roles); empty
    /// otherwise.
    pub fn declared_first(&self, profile: Option<&str>) -> Vec<String> {
        if self.config.profile != AUTO_PROFILE || profile != Some(LOCAL_PROFILE) {
            return Vec::new();
        }
        self.declared_without_role()
            .into_iter()
            .filter(|m| self.callable(m))
            .collect()
    }

    /// Every role's list in effect under `profile`, pipeline roles first.
    pub fn roles_in_effect(&self, profile: Option<&str>) -> Vec<RoleInEffect> {
        Role::PIPELINE
            .into_iter()
            .chain(Role::SESSION)
            .map(|r| self.role_in_effect(r, profile))
            .collect()
    }

    /// The layer above the built-in defaults that set the role's models, if one did.
    pub(super) fn user_layer_of(&self, role: Role) -> Option<Layer> {
        self.origin(&format!("roles.{role}.models"))
            .filter(|l| **l != Layer::Default)
            .cloned()
    }

    fn uncallable_of(&self, models: &[String]) -> Vec<(String, Uncallable)> {
        models
            .iter()
            .filter_map(|m| self.uncallable_reason(m).map(|why| (m.clone(), why)))
            .collect()
    }

    /// What may stand in for models that cannot be called, best first: the user's models
    /// with no role, then the user's models other roles list, then registry models whose
    /// key is set (by built-in fitness for `role`, then name), then, for a user who declared
    /// no models of their own, the local profile's models for `role`; only models that can
    /// be called. A user's own models never fall back to built-in ones the user did not ask
    /// for: a role they cannot fill is said before any call.
    fn substitute_candidates(&self, role: Role) -> Vec<String> {
        let c = &self.config;
        let own = self.declared_models();
        let mut out: Vec<String> = self
            .declared_without_role()
            .into_iter()
            .chain(own.iter().cloned())
            .filter(|m| self.callable(m))
            .collect();
        let mut keyed: Vec<(&String, f64)> = c
            .models
            .iter()
            .filter(|(name, m)| {
                self.callable(name)
                    && c.providers
                        .get(&m.provider)
                        .is_some_and(|p| p.api_key_env.is_some())
            })
            .map(|(name, m)| (name, m.fitness.get(role.as_str()).copied().unwrap_or(0.0)))
            .collect();
        keyed.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
        out.extend(keyed.into_iter().map(|(n, _)| n.clone()));
        let local = c
            .profiles
            .get(LOCAL_PROFILE)
            .and_then(|p| p.roles.get(&role))
            .filter(|_| own.is_empty());
        if let Some(local) = local {
            out.extend(local.listed().into_iter().filter(|m| self.callable(m)));
        }
        let mut seen = BTreeSet::new();
        out.retain(|m| seen.insert(m.clone()));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::LoadOptions;

    fn load(keys: &[&str], overrides: &[&str]) -> LoadedConfig {
        LoadedConfig::load(&LoadOptions {
            user_file: Some("/nonexistent/x.toml".into()),
            env: keys
                .iter()
                .map(|k| (k.to_string(), "x-key".to_string()))
                .collect(),
            overrides: overrides.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        })
        .unwrap()
    }

    #[test]
    fn with_one_providers_key_every_role_gets_models_of_that_provider() {
        let c = load(&["OPENAI_API_KEY"], &[]);
        // The tiebreaker lists none by default: the arbiter role's models stand in.
        for r in c
            .roles_in_effect(None)
            .into_iter()
            .filter(|r| r.role != Role::Tiebreaker)
        {
            let models = r.models.listed();
            assert!(!models.is_empty(), "{:?} has no model", r.role);
            assert!(
                models.iter().all(|m| c.callable(m)),
                "{:?}: {models:?}",
                r.role
            );
        }
        let architect = c.role_in_effect(Role::Architect, None);
        assert_eq!(architect.models.listed(), ["gpt-5", "gpt-4.1"]);
        assert_eq!(architect.source, RoleSource::Default);
        assert_eq!(
            architect.uncallable,
            [
                (
                    "claude-sonnet-4-5".to_string(),
                    Uncallable::KeyNotSet("ANTHROPIC_API_KEY".into())
                ),
                (
                    "gemini-2.5-pro".to_string(),
                    Uncallable::KeyNotSet("GEMINI_API_KEY".into())
                )
            ]
        );
        // The arbiter keeps gpt-5 and gets two others, so every stage finds one that differs.
        let arbiter = c.role_in_effect(Role::Arbiter, None);
        assert_eq!(arbiter.models.listed(), ["gpt-5", "gpt-4.1", "gpt-5-mini"]);
        // Every key set: the defaults as they are.
        let all = load(
            &["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"],
            &[],
        );
        let architect = all.role_in_effect(Role::Architect, None);
        assert!(!architect.adapted());
        assert_eq!(
            architect.models.listed(),
            ["claude-sonnet-4-5", "gemini-2.5-pro"]
        );
    }

    #[test]
    fn a_users_own_list_is_used_as_written_and_says_what_cannot_be_called() {
        let c = load(
            &["OPENAI_API_KEY"],
            &["roles.architect.models=[\"claude-sonnet-4-5\"]"],
        );
        let r = c.role_in_effect(Role::Architect, None);
        assert_eq!(r.models.listed(), ["claude-sonnet-4-5"]);
        assert_eq!(r.source, RoleSource::User(Layer::CommandLine));
        assert!(r.substitutes.is_empty());
        assert!(
            r.describe()
                .contains("cannot be called: claude-sonnet-4-5 (ANTHROPIC_API_KEY is not set)"),
            "{}",
            r.describe()
        );
    }

    #[test]
    fn models_declared_with_no_role_come_first_under_auto_and_stand_in_for_uncallable_ones() {
        let declared = [
            "models.my-coder.provider=\"ollama\"",
            "models.my-coder.id=\"qwen2.5-coder:7b\"",
        ];
        let c = load(&[], &declared);
        assert_eq!(c.declared_without_role(), ["my-coder"]);
        let r = c.role_in_effect(Role::Implementer, Some(LOCAL_PROFILE));
        // In place of the built-in local models, which the user did not ask for.
        assert_eq!(r.models.listed(), ["my-coder"]);
        assert_eq!(r.declared_first, ["my-coder"]);
        // A key for another provider: the user's model still stands in before the registry's.
        let keyed = load(&["OPENAI_API_KEY"], &declared);
        let r = keyed.role_in_effect(Role::Architect, None);
        assert_eq!(r.models.listed(), ["my-coder", "gpt-5"]);
        // A model some role lists is not "without a role".
        let listed = load(
            &[],
            &[
                declared[0],
                declared[1],
                "roles.arbiter.models=[\"my-coder\"]",
            ],
        );
        assert!(listed.declared_without_role().is_empty());
    }

    #[test]
    fn a_profiles_auto_role_stays_routed_after_its_models_are_replaced() {
        let c = load(
            &["OPENAI_API_KEY"],
            &["profiles.mine.roles.architect=[\"auto\", \"claude-sonnet-4-5\"]"],
        );
        let r = c.role_in_effect(Role::Architect, Some("mine"));
        assert_eq!(r.source, RoleSource::Profile("mine".into()));
        assert!(r.models.is_auto());
        assert_eq!(r.models.listed(), ["gpt-5", "gpt-4.1"]);
        assert_eq!(r.substitutes, ["gpt-5", "gpt-4.1"]);
    }
}
