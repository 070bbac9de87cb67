//! [`TokenStore`]: one connection's OAuth tokens in the credential store (the keychain or the
//! encrypted file), as rmcp's `CredentialStore`. Kept in memory between reads, because the
//! file store pays a key derivation per read; read from the store again before a refresh,
//! since another process (`source login`, another hub) may have replaced them. A refresh holds
//! the credential store's refresh lock of the connection, so processes refresh it one at a time.
//!
//! Every token a store reads or writes is also kept in its [`HeldTokens`]: what an upstream
//! could echo back, and so what is blanked from its answers (see there).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use rmcp::transport::auth::{
    AuthError, CredentialRefreshGuard, CredentialStore, StoredCredentials,
};

use crate::credentials::{Redaction, Secret, SecretLookup, remember};

/// Where a stored sign-in keeps the scopes a server asked for since it was given (a 403
/// `insufficient_scope`), so the next sign-in asks for them too. rmcp reads the rest of the
/// object and ignores this field.
const WANTED_SCOPES: &str = "wanted_scopes";
/// Where a stored sign-in records the token endpoint it was given at, when its source's
/// endpoints come from something that may change under it (an OpenAPI document): the refresh
/// token and the client secret go there only (see [`TokenStore::bound_to`]).
const TOKEN_ENDPOINT: &str = "token_endpoint";

/// Where a stored sign-in keeps the client secret an authorization server issued when the
/// client registered itself: rmcp keeps it in memory only, and a later process's refresh must
/// authenticate with it.
const CLIENT_SECRET: &str = "client_secret";

/// How many tokens a [`HeldTokens`] keeps, for every connection of the process together. A
/// refresh replaces two (access and refresh), so this covers the last few refreshes of each
/// of a few dozen connections, which are what an upstream may still hold or echo; the current
/// tokens are the most recently seen, so they are never the ones let go.
const HELD_TOKENS: usize = 128;

/// The credential store name of a connection's tokens: `oauth.SOURCE.CONNECTION`.
pub fn token_name(source: &str, connection: &str) -> String {
    format!("oauth.{source}.{connection}")
}

/// One connection's tokens, read and written through the credential store.
#[derive(Clone)]
pub struct TokenStore {
    secrets: Arc<dyn SecretLookup>,
    name: String,
    cache: Arc<Mutex<Option<StoredCredentials>>>,
    /// Set by a refresh: its load must see what another process may have stored since.
    reread: Arc<AtomicBool>,
    /// The scopes still wanted as of the last read (`None`: not read yet), so a save keeps
    /// them without reading the store once more (a keychain round trip).
    wanted: Arc<Mutex<Option<Vec<String>>>>,
    /// The token endpoint this store's sign-ins are recorded with (see [`TOKEN_ENDPOINT`]).
    endpoint: Option<String>,
    /// The secret of the client registered for this connection, as of the last read or
    /// registration (see [`CLIENT_SECRET`]).
    client_secret: Arc<Mutex<Option<Secret>>>,
    /// Every token read or written through this store (or the stores sharing it).
    held: Arc<HeldTokens>,
}

impl TokenStore {
    pub fn new(secrets: Arc<dyn SecretLookup>, source: &str, connection: &str) -> TokenStore {
        TokenStore {
            secrets,
            name: token_name(source, connection),
            cache: Arc::new(Mutex::new(None)),
            reread: Arc::new(AtomicBool::new(true)),
            wanted: Arc::new(Mutex::new(None)),
            endpoint: None,
            client_secret: Arc::default(),
            held: Arc::default(),
        }
    }

    /// Keeps `secret`, issued to the client this connection just registered (none for a public
    /// client, or one not registered by this connection), to be stored beside the tokens of
    /// the sign-in under way.
    pub fn keep_client_secret(&self, secret: Option<&str>) {
        let secret = secret.map(|secret| Secret::new(secret.to_string()));
        if let Some(secret) = &secret {
            remember(secret);
            self.held.hold(vec![secret.clone()]);
        }
        *self.client_secret.lock().unwrap_or_else(|p| p.into_inner()) = secret;
    }

    /// The secret of the client registered for this connection, as of the last
    /// [`read`](Self::read): what its refreshes authenticate with.
    pub fn client_secret(&self) -> Option<String> {
        let kept = self.client_secret.lock().unwrap_or_else(|p| p.into_inner());
        kept.as_ref().map(|secret| secret.expose().to_string())
    }

