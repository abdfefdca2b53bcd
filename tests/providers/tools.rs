//! Tool calling over real HTTP, for each protocol plain and streamed: the client offers a
//! tool, the scripted server calls it, the client sends the result back and the server
//! answers in text. Both sides are checked: what the client decoded, and the exact wire form
//! of the tools, the call and the result the server received.

use git_triad::model::{Message, ToolSpec};

use super::*;

const FOUND: &str = "src/main.rs:3: fn main() {";

fn grep_tool() -> ToolSpec {
    ToolSpec::new(
        "grep",
        "Search the repository's files.",
        json!({"type": "object", "properties": {"pattern": {"type": "string"}},
               "required": ["pattern"]}),
    )
}

/// A call of `grep` (after the text "Looking."), then a text answer.
fn call_then_answer() -> Script {
    replies(vec![
        Reply::tool_calls(vec![("grep", json!({"pattern": "fn main"}))]).with_text("Looking."),
        Reply::text("main is in src/main.rs."),
    ])
}

/// Runs the round trip against `model`; returns the id the client decoded for the call and
/// the two requests the server received.
async fn round_trip(model: &str, stream: bool) -> (String, [Value; 2]) {
    let h = Harness::new(call_then_answer(), &[]).await;
    let mut req = request("Where is main?");
    req.stream = stream;
    req.tools = vec![grep_tool()];

    let first = h.chat(&[model], &req).await.unwrap().response;
    assert_eq!(first.text, "Looking.");
    assert_eq!(first.structured, None);
    let [call] = first.tool_calls.as_slice() else {
        panic!("one call expected: {first:#?}")
    };
    assert_eq!(
        (call.name.as_str(), &call.arguments),
        ("grep", &json!({"pattern": "fn main"}))
    );
    req.messages.push(first.message());
    req.messages.push(Message::tool_result(call, FOUND));

    let second = h.chat(&[model], &req).await.unwrap().response;
    assert_eq!(second.text, "main is in src/main.rs.");
    assert!(second.tool_calls.is_empty());
    assert_eq!(h.client.records().len(), 2);

    let reqs = h.requests();
    assert_eq!(reqs.len(), 2, "{reqs:#?}");
    assert!(reqs.iter().all(|r| r.stream == stream));
    let bodies = [body(&reqs[0]).clone(), body(&reqs[1]).clone()];
    assert_eq!(
        bodies[0]["tools"], bodies[1]["tools"],
        "tools are offered every turn"
    );
    (call.id.clone(), bodies)
}

