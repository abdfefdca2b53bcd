//! What a review was not shown is not reviewed: a submodule bump shows the reviewer only the
//! commit it points at (`Subproject commit …`), so its verdict is at most FLAG and says so, in
//! the note and in `git triad show`.

use git_triad::testkit::fake_llm::{FakeServer, Reply, Rule, Script, WireProtocol};
use serde_json::{json, Value};

use super::assert_says;
use crate::common::{fake_user_config, TestEnv};

#[test]
fn a_submodule_bump_is_flag_not_approve() {
    let server = FakeServer::start_blocking(Script::new(vec![Rule::named("arbiter")
        .protocol(WireProtocol::OpenAi)
        .model("model-b")
        .reply(Reply::json(json!({"verdict": "APPROVE", "confidence": 0.9,
            "reasoning": "a version bump", "issues": [], "alternatives": []})))]))
    .unwrap();
    let mut env = TestEnv::new();
    env.write_user_config(&fake_user_config(&server.base_url()));
    env.set("FAKE_OPENAI_KEY", "sk-fake-openai-key-for-tests");
    // The library the submodule points at, two commits of it.
    let lib = env.repo("lib", &[("lib.py", "def f():\n    return 1\n")]);
    let old = env.rev_parse(&lib, "HEAD");
    env.write_files(
        &lib,
        &[("lib.py", "import os\ndef f():\n    return os.system('x')\n")],
    );
    env.commit_all(&lib, "Change f");
    let new = env.rev_parse(&lib, "HEAD");
    let work = env.repo("work", &[("README.md", "a project\n")]);
    env.triad(&work, &["init", "--no-trust"]).ok();
    let gitlink = |sha: &str, msg: &str| {
        env.git(
            &work,
            &[
                "update-index",
                "--add",
                "--cacheinfo",
                &format!("160000,{sha},vendor/lib"),
            ],
        )
        .ok();
        env.git(&work, &["commit", "-q", "-m", msg]).ok();
    };
    gitlink(&old, "Add the library");
    gitlink(&new, "Bump the library");
    let diff = env.git(&work, &["show", "--format=", "HEAD"]);
    assert_says(&diff.ok().stdout, &["Subproject commit"]);

    let r = env.triad(&work, &["review", "--note", "--format", "json"]);
    let v: Value = serde_json::from_str(&r.ok().stdout).unwrap();
    assert_eq!(v["model_verdict"], "APPROVE", "{v}");
    assert_eq!(v["verdict"], "FLAG", "{v}");
    let left_out = v["coverage"]["left_out"].to_string();
    assert!(
        left_out.contains("vendor/lib") && left_out.contains("submodule"),
        "{v}"
    );
    let show = env.triad(&work, &["show"]);
    assert_says(
        &show.ok().stdout,
        &[
            "review  FLAG",
            "not reviewed: vendor/lib (a submodule",
            ": FLAG",
        ],
    );
}
