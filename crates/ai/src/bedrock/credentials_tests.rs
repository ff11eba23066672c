use super::*;
use pi_test_support::{MockServer, Reply};
use std::sync::Arc;

fn env_of(vars: &[(&str, &str)]) -> Env {
    let vars: HashMap<String, String> = vars.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    Arc::new(move |name: &str| vars.get(name).cloned())
}

async fn resolve_with(env: &Env) -> Result<AwsCredentials, CredentialsError> {
    resolve(&HttpClient::default(), env, &CancellationToken::new()).await
}

fn write(path: &std::path::Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[tokio::test]
async fn environment_keys_unless_a_profile_is_named() {
    let home = tempfile::tempdir().unwrap();
    let home_dir = home.path().to_str().unwrap();
    write(
        &home.path().join(".aws/credentials"),
        "[default]\naws_access_key_id = AKIDFILE\naws_secret_access_key = file-secret-0123456789\n\n[dev]\naws_access_key_id=AKIDDEV\naws_secret_access_key=dev-secret-0123456789\naws_session_token = dev-token-0123456789 ; a comment\n",
    );
    let env = env_of(&[
        ("HOME", home_dir),
        ("AWS_ACCESS_KEY_ID", "AKIDENV"),
        ("AWS_SECRET_ACCESS_KEY", "env-secret-0123456789"),
        ("AWS_SESSION_TOKEN", "env-token-0123456789"),
    ]);
    let credentials = resolve_with(&env).await.unwrap();
    assert_eq!(
        (
            credentials.access_key_id.as_str(),
            credentials.session_token.as_deref(),
            credentials.source
        ),
        ("AKIDENV", Some("env-token-0123456789"), "environment")
    );
    // The secrets went to the redactor.
    assert_eq!(
        crate::redact("x env-secret-0123456789 x", None),
        format!("x {} x", crate::REDACTED)
    );

    // AWS_PROFILE skips the environment's keys, as the SDK does.
    let env = env_of(&[
        ("HOME", home_dir),
        ("AWS_PROFILE", "dev"),
        ("AWS_ACCESS_KEY_ID", "AKIDENV"),
        ("AWS_SECRET_ACCESS_KEY", "env-secret-0123456789"),
    ]);
    let credentials = resolve_with(&env).await.unwrap();
    assert_eq!(credentials.access_key_id, "AKIDDEV");
    assert_eq!(credentials.session_token.as_deref(), Some("dev-token-0123456789"));

    // Without either, the default profile.
    let credentials = resolve_with(&env_of(&[("HOME", home_dir)])).await.unwrap();
    assert_eq!(credentials.access_key_id, "AKIDFILE");
}

#[tokio::test]
async fn profile_files_named_by_variables_and_merged() {
    let dir = tempfile::tempdir().unwrap();
    let credentials_file = dir.path().join("creds");
    let config_file = dir.path().join("conf");
    write(
        &credentials_file,
        "[work]\naws_secret_access_key = work-secret-0123456789\n",
    );
    write(
        &config_file,
        "[profile work]\naws_access_key_id = AKIDWORK\nregion = eu-west-1\ns3 =\n  max_concurrent_requests = 20\n[profile assume]\nrole_arn = arn:aws:iam::123:role/x\nsource_profile = work\n",
    );
    let vars = |profile: &'static str| {
        env_of(&[
            ("HOME", "/nonexistent"),
            ("AWS_PROFILE", profile),
            ("AWS_SHARED_CREDENTIALS_FILE", credentials_file.to_str().unwrap()),
            ("AWS_CONFIG_FILE", config_file.to_str().unwrap()),
        ])
    };
    let credentials = resolve_with(&vars("work")).await.unwrap();
    assert_eq!(credentials.access_key_id, "AKIDWORK");
    assert_eq!(credentials.secret_access_key, "work-secret-0123456789");
    assert_eq!(profile_region(&vars("work")).await.as_deref(), Some("eu-west-1"));
    let error = resolve_with(&vars("assume")).await.unwrap_err();
    assert!(
        matches!(
            error,
            CredentialsError::Unsupported {
                what: "role assumption (role_arn)",
                ..
            }
        ),
        "{error}"
    );
    // A profile that is nowhere, and nothing else: the SDK's text.
    let error = resolve_with(&vars("missing")).await.unwrap_err();
    assert_eq!(error.to_string(), NO_CREDENTIALS);
    let error = resolve_with(&env_of(&[
        ("HOME", "/nonexistent"),
        ("AWS_WEB_IDENTITY_TOKEN_FILE", "/t"),
    ]))
    .await
    .unwrap_err();
    assert!(matches!(error, CredentialsError::WebIdentity));
}

