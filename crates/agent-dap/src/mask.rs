//! Values that look like secrets are masked in what a debug answer shows a model (the stop's
//! locals, `variables`, `evaluate`), and the answer says so; a call with `reveal: true` shows
//! them.
//!
//! A value is masked when the variable's name looks like a secret's (it contains `token`,
//! `secret`, `password`, `passwd`, `passphrase`, `credential` or `key`, in any case), or when
//! the value holds a bearer token (`Bearer ` and 16 or more token characters), a private key
//! block (`-----BEGIN … PRIVATE KEY-----`), or the value of an environment variable whose name
//! looks like a secret's (the host's, and what a launch added). What it cannot see: a secret in
//! a variable with an innocent name whose value matches none of these (a password in `s`), and a
//! secret the program printed (`output` shows the program's own output as it is).

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::OnceLock;

tokio::task_local! {
    /// Whether this call shows secrets as they are (`reveal: true`).
    static REVEAL: bool;
}

/// Run `f` with secrets shown (`reveal`) or masked.
pub(crate) async fn scoped<F: Future>(reveal: bool, f: F) -> F::Output {
    REVEAL.scope(reveal, f).await
}

fn revealing() -> bool {
    REVEAL.try_with(|r| *r).unwrap_or(false)
}

/// Parts of a name that make it a secret's.
const SECRET_WORDS: &[&str] = &[
    "token",
    "secret",
    "password",
    "passwd",
    "passphrase",
    "credential",
    "key",
];

/// Environment values shorter than this are not looked for in values (they would match
/// everywhere).
const MIN_ENV_SECRET: usize = 8;

/// Whether `name` looks like a secret's.
pub(crate) fn secret_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    SECRET_WORDS.iter().any(|w| lower.contains(w))
}

/// Values of the environment variables whose names look like secrets': the host's, and what
/// launches added ([`remember_env`]).
fn env_secrets() -> parking_lot::MutexGuard<'static, Vec<String>> {
    static VALUES: OnceLock<Mutex<Vec<String>>> = OnceLock::new();
    VALUES
        .get_or_init(|| {
            Mutex::new(
                std::env::vars()
                    .filter(|(k, v)| secret_name(k) && v.len() >= MIN_ENV_SECRET)
                    .map(|(_, v)| v)
                    .collect(),
            )
        })
        .lock()
}

/// Remember the secret-named values a launch puts in the debuggee's environment.
pub(crate) fn remember_env(env: &BTreeMap<String, String>) {
    let mut known = env_secrets();
    for (k, v) in env {
        if secret_name(k) && v.len() >= MIN_ENV_SECRET && !known.contains(v) {
            known.push(v.clone());
        }
    }
}

/// Why `value` (of the variable `name`) is a secret, or `None`.
pub(crate) fn why_secret(name: &str, value: &str) -> Option<&'static str> {
    if secret_name(name) {
        return Some("its name looks like a secret's");
    }
    if holds_bearer(value) {
        return Some("it holds a bearer token");
    }
    if value.contains("-----BEGIN") && value.contains("PRIVATE KEY") {
        return Some("it holds a private key");
    }
    if env_secrets().iter().any(|s| value.contains(s.as_str())) {
        return Some("it holds the value of a secret environment variable");
    }
    None
}

fn holds_bearer(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    lower.match_indices("bearer ").any(|(at, m)| {
        value[at + m.len()..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || "-._~+/=".contains(*c))
            .count()
            >= 16
    })
}

/// `value` as shown: itself, or, unless this call reveals secrets, what stands for it.
pub(crate) fn shown(name: &str, value: &str) -> (String, bool) {
    match why_secret(name, value) {
        Some(why) if !revealing() => (format!("<masked: {why}; `reveal: true` shows it>"), true),
        _ => (value.to_string(), false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn names_and_values_that_look_like_secrets_are_masked_unless_revealed() {
        assert!(shown("API_TOKEN", "abc").1);
        assert!(shown("db_password", "x").1);
        assert!(shown("private_key", "x").1);
        assert!(!shown("count", "3").1);
        assert!(
            shown(
                "headers",
                "{'Authorization': 'Bearer abcdefghijklmnop1234'}"
            )
            .1
        );
        assert!(!shown("note", "a bearer of news").1);
        assert!(shown("pem", "-----BEGIN OPENSSH PRIVATE KEY-----\nabc").1);
        remember_env(&[("SERVICE_SECRET".to_string(), "s3cr3t-value-42".to_string())].into());
        assert!(shown("conn", "https://u:s3cr3t-value-42@host").1);
        let (text, masked) = scoped(true, async { shown("API_TOKEN", "abc") }).await;
        assert_eq!((text.as_str(), masked), ("abc", false));
        assert!(
            shown("API_TOKEN", "abc")
                .0
                .contains("`reveal: true` shows it")
        );
    }
}
