//! `capabilities doctor`: quick checks of this machine. Does the config load, which credential
//! store works here (the keychain answers? the encrypted file opens?), are the referenced
//! secrets stored, are the stdio sources' programs on PATH, do stored OAuth sign-ins still
//! work, is the data directory writable.
//! Each line says what is wrong and what to do.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::EXIT_FAILURE;
use super::credential::{describe_store, references};
use super::output::print;
use crate::app::App;
use crate::catalog::cache::ListingCache;
use crate::cli::DoctorArgs;
use crate::config::{Settings, Transport};
use crate::credentials::{SecretStore, StoreKind};
use crate::env_vars;
use crate::oauth::{self, SignInState};
use crate::runs::KeySource;
use crate::sources::is_sign_in_message;

/// The keychain this build talks to.
const KEYCHAIN: &str = if cfg!(target_os = "macos") {
    "macOS Keychain"
} else if cfg!(windows) {
    "Windows Credential Manager"
} else {
    "Secret Service over D-Bus"
};

/// How one check went. Only `Fail` makes the command fail: a warning says what will not work
/// once it is needed (a keychain on a headless machine that stores nothing yet).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
enum Level {
    Ok,
    Note,
    Warn,
    Fail,
}

#[derive(Debug, serde::Serialize)]
struct Check {
    level: Level,
    what: &'static str,
    detail: String,
}

#[derive(Default)]
struct Report {
    checks: Vec<Check>,
}

impl Report {
    fn add(&mut self, level: Level, what: &'static str, detail: impl AsRef<str>) {
        self.checks.push(Check {
            level,
            what,
            detail: detail.as_ref().to_string(),
        });
    }

    fn ok(&mut self, what: &'static str, detail: impl AsRef<str>) {
        self.add(Level::Ok, what, detail);
    }

    fn note(&mut self, what: &'static str, detail: impl AsRef<str>) {
        self.add(Level::Note, what, detail);
    }

    fn warn(&mut self, what: &'static str, detail: impl AsRef<str>) {
        self.add(Level::Warn, what, detail);
    }

    fn fail(&mut self, what: &'static str, detail: impl AsRef<str>) {
        self.add(Level::Fail, what, detail);
    }

    fn count(&self, level: Level) -> usize {
        self.checks.iter().filter(|c| c.level == level).count()
    }

    fn text(&self) -> String {
        let mut text = String::new();
        for check in &self.checks {
            let label = match check.level {
                Level::Ok => "ok",
                Level::Note => "note",
                Level::Warn => "warn",
                Level::Fail => "FAIL",
            };
            text.push_str(&format!("{label:5} {:12}  {}\n", check.what, check.detail));
        }
        let summary = match (self.count(Level::Fail), self.count(Level::Warn)) {
            (0, 0) => "everything checked works".to_string(),
            (0, warnings) => format!("no problem found; {warnings} warning(s)"),
            (problems, _) => format!("{problems} problem(s) found"),
        };
        text.push_str(&format!("\n{summary}\n"));
        text
    }
}

pub async fn run(app: &App, args: &DoctorArgs) -> anyhow::Result<ExitCode> {
    let mut report = Report::default();
    let settings = match crate::config::load(&app.paths.config_file) {
        Ok(settings) => {
            let exists = app.paths.config_file.exists();
            report.ok(
                "config",
                if exists {
                    format!(
                        "{}: {} source(s)",
                        app.paths.config_file.display(),
                        settings.sources.len()
                    )
                } else {
                    format!(
                        "{} does not exist yet; `{}` writes one",
                        app.paths.config_file.display(),
                        app.command("init")
                    )
                },
            );
            Some(settings)
        }
        Err(e) => {
            report.fail("config", e.to_string());
            None
        }
    };
    check_stores(&mut report, app, settings.as_ref());
    if let Some(settings) = &settings {
        check_programs(&mut report, settings);
        check_sign_ins(&mut report, app, settings);
    }
    check_data_dir(&mut report, &app.paths.data_dir);
    check_state_key(&mut report, app, settings.is_some()).await;
    let failed = report.count(Level::Fail) > 0;
    if args.json {
        let body = serde_json::json!({
            "ok": !failed,
            "problems": report.count(Level::Fail),
            "warnings": report.count(Level::Warn),
            "checks": report.checks,
        });
        print(&format!("{}\n", serde_json::to_string_pretty(&body)?))?;
    } else {
        print(&report.text())?;
    }
    Ok(if failed {
        ExitCode::from(EXIT_FAILURE)
    } else {
        ExitCode::SUCCESS
    })
}

