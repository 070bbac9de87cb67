//! Changing `config.toml` from the command line (`source add`, `source remove`) without losing
//! the user's comments or layout (toml_edit). Every change is validated as a whole before it is
//! written, and written atomically, so a bad change leaves the file as it was; and every change
//! is made holding a [`ConfigLock`], so two made at once (a `policy set` and an "always allow"
//! from a hub) both land instead of the last one writing over the other.

use std::fs::{File, TryLockError};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use toml_edit::{DocumentMut, InlineTable, Item, Table, value};

use super::load;
use super::starter;
use super::template::Template;
use crate::model::address::namespace_problem;

/// How a new source is reached, as the user typed it.
#[derive(Debug, Clone)]
pub enum NewSource {
    Stdio {
        command: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
        cwd: Option<String>,
    },
    Http {
        url: String,
        headers: Vec<(String, String)>,
    },
    /// An HTTP API described by an OpenAPI document (a path or a URL).
    OpenApi {
        spec: String,
        base_url: Option<String>,
        headers: Vec<(String, String)>,
        /// Credentials by security scheme name.
        auth: Vec<(String, String)>,
    },
}

/// Adds `[sources.NAME]` to the config at `path` (creating the file from the starter when it
/// does not exist). Values are stored exactly as written, references included.
pub fn add_source(path: &Path, name: &str, source: &NewSource) -> anyhow::Result<()> {
    if let Some(problem) = namespace_problem(name) {
        bail!("{problem}");
    }
    let _lock = ConfigLock::acquire(path)?;
    let mut doc = read_document(path)?;
    let sources = doc.entry("sources").or_insert_with(|| {
        let mut t = Table::new();
        t.set_implicit(true);
        Item::Table(t)
    });
    let Some(sources) = sources.as_table_mut() else {
        bail!(
            "{}: `sources` is not a table; fix the file by hand",
            path.display()
        );
    };
    if sources.contains_key(name) {
        bail!(
            "a source named `{name}` already exists in {}; remove it first with `capabilities source remove {name}`, or pick another name",
            path.display()
        );
    }
    let mut table = Table::new();
    match source {
        NewSource::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            table.insert("command", value(command.as_str()));
            if !args.is_empty() {
                let mut array = toml_edit::Array::new();
                args.iter().for_each(|a| array.push(a.as_str()));
                table.insert("args", value(array));
            }
            if let Some(cwd) = cwd {
                table.insert("cwd", value(cwd.as_str()));
            }
            if !env.is_empty() {
                table.insert("env", value(inline_map(env, "--env")?));
            }
        }
        NewSource::Http { url, headers } => {
            table.insert("url", value(url.as_str()));
            if !headers.is_empty() {
                table.insert("headers", value(inline_map(headers, "--header")?));
            }
        }
        NewSource::OpenApi {
            spec,
            base_url,
            headers,
            auth,
        } => {
            table.insert("openapi", value(spec.as_str()));
            if let Some(base_url) = base_url {
                table.insert("base_url", value(base_url.as_str()));
            }
            if !headers.is_empty() {
                table.insert("headers", value(inline_map(headers, "--header")?));
            }
            if !auth.is_empty() {
                table.insert("auth", value(inline_map(auth, "--auth")?));
            }
        }
    }
    sources.insert(name, Item::Table(table));
    write_validated(path, &doc)
}

/// Removes `[sources.NAME]`. Fails, changing nothing, when a profile or rule still names it.
pub fn remove_source(path: &Path, name: &str) -> anyhow::Result<()> {
    let _lock = ConfigLock::acquire(path)?;
    let mut doc = read_document(path)?;
    let known: Vec<String> = doc
        .get("sources")
        .and_then(Item::as_table_like)
        .map(|t| t.iter().map(|(k, _)| k.to_string()).collect())
        .unwrap_or_default();
    let removed = doc
        .get_mut("sources")
        .and_then(Item::as_table_like_mut)
        .and_then(|t| t.remove(name));
    if removed.is_none() {
        if known.is_empty() {
            bail!(
                "there is no source named `{name}`: {} has no sources yet",
                path.display()
            );
        }
        bail!(
            "there is no source named `{name}`; known sources: {}",
            known.join(", ")
        );
    }
    write_validated(path, &doc).with_context(|| {
        format!("`{name}` is still used elsewhere in the config; remove those references first, then run `capabilities source remove {name}` again")
    })
}

