//! Our request bodies against the ones pi 0.73.1 sent for the same request
//! (`pi_test_support::pi_recorded`): the same model, system prompt, user message, tools and
//! thinking level must give the same JSON, field for field.

use std::sync::Arc;

use pi_agent_core::{
    AgentMessage, AgentTool, ContentBlock, LlmContext, Model, StreamOptions, ThinkingLevel, UserContent, UserMessage,
};
use pi_test_support::{pi_recorded, tools};
use serde_json::Value;

/// A model as pi builds it from a `models.json` entry with only an `id` (and `reasoning`).
fn model(provider: &str, api: &str, id: &str) -> Model {
    Model {
        id: id.into(),
        name: id.into(),
        api: api.into(),
        provider: provider.into(),
        base_url: "http://127.0.0.1:18731/v1".into(),
        reasoning: id == "think",
        context_window: 128_000,
        max_tokens: 16_384,
        ..Model::unknown()
    }
}

/// The recorded tools, rebuilt as tools of ours with the same names, descriptions and schemas.
fn recorded_tools(body: &Value) -> Vec<Arc<dyn AgentTool>> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|tool| {
            let f = tool.get("function").unwrap_or(tool);
            let schema = f
                .get("parameters")
                .or(f.get("input_schema"))
                .cloned()
                .unwrap_or_default();
            tools::unused(f["name"].as_str().unwrap(), f["description"].as_str().unwrap(), schema)
        })
        .collect()
}

fn ours(name: &str, level: Option<ThinkingLevel>) -> (Value, Value) {
    let recorded = pi_recorded::body(name);
    let (provider, api) = match &name[..2] {
        "cc" => ("cc", "openai-completions"),
        "cr" => ("cr", "openai-responses"),
        _ => ("an", "anthropic-messages"),
    };
    let model = model(provider, api, recorded["model"].as_str().unwrap());
    let prompt = pi_recorded::system_prompt(&recorded);
    // pi keeps a prompt's text as one text block.
    let history = [AgentMessage::User(UserMessage {
        content: UserContent::Blocks(vec![ContentBlock::text("hi")]),
        timestamp: 1,
    })];
    // Anthropic's recording holds pi's converted schemas; start from the tools' own (as the
    // chat-completions recording has them) so that the conversion is compared too.
    let tools = if api == "anthropic-messages" {
        recorded_tools(&pi_recorded::body("cc-plain"))
    } else {
        recorded_tools(&recorded)
    };
    let context = LlmContext {
        system_prompt: &prompt,
        messages: &history,
        tools: &tools,
    };
    let options = StreamOptions {
        reasoning: level,
        session_id: recorded["prompt_cache_key"].as_str().map(str::to_owned),
        ..StreamOptions::default()
    };
    let body = match api {
        "openai-completions" => crate::openai_completions::request_body(&model, &context, &options),
        "openai-responses" => crate::openai_responses::request_body(&model, &context, &options),
        _ => crate::anthropic::request_body(&model, &context, &options),
    };
    (body, recorded)
}

#[test]
fn bodies_equal_pi_0_73_1s_for_each_api_and_thinking_level() {
    let cases = [
        ("cc-plain", None),
        ("cc-think", Some(ThinkingLevel::Medium)),
        ("cc-think-xhigh", Some(ThinkingLevel::Xhigh)),
        ("cc-think-off", None),
        ("cr-plain", None),
        ("cr-think", Some(ThinkingLevel::Medium)),
        ("cr-think-xhigh", Some(ThinkingLevel::Xhigh)),
        ("cr-think-off", None),
        ("an-plain", None),
        ("an-think", Some(ThinkingLevel::Medium)),
        ("an-think-xhigh", Some(ThinkingLevel::Xhigh)),
        ("an-think-off", None),
    ];
    for (name, level) in cases {
        let (ours, recorded) = ours(name, level);
        assert_eq!(first_difference(&ours, &recorded, String::new()), None, "{name}");
        // Byte for byte: the keys come in pi's order too.
        let keys = |v: &Value| v.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>());
        assert_eq!(keys(&ours), keys(&recorded), "{name}: key order");
    }
}

/// The path of the first place where `a` and `b` differ, with both values there.
fn first_difference(a: &Value, b: &Value, at: String) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            keys.into_iter().find_map(|key| match (x.get(key), y.get(key)) {
                (Some(u), Some(v)) => first_difference(u, v, format!("{at}.{key}")),
                (u, v) => Some(format!("{at}.{key}: ours {u:?}, pi {v:?}")),
            })
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (u, v))| first_difference(u, v, format!("{at}[{i}]"))),
        _ => (a != b).then(|| format!("{at}: ours {a}, pi {b}")),
    }
}
