//! `git triad models`: the registry with availability, and a live check of one model.

use std::time::{Duration, Instant};

use clap::{Args, Subcommand};

use super::{ok, out, CommandError, CommandResult, Context};
use crate::config::{LoadedConfig, Role};
use crate::model::{ChatRequest, ModelClient};
use crate::report::render_table;

/// List the model registry, or check that one model answers.
#[derive(Debug, Args)]
pub struct ModelsArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: ModelsCommand,
}

/// `git triad models` subcommands.
#[derive(Debug, Subcommand)]
pub enum ModelsCommand {
    /// Every registered model: provider, price, context, whether it can be used now, roles,
    /// measured fitness.
    List(ListArgs),
    /// Send one tiny real request to a model; report latency, the model id and the limits
    /// its server reports (and what is assumed where it says nothing).
    Check(CheckArgs),
}

/// List the registry.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only models that can be called now (key set, or local server answering).
    #[arg(long)]
    pub available: bool,
    /// Do not probe local servers (faster; their availability shows as `local?`).
    #[arg(long)]
    pub no_probe: bool,
    /// How to print it (`--format json` or `--json`: one object per model).
    #[command(flatten)]
    pub output: crate::cli::helper::Output,
}

/// Check one model.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Registry name of the model (see `git triad models list`).
    pub model: String,
    /// Seconds to wait for the answer.
    #[arg(long, default_value_t = 60)]
    pub timeout: u64,
}

/// Runs `git triad models`.
pub fn run(ctx: &Context, args: &ModelsArgs) -> CommandResult {
    let loaded = ctx.load_config()?;
    match &args.command {
        ModelsCommand::List(a) => list(ctx, &loaded, a),
        ModelsCommand::Check(a) => check(ctx, &loaded, a),
    }
}

/// Whether a local server answers `GET {base}/models` quickly.
async fn probe_local(http: &reqwest::Client, base_url: &str) -> bool {
    let url = format!("{}/models", base_url.trim_end_matches('/'));
    matches!(
        tokio::time::timeout(Duration::from_millis(800), http.get(url).send()).await,
        Ok(Ok(r)) if r.status().is_success()
    )
}

fn list(ctx: &Context, loaded: &LoadedConfig, args: &ListArgs) -> CommandResult {
    let c = &loaded.config;
    let profile = loaded.active_profile(&ctx.env);
    // Probe each local provider once, concurrently.
    let mut local_up = std::collections::BTreeMap::new();
    if !args.no_probe {
        let rt = super::runtime()?;
        // Local servers are on this machine: never through a proxy from HTTP(S)_PROXY.
        let http = reqwest::Client::builder()
            .no_proxy()
            .build()
            .unwrap_or_else(|_| reqwest::Client::new());
        let locals: Vec<(String, String)> = c
            .providers
            .iter()
            .filter(|(_, p)| p.local)
            .map(|(n, p)| (n.clone(), p.base_url.clone()))
            .collect();
        let results = rt.block_on(async {
            let mut set = tokio::task::JoinSet::new();
            for (name, url) in locals {
                let http = http.clone();
                set.spawn(async move { (name, probe_local(&http, &url).await) });
            }
            let mut out = Vec::new();
            while let Some(Ok(r)) = set.join_next().await {
                out.push(r);
            }
            out
        });
        local_up.extend(results);
    }

    // A fitness file that cannot be read does not hide the registry; it is said below.
    let (store, store_error) = match crate::cli::helper::load_store(ctx) {
        Ok(s) => (s, None),
        Err(e) => (Default::default(), Some(e.error.to_string())),
    };
    let now = crate::clock::now_unix();
    let mut rows = vec![[
        "MODEL".to_string(),
        "PROVIDER".into(),
        "IN $/M".into(),
        "OUT $/M".into(),
        "CONTEXT".into(),
        "AVAILABLE".into(),
        "ROLES".into(),
        "FITNESS".into(),
    ]];
    for (name, m) in &c.models {
        let Some(p) = c.providers.get(&m.provider) else {
            continue;
        };
        let (usable, avail) = match (&p.api_key_env, p.local) {
            (Some(var), _) => match ctx.env_var(var).filter(|v| !v.is_empty()) {
                Some(_) => (true, format!("key {var}")),
                None => (false, format!("no {var}")),
            },
            (None, true) => match local_up.get(&m.provider) {
                Some(true) => (true, "local up".to_string()),
                Some(false) => (false, "local down".to_string()),
                None => (false, "local?".to_string()),
            },
            (None, false) => (true, "no key needed".to_string()),
        };
        if args.available && !usable {
            continue;
        }
        let roles: Vec<&str> = Role::PIPELINE
            .iter()
            .filter(|r| loaded.role_models(**r, profile.as_deref()).contains(name))
            .map(|r| r.as_str())
            .collect();
        rows.push([
            name.clone(),
            m.provider.clone(),
            format!("{:.2}", m.prices().0),
            format!("{:.2}", m.prices().1),
            match m.context_window {
                Some(w) => format!("{}k", w / 1000),
                None => "server".into(),
            },
            avail,
            roles.join(","),
            crate::report::fitness::column(&store, c, name, now),
        ]);
    }
    if args.output.json() {
        let keys = [
            "model",
            "provider",
            "price_in",
            "price_out",
            "context",
            "available",
            "roles",
            "fitness",
        ];
        let all: Vec<serde_json::Value> = rows[1..]
            .iter()
            .map(|row| {
                let mut o = serde_json::Map::new();
                for (k, v) in keys.iter().zip(row) {
                    o.insert((*k).to_string(), serde_json::Value::String(v.clone()));
                }
                o.insert("profile".into(), profile.clone().into());
                serde_json::Value::Object(o)
            })
            .collect();
        out(&format!("{}\n", serde_json::Value::Array(all)))?;
        return ok();
    }
    let mut text = render_table(&rows);
    text.push_str(
        "\nfitness: measured score per role (0-1), * when stale; `git triad bench` measures, `git triad bench --report` shows the figures\n",
    );
    if let Some(e) = store_error {
        text.push_str(&format!("fitness not shown: {e}\n"));
    }
    text.push_str(&format!(
        "\nprofile: {}\n",
        match &profile {
            Some(p) => format!(
                "{p} ({})",
                c.profiles
                    .get(p)
                    .map(|p| p.description.as_str())
                    .unwrap_or("")
            ),
            None => "default roles".to_string(),
        }
    ));
    out(&text)?;
    ok()
}

