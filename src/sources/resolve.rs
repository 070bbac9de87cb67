//! Resolving a connection's `${env:VAR}` and `${secret:NAME}` references into the values a child
//! process or an HTTP request gets. This is the only place secrets are read; the resolved values
//! are handed straight to the transport and never formatted into an error or a log line.

use std::collections::BTreeMap;

use crate::config::template::{Part, Template};
use crate::config::{ConnectionSettings, OAuthClientSettings, is_process_basic};
use crate::credentials::{Secret, SecretLookup};
use crate::oauth::ClientIdentity;

/// Resolves every value of `values` (the connection's `env` or `headers`). `what` is `env` or
/// `header`, used in error messages together with the source and connection names. Secret
/// values are added to `resolved`, to blank out of anything the upstream sends or prints (a
/// server may echo its token in a result, a tool listing or on stderr, and stderr ends up in
/// error messages and logs).
pub(crate) fn resolve_all(
    values: &BTreeMap<String, Template>,
    what: &str,
    source: &str,
    connection: &str,
    secrets: &dyn SecretLookup,
    resolved: &mut Vec<Secret>,
) -> Result<Vec<(String, String)>, String> {
    values
        .iter()
        .map(|(key, template)| {
            let value = template
                .resolve(|part| lookup(part, secrets, resolved))
                .map_err(|reason| {
                    format!(
                        "{what} `{key}` of source `{source}` (connection `{connection}`): {reason}"
                    )
                })?;
            Ok((key.clone(), value))
        })
        .collect()
}

/// The OAuth client the config names for `connection` of `source`, its secret resolved; `None`
/// when the config names none (the client registers itself).
pub fn client_identity(
    connection: &ConnectionSettings,
    source: &str,
    secrets: &dyn SecretLookup,
) -> Result<Option<ClientIdentity>, String> {
    let (client_id, secret) = match &connection.oauth {
        None => return Ok(None),
        Some(OAuthClientSettings::MetadataDocument { url }) => {
            return Ok(Some(ClientIdentity::MetadataDocument { url: url.clone() }));
        }
        Some(OAuthClientSettings::Registered {
            client_id,
            client_secret,
        }) => (client_id, client_secret),
    };
    let client_secret = match secret {
        Some(template) => {
            let mut resolved = Vec::new();
            let secret = template
                .resolve(|part| lookup(part, secrets, &mut resolved))
                .map_err(|reason| {
                    format!(
                        "the OAuth client secret of source `{source}` (connection `{}`): {reason}",
                        connection.name
                    )
                })?;
            Some(secret)
        }
        None => None,
    };
    Ok(Some(ClientIdentity::Registered {
        client_id: client_id.clone(),
        client_secret,
    }))
}

/// The values of every reference `connection` makes (`${secret:…}` and `${env:…}`, in its
/// environment, headers, credentials and OAuth client secret), to blank out of what its upstream
/// answers. A reference that cannot be resolved is skipped: the connection could not have sent
/// it, so it cannot come back.
pub fn connection_secrets(
    connection: &ConnectionSettings,
    secrets: &dyn SecretLookup,
) -> Vec<Secret> {
    let mut resolved = Vec::new();
    for part in connection.templates().flat_map(Template::parts) {
        if matches!(part, Part::Env(_) | Part::Secret(_)) {
            let _ = lookup(part, secrets, &mut resolved);
        }
    }
    resolved
}

fn lookup(
    part: &Part,
    secrets: &dyn SecretLookup,
    resolved: &mut Vec<Secret>,
) -> Result<String, String> {
    match part {
        Part::Literal(text) => Ok(text.clone()),
        // A value taken from the environment is a credential as much as a stored one.
        Part::Env(var) => {
            let value = crate::time_zone::user_var(var).map_err(|error| match error {
                std::env::VarError::NotPresent => format!(
                    "`${{env:{var}}}` refers to the environment variable `{var}`, which is not set; set it before starting capabilities, or store the value with `capabilities credential set` and write `${{secret:NAME}}` instead"
                ),
                std::env::VarError::NotUnicode(_) => {
                    format!("the environment variable `{var}` is not valid UTF-8")
                }
            })?;
            // A credential read here rather than from a store: the logs learn it here.
            if !is_process_basic(var) {
                let secret = Secret::new(value.clone());
                crate::credentials::remember(&secret);
                resolved.push(secret);
            }
            Ok(value)
        }
        Part::Secret(name) => {
            let value = secrets.secret(name)?;
            resolved.push(Secret::new(value.clone()));
            Ok(value)
        }
    }
}