fn check_stores(report: &mut Report, app: &App, settings: Option<&Settings>) {
    let stores = app.credentials();
    let keychain_works = match stores.keychain().probe() {
        Ok(()) => {
            report.ok("keychain", format!("the {KEYCHAIN} answers"));
            true
        }
        Err(e) => {
            report.note("keychain", format!("not usable here ({KEYCHAIN}): {e}"));
            false
        }
    };
    let file = stores.file();
    let file_works = if !file.exists() {
        let passphrase = if file.passphrase_from_env() {
            format!(
                "its passphrase will come from {}",
                env_vars::CAPABILITIES_PASSPHRASE
            )
        } else {
            format!(
                "its passphrase will be asked for, or set {}",
                env_vars::CAPABILITIES_PASSPHRASE
            )
        };
        report.ok(
            "file store",
            format!("{} is not created yet; {passphrase}", file.path().display()),
        );
        true
    } else if file.passphrase_from_env() {
        match file.get("capabilities.doctor-probe") {
            Ok(_) => {
                report.ok(
                    "file store",
                    format!(
                        "{} opens with {}",
                        file.path().display(),
                        env_vars::CAPABILITIES_PASSPHRASE
                    ),
                );
                true
            }
            Err(e) => {
                report.fail("file store", e.to_string());
                false
            }
        }
    } else {
        report.ok(
            "file store",
            format!(
                "{} exists; its passphrase is asked for at a terminal, or set {}",
                file.path().display(),
                env_vars::CAPABILITIES_PASSPHRASE
            ),
        );
        true
    };
    let default = stores.default_store();
    let default_works = match default {
        StoreKind::Keychain => keychain_works,
        StoreKind::File => file_works,
    };
    if default_works {
        report.ok(
            "default",
            format!("new secrets go to the {}", describe_store(default)),
        );
    } else if default == StoreKind::Keychain {
        let advice = format!(
            "new secrets go to the OS keychain, which does not work here; use the encrypted file store: `{}`, or `store = \"file\"` under [credentials] in {}",
            app.command("credential set NAME --store file"),
            app.paths.config_file.display()
        );
        // Only a secret the config needs and no store holds must go to the default store; until
        // then (a fresh or headless machine, or secrets kept in the file with `--store file`)
        // it matters only later.
        let stored: Vec<String> = stores
            .list()
            .map(|l| l.into_iter().map(|(name, _)| name).collect())
            .unwrap_or_default();
        let needed =
            settings.is_some_and(|s| references(s).keys().any(|name| !stored.contains(name)));
        if needed {
            report.fail("default", advice);
        } else {
            report.warn("default", advice);
        }
    } else {
        report.fail(
            "default",
            "new secrets go to the encrypted file store, which cannot be opened (see above)",
        );
    }
    let Some(settings) = settings else { return };
    let users = references(settings);
    if users.is_empty() {
        return;
    }
    let stored: BTreeMap<String, StoreKind> = match stores.list() {
        Ok(list) => list.into_iter().collect(),
        Err(e) => {
            report.fail("secrets", e.to_string());
            return;
        }
    };
    let missing: Vec<String> = users
        .iter()
        .filter(|(name, _)| !stored.contains_key(*name))
        .map(|(name, who)| format!("`{name}` (used by {})", who.join(", ")))
        .collect();
    if missing.is_empty() {
        report.ok(
            "secrets",
            format!("all {} referenced secret(s) are stored", users.len()),
        );
    } else {
        report.fail(
            "secrets",
            format!(
                "not stored: {}; store each with `{}`",
                missing.join(", "),
                app.command("credential set NAME")
            ),
        );
    }
    for (name, store) in &stored {
        let usable = match store {
            StoreKind::Keychain => keychain_works,
            StoreKind::File => file_works,
        };
        if !usable && users.contains_key(name) {
            report.fail(
                "secrets",
                format!(
                    "`{name}` is in the {}, which does not work here",
                    describe_store(*store)
                ),
            );
        }
    }
}

fn check_programs(report: &mut Report, settings: &Settings) {
    let mut programs: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for source in settings.sources.iter().filter(|s| s.enabled) {
        if let Transport::Stdio { command, .. } = &source.transport {
            programs
                .entry(command.as_str())
                .or_default()
                .push(source.name.as_str());
        }
    }
    for (program, sources) in programs {
        match find_program(program) {
            Some(path) => report.ok(
                "program",
                format!("{program} ({}) for {}", path.display(), sources.join(", ")),
            ),
            None => report.fail(
                "program",
                format!(
                    "{program} is not on PATH; source(s) {} cannot start",
                    sources.join(", ")
                ),
            ),
        }
    }
}