#[tokio::test]
async fn sso_session_token_exchanged_at_the_portal() {
    let server = MockServer::start(vec![Reply::json(
        200,
        r#"{"roleCredentials":{"accessKeyId":"ASIASSO","secretAccessKey":"sso-secret-0123456789","sessionToken":"sso-session-0123456789","expiration":4102444800000}}"#,
    )])
    .await;
    let home = tempfile::tempdir().unwrap();
    write(
        &home.path().join(".aws/config"),
        "[profile sso-dev]\nsso_session = corp\nsso_account_id = 111122223333\nsso_role_name = Dev\nregion = us-west-2\n\n[sso-session corp]\nsso_start_url = https://corp.awsapps.com/start\nsso_region = us-east-1\n",
    );
    // The token file is named by the SHA-1 of the session name, as the SDKs name it.
    assert_eq!(sha1_hex("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
    let token_file = home.path().join(format!(".aws/sso/cache/{}.json", sha1_hex("corp")));
    write(
        &token_file,
        r#"{"accessToken":"sso-access-token-0123456789","expiresAt":"2099-01-01T00:00:00Z","region":"us-east-1","startUrl":"https://corp.awsapps.com/start"}"#,
    );
    let env = env_of(&[
        ("HOME", home.path().to_str().unwrap()),
        ("AWS_PROFILE", "sso-dev"),
        ("AWS_ENDPOINT_URL_SSO", &server.base_url()),
    ]);
    let credentials = resolve_with(&env).await.unwrap();
    assert_eq!(credentials.access_key_id, "ASIASSO");
    assert_eq!(credentials.session_token.as_deref(), Some("sso-session-0123456789"));
    assert_eq!(credentials.source, "sso");
    let requests = server.requests();
    assert_eq!(
        requests[0].line,
        "GET /federation/credentials?account_id=111122223333&role_name=Dev"
    );
    assert_eq!(
        requests[0].header("x-amz-sso_bearer_token"),
        Some("sso-access-token-0123456789")
    );
    // Cached until shortly before they expire: no second request.
    resolve_with(&env).await.unwrap();
    assert_eq!(server.requests().len(), 1);

    // An expired token: the SDK's text, nothing asked.
    write(
        &token_file,
        r#"{"accessToken":"sso-access-token-0123456789","expiresAt":"2001-01-01T00:00:00Z"}"#,
    );
    write(
        &home.path().join(".aws/config"),
        "[profile old]\nsso_start_url = https://old.awsapps.com/start\nsso_region = us-east-1\nsso_account_id = 1\nsso_role_name = R\n",
    );
    let old = env_of(&[
        ("HOME", home.path().to_str().unwrap()),
        ("AWS_PROFILE", "old"),
        ("AWS_ENDPOINT_URL_SSO", &server.base_url()),
    ]);
    // The legacy profile's token file is named by its start URL; none there yet.
    assert_eq!(resolve_with(&old).await.unwrap_err().to_string(), SSO_TOKEN_INVALID);
    write(
        &home.path().join(format!(
            ".aws/sso/cache/{}.json",
            sha1_hex("https://old.awsapps.com/start")
        )),
        r#"{"accessToken":"old-access-token-0123456789","expiresAt":"2001-01-01T00:00:00Z"}"#,
    );
    assert_eq!(resolve_with(&old).await.unwrap_err().to_string(), SSO_TOKEN_EXPIRED);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn sso_refusal_is_reported_without_the_token() {
    let server = MockServer::start(vec![Reply::json(
        401,
        r#"{"message":"Session token not found or invalid: sso-refused-token-0123456789"}"#,
    )])
    .await;
    let home = tempfile::tempdir().unwrap();
    write(
        &home.path().join(".aws/config"),
        "[default]\nsso_start_url = https://refused.awsapps.com/start\nsso_region = us-east-1\nsso_account_id = 1\nsso_role_name = R\n",
    );
    write(
        &home.path().join(format!(
            ".aws/sso/cache/{}.json",
            sha1_hex("https://refused.awsapps.com/start")
        )),
        r#"{"accessToken":"sso-refused-token-0123456789","expiresAt":"2099-01-01T00:00:00Z"}"#,
    );
    let env = env_of(&[
        ("HOME", home.path().to_str().unwrap()),
        ("AWS_ENDPOINT_URL", &server.base_url()),
    ]);
    let error = resolve_with(&env).await.unwrap_err().to_string();
    assert!(error.starts_with("SSO GetRoleCredentials failed (401): "), "{error}");
    assert!(!error.contains("sso-refused-token-0123456789"), "{error}");
}

#[tokio::test]
async fn container_credentials_with_an_authorization_token() {
    let server = MockServer::start(vec![Reply::json(
        200,
        r#"{"AccessKeyId":"ASIACONTAINER","SecretAccessKey":"container-secret-0123456789","Token":"container-token-0123456789","Expiration":"2099-01-01T00:00:00Z"}"#,
    )])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("token");
    write(&token_file, "pod-identity-token-0123456789\n");
    let env = env_of(&[
        ("HOME", "/nonexistent"),
        ("AWS_CONTAINER_CREDENTIALS_FULL_URI", &server.url("/v1/credentials")),
        ("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", token_file.to_str().unwrap()),
    ]);
    let credentials = resolve_with(&env).await.unwrap();
    assert_eq!(credentials.access_key_id, "ASIACONTAINER");
    assert_eq!(credentials.session_token.as_deref(), Some("container-token-0123456789"));
    assert!(credentials.expires.is_some());
    let requests = server.requests();
    assert_eq!(requests[0].line, "GET /v1/credentials");
    assert_eq!(
        requests[0].header("authorization"),
        Some("pod-identity-token-0123456789")
    );

    let env = env_of(&[("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://169.254.169.254/latest")]);
    let error = resolve_with(&env).await.unwrap_err();
    assert!(matches!(error, CredentialsError::ContainerUri(_)), "{error}");
}

#[test]
fn ini_files_as_the_sdk_reads_them() {
    let sections =
        parse_ini("# comment\n[default]\nregion=us-east-1 # trailing\n; other\n[profile  spaced ]\nKey = a=b\n");
    assert_eq!(sections["default"]["region"], "us-east-1");
    assert_eq!(sections["profile spaced"]["key"], "a=b");
}
