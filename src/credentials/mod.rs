//! Where the values of `${secret:NAME}` references come from. Secrets are looked up only when a
//! connection opens, and only by the bridge to an upstream; nothing else sees them.

/// Looks up a stored secret by name.
pub trait SecretLookup: Send + Sync {
    fn secret(&self, name: &str) -> Result<String, String>;
}

/// The lookup used until a secret store is configured: every secret is missing, with the fix.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoSecretStore;

impl SecretLookup for NoSecretStore {
    fn secret(&self, name: &str) -> Result<String, String> {
        Err(format!(
            "secret `{name}` is not stored; store it with `capabilities credential set {name}`, or reference an environment variable with `${{env:VAR}}` instead"
        ))
    }
}
