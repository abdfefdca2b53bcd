//! Checks of the merged configuration that the schema cannot express: cross-references
//! between models, providers, roles and profiles, and values that parse but make no sense.

use super::{layers, Config, ConfigError, LoadedConfig, Role, AUTO, AUTO_PROFILE};

impl LoadedConfig {
    /// A role's list: registered models, with [`AUTO`] allowed only first (it asks for the
    /// model with the best measured fitness; the models after it are the fallback order).
    fn check_list(&self, key: &str, list: &super::ModelList) -> Result<(), ConfigError> {
        let c = &self.config;
        for (i, m) in list.0.iter().enumerate() {
            if m == AUTO {
                if i > 0 {
                    return Err(self.invalid(
                        key,
                        format!("`{AUTO}` must come first: [\"{AUTO}\", \"<model>\", ...] picks by measured fitness and falls back to the models after it"),
                    ));
                }
                continue;
            }
            if !c.models.contains_key(m) {
                return Err(self.invalid(key, unknown_model(m, c)));
            }
        }
        Ok(())
    }

    /// Checks cross-references the schema cannot: models name known providers, roles name
    /// known models, URLs are http(s).
    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        let c = &self.config;
        for (name, p) in &c.providers {
            let key = format!(
                "providers.{}.base_url",
                layers::join_key(std::slice::from_ref(name))
            );
            if !(p.base_url.starts_with("http://") || p.base_url.starts_with("https://")) {
                return Err(self.invalid(&key, format!("`{}` is not an http(s) URL", p.base_url)));
            }
            if reqwest::Url::parse(&p.base_url).is_err() {
                return Err(self.invalid(&key, format!("`{}` is not a valid URL", p.base_url)));
            }
        }
        for (name, m) in &c.models {
            let key = format!(
                "models.{}.provider",
                layers::join_key(std::slice::from_ref(name))
            );
            if !c.providers.contains_key(&m.provider) {
                return Err(
                    self.invalid(&key, format!("provider `{}` is not registered", m.provider))
                );
            }
            let model_key = format!("models.{}", layers::join_key(std::slice::from_ref(name)));
            let (price_in, price_out) = m.prices();
            if price_in < 0.0 || price_out < 0.0 {
                return Err(self.invalid(&model_key, "prices cannot be negative".into()));
            }
            let local = c.providers.get(&m.provider).is_some_and(|p| p.local);
            if !local && (m.price_in.is_none() || m.price_out.is_none()) {
                return Err(self.invalid(
                    &model_key,
                    format!(
                        "set price_in and price_out (USD per million tokens): `{}` is a hosted provider, and a model without prices would count as free against every budget cap (only `local = true` providers default to 0)",
                        m.provider
                    ),
                ));
            }
            if m.context_window == Some(0) || m.max_output_tokens == Some(0) {
                return Err(self.invalid(
                    &model_key,
                    "context_window and max_output_tokens must be at least 1 (leave them out to read them from the server)".into(),
                ));
            }
        }
        for role in Role::PIPELINE {
            let key = format!("roles.{role}.models");
            let list = &c.roles.get(role).models;
            // An empty tiebreaker list means "a model that did not vote".
            if list.0.is_empty() && role != Role::Tiebreaker {
                return Err(self.invalid(&key, "no model is configured for this role".into()));
            }
            self.check_list(&key, list)?;
        }
        // Session roles may be empty: `git triad session` then says which key to set.
        for role in Role::SESSION {
            self.check_list(&format!("roles.{role}.models"), &c.roles.get(role).models)?;
        }
        for (pname, profile) in &c.profiles {
            for (role, list) in &profile.roles {
                self.check_list(&format!("profiles.{pname}.roles.{role}"), list)?;
            }
        }
        if c.profile != AUTO_PROFILE && !c.profiles.contains_key(&c.profile) {
            return Err(self.invalid(
                "profile",
                format!(
                    "no profile named `{}` (known: {AUTO_PROFILE}, {})",
                    c.profile,
                    c.profiles.keys().cloned().collect::<Vec<_>>().join(", ")
                ),
            ));
        }
        for (stage, m) in [
            ("architect", &c.arbiter.architect),
            ("implement", &c.arbiter.implement),
            ("refactor", &c.arbiter.refactor),
            ("verify", &c.arbiter.verify),
        ] {
            if let Some(m) = m {
                if !c.models.contains_key(m) {
                    return Err(self.invalid(&format!("arbiter.{stage}"), unknown_model(m, c)));
                }
            }
        }
        // Read as the pre-push gate reads them, so a value it would not understand never
        // passes validation.
        for v in &c.hooks.pre_push.block_on {
            crate::verdict::Blocker::parse(v)
                .map_err(|why| self.invalid("hooks.pre_push.block_on", why))?;
        }
        if c.transport.timeout_secs == 0 {
            return Err(self.invalid("transport.timeout_secs", "must be at least 1".into()));
        }
        Ok(())
    }
}

fn unknown_model(m: &str, c: &Config) -> String {
    let mut near: Vec<&String> = c
        .models
        .keys()
        .filter(|k| k.contains(m) || m.contains(k.as_str()))
        .collect();
    near.truncate(3);
    if near.is_empty() {
        format!("model `{m}` is not registered (see `git triad models list`)")
    } else {
        format!(
            "model `{m}` is not registered; did you mean {}?",
            near.iter()
                .map(|s| format!("`{s}`"))
                .collect::<Vec<_>>()
                .join(" or ")
        )
    }
}
