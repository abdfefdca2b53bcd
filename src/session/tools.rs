//! The tools of a session (seed 002): the manager's two routing tools and its read-only view
//! of git triad's records, and the orchestrator's tools, which act only through git triad,
//! on the session branch. Each is a blocking call; its work does not fill the caller's
//! window, only its answer does, clipped to [`OUTPUT_BYTES`].

use serde_json::{json, Value};

use crate::model::ToolSpec;
use crate::workflow_name::Workflow;

/// Most bytes of one tool answer a conversation receives; the rest is cut with a note.
pub const OUTPUT_BYTES: usize = 8 * 1024;

/// The manager summons an orchestrator.
pub const SPAWN: &str = "spawn_orchestrator";
/// The manager releases the orchestrators.
pub const DISCONNECT: &str = "disconnect_orchestrators";

fn object(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required})
}

fn none() -> Value {
    object(json!({}), &[])
}

fn string(description: &str) -> Value {
    json!({"type": "string", "description": description})
}

fn strings(description: &str) -> Value {
    json!({"type": "array", "items": {"type": "string"}, "description": description})
}

/// Tools that read git triad's records, which the manager and the orchestrators both have.
fn record_tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec::new(
            "list_tasks",
            "List the TaskSpecs of the session branch and their state.",
            none(),
        ),
        ToolSpec::new(
            "list_runs",
            "List the pipeline runs recorded in the repository, newest first, with their verdicts.",
            none(),
        ),
        ToolSpec::new(
            "show_run",
            "Show one run: every stage, attempt, verdict, issue, what changed, and its cost.",
            object(
                json!({"run_id": string("The run id, as list_runs shows it.")}),
                &["run_id"],
            ),
        ),
    ]
}

/// The manager's tools: the seed's two, and the records.
pub fn manager_tools() -> Vec<ToolSpec> {
    let mut tools = vec![
        ToolSpec::new(
            SPAWN,
            "Summon a new orchestrator to execute a task. Provide complete context and instructions: it knows nothing else. From then on your messages go to it, and its answers come back to you. An active orchestrator is released.",
            object(
                json!({"prompt": string("Full task description and context.")}),
                &["prompt"],
            ),
        ),
        ToolSpec::new(
            DISCONNECT,
            "Release all orchestrators. Your words will once again reach the human directly.",
            none(),
        ),
    ];
    tools.extend(record_tools());
    tools
}

/// The orchestrator's tools.
pub fn orchestrator_tools() -> Vec<ToolSpec> {
    let mut tools = vec![
        ToolSpec::new(
            "list_files",
            "List the files of the session branch under a directory (empty: the whole repository).",
            object(json!({"dir": string("A directory, e.g. `src`; empty for all.")}), &[]),
        ),
        ToolSpec::new(
            "read_file",
            "Read one file of the session branch.",
            object(json!({"path": string("Repository-relative path.")}), &["path"]),
        ),
        ToolSpec::new(
            "grep",
            "Find the lines of the session branch's files that contain a text (exact, case-sensitive).",
            object(
                json!({"pattern": string("The text to find."),
                       "dir": string("Only under this directory (optional).")}),
                &["pattern"],
            ),
        ),
        ToolSpec::new(
            "create_task",
            "Write a TaskSpec and commit it on the session branch (replacing one of the same slug). Then run_pipeline on it.",
            object(
                json!({
                    "slug": string("Short name: lowercase letters, digits, dashes (`add-login`)."),
                    "title": string("One line."),
                    "description": string("What to build and why."),
                    "requirements": strings("Testable requirements, one sentence each; numbered R1, R2… in order."),
                    "acceptance": strings("Acceptance criteria for the whole task."),
                    "include": strings("Files the stages may see and change (globs); empty: the whole repository."),
                }),
                &["slug", "title", "description", "requirements"],
            ),
        ),
        ToolSpec::new(
            "run_pipeline",
            "Run Architect, Implement, Refactor and Verify on a committed task, each stage reviewed by an arbiter model that did not build it. Blocks until the run ends; answers its verdict, branch and changes.",
            object(
                json!({"task": string("The task's slug."),
                       "workflow": json!({"type": "string", "enum": Workflow::NAMES,
                                          "description": format!("How the solution is made (default {}).", Workflow::default())})}),
                &["task"],
            ),
        ),
        ToolSpec::new(
            "resume_run",
            "Continue a run that stopped (waiting on answers, budget, a provider failure).",
            object(json!({"run_id": string("The run id.")}), &["run_id"]),
        ),
        ToolSpec::new(
            "answer_task",
            "Answer the questions a task's stopped run asked (then resume_run).",
            object(
                json!({"task": string("The task's slug."),
                       "answers": json!({"type": "array", "items": {"type": "object",
                           "properties": {"question": {"type": "string"}, "answer": {"type": "string"}},
                           "required": ["question", "answer"]}})}),
                &["task", "answers"],
            ),
        ),
        ToolSpec::new(
            "review_range",
            "Have an arbiter model review existing commits: one commit or a range like `main..HEAD`.",
            object(json!({"range": string("A commit or a range.")}), &["range"]),
        ),
        ToolSpec::new(
            "open_chamber",
            "Ask a panel of models a decision with no single right answer; an arbiter synthesizes (or says there is no consensus).",
            object(
                json!({"question": string("The decision, as a question."),
                       "context": strings("Task slugs, files or revisions the panel reads.")}),
                &["question"],
            ),
        ),
    ];
    tools.extend(record_tools());
    tools
}

