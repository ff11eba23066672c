use super::*;
use std::collections::HashMap;
use std::time::{Duration, UNIX_EPOCH};

fn env_of(vars: &[(&str, &str)]) -> Env {
    let vars: HashMap<String, String> = vars.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    Arc::new(move |name: &str| vars.get(name).cloned())
}

fn credentials(token: Option<&str>) -> AwsCredentials {
    AwsCredentials {
        access_key_id: "AKIDEXAMPLE".into(),
        secret_access_key: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY".into(),
        session_token: token.map(str::to_owned),
        expires: None,
        source: "test",
    }
}

/// 2015-08-30T12:36:00Z, the time of AWS's SigV4 test suite.
fn suite_time() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_440_938_160)
}

#[test]
fn signs_the_aws_sigv4_test_suite_post_vanilla() {
    // aws-sig-v4-test-suite `post-vanilla`: its header-signed-request.txt.
    let added = sign_v4(
        &credentials(None),
        "us-east-1",
        "service",
        suite_time(),
        "POST",
        "https://example.amazonaws.com/",
        &[("host", "example.amazonaws.com")],
        b"",
    )
    .unwrap();
    assert_eq!(
        added,
        [
            ("x-amz-date".to_owned(), "20150830T123600Z".to_owned()),
            (
                "authorization".to_owned(),
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, \
                 SignedHeaders=host;x-amz-date, \
                 Signature=5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"
                    .to_owned()
            ),
        ]
    );
}

#[test]
fn signed_headers_of_a_converse_stream_request() {
    let auth = Auth::SigV4 {
        credentials: credentials(Some("session-token-example")),
        region: "us-west-2".into(),
        time: suite_time(),
    };
    let mut headers = vec![("x-custom".to_owned(), "kept".to_owned())];
    let url = "https://bedrock-runtime.us-west-2.amazonaws.com/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream";
    auth.apply(url, &mut headers, br#"{"messages":[]}"#).unwrap();
    let text: String = headers
        .iter()
        .map(|(name, value)| format!("{name}: {value}\n"))
        .collect();
    insta::assert_snapshot!(text);

    let mut headers = Vec::new();
    Auth::Bearer("bedrock-api-key-example".into())
        .apply(url, &mut headers, b"{}")
        .unwrap();
    assert_eq!(
        headers,
        [("authorization".to_owned(), "Bearer bedrock-api-key-example".to_owned())]
    );
}

#[test]
fn region_and_endpoint_as_pi_resolves_them() {
    let model = |base_url: &str| Model {
        id: "m".into(),
        base_url: base_url.into(),
        ..Model::unknown()
    };
    let standard = "https://bedrock-runtime.eu-central-1.amazonaws.com";
    // Nothing configured: the catalog's standard endpoint and its region.
    assert_eq!(
        endpoint(&model(standard), &env_of(&[])),
        (Some(standard.to_owned()), Some("eu-central-1".to_owned()))
    );
    // A configured region wins over a standard endpoint, which is then not used.
    assert_eq!(
        endpoint(&model(standard), &env_of(&[("AWS_REGION", "us-west-2")])),
        (None, Some("us-west-2".to_owned()))
    );
    assert_eq!(
        endpoint(&model(standard), &env_of(&[("AWS_DEFAULT_REGION", "ap-south-1")])),
        (None, Some("ap-south-1".to_owned()))
    );
    // A profile: the region comes from it.
    assert_eq!(
        endpoint(&model(standard), &env_of(&[("AWS_PROFILE", "dev")])),
        (None, None)
    );
    // A custom endpoint is always used; its region is the configured one, else us-east-1.
    let proxy = "http://127.0.0.1:9/bedrock/";
    assert_eq!(
        endpoint(&model(proxy), &env_of(&[("AWS_REGION", "us-west-2")])),
        (
            Some("http://127.0.0.1:9/bedrock".to_owned()),
            Some("us-west-2".to_owned())
        )
    );
    assert_eq!(
        endpoint(&model(proxy), &env_of(&[])),
        (
            Some("http://127.0.0.1:9/bedrock".to_owned()),
            Some("us-east-1".to_owned())
        )
    );
    assert_eq!(
        standard_endpoint_region("https://bedrock-runtime-fips.us-gov-west-1.amazonaws.com"),
        Some("us-gov-west-1".to_owned())
    );
    assert_eq!(standard_endpoint_region("https://bedrock.example.com"), None);
    assert_eq!(
        regional_endpoint("cn-north-1"),
        "https://bedrock-runtime.cn-north-1.amazonaws.com.cn"
    );
    assert_eq!(
        path_segment("arn:aws:bedrock:us-east-1:123:inference-profile/us.anthropic.claude-x-v1:0"),
        "arn%3Aaws%3Abedrock%3Aus-east-1%3A123%3Ainference-profile%2Fus.anthropic.claude-x-v1%3A0"
    );
}

#[test]
fn http_errors_in_pis_words() {
    let status = |status, body: &str| HttpError::Status {
        status,
        body: body.to_owned(),
    };
    assert_eq!(
        events::http_error_text(&status(400, r#"{"message":"Input is too long for requested model."}"#)).as_deref(),
        Some("Validation error: Input is too long for requested model.")
    );
    assert_eq!(
        events::http_error_text(&status(403, r#"{"Message":"no access"}"#)).as_deref(),
        Some("AccessDeniedException: no access")
    );
    assert_eq!(
        events::http_error_text(&status(503, r#"{"message":"later"}"#)).as_deref(),
        Some("Service unavailable: later")
    );
    assert_eq!(
        events::http_error_text(&status(502, r#"{"message":"bad gateway"}"#)),
        None
    );
    assert_eq!(events::http_error_text(&status(400, "<html>")), None);
}