/// The hub's own keys ([`HUB_SECRETS`](crate::env_vars::HUB_SECRETS)) this process was given:
/// they reach no upstream, but the person who started the hub may have exported them in a shell
/// an upstream can read the environment of, so what comes back is cleaned of them too.
pub fn hub_secrets() -> Vec<Secret> {
    env_credential_values(&crate::env_vars::HUB_SECRETS)
}

/// The current values of the `names` (see
/// [`SourceSettings::env_credentials`](crate::config::SourceSettings::env_credentials)) that are set,
/// each remembered so no log line shows it.
pub(crate) fn env_credential_values(names: &[impl AsRef<str>]) -> Vec<Secret> {
    names
        .iter()
        .filter_map(|name| std::env::var(name.as_ref()).ok())
        .filter(|value| !value.is_empty())
        .map(|value| {
            let secret = Secret::new(value);
            crate::credentials::remember(&secret);
            secret
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    struct OneSecret;
    impl SecretLookup for OneSecret {
        fn secret(&self, name: &str) -> Result<String, String> {
            if name == "token" {
                Ok("s3cr3t".into())
            } else {
                Err(format!("secret `{name}` is not stored"))
            }
        }
    }

    fn values(pairs: &[(&str, &str)]) -> BTreeMap<String, Template> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), Template::parse(v).expect("valid template")))
            .collect()
    }

    #[test]
    fn resolves_secrets_and_literals() {
        let mut secrets = Vec::new();
        let resolved = resolve_all(
            &values(&[("Authorization", "Bearer ${secret:token}")]),
            "header",
            "gh",
            "work",
            &OneSecret,
            &mut secrets,
        );
        assert_eq!(
            resolved,
            Ok(vec![("Authorization".into(), "Bearer s3cr3t".into())])
        );
        assert_eq!(secrets, vec![Secret::new("s3cr3t".into())]);
    }

    #[test]
    fn a_process_basic_from_the_environment_is_no_secret() {
        let mut secrets = Vec::new();
        let resolved = resolve_all(
            &values(&[("PATH", "${env:PATH}:/opt/bin"), ("T", "${secret:token}")]),
            "env",
            "gh",
            "work",
            &OneSecret,
            &mut secrets,
        )
        .expect("resolves");
        assert!(resolved[0].1.ends_with(":/opt/bin"), "{resolved:?}");
        assert_eq!(secrets, vec![Secret::new("s3cr3t".into())]);
    }

    #[test]
    fn missing_env_var_names_the_var_and_the_source() {
        let error = resolve_all(
            &values(&[("TOKEN", "${env:CAPABILITIES_TEST_SURELY_UNSET_VAR}")]),
            "env",
            "github",
            "personal",
            &OneSecret,
            &mut Vec::new(),
        )
        .expect_err("the variable is unset");
        assert!(
            error.contains("CAPABILITIES_TEST_SURELY_UNSET_VAR"),
            "{error}"
        );
        assert!(error.contains("source `github`"), "{error}");
        assert!(error.contains("env `TOKEN`"), "{error}");
    }

    #[test]
    fn missing_secret_keeps_the_store_message() {
        let error = resolve_all(
            &values(&[("K", "${secret:other}")]),
            "env",
            "s",
            "default",
            &OneSecret,
            &mut Vec::new(),
        )
        .expect_err("not stored");
        assert!(error.contains("secret `other` is not stored"), "{error}");
    }
}