fn check(ctx: &Context, loaded: &LoadedConfig, args: &CheckArgs) -> CommandResult {
    let mut client = ModelClient::new(&loaded.config, ctx.env_lookup());
    client.set_timeout(Role::Arbiter, Duration::from_secs(args.timeout.max(1)));
    let m = client.resolve(&args.model).map_err(CommandError::from)?;
    if let Some(why) = client.unavailable_reason(&m) {
        return Err(
            CommandError::failure(format!("cannot call {}: {why}", args.model)).hint(format!(
                "export the key in your shell, e.g. `export {}=...`",
                m.provider.api_key_env.clone().unwrap_or_default()
            )),
        );
    }
    // What the model's limits are and where each comes from: its configuration, else its
    // server (asked only then), else the stated default.
    let mut registered = m.model.clone();
    let open = registered.context_window.is_none() || registered.max_output_tokens.is_none();
    let found = if open {
        crate::pipeline::drive::ask_limits(loaded, &ctx.env_lookup(), &args.model)
    } else {
        Default::default()
    };
    let mut limits = crate::model::discover::fill(&args.model, &mut registered, &found);
    limits.push(match (registered.price_in, registered.price_out) {
        (Some(i), Some(o)) => format!("prices: ${i} in, ${o} out per million tokens: configured"),
        _ => "prices: 0: not set, and a local provider costs nothing".to_string(),
    });
    let mut req = ChatRequest::new(
        Some("You are a health check. Answer with one word.".into()),
        "Reply with just: ok",
        16,
    );
    // No role calls here: errors and the ledger name the check itself.
    req.purpose = Some(super::error::CHECK_PURPOSE.into());
    let rt = super::runtime()?;
    let started = Instant::now();
    let result = rt.block_on(client.chat(Role::Arbiter, std::slice::from_ref(&args.model), &req));
    let elapsed = started.elapsed();
    let completion = result.map_err(|e| {
        CommandError::from(e).hint(format!(
            "the endpoint was {} ({} protocol)",
            m.provider.base_url, m.provider.protocol
        ))
    })?;
    let rec = completion.records.last().cloned();
    let mut text = format!(
        "ok  {} via {} answered in {} ms\n",
        args.model,
        m.provider_name,
        elapsed.as_millis()
    );
    if let Some(r) = rec {
        text.push_str(&format!(
            "    requested id: {}\n    reported id:  {}\n    tokens: {} in, {} out; cost ${:.6}; attempts: {}\n",
            r.requested_id,
            r.reported_id.as_deref().unwrap_or("(not reported)"),
            r.input_tokens,
            r.output_tokens,
            r.cost_usd,
            r.attempts
        ));
        if r.model_mismatch {
            text.push_str(&format!(
                "warning: the server answered as `{}`, not `{}`\n",
                r.reported_id.unwrap_or_default(),
                r.requested_id
            ));
        }
    }
    for line in &limits {
        text.push_str(&format!("    {line}\n"));
    }
    text.push_str(&format!(
        "    answer: {}\n",
        completion
            .response
            .text
            .trim()
            .chars()
            .take(80)
            .collect::<String>()
    ));
    out(&text)?;
    ok()
}