    /// This store, keeping the tokens it reads and writes in `held`: a connection hands the
    /// same one to the store of each of its connects, so tokens held before a reconnect are
    /// still known after it.
    pub fn holding(mut self, held: Arc<HeldTokens>) -> TokenStore {
        self.held = held;
        self
    }

    /// The redaction of every token this store has held (see [`HeldTokens`]).
    pub fn held(&self) -> Arc<Redaction> {
        self.held.redaction()
    }

    /// This store, recording `token_endpoint` beside the tokens it saves: a sign-in is then
    /// bound to the endpoint it was given at, which [`recorded_endpoint`](Self::recorded_endpoint)
    /// reads back before a refresh.
    pub fn bound_to(mut self, token_endpoint: &str) -> TokenStore {
        self.endpoint = Some(token_endpoint.to_string());
        self
    }

    /// The token endpoint the stored sign-in was given at, when it was recorded.
    pub fn recorded_endpoint(&self) -> Option<String> {
        self.raw()?
            .get(TOKEN_ENDPOINT)?
            .as_str()
            .map(str::to_string)
    }

    /// What is stored now, read from the credential store (not the memory copy).
    pub fn read(&self) -> Result<Option<StoredCredentials>, String> {
        let vault = self.secrets.vault().ok_or_else(no_vault)?;
        let Some(secret) = vault.load(&self.name)? else {
            return Ok(None);
        };
        let unreadable = |e: serde_json::Error| {
            format!(
                "the stored sign-in `{}` cannot be read ({e}); sign in again with `capabilities source login`",
                self.name
            )
        };
        let raw: serde_json::Value = serde_json::from_str(secret.expose()).map_err(unreadable)?;
        self.note_wanted(&raw);
        self.keep_client_secret(raw.get(CLIENT_SECRET).and_then(|value| value.as_str()));
        let stored: StoredCredentials = serde_json::from_value(raw).map_err(unreadable)?;
        self.hold(&stored);
        Ok(Some(stored))
    }

    fn note_wanted(&self, raw: &serde_json::Value) {
        let wanted = raw
            .get(WANTED_SCOPES)
            .cloned()
            .and_then(|wanted| serde_json::from_value(wanted).ok())
            .unwrap_or_default();
        *self.wanted.lock().unwrap_or_else(|p| p.into_inner()) = Some(wanted);
    }

    fn write(&self, stored: &StoredCredentials) -> Result<(), String> {
        let vault = self.secrets.vault().ok_or_else(no_vault)?;
        let mut value = serde_json::to_value(stored)
            .map_err(|e| format!("the sign-in cannot be stored: {e}"))?;
        // A refresh keeps the scopes still wanted; a sign-in that was granted them ends the wish.
        let wanted: Vec<String> = self
            .wanted_scopes()
            .into_iter()
            .filter(|scope| !stored.granted_scopes.contains(scope))
            .collect();
        if let Some(object) = value.as_object_mut() {
            if !wanted.is_empty() {
                object.insert(WANTED_SCOPES.into(), serde_json::json!(wanted));
            }
            if let Some(endpoint) = &self.endpoint {
                object.insert(TOKEN_ENDPOINT.into(), serde_json::json!(endpoint));
            }
            if let Some(client_secret) = self.client_secret() {
                object.insert(CLIENT_SECRET.into(), serde_json::json!(client_secret));
            }
        }
        self.hold(stored);
        vault.save(&self.name, &Secret::new(value.to_string()))?;
        *self.wanted.lock().unwrap_or_else(|p| p.into_inner()) = Some(wanted);
        Ok(())
    }

    /// The stored sign-in as JSON, without reading it as rmcp's type; `None` when there is none
    /// or it cannot be read (then [`read`](Self::read) says why).
    fn raw(&self) -> Option<serde_json::Value> {
        let secret = self.secrets.vault()?.load(&self.name).ok()??;
        serde_json::from_str(secret.expose()).ok()
    }

    /// Keeps `stored`'s tokens in this connection's [`HeldTokens`], and remembers them so no
    /// log line shows one, in any encoding the redaction knows.
    fn hold(&self, stored: &StoredCredentials) {
        let tokens = Tokens::of(stored);
        let tokens: Vec<Secret> = [tokens.access, tokens.refresh, tokens.id]
            .into_iter()
            .flatten()
            .collect();
        for token in &tokens {
            remember(token);
        }
        self.held.hold(tokens);
    }

