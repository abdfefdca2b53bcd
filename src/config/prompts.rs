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
        "answerer" => include_str!("../../config/prompts/answerer.md"),
        "voter" => include_str!("../../config/prompts/voter.md"),
        "tiebreaker" => include_str!("../../config/prompts/tiebreaker.md"),
        "observer" => include_str!("../../config/prompts/observer.md"),
        "suggestion" => include_str!("../../config/prompts/suggestion.md"),
        "candidate" => include_str!("../../config/prompts/candidate.md"),
        "cross_reviewer" => include_str!("../../config/prompts/cross_reviewer.md"),
        "synthesizer" => include_str!("../../config/prompts/synthesizer.md"),
        "debater" => include_str!("../../config/prompts/debater.md"),
        "judge" => include_str!("../../config/prompts/judge.md"),
        "chamber_panelist" => include_str!("../../config/prompts/chamber_panelist.md"),
        "chamber_assessor" => include_str!("../../config/prompts/chamber_assessor.md"),
        "chamber_arbiter" => include_str!("../../config/prompts/chamber_arbiter.md"),
        "manager" => include_str!("../../config/prompts/manager.md"),
        "orchestrator" => include_str!("../../config/prompts/orchestrator.md"),
        "protocol" => include_str!("../../config/prompts/_protocol.md"),
        "protocol-whole" => include_str!("../../config/prompts/_protocol_whole.md"),
        _ => return None,
    })
}

/// The prompt for a role: the override named in config (a file under the repo root, or the
/// text itself), else the built-in one.
///
/// A file is read only when it is inside the repository with no symbolic link on the way
/// ([`crate::fsguard`]): a committed `x.md -> ~/.ssh/id_rsa` would otherwise send the key to
/// a model. Such an override is refused with a warning and the built-in prompt is used.
pub fn prompt(config: &Config, role: &str, repo_root: Option<&std::path::Path>) -> String {
    if let Some(o) = config.prompts.get(role) {
        if let Some(root) = repo_root {
            // Only files inside the repository; a prompt override is not a way to read ~/.ssh.
            if let Ok(rel) = crate::edit::check_path(o) {
                match crate::fsguard::read_to_string(root, &rel) {
                    Ok(text) => return text,
                    Err(e @ crate::fsguard::FsGuardError::Symlink { .. }) => {
                        tracing::warn!(
                            "prompt override for {role} refused: {e}; using the built-in prompt"
                        );
                        return default_prompt(role).unwrap_or_default().to_string();
                    }
                    Err(_) => {}
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

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn config_with(role: &str, value: &str) -> Config {
        let mut c = crate::config::LoadedConfig::load(&crate::config::LoadOptions {
            user_file: Some("/nonexistent/x.toml".into()),
            ..Default::default()
        })
        .unwrap()
        .config;
        c.prompts.insert(role.into(), value.into());
        c
    }

    #[test]
    fn overrides_through_links_are_never_read() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("id_rsa"), "PRIVATE KEY").unwrap();
        std::fs::create_dir(root.path().join("p")).unwrap();
        std::fs::write(root.path().join("p/own.md"), "own prompt").unwrap();
        std::os::unix::fs::symlink(outside.path().join("id_rsa"), root.path().join("x.md"))
            .unwrap();
        std::os::unix::fs::symlink(outside.path(), root.path().join("d")).unwrap();
        let read = |value: &str| {
            prompt(
                &config_with("architect", value),
                "architect",
                Some(root.path()),
            )
        };
        assert_eq!(read("p/own.md"), "own prompt");
        let built_in = default_prompt("architect").unwrap();
        assert_eq!(read("x.md"), built_in);
        assert_eq!(read("d/id_rsa"), built_in);
    }
}
