//! The role prompts: built in (`config/prompts/*.md`), or replaced by a file of the
//! repository named in `prompts.<role>`.

use super::Config;

/// The embedded default prompts, overridable with `prompts.<role>` in config.
pub fn default_prompt(role: &str) -> Option<&'static str> {
    Some(match role {
        "architect" => include_str!("../../config/prompts/architect.md"),
        "implementer" => include_str!("../../config/prompts/implementer.md"),
        "refactorer" => include_str!("../../config/prompts/refactorer.md"),
        "verifier" => include_str!("../../config/prompts/verifier.md"),
        "arbiter" => include_str!("../../config/prompts/arbiter.md"),
        "reconciler" => include_str!("../../config/prompts/reconciler.md"),
        "protocol" => include_str!("../../config/prompts/_protocol.md"),
        "protocol-whole" => include_str!("../../config/prompts/_protocol_whole.md"),
        _ => return None,
    })
}

/// The prompt for a role: the override named in config (a file under the repo root, or the
/// text itself), else the built-in one.
pub fn prompt(config: &Config, role: &str, repo_root: Option<&std::path::Path>) -> String {
    if let Some(o) = config.prompts.get(role) {
        if let Some(root) = repo_root {
            let path = root.join(o);
            // Only files inside the repository; a prompt override is not a way to read ~/.ssh.
            if crate::edit::check_path(o).is_ok() {
                if let Ok(text) = std::fs::read_to_string(&path) {
                    return text;
                }
            }
        }
        if o.contains('\n') || o.len() > 200 {
            return o.clone();
        }
        tracing::warn!("prompt override for {role} (`{o}`) is not a readable file in the repository; using the built-in prompt");
    }
    default_prompt(role).unwrap_or_default().to_string()
}
