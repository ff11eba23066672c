//! PKCE (RFC 7636): a random verifier and its S256 challenge, as pi-ai makes them.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

use super::common::OAuthError;

/// A code verifier and its challenge.
#[derive(Clone)]
pub(crate) struct Pkce {
    pub(crate) verifier: String,
    pub(crate) challenge: String,
}

/// `n` random bytes from the operating system.
pub(crate) fn random_bytes<const N: usize>() -> Result<[u8; N], OAuthError> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).map_err(|error| OAuthError::Failed(format!("No random numbers: {error}")))?;
    Ok(bytes)
}

/// 32 random bytes, base64url without padding, and the base64url SHA-256 of that text.
pub(crate) fn generate() -> Result<Pkce, OAuthError> {
    let verifier = URL_SAFE_NO_PAD.encode(random_bytes::<32>()?);
    Ok(Pkce {
        challenge: challenge_of(&verifier),
        verifier,
    })
}

pub(crate) fn challenge_of(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_challenge_is_rfc_7636s() {
        // RFC 7636, appendix B.
        assert_eq!(
            challenge_of("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn verifiers_are_43_url_safe_characters_and_differ() {
        let (a, b) = (generate().unwrap(), generate().unwrap());
        assert_eq!(a.verifier.len(), 43);
        assert!(
            a.verifier
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
        );
        assert_ne!(a.verifier, b.verifier);
        assert_eq!(a.challenge, challenge_of(&a.verifier));
    }
}