/// Sets `enabled` of source `name`: `false` keeps its config but starts, searches and calls
/// nothing of it. Returns whether it changed anything (false when it already was so). `true`
/// removes the key, since enabled is the default.
pub fn set_source_enabled(path: &Path, name: &str, enabled: bool) -> anyhow::Result<bool> {
    let _lock = ConfigLock::acquire(path)?;
    let mut doc = read_document(path)?;
    let known: Vec<String> = doc
        .get("sources")
        .and_then(Item::as_table_like)
        .map(|t| t.iter().map(|(k, _)| k.to_string()).collect())
        .unwrap_or_default();
    let Some(source) = doc
        .get_mut("sources")
        .and_then(Item::as_table_like_mut)
        .and_then(|t| t.get_mut(name))
        .and_then(Item::as_table_like_mut)
    else {
        if known.is_empty() {
            bail!(
                "there is no source named `{name}`: {} has no sources yet",
                path.display()
            );
        }
        bail!(
            "there is no source named `{name}`; known sources: {}",
            known.join(", ")
        );
    };
    let was = source
        .get("enabled")
        .and_then(Item::as_bool)
        .unwrap_or(true);
    if was == enabled {
        return Ok(false);
    }
    if enabled {
        source.remove("enabled");
    } else {
        source.insert("enabled", value(false));
    }
    write_validated(path, &doc)?;
    Ok(true)
}

/// Sets the action of the `[[policy.rules]]` entry with this pattern and connection, adding the
/// rule when there is none (e.g. from an "always allow" decision or `policy set`). With a
/// `profile`, the rule goes to that profile's `[[profiles.NAME.rules]]`, which replace the
/// top-level rules for a hub serving it. The config is the one `lock` holds, so a caller that
/// reads the file around the change (to undo it) sees no other edit in between.
pub fn add_rule(
    lock: &ConfigLock,
    profile: Option<&str>,
    pattern: &str,
    action: crate::policy::Action,
    connection: Option<&str>,
    version: Option<&str>,
) -> anyhow::Result<()> {
    let path = lock.path.as_path();
    let mut doc = read_document(path)?;
    let (table, place) = match profile {
        None => (
            doc.entry("policy")
                .or_insert_with(|| Item::Table(Table::new())),
            "policy".to_string(),
        ),
        Some(name) => {
            let Some(profiles) = doc.get_mut("profiles").and_then(Item::as_table_mut) else {
                bail!(
                    "{}: there is no [profiles] table for profile `{name}`; fix the file by hand",
                    path.display()
                );
            };
            let Some(profile) = profiles.get_mut(name) else {
                bail!(
                    "{}: there is no profile `{name}` to add the rule to; the config changed since the hub started",
                    path.display()
                );
            };
            (profile, format!("profiles.{name}"))
        }
    };
    let Some(table) = table.as_table_mut() else {
        bail!(
            "{}: `{place}` is not a table; fix the file by hand",
            path.display()
        );
    };
    let rules = table
        .entry("rules")
        .or_insert_with(|| Item::ArrayOfTables(toml_edit::ArrayOfTables::new()));
    let Some(rules) = rules.as_array_of_tables_mut() else {
        bail!(
            "{}: `{place}.rules` is not a list of [[{place}.rules]] tables; fix the file by hand",
            path.display()
        );
    };
    let same = |rule: &Table| {
        rule.get("match").and_then(Item::as_str) == Some(pattern)
            && rule.get("connection").and_then(Item::as_str) == connection
    };
    let existing = rules.iter().position(same);
    match existing.and_then(|i| rules.get_mut(i)) {
        Some(existing) => {
            existing.insert("action", value(action.as_str()));
            if let Some(version) = version {
                existing.insert("version", value(version));
            }
        }
        None => {
            let mut rule = Table::new();
            rule.insert("match", value(pattern));
            rule.insert("action", value(action.as_str()));
            if let Some(connection) = connection {
                rule.insert("connection", value(connection));
            }
            if let Some(version) = version {
                rule.insert("version", value(version));
            }
            rules.push(rule);
        }
    }
    write_validated(path, &doc)
}

fn inline_map(pairs: &[(String, String)], flag: &str) -> anyhow::Result<InlineTable> {
    let mut table = InlineTable::new();
    for (key, val) in pairs {
        if key.is_empty() {
            bail!("{flag} needs KEY=VALUE with a non-empty KEY, got `={val}`");
        }
        Template::parse(val).map_err(|e| anyhow::anyhow!("{flag} {key}: {}", e.message))?;
        table.insert(key, val.as_str().into());
    }
    Ok(table)
}

fn read_document(path: &Path) -> anyhow::Result<DocumentMut> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => starter::STARTER.to_string(),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    // Validate first so we never build on a broken file: its error names the line to fix.
    load::parse(path, &text)?;
    text.parse::<DocumentMut>()
        .with_context(|| format!("cannot parse {}", path.display()))
}

