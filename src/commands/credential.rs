//! `capabilities credential set|list|remove|test`: store the values of `${secret:NAME}`
//! references in the OS keychain or the encrypted file store, and see which connections use
//! them. No verb ever prints a value or takes one from the command line.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Read};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use serde_json::json;
use zeroize::Zeroizing;

use super::EXIT_FAILURE;
use super::output::print;
use crate::app::App;
use crate::cli::{CredentialListArgs, CredentialNameArgs, CredentialSetArgs, CredentialStore};
use crate::config::{IMPLICIT_CONNECTION, Settings, SourceSettings};
use crate::credentials::{CredentialError, SHORTEST, Secret, StoreKind, WEAK, check_name};
use crate::sources::{SourceStatus, Sources};

impl From<CredentialStore> for StoreKind {
    fn from(store: CredentialStore) -> StoreKind {
        match store {
            CredentialStore::Keychain => StoreKind::Keychain,
            CredentialStore::File => StoreKind::File,
        }
    }
}

pub fn set(app: &App, args: &CredentialSetArgs) -> anyhow::Result<ExitCode> {
    check_name(&args.name)?;
    let settings = app.settings()?;
    let value = read_value(&args.name)?;
    let store = match app
        .credentials()
        .set(&args.name, &value, args.store.map(StoreKind::from))
    {
        Ok(store) => store,
        // No keychain here: the one next step is this very command with the file store.
        Err(CredentialError::KeychainUnavailable { reason }) => bail!(
            "the OS keychain is not available here ({reason}); nothing was stored. Store it in the encrypted file instead: `{}` (its passphrase comes from a prompt or ${}), or set `store = \"file\"` under [credentials] in {} for every secret",
            app.command(&format!("credential set {} --store file", args.name)),
            crate::env_vars::CAPABILITIES_PASSPHRASE,
            app.paths.config_file.display()
        ),
        Err(e) => return Err(e.into()),
    };
    if let Some(warning) = length_warning(&args.name, &value) {
        crate::logging::notice(tracing::Level::WARN, &warning);
    }
    let mut text = format!("stored `{}` in the {}\n", args.name, describe_store(store));
    match references(&settings).get(&args.name) {
        Some(users) => text.push_str(&format!("used by: {}\n", users.join(", "))),
        None => text.push_str(&format!(
            "no connection uses it yet; reference it in a source's env, headers or auth, e.g. headers = {{ Authorization = \"Bearer ${{secret:{}}}\" }}\n",
            args.name
        )),
    }
    print(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// What to tell the user about a value too short to blank well from what upstreams echo back
/// and from logs ([`SHORTEST`] and [`WEAK`] say why each bound is where it is).
fn length_warning(name: &str, value: &Secret) -> Option<String> {
    let length = value.expose().chars().count();
    if length < SHORTEST {
        Some(format!(
            "`{name}` is stored, but at {length} characters it is too short to be blanked: it is not blanked from what upstreams echo back nor from logs, so if a server echoes it, scripts, the model and the logs see it. Use a value of at least {WEAK} characters if the service allows one."
        ))
    } else if length < WEAK {
        Some(format!(
            "`{name}` is only {length} characters long: it is blanked from what upstreams echo back and from logs, but ordinary text that happens to contain it (or its short encodings) is blanked too, and so few characters are easier to guess from what stays. Use a value of at least {WEAK} characters if the service allows one."
        ))
    } else {
        None
    }
}

pub fn list(app: &App, args: &CredentialListArgs) -> anyhow::Result<ExitCode> {
    let settings = app.settings()?;
    let stored: BTreeMap<String, StoreKind> = app.credentials().list()?.into_iter().collect();
    let users = references(&settings);
    let mut names: Vec<&String> = stored.keys().chain(users.keys()).collect();
    names.sort();
    names.dedup();
    if args.json {
        let rows: Vec<_> = names
            .iter()
            .map(|name| {
                json!({
                    "name": name,
                    "store": stored.get(*name).map(|s| s.as_str()),
                    "stored": stored.contains_key(*name),
                    "usedBy": users.get(*name).cloned().unwrap_or_default(),
                })
            })
            .collect();
        print(&format!("{}\n", serde_json::to_string_pretty(&rows)?))?;
        return Ok(ExitCode::SUCCESS);
    }
    if names.is_empty() {
        print(&format!(
            "no secrets are stored; store one with `{}`\n",
            app.command("credential set NAME")
        ))?;
        return Ok(ExitCode::SUCCESS);
    }
    let width = names
        .iter()
        .map(|n| n.len())
        .max()
        .unwrap_or(0)
        .max("NAME".len());
    let mut text = format!("{:width$}  {:10}  USED BY\n", "NAME", "STORE");
    for name in &names {
        let store = stored
            .get(*name)
            .map(|s| s.as_str())
            .unwrap_or("not stored");
        let used = users
            .get(*name)
            .map(|u| u.join(", "))
            .unwrap_or_else(|| "-".into());
        text.push_str(&format!("{name:width$}  {store:10}  {used}\n"));
    }
    let missing: Vec<&str> = names
        .iter()
        .filter(|n| !stored.contains_key(**n))
        .map(|n| n.as_str())
        .collect();
    if let Some(first) = missing.first() {
        text.push_str(&format!(
            "\n{} referenced but not stored; store it with `{}`\n",
            missing.len(),
            app.command(&format!("credential set {first}"))
        ));
    }
    print(&text)?;
    Ok(ExitCode::SUCCESS)
}

pub fn remove(app: &App, args: &CredentialNameArgs) -> anyhow::Result<ExitCode> {
    check_name(&args.name)?;
    let settings = app.settings()?;
    let store = app.credentials().remove(&args.name)?;
    let mut text = format!(
        "removed `{}` from the {}\n",
        args.name,
        describe_store(store)
    );
    if let Some(users) = references(&settings).get(&args.name) {
        text.push_str(&format!(
            "still referenced by {}; those connections fail until it is stored again\n",
            users.join(", ")
        ));
    }
    print(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// Reads the secret, then connects each connection that references it (alone, as its source's
/// only connection) and reports how each went.
pub async fn test(app: &App, args: &CredentialNameArgs) -> anyhow::Result<ExitCode> {
    check_name(&args.name)?;
    let settings = app.settings()?;
    let stores = app.credentials();
    let name = args.name.clone();
    // The keychain may block (for up to its timeout); keep it off the runtime's threads.
    let read = tokio::task::spawn_blocking(move || {
        stores
            .store_of(&name)
            .and_then(|store| Ok((store, stores.get(&name)?)))
    })
    .await
    .context("the credential store lookup stopped")?;
    let (store, _value) = read?;
    print(&format!(
        "`{}` is stored in the {} and can be read\n",
        args.name,
        describe_store(store)
    ))?;
    let connections = connections_using(&settings, &args.name);
    if connections.is_empty() {
        print(&format!(
            "no connection uses it; reference it as ${{secret:{}}} in a source's env or headers\n",
            args.name
        ))?;
        return Ok(ExitCode::SUCCESS);
    }
    let labels: Vec<String> = connections.iter().map(label).collect();
    let longest = connections
        .iter()
        .map(|s| s.connect_timeout + s.request_timeout)
        .max()
        .unwrap_or(Duration::ZERO);
    let sources = Sources::start(connections, app.secrets());
    let statuses = super::progress::waiting(
        app,
        format!(
            "connecting {}",
            super::progress::names(&labels.iter().map(String::as_str).collect::<Vec<_>>())
        ),
        sources.wait_settled(longest + Duration::from_secs(1)),
    )
    .await;
    sources.shutdown().await;
    let mut failed = false;
    let mut text = String::new();
    for (label, (_, status)) in labels.iter().zip(statuses) {
        match status {
            SourceStatus::Ready { tool_count, .. } => {
                text.push_str(&format!("  {label}: connected, {tool_count} tools\n"))
            }
            other => {
                failed = true;
                text.push_str(&format!("  {label}: {other}\n"));
            }
        }
    }
    print(&text)?;
    Ok(if failed {
        ExitCode::from(EXIT_FAILURE)
    } else {
        ExitCode::SUCCESS
    })
}

/// For each secret name, the connections that reference it (`source` when it has only the
/// implicit connection, else `source/connection`).
pub(super) fn references(settings: &Settings) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for source in &settings.sources {
        for connection in &source.connections {
            let who = if connection.name == IMPLICIT_CONNECTION && source.connections.len() == 1 {
                source.name.clone()
            } else {
                format!("{}/{}", source.name, connection.name)
            };
            for name in connection.templates().flat_map(|t| t.secrets()) {
                let users = out.entry(name.to_string()).or_default();
                if !users.contains(&who) {
                    users.push(who.clone());
                }
            }
        }
    }
    out
}

/// One single-connection copy of each source per connection that references `name`.
fn connections_using(settings: &Settings, name: &str) -> Vec<SourceSettings> {
    let mut out = Vec::new();
    for source in settings.sources.iter().filter(|s| s.enabled) {
        for connection in &source.connections {
            if connection
                .templates()
                .any(|t| t.secrets().any(|s| s == name))
            {
                let mut only = source.clone();
                let mut connection = connection.clone();
                connection.is_default = true;
                only.connections = vec![connection];
                out.push(only);
            }
        }
    }
    out
}

fn label(source: &SourceSettings) -> String {
    match source.connections.first() {
        Some(c) if c.name != IMPLICIT_CONNECTION => format!("{}/{}", source.name, c.name),
        _ => source.name.clone(),
    }
}

pub(super) fn describe_store(store: StoreKind) -> &'static str {
    match store {
        StoreKind::Keychain => "OS keychain",
        StoreKind::File => "encrypted file store",
    }
}

/// The value to store: a hidden prompt at a terminal, else all of standard input (one trailing
/// newline removed, as `echo` and most tools add one).
fn read_value(name: &str) -> anyhow::Result<Secret> {
    let mut value = if std::io::stdin().is_terminal() {
        Zeroizing::new(
            crate::credentials::hidden::ask(format!("Value of `{name}` (input is hidden): "))
                .context("cannot read the value from the terminal")?,
        )
    } else {
        let mut text = Zeroizing::new(String::new());
        std::io::stdin()
            .read_to_string(&mut text)
            .context("cannot read the value from standard input")?;
        text
    };
    for ending in ["\r\n", "\n"] {
        if value.ends_with(ending) {
            let keep = value.len() - ending.len();
            value.truncate(keep);
            break;
        }
    }
    if value.is_empty() {
        bail!(
            "the value of `{name}` is empty; nothing was stored (type it at the prompt, or pipe it in: `gh auth token | capabilities credential set {name}`)"
        );
    }
    Ok(Secret::new(std::mem::take(&mut *value)))
}