    /// The scopes servers asked for since the last sign-in, for the next one to ask for too:
    /// as of the last read, or read now.
    pub fn wanted_scopes(&self) -> Vec<String> {
        if let Some(known) = self
            .wanted
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
        {
            return known;
        }
        match self.raw() {
            Some(raw) => {
                self.note_wanted(&raw);
                self.wanted_scopes()
            }
            None => Vec::new(),
        }
    }

    /// Remembers that a server asked for `scopes` (space-separated, as a challenge names them)
    /// beyond what the sign-in was granted. Nothing is remembered without a stored sign-in.
    pub fn want_scopes(&self, scopes: &str) -> Result<(), String> {
        let vault = self.secrets.vault().ok_or_else(no_vault)?;
        let Some(mut raw) = self.raw() else {
            return Ok(());
        };
        self.note_wanted(&raw);
        let mut wanted = self.wanted_scopes();
        for scope in scopes.split_whitespace() {
            if !wanted.iter().any(|known| known == scope) {
                wanted.push(scope.to_string());
            }
        }
        let Some(object) = raw.as_object_mut() else {
            return Ok(());
        };
        object.insert(WANTED_SCOPES.into(), serde_json::json!(wanted));
        vault.save(&self.name, &Secret::new(raw.to_string()))?;
        *self.wanted.lock().unwrap_or_else(|p| p.into_inner()) = Some(wanted);
        Ok(())
    }

    /// Forgets the tokens, in memory and in the credential store.
    pub fn erase(&self) -> Result<(), String> {
        let vault = self.secrets.vault().ok_or_else(no_vault)?;
        *self.cache.lock().unwrap_or_else(|p| p.into_inner()) = None;
        self.keep_client_secret(None);
        vault.erase(&self.name)
    }
}

fn no_vault() -> String {
    "this command has no credential store to keep a sign-in in".to_string()
}

/// What a stored sign-in holds, read from its token response's fields as RFC 6749 names them.
pub struct Tokens {
    pub access: Option<Secret>,
    pub refresh: Option<Secret>,
    /// An OpenID Connect ID token, when the server gave one beside the access token.
    pub id: Option<Secret>,
    /// Seconds after `received_at` that the access token stops working, when the server said.
    pub expires_in: Option<u64>,
    /// When the tokens were received (Unix seconds), when known.
    pub received_at: Option<u64>,
}

impl Tokens {
    pub fn of(stored: &StoredCredentials) -> Tokens {
        let fields = stored
            .token_response
            .as_ref()
            .and_then(|response| serde_json::to_value(response).ok())
            .unwrap_or_default();
        let text = |name: &str| {
            fields
                .get(name)
                .and_then(serde_json::Value::as_str)
                .map(|value| Secret::new(value.to_string()))
        };
        Tokens {
            access: text("access_token"),
            refresh: text("refresh_token"),
            id: text("id_token"),
            expires_in: fields.get("expires_in").and_then(serde_json::Value::as_u64),
            received_at: stored.token_received_at,
        }
    }

    /// When the access token expires (Unix seconds), when known. An `expires_in` so large that
    /// it passes the end of time (the server's to choose) is taken as never.
    pub fn expires_at(&self) -> Option<u64> {
        Some(self.received_at?.saturating_add(self.expires_in?))
    }
}

/// The tokens this process has held for one connection: the current access, refresh and ID
/// tokens, and the ones refreshes replaced (the last [`HELD_TOKENS`]). An upstream can echo
/// any of them: the refresh token is live for as long as the grant, and an access token
/// replaced by a refresh before its expiry still works until then. So all of them are blanked
/// from what the connection's upstream answers, not only the token a request carried.
#[derive(Default)]
pub struct HeldTokens {
    inner: Mutex<Held>,
}

#[derive(Default)]
struct Held {
    /// Least recently seen first.
    tokens: VecDeque<Secret>,
    redaction: Arc<Redaction>,
}