/// Validates the new text as a whole, then writes it through a temporary file and a rename.
/// A change the config would refuse is not written, and its error quotes no line number: the
/// line would be in a text that was never written, so the person could not find it.
fn write_validated(path: &Path, doc: &DocumentMut) -> anyhow::Result<()> {
    let text = doc.to_string();
    if let Err(mut e) = load::parse(path, &text) {
        e.line = 0;
        e.column = 0;
        e.excerpt = None;
        e.message = format!("the change was not written: {}", e.message);
        return Err(e.into());
    }
    write_atomically(path, &text)
}

/// An exclusive lock on a config file, held while it is read, changed and written, by every
/// process and thread that edits it. It is a lock on a sibling file (`.config.toml.lock`), since
/// each write replaces the config's own file; released when dropped.
pub struct ConfigLock {
    path: PathBuf,
    _held: File,
}

/// How long an edit waits for another to finish. Every edit holds the lock only to read, change
/// and write the file, so a holder past this is stuck (stopped in a debugger, suspended, hung on
/// a full disk); waiting on it for ever would hang the command, or an approval that writes an
/// "always allow" rule, without a word.
const LOCK_WAIT: Duration = Duration::from_secs(10);

impl ConfigLock {
    /// Waits until no one else edits the config at `path` (up to [`LOCK_WAIT`]), then holds it.
    pub fn acquire(path: &Path) -> anyhow::Result<ConfigLock> {
        ConfigLock::acquire_within(path, LOCK_WAIT)
    }

    fn acquire_within(path: &Path, wait: Duration) -> anyhow::Result<ConfigLock> {
        create_parent(path)?;
        let lock_path = path.with_file_name(format!(".{}.lock", file_name(path)));
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .with_context(|| {
                format!(
                    "cannot open {} to edit the config; check that its folder is writable",
                    lock_path.display()
                )
            })?;
        let started = Instant::now();
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(TryLockError::WouldBlock) if started.elapsed() < wait => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(TryLockError::WouldBlock) => {
                    let holder = std::fs::read_to_string(&lock_path).unwrap_or_default();
                    let holder = match holder.trim() {
                        "" => "another process".to_string(),
                        named => format!("another process ({named})"),
                    };
                    bail!(
                        "{holder} has been editing {} for over {} s, so nothing was changed; if it is stuck, stop it and run this again (the lock is {})",
                        path.display(),
                        wait.as_secs_f32(),
                        lock_path.display()
                    );
                }
                Err(TryLockError::Error(e)) => {
                    return Err(e).with_context(|| format!("cannot lock {}", lock_path.display()));
                }
            }
        }
        // Who holds it, for an edit that waits on it in vain to name. Best effort: the lock is
        // held whether or not this is written.
        // Only the command's first words: a flag's value may be a secret (`--header`).
        let _ = file.set_len(0).and_then(|()| {
            let command: Vec<String> = std::env::args()
                .skip(1)
                .take_while(|word| !word.starts_with('-'))
                .take(3)
                .collect();
            let holder = format!(
                "pid {}: capabilities {}",
                std::process::id(),
                command.join(" ")
            );
            (&file).write_all(holder.trim_end().as_bytes())
        });
        Ok(ConfigLock {
            path: path.to_path_buf(),
            _held: file,
        })
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "config.toml".into())
}

fn create_parent(path: &Path) -> anyhow::Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    Ok(())
}

