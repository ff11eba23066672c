//! Catalog models end to end: pi-ai 0.73.1's models of other providers reached through `pi -p`
//! against a mock server on 127.0.0.1 (the provider's `baseUrl` moved there in `models.json`, its
//! key from its usual variable), with the request each sends as a snapshot — over the OpenAI
//! chat-completions API, Google's Gemini API, Mistral's, the Responses API on Azure and ChatGPT's
//! Codex, Amazon Bedrock (SigV4-signed, credentials from the environment or an AWS profile).

use pi_test_support::sandbox::{Sandbox, output, text};
use pi_test_support::{MockServer, Reply};
use pi_test_support::{bedrock, google, mistral, openai, openai_responses};
use serde_json::{Value, json};

/// The request body without what depends on the machine: each message's role only, and the tools'
/// names.
fn shape(mut body: Value) -> Value {
    if let Some(messages) = body.get_mut("messages").and_then(Value::as_array_mut) {
        for message in messages.iter_mut() {
            *message = json!({"role": message["role"]});
        }
    }
    if let Some(tools) = body.get_mut("tools").and_then(Value::as_array_mut) {
        for tool in tools.iter_mut() {
            *tool = tool["function"]["name"].clone();
        }
    }
    body
}

/// Runs `pi -p` with `args` for `provider`, whose base URL is the mock server's, and `var=key`.
async fn run(provider: &str, var: &str, key: &str, args: &[&str]) -> (MockServer, std::process::Output) {
    run_with(openai::text("Hi."), provider, var, key, args).await
}

/// [`run`] with the server answering `reply`.
async fn run_with(
    reply: Reply,
    provider: &str,
    var: &str,
    key: &str,
    args: &[&str],
) -> (MockServer, std::process::Output) {
    let server = MockServer::start(vec![reply]).await;
    let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
    sandbox.write_models_json(&json!({"providers": {provider: {"baseUrl": server.url("/v1")}}}).to_string());
    let mut all = vec!["-p", "--provider", provider];
    all.extend_from_slice(args);
    all.push("hi");
    let mut command = sandbox.command(&all);
    command.env(var, key);
    let output = output(command).await;
    (server, output)
}