impl HeldTokens {
    /// Notes `tokens` as held now: each moves to the back, and the oldest beyond
    /// [`HELD_TOKENS`] are let go.
    fn hold(&self, tokens: Vec<Secret>) {
        let mut held = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let mut changed = false;
        for token in tokens {
            if token.is_empty() {
                continue;
            }
            match held.tokens.iter().position(|known| *known == token) {
                Some(at) => {
                    if let Some(known) = held.tokens.remove(at) {
                        held.tokens.push_back(known);
                    }
                }
                None => {
                    held.tokens.push_back(token);
                    changed = true;
                }
            }
        }
        while held.tokens.len() > HELD_TOKENS {
            held.tokens.pop_front();
            changed = true;
        }
        if changed {
            held.redaction = Arc::new(Redaction::new(held.tokens.iter().cloned()));
        }
    }

    /// The redaction of every token held.
    pub fn redaction(&self) -> Arc<Redaction> {
        self.inner
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .redaction
            .clone()
    }
}

fn store_error(message: String) -> AuthError {
    AuthError::CredentialStoreError(message)
}

#[async_trait]
impl CredentialStore for TokenStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        if !self.reread.swap(false, Ordering::SeqCst) {
            let cached = self.cache.lock().unwrap_or_else(|p| p.into_inner()).clone();
            if cached.is_some() {
                return Ok(cached);
            }
        }
        let stored = self.read().map_err(store_error)?;
        *self.cache.lock().unwrap_or_else(|p| p.into_inner()) = stored.clone();
        Ok(stored)
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.write(&credentials).map_err(store_error)?;
        *self.cache.lock().unwrap_or_else(|p| p.into_inner()) = Some(credentials);
        Ok(())
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.erase().map_err(store_error)
    }

    /// The authorization server refused the refresh token for good: keep the client's
    /// registration, drop the tokens, so the connection shows (and is) "needs sign-in".
    async fn on_refresh_token_rejected(
        &self,
        credentials: &StoredCredentials,
    ) -> Result<(), AuthError> {
        let kept = StoredCredentials::new(credentials.client_id.clone(), None, Vec::new(), None)
            .with_issuer(credentials.issuer.clone());
        self.save(kept).await
    }

    /// Held across a refresh and its save: another process (a second `exec`, a hub) that
    /// refreshes the same connection waits, then reads the tokens this refresh stored (the
    /// load after the guard goes to the store) and so never sends a refresh token already used.
    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        self.reread.store(true, Ordering::SeqCst);
        let (secrets, name) = (self.secrets.clone(), self.name.clone());
        // The lock blocks until the other refresh is done: not on an async worker.
        let lock = tokio::task::spawn_blocking(move || match secrets.vault() {
            Some(vault) => vault.refresh_lock(&name),
            None => Ok(None),
        })
        .await
        .map_err(|e| store_error(format!("taking the refresh lock failed: {e}")))?
        .map_err(store_error)?;
        Ok(lock.map(CredentialRefreshGuard::new))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::collections::HashMap;
    use std::sync::atomic::AtomicUsize;

    use serde_json::json;

    use super::*;
    use crate::credentials::SecretVault;

    /// A credential store in memory that counts its reads.
    #[derive(Default)]
    pub(crate) struct Memory {
        values: Mutex<HashMap<String, String>>,
        reads: AtomicUsize,
    }

    impl SecretLookup for Memory {
        fn secret(&self, name: &str) -> Result<String, String> {
            Err(format!("`{name}` is not a config secret"))
        }
        fn vault(&self) -> Option<&dyn SecretVault> {
            Some(self)
        }
    }

    impl SecretVault for Memory {
        fn load(&self, name: &str) -> Result<Option<Secret>, String> {
            self.reads.fetch_add(1, Ordering::SeqCst);
            let values = self.values.lock().unwrap_or_else(|p| p.into_inner());
            Ok(values.get(name).cloned().map(Secret::new))
        }
        fn save(&self, name: &str, value: &Secret) -> Result<(), String> {
            let mut values = self.values.lock().unwrap_or_else(|p| p.into_inner());
            values.insert(name.to_string(), value.expose().to_string());
            Ok(())
        }
        fn erase(&self, name: &str) -> Result<(), String> {
            let mut values = self.values.lock().unwrap_or_else(|p| p.into_inner());
            values.remove(name);
            Ok(())
        }
    }

    /// A stored sign-in with the access token `access`.
    pub(crate) fn signed_in(access: &str) -> StoredCredentials {
        serde_json::from_value(json!({
            "client_id": "client-1",
            "token_response": {
                "access_token": access, "token_type": "bearer",
                "expires_in": 60, "refresh_token": "refresh-secret-value"
            },
            "granted_scopes": ["mcp"],
            "token_received_at": 1000,
        }))
        .expect("stored credentials")
    }

    #[tokio::test]
    async fn tokens_are_read_once_and_again_before_a_refresh() {
        let memory = Arc::new(Memory::default());
        let store = TokenStore::new(memory.clone(), "linear", "default");
        store.save(signed_in("access-one-value")).await.unwrap();
        let stored = memory.values.lock().unwrap()["oauth.linear.default"].clone();
        assert!(stored.contains("access-one-value"), "{stored}");
        let reads = memory.reads.load(Ordering::SeqCst);
        for _ in 0..3 {
            store.load().await.unwrap();
        }
        // The first load reads the store (nothing is known to be fresh yet); then memory.
        assert_eq!(memory.reads.load(Ordering::SeqCst), reads + 1);
        // Another process signs in again meanwhile: a refresh must see its tokens.
        memory.values.lock().unwrap().insert(
            "oauth.linear.default".into(),
            serde_json::to_string(&signed_in("access-two-value")).unwrap(),
        );
        let _guard = store.acquire_refresh_guard().await.unwrap();
        let loaded = store.load().await.unwrap().expect("stored");
        assert_eq!(
            Tokens::of(&loaded).access.map(|s| s.expose().to_string()),
            Some("access-two-value".to_string())
        );
    }

    #[test]
    fn an_expiry_past_the_end_of_time_is_never_not_an_overflow() {
        let mut stored = signed_in("access-one-value");
        let mut response = serde_json::to_value(stored.token_response.take()).unwrap();
        response["expires_in"] = json!(u64::MAX);
        stored.token_response = Some(serde_json::from_value(response).unwrap());
        assert_eq!(Tokens::of(&stored).expires_at(), Some(u64::MAX));
    }

    #[tokio::test]
    async fn a_refused_refresh_keeps_the_client_and_drops_the_tokens() {
        let memory = Arc::new(Memory::default());
        let store = TokenStore::new(memory.clone(), "linear", "work");
        let stored = signed_in("access-one-value");
        store.save(stored.clone()).await.unwrap();
        store.on_refresh_token_rejected(&stored).await.unwrap();
        let kept = store.read().unwrap().expect("the registration stays");
        assert_eq!(kept.client_id, "client-1");
        assert!(kept.token_response.is_none());
        let text = memory.values.lock().unwrap()["oauth.linear.work"].clone();
        assert!(!text.contains("refresh-secret-value"), "{text}");
        store.clear().await.unwrap();
        assert!(store.read().unwrap().is_none());
    }

    #[tokio::test]
    async fn a_registered_clients_secret_is_kept_with_the_sign_in_and_blanked() {
        let memory = Arc::new(Memory::default());
        let signing_in = TokenStore::new(memory.clone(), "linear", "work");
        signing_in.keep_client_secret(Some("dcr-issued-client-secret"));
        let stored = signed_in("access-one-value");
        signing_in.save(stored.clone()).await.unwrap();
        // Another process reads it with the tokens, and blanks it from what upstreams answer.
        let later = TokenStore::new(memory.clone(), "linear", "work");
        assert_eq!(later.client_secret(), None);
        later.read().unwrap();
        assert_eq!(
            later.client_secret().as_deref(),
            Some("dcr-issued-client-secret")
        );
        assert_eq!(
            later.held().clean("echo dcr-issued-client-secret"),
            format!("echo {}", crate::credentials::MASK)
        );
        // A refused refresh drops the tokens, not the client, so the next sign-in is its own.
        later.on_refresh_token_rejected(&stored).await.unwrap();
        let again = TokenStore::new(memory.clone(), "linear", "work");
        again.read().unwrap();
        assert_eq!(
            again.client_secret().as_deref(),
            Some("dcr-issued-client-secret")
        );
        // A sign-in whose client has no secret stores none, and erasing forgets it.
        let public = TokenStore::new(memory.clone(), "linear", "public");
        public.save(stored).await.unwrap();
        let text = memory.values.lock().unwrap()["oauth.linear.public"].clone();
        assert!(!text.contains("client_secret"), "{text}");
        again.erase().unwrap();
        assert_eq!(again.client_secret(), None);
    }

    #[tokio::test]
    async fn a_scope_asked_for_is_kept_across_refreshes_until_a_sign_in_grants_it() {
        let memory = Arc::new(Memory::default());
        let store = TokenStore::new(memory.clone(), "notes", "default");
        // Nothing stored: nothing to keep it beside.
        store.want_scopes("notes:archive").unwrap();
        assert!(store.wanted_scopes().is_empty());
        store.save(signed_in("access-one-value")).await.unwrap();
        store.want_scopes("notes:archive notes:read").unwrap();
        store.want_scopes("notes:archive").unwrap();
        assert_eq!(store.wanted_scopes(), ["notes:archive", "notes:read"]);
        // rmcp still reads the sign-in.
        assert!(store.read().unwrap().is_some());
        // A refresh (the original grant, `mcp`) keeps them.
        store.save(signed_in("access-two-value")).await.unwrap();
        assert_eq!(store.wanted_scopes(), ["notes:archive", "notes:read"]);
        // A sign-in granted one of them: only the other is still wanted.
        let mut granted = signed_in("access-three-value");
        granted.granted_scopes = vec!["mcp".into(), "notes:archive".into()];
        store.save(granted).await.unwrap();
        assert_eq!(store.wanted_scopes(), ["notes:read"]);
    }

    #[tokio::test]
    async fn a_bound_store_records_the_token_endpoint_beside_the_tokens() {
        let memory = Arc::new(Memory::default());
        let plain = TokenStore::new(memory.clone(), "notes", "default");
        plain.save(signed_in("access-one-value")).await.unwrap();
        assert_eq!(plain.recorded_endpoint(), None);
        let bound = plain.clone().bound_to("https://as.example/token");
        bound.save(signed_in("access-two-value")).await.unwrap();
        assert_eq!(
            plain.recorded_endpoint().as_deref(),
            Some("https://as.example/token")
        );
        // rmcp still reads the sign-in.
        assert!(plain.read().unwrap().is_some());
    }

    #[tokio::test]
    async fn every_token_held_since_the_process_began_is_blanked_until_let_go() {
        let memory = Arc::new(Memory::default());
        let held = Arc::new(HeldTokens::default());
        let first = TokenStore::new(memory.clone(), "linear", "default").holding(held.clone());
        let mut with_id = signed_in("access-one-value");
        with_id.token_response = serde_json::from_value(json!({
            "access_token": "access-one-value", "token_type": "bearer",
            "refresh_token": "refresh-secret-value", "id_token": "id-token-value"
        }))
        .expect("a token response");
        first.save(with_id).await.unwrap();
        // A reconnect's store reads them again, then refreshes many times.
        let again = TokenStore::new(memory, "linear", "default").holding(held.clone());
        assert!(again.read().unwrap().is_some());
        for n in 0..HELD_TOKENS {
            again
                .save(signed_in(&format!("access-{n:02}-value")))
                .await
                .unwrap();
        }
        let seen =
            "refresh-secret-value access-15-value access-02-value id-token-value access-one-value";
        // The refresh token, seen on every save, and the latest access tokens stay held; the
        // oldest are let go.
        assert_eq!(
            held.redaction().clean(seen),
            "••• ••• ••• id-token-value access-one-value"
        );
        assert_eq!(again.held().clean("access-00-value"), "access-00-value");
        assert_eq!(again.held().clean("access-01-value"), "•••");
    }

    #[test]
    fn a_damaged_sign_in_says_how_to_replace_it() {
        let memory = Arc::new(Memory::default());
        memory
            .values
            .lock()
            .unwrap()
            .insert("oauth.linear.default".into(), "not json".into());
        let store = TokenStore::new(memory, "linear", "default");
        let error = store.read().unwrap_err();
        assert!(error.contains("capabilities source login"), "{error}");
        assert!(error.contains("oauth.linear.default"), "{error}");
    }

    #[test]
    fn tokens_say_when_they_expire() {
        let tokens = Tokens::of(&signed_in("access-one-value"));
        assert_eq!(tokens.expires_at(), Some(1060));
        assert!(tokens.refresh.is_some());
        let none = StoredCredentials::new("client-1".into(), None, Vec::new(), None);
        assert_eq!(Tokens::of(&none).expires_at(), None);
    }
}