/// Writes `text` to `path` via a sibling temporary file and a rename, creating parent folders.
/// The temporary file's name is this process's and this write's own, so two writes at once
/// (threads of one hub) never write into each other's.
pub fn write_atomically(path: &Path, text: &str) -> anyhow::Result<()> {
    static WRITES: AtomicU64 = AtomicU64::new(0);
    create_parent(path)?;
    let write = WRITES.fetch_add(1, Ordering::Relaxed);
    let tmp = path.with_file_name(format!(
        ".{}.{}.{write}.tmp",
        file_name(path),
        std::process::id()
    ));
    std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot replace {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_waiting_on_a_stuck_one_gives_up_naming_it_and_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "[policy]\ndefault = \"ask\"\n").unwrap();
        let held = ConfigLock::acquire(&path).unwrap();
        let refused = ConfigLock::acquire_within(&path, Duration::from_millis(100))
            .err()
            .map(|e| format!("{e:#}"))
            .unwrap_or_default();
        assert!(
            refused.contains(&format!("another process (pid {}", std::process::id()))
                && refused.contains("has been editing")
                && refused.contains("if it is stuck, stop it and run this again"),
            "{refused}"
        );
        drop(held);
        // Once the holder is done, the next edit goes ahead.
        assert!(ConfigLock::acquire_within(&path, Duration::from_millis(100)).is_ok());
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "[policy]\ndefault = \"ask\"\n"
        );
    }

    #[test]
    fn add_keeps_comments_and_stores_references_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "# my comment\n[sources.a]\ncommand = \"x\"\n").unwrap();
        add_source(
            &path,
            "gh",
            &NewSource::Http {
                url: "https://example.test/mcp".into(),
                headers: vec![("Authorization".into(), "Bearer ${secret:gh}".into())],
            },
        )
        .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("# my comment\n"), "{text}");
        assert!(text.contains("Bearer ${secret:gh}"), "{text}");
        let settings = load::parse(&path, &text).unwrap();
        assert_eq!(settings.sources.len(), 2);
    }

    #[test]
    fn duplicate_and_bad_names_change_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let original = "[sources.a]\ncommand = \"x\"\n";
        std::fs::write(&path, original).unwrap();
        let stdio = NewSource::Stdio {
            command: "y".into(),
            args: vec![],
            env: vec![],
            cwd: None,
        };
        let err = add_source(&path, "a", &stdio).unwrap_err().to_string();
        assert!(err.contains("already exists"), "{err}");
        let err = add_source(&path, "my-server", &stdio)
            .unwrap_err()
            .to_string();
        assert!(err.contains("letters, digits and `_`"), "{err}");
        let bad_env = NewSource::Stdio {
            command: "y".into(),
            args: vec![],
            env: vec![("K".into(), "${oops}".into())],
            cwd: None,
        };
        let err = add_source(&path, "b", &bad_env).unwrap_err().to_string();
        assert!(err.contains("${secret:NAME}"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), original);
    }

    #[test]
    fn add_rule_appends_a_valid_rule() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            "# mine\n[sources.gh]\ncommand = \"x\"\n[policy]\ndefault = \"ask\"\n",
        )
        .unwrap();
        add_rule(
            &ConfigLock::acquire(&path).unwrap(),
            None,
            "gh.createIssue",
            crate::policy::Action::Allow,
            None,
            None,
        )
        .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("# mine"), "{text}");
        let settings = load::parse(&path, &text).unwrap();
        assert_eq!(settings.policy.rules.len(), 1);
        assert_eq!(settings.policy.rules[0].pattern, "gh.createIssue");
        add_rule(
            &ConfigLock::acquire(&path).unwrap(),
            None,
            "gh.createIssue",
            crate::policy::Action::Deny,
            None,
            Some("3f2a9c"),
        )
        .unwrap();
        let settings = load::parse(&path, &std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(
            settings.policy.rules.len(),
            1,
            "the same pattern is updated, not added twice"
        );
        assert_eq!(settings.policy.rules[0].action, crate::policy::Action::Deny);
        assert_eq!(settings.policy.rules[0].version.as_deref(), Some("3f2a9c"));
        let err = add_rule(
            &ConfigLock::acquire(&path).unwrap(),
            None,
            "nope.x",
            crate::policy::Action::Allow,
            None,
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("source `nope`"), "{err}");
    }

    #[test]
    fn a_profile_rule_goes_to_the_profile() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            "[sources.gh]\ncommand = \"x\"\n[profiles.work]\nsources = [\"gh\"]\n",
        )
        .unwrap();
        let allow = crate::policy::Action::Allow;
        add_rule(
            &ConfigLock::acquire(&path).unwrap(),
            Some("work"),
            "gh.createIssue",
            allow,
            None,
            None,
        )
        .unwrap();
        let settings = load::parse(&path, &std::fs::read_to_string(&path).unwrap()).unwrap();
        assert!(settings.policy.rules.is_empty(), "not the top-level rules");
        assert_eq!(
            settings.profiles["work"].policy.rules[0].pattern,
            "gh.createIssue"
        );
        let err = add_rule(
            &ConfigLock::acquire(&path).unwrap(),
            Some("home"),
            "gh.createIssue",
            allow,
            None,
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("no profile `home`"), "{err}");
    }

    #[test]
    fn remove_refuses_while_a_profile_uses_the_source() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let original = "[sources.a]\ncommand = \"x\"\n[profiles.p]\nsources = [\"a\"]\n";
        std::fs::write(&path, original).unwrap();
        let err = format!("{:#}", remove_source(&path, "a").unwrap_err());
        assert!(err.contains("profile `p`"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), original);
        let err = remove_source(&path, "zzz").unwrap_err().to_string();
        assert!(err.contains("known sources: a"), "{err}");
    }
}
