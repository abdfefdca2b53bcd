//! Filling in the limits of models registered without them, from their own servers, before
//! a command uses them.

use super::{say, CommandResult, Context};
use crate::config::LoadedConfig;
use crate::model::discover::{discover, fill as fill_model, Limits};

/// Asks the server of `name` for its limits (`Limits::default()` for an unknown model).
pub fn ask(ctx: &Context, loaded: &LoadedConfig, name: &str) -> CommandResult<Limits> {
    let c = &loaded.config;
    let Some((m, p)) = c
        .models
        .get(name)
        .and_then(|m| Some((m, c.providers.get(&m.provider)?)))
    else {
        return Ok(Limits::default());
    };
    let key = p.api_key_env.as_deref().and_then(|v| ctx.env_var(v));
    let rt = super::runtime()?;
    Ok(rt.block_on(discover(p, m.wire_id(name), key.as_deref())))
}

/// For each of `models` that sets no context window or no output cap, asks its server and
/// puts what it says into the configuration this command uses, saying on stderr what was
/// read and what was assumed. Models that set both are not asked.
pub fn fill(ctx: &Context, loaded: &mut LoadedConfig, models: &[String]) -> CommandResult<()> {
    let mut done: Vec<&String> = Vec::new();
    for name in models {
        let open = loaded
            .config
            .models
            .get(name)
            .is_some_and(|m| m.context_window.is_none() || m.max_output_tokens.is_none());
        if !open || done.contains(&name) {
            continue;
        }
        done.push(name);
        let found = ask(ctx, loaded, name)?;
        if let Some(m) = loaded.config.models.get_mut(name) {
            let said = fill_model(name, m, &found);
            if !ctx.quiet {
                say(&format!("triad: {name}: {}", said.join("; ")));
            }
        }
    }
    Ok(())
}