#[tokio::test(flavor = "multi_thread")]
async fn an_openrouter_model_with_the_catalogs_compat_flags() {
    let (server, output) = run(
        "openrouter",
        "OPENROUTER_API_KEY",
        "sk-or-v1-test-key-0123",
        &["--model", "deepseek/deepseek-v4-flash", "--thinking", "xhigh"],
    )
    .await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(text(&output.stdout), "Hi.\n");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].line, "POST /v1/chat/completions");
    assert_eq!(
        requests[0].header("authorization"),
        Some("Bearer sk-or-v1-test-key-0123")
    );
    insta::assert_snapshot!(
        "openrouter_deepseek_v4_flash_request",
        serde_json::to_string_pretty(&shape(requests[0].json())).unwrap()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_xai_model_without_store_developer_role_or_reasoning_effort() {
    let (server, output) = run(
        "xai",
        "XAI_API_KEY",
        "xai-test-key-0123",
        &["--model", "grok-4", "--thinking", "high"],
    )
    .await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].header("authorization"), Some("Bearer xai-test-key-0123"));
    insta::assert_snapshot!(
        "xai_grok_4_request",
        serde_json::to_string_pretty(&shape(requests[0].json())).unwrap()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_gemini_model_with_the_key_from_gemini_api_key() {
    let (server, output) = run_with(
        google::text("Hi from Gemini."),
        "google",
        "GEMINI_API_KEY",
        "gemini-test-key-0123",
        &["--model", "gemini-2.5-flash", "--thinking", "low"],
    )
    .await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(text(&output.stdout), "Hi from Gemini.\n");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0].line,
        "POST /v1/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    );
    assert_eq!(requests[0].header("x-goog-api-key"), Some("gemini-test-key-0123"));
    let mut body = requests[0].json();
    // The system prompt and the tools depend on the machine; their presence does not.
    body["systemInstruction"] = json!(body["systemInstruction"]["role"]);
    if let Some(declarations) = body["tools"][0]["functionDeclarations"].as_array_mut() {
        for declaration in declarations.iter_mut() {
            *declaration = declaration["name"].clone();
        }
    }
    insta::assert_snapshot!("gemini_2_5_flash_request", serde_json::to_string_pretty(&body).unwrap());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_mistral_model_with_the_key_from_mistral_api_key() {
    let server = MockServer::start(vec![mistral::text("Hi from Mistral.")]).await;
    let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
    sandbox.write_models_json(&json!({"providers": {"mistral": {"baseUrl": server.url("")}}}).to_string());
    let mut command = sandbox.command(&[
        "-p",
        "--provider",
        "mistral",
        "--model",
        "magistral-medium-latest",
        "--thinking",
        "medium",
        "hi",
    ]);
    command.env("MISTRAL_API_KEY", "mistral-test-key-0123");
    let output = output(command).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(text(&output.stdout), "Hi from Mistral.\n");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].line, "POST /v1/chat/completions");
    assert_eq!(
        requests[0].header("authorization"),
        Some("Bearer mistral-test-key-0123")
    );
    // pi's session id goes as `x-affinity`.
    assert!(requests[0].header("x-affinity").is_some_and(|id| !id.is_empty()));
    insta::assert_snapshot!(
        "magistral_medium_request",
        serde_json::to_string_pretty(&shape(requests[0].json())).unwrap()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_azure_model_with_key_base_url_and_deployment_from_the_environment() {
    let server = MockServer::start(vec![openai_responses::text("Hi from Azure.")]).await;
    let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
    let mut command = sandbox.command(&[
        "-p",
        "--provider",
        "azure-openai-responses",
        "--model",
        "gpt-5-mini",
        "--thinking",
        "low",
        "hi",
    ]);
    command
        .env("AZURE_OPENAI_API_KEY", "azure-test-key-0123")
        .env("AZURE_OPENAI_BASE_URL", server.url("/openai/v1"))
        .env("AZURE_OPENAI_DEPLOYMENT_NAME_MAP", "gpt-5-mini=team-gpt5-mini");
    let output = output(command).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(text(&output.stdout), "Hi from Azure.\n");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].line, "POST /openai/v1/responses?api-version=v1");
    assert_eq!(requests[0].header("api-key"), Some("azure-test-key-0123"));
    assert_eq!(requests[0].header("authorization"), None);
    let mut body = requests[0].json();
    // The system prompt, the session id and the tools depend on the machine; their presence does not.
    body["input"] = json!(
        body["input"]
            .as_array()
            .map(|items| items.iter().map(|item| item["role"].clone()).collect::<Vec<_>>())
    );
    body["prompt_cache_key"] = json!(body["prompt_cache_key"].is_string());
    if let Some(tools) = body["tools"].as_array_mut() {
        for tool in tools.iter_mut() {
            *tool = tool["name"].clone();
        }
    }
    insta::assert_snapshot!("azure_gpt_5_mini_request", serde_json::to_string_pretty(&body).unwrap());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_chatgpt_codex_model_with_the_logins_access_token() {
    // An access token as the ChatGPT login stores it: a JWT naming the account.
    let claims = json!({"https://api.openai.com/auth": {"chatgpt_account_id": "acct-cli-0123"}});
    let encode = |text: &str| base64::Engine::encode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, text);
    let token = format!("{}.{}.c2ln", encode(r#"{"alg":"RS256"}"#), encode(&claims.to_string()));
    let server = MockServer::start(vec![openai_responses::text("Hi from Codex.")]).await;
    let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
    sandbox.write_models_json(
        &json!({"providers": {"openai-codex": {"baseUrl": server.url("/backend-api")}}}).to_string(),
    );
    let command = sandbox.command(&[
        "-p",
        "--provider",
        "openai-codex",
        "--model",
        "gpt-5.1-codex-mini",
        "--api-key",
        &token,
        "hi",
    ]);
    let output = output(command).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(text(&output.stdout), "Hi from Codex.\n");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].line, "POST /backend-api/codex/responses");
    assert_eq!(
        requests[0].header("authorization"),
        Some(format!("Bearer {token}").as_str())
    );
    assert_eq!(requests[0].header("chatgpt-account-id"), Some("acct-cli-0123"));
    assert_eq!(requests[0].header("originator"), Some("pi"));
    assert!(requests[0].header("session_id").is_some_and(|id| !id.is_empty()));
    let mut body = requests[0].json();
    // The instructions (the system prompt), the session id and the tools depend on the machine.
    body["instructions"] = json!(body["instructions"].is_string());
    body["prompt_cache_key"] = json!(body["prompt_cache_key"].is_string());
    body["input"] = json!(
        body["input"]
            .as_array()
            .map(|items| items.iter().map(|item| item["role"].clone()).collect::<Vec<_>>())
    );
    if let Some(tools) = body["tools"].as_array_mut() {
        for tool in tools.iter_mut() {
            *tool = tool["name"].clone();
        }
    }
    insta::assert_snapshot!(
        "codex_gpt_5_1_codex_mini_request",
        serde_json::to_string_pretty(&body).unwrap()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bedrock_model_signed_with_keys_from_the_environment() {
    let server = MockServer::start(vec![bedrock::text("Hi from Bedrock.")]).await;
    let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
    sandbox.write_models_json(&json!({"providers": {"amazon-bedrock": {"baseUrl": server.url("")}}}).to_string());
    let mut command = sandbox.command(&[
        "-p",
        "--provider",
        "amazon-bedrock",
        "--model",
        "amazon.nova-lite-v1:0",
        "hi",
    ]);
    command
        .env("AWS_ACCESS_KEY_ID", "AKIDCLITEST")
        .env("AWS_SECRET_ACCESS_KEY", "cli-bedrock-secret-0123")
        .env("AWS_REGION", "eu-west-1");
    let output = output(command).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(text(&output.stdout), "Hi from Bedrock.\n");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].line, "POST /model/amazon.nova-lite-v1%3A0/converse-stream");
    let authorization = requests[0].header("authorization").unwrap_or_default();
    assert!(
        authorization.starts_with("AWS4-HMAC-SHA256 Credential=AKIDCLITEST/")
            && authorization.contains("/eu-west-1/bedrock/aws4_request, SignedHeaders=content-type;host;x-amz-date, "),
        "{authorization}"
    );
    let mut body = requests[0].json();
    body["system"] = json!("(pi's system prompt)");
    if let Some(messages) = body["messages"].as_array_mut() {
        for message in messages {
            *message = json!({"role": message["role"]});
        }
    }
    if let Some(tools) = body["toolConfig"]["tools"].as_array_mut() {
        for tool in tools {
            *tool = tool["toolSpec"]["name"].clone();
        }
    }
    insta::assert_snapshot!(
        "bedrock_nova_lite_request",
        serde_json::to_string_pretty(&body).unwrap()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bedrock_model_with_an_aws_profile_and_its_region() {
    let server = MockServer::start(vec![bedrock::text("Hi from a profile.")]).await;
    let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
    sandbox.write_models_json(&json!({"providers": {"amazon-bedrock": {"baseUrl": server.url("")}}}).to_string());
    let aws = sandbox.home.join(".aws");
    std::fs::create_dir_all(&aws).unwrap();
    std::fs::write(
        aws.join("credentials"),
        "[work]\naws_access_key_id = AKIDPROFILE\naws_secret_access_key = cli-profile-secret-0123\n",
    )
    .unwrap();
    std::fs::write(aws.join("config"), "[profile work]\nregion = ap-southeast-2\n").unwrap();
    let mut command = sandbox.command(&[
        "-p",
        "--provider",
        "amazon-bedrock",
        "--model",
        "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        "hi",
    ]);
    command.env("AWS_PROFILE", "work");
    let done = output(command).await;
    assert!(done.status.success(), "{}", text(&done.stderr));
    assert_eq!(text(&done.stdout), "Hi from a profile.\n");
    let authorization = server.requests()[0]
        .header("authorization")
        .unwrap_or_default()
        .to_owned();
    assert!(
        authorization.contains("Credential=AKIDPROFILE/") && authorization.contains("/ap-southeast-2/bedrock/"),
        "{authorization}"
    );

    // Without credentials anywhere: the SDK's text, nothing sent.
    let mut command = sandbox.command(&[
        "-p",
        "--provider",
        "amazon-bedrock",
        "--model",
        "amazon.nova-lite-v1:0",
        "hi",
    ]);
    command.env("AWS_REGION", "us-east-1");
    let output = output(command).await;
    assert_eq!(output.status.code(), Some(1));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("Could not load credentials from any providers"),
        "{stderr}"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_vertex_model_with_application_default_credentials_and_no_key() {
    let tokens = MockServer::start(vec![Reply::json(
        200,
        r#"{"access_token": "ya29.cli-vertex-token-0123", "expires_in": 3600, "token_type": "Bearer"}"#,
    )])
    .await;
    let server = MockServer::start(vec![google::text("Hi from Vertex.")]).await;
    let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
    sandbox.write_models_json(&json!({"providers": {"google-vertex": {"baseUrl": server.url("")}}}).to_string());
    let credentials = sandbox.root().join("adc.json");
    std::fs::write(
        &credentials,
        json!({"type": "authorized_user", "client_id": "cli-client", "client_secret": "cli-client-secret-0123",
            "refresh_token": "cli-refresh-token-0123", "token_uri": tokens.url("/token")})
        .to_string(),
    )
    .unwrap();
    let mut command = sandbox.command(&["-p", "--provider", "google-vertex", "--model", "gemini-2.5-pro", "hi"]);
    command
        .env("GOOGLE_APPLICATION_CREDENTIALS", &credentials)
        .env("GOOGLE_CLOUD_PROJECT", "cli-project")
        .env("GOOGLE_CLOUD_LOCATION", "us-central1");
    let output = output(command).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(text(&output.stdout), "Hi from Vertex.\n");
    assert_eq!(tokens.requests().len(), 1);
    let requests = server.requests();
    assert_eq!(
        requests[0].line,
        "POST /v1/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
    );
    assert_eq!(
        requests[0].header("authorization"),
        Some("Bearer ya29.cli-vertex-token-0123")
    );
}