async fn openai_round_trip(stream: bool) {
    let (id, [first, second]) = round_trip("model-a", stream).await;
    assert!(id.starts_with("call_fake"), "the server's id is kept: {id}");
    assert_eq!(
        first["tools"],
        json!([{"type": "function", "function": {"name": "grep",
            "description": "Search the repository's files.", "parameters": grep_tool().parameters}}])
    );
    let m = second["messages"].as_array().unwrap();
    assert_eq!(m.len(), 4, "system, user, assistant, tool: {m:#?}");
    assert_eq!(
        m[2],
        json!({"role": "assistant", "content": "Looking.", "tool_calls": [{"id": id,
            "type": "function", "function": {"name": "grep", "arguments": r#"{"pattern":"fn main"}"#}}]})
    );
    assert_eq!(
        m[3],
        json!({"role": "tool", "tool_call_id": id, "content": FOUND})
    );
}

async fn anthropic_round_trip(stream: bool) {
    let (id, [first, second]) = round_trip("claude-fake", stream).await;
    assert!(
        id.starts_with("toolu_fake"),
        "the server's id is kept: {id}"
    );
    assert_eq!(
        first["tools"],
        json!([{"name": "grep", "description": "Search the repository's files.",
            "input_schema": grep_tool().parameters}])
    );
    assert!(first.get("tool_choice").is_none(), "the model chooses");
    let m = second["messages"].as_array().unwrap();
    assert_eq!(m.len(), 3, "{m:#?}");
    assert_eq!(
        m[1],
        json!({"role": "assistant", "content": [{"type": "text", "text": "Looking."},
            {"type": "tool_use", "id": id, "name": "grep", "input": {"pattern": "fn main"}}]})
    );
    assert_eq!(
        m[2],
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": id, "content": FOUND}]})
    );
}

async fn gemini_round_trip(stream: bool) {
    let (_, [first, second]) = round_trip("gemini-fake", stream).await;
    assert_eq!(
        first["tools"],
        json!([{"functionDeclarations": [{"name": "grep",
            "description": "Search the repository's files.", "parameters": grep_tool().parameters}]}])
    );
    let c = second["contents"].as_array().unwrap();
    assert_eq!(c.len(), 3, "{c:#?}");
    assert_eq!(
        c[1],
        json!({"role": "model", "parts": [{"text": "Looking."},
            {"functionCall": {"name": "grep", "args": {"pattern": "fn main"}}}]})
    );
    assert_eq!(
        c[2],
        json!({"role": "user", "parts": [
            {"functionResponse": {"name": "grep", "response": {"output": FOUND}}}]})
    );
}

#[tokio::test]
async fn openai_tool_call_round_trip_plain_and_streamed() {
    openai_round_trip(false).await;
    openai_round_trip(true).await;
}

#[tokio::test]
async fn anthropic_tool_use_round_trip_plain_and_streamed() {
    anthropic_round_trip(false).await;
    anthropic_round_trip(true).await;
}

#[tokio::test]
async fn gemini_function_call_round_trip_plain_and_streamed() {
    gemini_round_trip(false).await;
    gemini_round_trip(true).await;
}

#[tokio::test]
async fn anthropic_structured_output_still_works_beside_real_tools() {
    let h = Harness::new(one_rule(Reply::json(good_review())), &[]).await;
    let mut req = request("review it");
    req.tools = vec![grep_tool()];
    let s = h
        .client
        .chat_structured::<Review>(Role::Arbiter, &names(&["claude-fake"]), &req)
        .await
        .unwrap();
    assert_eq!(s.json, good_review());
    assert!(s.completion.response.tool_calls.is_empty());
    let b = body(&h.requests()[0]).clone();
    let tools: Vec<&str> = b["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(tools, vec!["grep", "answer"]);
    assert_eq!(b["tool_choice"]["name"], "answer");
}

#[tokio::test]
async fn malformed_tool_call_arguments_are_a_clear_error() {
    let broken = json!({"id": "x", "object": "chat.completion", "model": "model-a",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant",
            "content": null, "tool_calls": [{"id": "call_1", "type": "function",
                "function": {"name": "grep", "arguments": "{\"pattern\": "}}]}}]});
    let reply = Reply {
        body: Some(broken),
        ..Reply::default()
    };
    let h = Harness::new(one_rule(reply), &[]).await;
    let mut req = request("Where is main?");
    req.tools = vec![grep_tool()];
    let err = h.chat(&["model-a"], &req).await.unwrap_err().to_string();
    assert!(
        err.contains("the arguments of the `grep` tool call are not JSON"),
        "{err}"
    );
}

#[tokio::test]
async fn a_key_in_tool_calls_or_results_never_travels_or_stays() {
    // The key comes back split over stream fragments, so only the assembled call can show it.
    let echo = Reply::tool_calls(vec![("grep", json!({ "pattern": CANARY_KEY }))]);
    let env = env_of(&[("FAKE_OPENAI_KEY", CANARY_KEY)]);
    let h = Harness::with_env(replies(vec![echo, Reply::text("ok")]), &[], env).await;
    let mut req = streamed("Where is main?");
    req.tools = vec![grep_tool()];
    let first = h.chat(&["model-a"], &req).await.unwrap().response;
    let call = &first.tool_calls[0];
    assert!(!call.arguments.to_string().contains("canary"), "{call:?}");

    let mut leaky = call.clone();
    leaky.arguments = json!({ "pattern": CANARY_KEY });
    req.messages
        .push(Message::assistant_with_calls("", vec![leaky.clone()]));
    req.messages
        .push(Message::tool_result(&leaky, format!("found {CANARY_KEY}")));
    h.chat(&["model-a"], &req).await.unwrap();
    let sent = &h.requests()[1];
    assert!(sent.body.contains("grep"), "{}", sent.body);
    assert!(!sent.body.contains("canary"), "{}", sent.body);
}