/// A string argument of a call, or the error the model is told.
pub fn arg<'a>(args: &'a Value, name: &str) -> Result<&'a str, String> {
    args.get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("the argument `{name}` (a string) is missing"))
}

/// A list-of-strings argument (missing: empty).
pub fn args_list(args: &Value, name: &str) -> Vec<String> {
    match args.get(name) {
        Some(Value::Array(v)) => v
            .iter()
            .filter_map(|x| x.as_str().map(str::to_string))
            .collect(),
        Some(Value::String(s)) if !s.is_empty() => vec![s.clone()],
        _ => Vec::new(),
    }
}

/// `text` cut to [`OUTPUT_BYTES`], saying so.
pub fn clip_output(text: &str) -> String {
    crate::bounded::clip(text, OUTPUT_BYTES)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_has_an_object_schema_and_a_unique_name() {
        for tools in [manager_tools(), orchestrator_tools()] {
            let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
            assert!(tools.iter().all(|t| t.parameters["type"] == "object"));
            names.sort();
            let n = names.len();
            names.dedup();
            assert_eq!(names.len(), n, "duplicate tool names");
        }
        let manager: Vec<String> = manager_tools().into_iter().map(|t| t.name).collect();
        assert!(manager.contains(&SPAWN.to_string()) && manager.contains(&DISCONNECT.to_string()));
        let orch: Vec<String> = orchestrator_tools().into_iter().map(|t| t.name).collect();
        assert!(
            !orch.contains(&SPAWN.to_string()),
            "an orchestrator summons nobody"
        );
    }

    /// Every `name(args)` a prompt teaches is a tool of that role with those arguments (its
    /// required ones among them), and every tool of the role is taught.
    #[test]
    fn the_prompts_teach_the_tools_as_their_schemas_define_them() {
        for (prompt, tools) in [
            (
                crate::config::default_prompt("orchestrator"),
                orchestrator_tools(),
            ),
            (crate::config::default_prompt("manager"), manager_tools()),
        ] {
            let prompt = prompt.expect("a built-in prompt");
            let mut taught = Vec::new();
            for call in prompt.split('`').skip(1).step_by(2) {
                let Some((name, rest)) = call.split_once('(') else {
                    continue;
                };
                let Some(args) = rest.strip_suffix(')') else {
                    continue;
                };
                let tool = tools
                    .iter()
                    .find(|t| t.name == name)
                    .unwrap_or_else(|| panic!("the prompt teaches `{call}`, which is no tool"));
                let props = tool.parameters["properties"].as_object().unwrap();
                let given: Vec<&str> = args
                    .split(',')
                    .map(str::trim)
                    .filter(|a| !a.is_empty())
                    .collect();
                for a in &given {
                    assert!(
                        props.contains_key(*a),
                        "`{call}`: {name} has no argument {a}"
                    );
                }
                for r in tool.parameters["required"].as_array().unwrap() {
                    let r = r.as_str().unwrap();
                    assert!(given.contains(&r), "`{call}` leaves out the required {r}");
                }
                taught.push(name.to_string());
            }
            for t in &tools {
                assert!(
                    taught.contains(&t.name),
                    "no prompt teaches the tool {}",
                    t.name
                );
            }
        }
    }

    #[test]
    fn arguments_are_read_leniently_and_refused_clearly() {
        let a = json!({"slug": "x", "requirements": "one", "include": ["a", 3]});
        assert_eq!(arg(&a, "slug"), Ok("x"));
        assert_eq!(
            arg(&a, "title"),
            Err("the argument `title` (a string) is missing".into())
        );
        assert_eq!(args_list(&a, "requirements"), ["one"]);
        assert_eq!(args_list(&a, "include"), ["a"]);
        assert!(args_list(&a, "acceptance").is_empty());
    }
}
