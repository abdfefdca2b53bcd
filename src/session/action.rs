//! Tool calls for models without native tool calling: the small local models of the offline
//! default declare `json_schema` (or `gbnf`) but not `tools`, and asked with `tools` they
//! write a JSON block in prose that no server parses. So such a model is asked for one JSON
//! "action" per answer, decoding constrained by the server to a schema that admits exactly
//! `say` or one of the tools with its own arguments, and the action becomes a tool call (or
//! text) in the conversation. The record keeps the canonical form either way; only the wire
//! conversation is flattened to text turns.

use serde_json::{json, Value};

use crate::config::schema::ModelConfig;
use crate::model::{Message, OutputSchema, Speaker, ToolCall, ToolSpec};

/// The schema name the action is asked under.
pub const SCHEMA: &str = "session_action";

/// Whether `model` gets the action protocol instead of native tools: it constrains its
/// output to a schema but does not declare tool calling.
pub fn needed(model: &ModelConfig) -> bool {
    !model.has("tools") && (model.has("json_schema") || model.has("gbnf"))
}

/// The schema of one action: `{"action": "say", "text": …}` or `{"action": <tool>,
/// "arguments": {…}}` for each of `tools`.
pub fn schema(tools: &[ToolSpec]) -> OutputSchema {
    let mut choices = vec![json!({
        "type": "object",
        "properties": {"action": {"type": "string", "enum": ["say"]}, "text": {"type": "string"}},
        "required": ["action", "text"],
    })];
    for t in tools {
        choices.push(json!({
            "type": "object",
            "properties": {"action": {"type": "string", "enum": [t.name]}, "arguments": t.schema()},
            "required": ["action", "arguments"],
        }));
    }
    OutputSchema {
        name: SCHEMA.into(),
        schema: json!({"anyOf": choices}),
    }
}

/// The system prompt with the tools described and the answer's form.
pub fn system(prompt: &str, tools: &[ToolSpec]) -> String {
    let mut s = format!(
        "{prompt}\n\n## How you answer\n\nAnswer with one JSON object and nothing else: either \
         {{\"action\": \"say\", \"text\": \"<your words>\"}}, or a tool call \
         {{\"action\": \"<tool>\", \"arguments\": {{…}}}}. A tool's result comes back as the \
         next message. The tools:\n"
    );
    for t in tools {
        s.push_str(&format!(
            "- `{}`: {} Arguments: {}\n",
            t.name,
            t.description,
            t.schema()
        ));
    }
    s
}

/// The conversation as plain turns: an action as the JSON the model wrote, a tool result as
/// a user turn naming the tool.
pub fn flatten(messages: &[Message]) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::new();
    for m in messages {
        let turn = match (&m.role, &m.tool_result) {
            (Speaker::Tool, Some(r)) => Message::user(format!(
                "Result of `{}`{}: {}",
                r.name,
                if r.is_error { " (failed)" } else { "" },
                m.content
            )),
            (Speaker::Assistant, _) if !m.tool_calls.is_empty() => {
                let c = &m.tool_calls[0];
                Message::assistant(json!({"action": c.name, "arguments": c.arguments}).to_string())
            }
            (Speaker::Assistant, _) => {
                Message::assistant(json!({"action": "say", "text": m.content}).to_string())
            }
            _ => Message::user(m.content.clone()),
        };
        // Consecutive user turns (results, then a warning) travel as one.
        match out.last_mut() {
            Some(last) if last.role == Speaker::User && turn.role == Speaker::User => {
                last.content.push_str("\n\n");
                last.content.push_str(&turn.content);
            }
            _ => out.push(turn),
        }
    }
    out
}

/// The text and tool calls an action answer stands for; `id` names the call. An answer that
/// is not an action is taken as words.
pub fn decode(structured: Option<&Value>, text: &str, id: String) -> (String, Vec<ToolCall>) {
    let parsed;
    let v = match structured {
        Some(v) => v,
        None => match serde_json::from_str::<Value>(text.trim()) {
            Ok(v) => {
                parsed = v;
                &parsed
            }
            Err(_) => return (text.to_string(), Vec::new()),
        },
    };
    match v.get("action").and_then(Value::as_str) {
        Some("say") | None => (
            v.get("text")
                .and_then(Value::as_str)
                .map_or_else(|| text.to_string(), str::to_string),
            Vec::new(),
        ),
        Some(tool) => (
            String::new(),
            vec![ToolCall {
                id,
                name: tool.to_string(),
                arguments: v.get("arguments").cloned().unwrap_or_else(|| json!({})),
                signature: None,
            }],
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spawn() -> ToolSpec {
        ToolSpec::new(
            "spawn_orchestrator",
            "Summon.",
            json!({"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]}),
        )
    }

    #[test]
    fn an_action_becomes_a_call_and_say_becomes_words() {
        let (text, calls) = decode(
            None,
            r#"{"action": "spawn_orchestrator", "arguments": {"prompt": "go"}}"#,
            "act_3".into(),
        );
        assert_eq!(text, "");
        assert_eq!(calls[0].name, "spawn_orchestrator");
        assert_eq!(calls[0].arguments, json!({"prompt": "go"}));
        assert_eq!(calls[0].id, "act_3");
        let (text, calls) = decode(
            Some(&json!({"action": "say", "text": "Speak."})),
            "",
            "x".into(),
        );
        assert_eq!((text.as_str(), calls.len()), ("Speak.", 0));
        let (text, calls) = decode(None, "plain prose", "x".into());
        assert_eq!((text.as_str(), calls.len()), ("plain prose", 0));
    }

    #[test]
    fn the_schema_admits_say_or_each_tool_with_its_own_arguments() {
        let s = schema(&[spawn()]).schema;
        let any = s["anyOf"].as_array().unwrap();
        assert_eq!(any.len(), 2);
        assert_eq!(
            any[1]["properties"]["action"]["enum"][0],
            "spawn_orchestrator"
        );
        assert_eq!(any[1]["properties"]["arguments"]["required"][0], "prompt");
    }

    #[test]
    fn the_wire_conversation_is_plain_turns_in_alternation() {
        let call = ToolCall {
            id: "a".into(),
            name: "list_files".into(),
            arguments: json!({}),
            signature: None,
        };
        let msgs = vec![
            Message::user("survey"),
            Message::assistant_with_calls("", vec![call.clone()]),
            Message::tool_result(&call, "calc.py"),
            Message::user("[git triad] Context thins."),
            Message::assistant("done"),
        ];
        let flat = flatten(&msgs);
        let roles: Vec<Speaker> = flat.iter().map(|m| m.role).collect();
        assert_eq!(
            roles,
            [
                Speaker::User,
                Speaker::Assistant,
                Speaker::User,
                Speaker::Assistant
            ]
        );
        assert!(flat[2]
            .content
            .starts_with("Result of `list_files`: calc.py"));
        assert!(flat[2].content.ends_with("Context thins."));
        assert!(flat
            .iter()
            .all(|m| m.tool_calls.is_empty() && m.tool_result.is_none()));
    }
}