/// Each stored OAuth sign-in: usable (and until when), or waiting for `source login`; and each
/// HTTP source with none that needs one: its config names an OAuth client, or its server last
/// refused it for want of a sign-in.
fn check_sign_ins(report: &mut Report, app: &App, settings: &Settings) {
    let now = oauth::now_secs();
    let stored = oauth::stored_sign_ins(&app.credentials(), &settings.sources);
    let cache = ListingCache::new(app.paths.catalog_cache_dir());
    for source in &settings.sources {
        let remote = matches!(
            source.transport,
            Transport::Http { .. } | Transport::OpenApi { .. }
        );
        if !remote || !source.enabled || stored.iter().any(|s| s.source == source.name) {
            continue;
        }
        let why = if cache
            .failure(&source.name)
            .is_some_and(|failed| is_sign_in_message(&failed.error))
        {
            "its server asks for a sign-in"
        } else if source.connections.iter().any(|c| c.oauth.is_some()) {
            "the config names an OAuth client for it"
        } else {
            continue;
        };
        let login = app.command(&format!("source login {}", source.name));
        report.warn(
            "sign-in",
            format!("{}: not signed in ({why}); run `{login}`", source.name),
        );
    }
    for sign_in in stored {
        let who = format!("{} ({})", sign_in.source, sign_in.connection);
        let login = app.command(&format!("source login {}", sign_in.source));
        match sign_in.state {
            Ok(SignInState::SignedIn {
                expires_at: Some(at),
                refreshable: false,
            }) if at <= now => report.warn(
                "sign-in",
                format!("{who}: its token expired and cannot be renewed; run `{login}`"),
            ),
            Ok(state @ SignInState::SignedIn { .. }) => {
                report.ok("sign-in", format!("{who}: {}", state.describe(now)))
            }
            Ok(SignInState::NeedsSignIn) => report.warn(
                "sign-in",
                format!("{who}: needs sign-in (the server refused to renew it); run `{login}`"),
            ),
            Err(error) => report.fail("sign-in", format!("{who}: {error}")),
        }
    }
}

fn check_data_dir(report: &mut Report, dir: &Path) {
    let probe = dir.join(format!(".doctor-{}", std::process::id()));
    let written = std::fs::create_dir_all(dir)
        .and_then(|()| std::fs::write(&probe, b""))
        .and_then(|()| std::fs::remove_file(&probe));
    match written {
        Ok(()) => report.ok("data dir", format!("{} is writable", dir.display())),
        Err(e) => report.fail(
            "data dir",
            format!("{} is not writable: {e}", dir.display()),
        ),
    }
}

/// Where the key that encrypts runs at rest is kept, and whether it opens them. Which store
/// that is depends on the config: a config that does not load was reported already.
async fn check_state_key(report: &mut Report, app: &App, config_loads: bool) {
    let path = app.paths.state_database();
    let shared = match app.store_url() {
        Ok(url) => url.is_some(),
        Err(_) if !config_loads => {
            return report.note("store", "not checked until the config loads (above)");
        }
        Err(e) => return report.fail("store", format!("{e:#}")),
    };
    if !shared && !path.exists() {
        report.ok(
            "runs",
            "none yet; the first run keys the store (the OS keychain, the credential file when its passphrase is in the environment, else a key file)",
        );
        return;
    }
    let store = match app.store().await {
        Ok(store) => store,
        Err(e) => return report.fail("runs", format!("{e:#}")),
    };
    if shared {
        // Reachable, logged in and migrated: opening it did all three.
        report.ok(
            "store",
            format!(
                "the shared store {} is reachable and up to date",
                store.location().display()
            ),
        );
    }
    let source = match store.keys().source().await {
        Ok(Some(source)) => source,
        Ok(None) => return report.ok("runs", "no run has been stored yet"),
        Err(e) => return report.fail("runs", e.to_string()),
    };
    if let Err(e) = store.keys().unlock().await {
        return report.fail("runs", e.to_string());
    }
    match source {
        KeySource::KeyFile => report.note(
            "runs",
            format!(
                "encrypted with the key in {} (no keychain or passphrase was usable when the store was created): it protects copies of {}, not someone who can read the whole data directory",
                store.keys().file_path().display(),
                path.display()
            ),
        ),
        KeySource::Credentials(_) | KeySource::Environment => {
            report.ok("runs", format!("encrypted at rest with a key in {source}"))
        }
    }
}

/// Where `program` would be found: itself when it names a path, else the first match on PATH.
fn find_program(program: &str) -> Option<PathBuf> {
    if program.contains(std::path::MAIN_SEPARATOR) {
        let path = PathBuf::from(program);
        return path.is_file().then_some(path);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}
