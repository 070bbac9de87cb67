//! `capabilities install CLIENT [--write]`: the MCP client config entry that starts the hub.
//! Without `--write` it only shows the entry and where it goes. With `--write` it edits the
//! client's file in place: everything else in it is kept, the old file is copied to a backup
//! first, and the new one replaces it atomically with the same permissions.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};
use serde_json::{Map, Value, json};

use super::output::print;
use crate::app::App;
use crate::cli::{InstallArgs, InstallClient};
use crate::env_vars;

/// How the client starts the hub.
struct Launch {
    command: String,
    args: Vec<String>,
    env: Vec<(String, String)>,
}

pub fn run(app: &App, args: &InstallArgs) -> anyhow::Result<ExitCode> {
    // A hub started with a config that does not load, or a profile it lacks, would fail in the
    // client, where nobody reads its stderr: refuse it here, saying what to fix.
    app.settings_for(args.profile.as_deref())?;
    let launch = launch(app, args.profile.as_deref())?;
    if args.client == InstallClient::Print {
        let snippet = json!({ "mcpServers": { &args.name: json_entry(&launch, false) } });
        print(&format!("{}\n", serde_json::to_string_pretty(&snippet)?))?;
        return Ok(ExitCode::SUCCESS);
    }
    let file = config_file(args.client)?;
    let current = match std::fs::read_to_string(&file) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", file.display())),
    };
    let change = match args.client {
        InstallClient::Codex => codex_change(&file, current.as_deref(), &args.name, &launch)?,
        _ => json_change(
            &file,
            current.as_deref(),
            &args.name,
            &launch,
            args.client == InstallClient::Claude,
        )?,
    };
    let client = client_name(args.client);
    let Some(new_text) = change.new_text else {
        print(&format!(
            "{client} already starts the hub as `{}` in {}; nothing to change.\n",
            args.name,
            file.display()
        ))?;
        return Ok(ExitCode::SUCCESS);
    };
    let mut out = String::new();
    if !args.write {
        out.push_str(&format!(
            "{} `{}` in {}:\n\n{}\n\n",
            if change.replaces {
                "Would replace"
            } else {
                "Would add"
            },
            args.name,
            file.display(),
            change.entry
        ));
        out.push_str(&format!(
            "Run `capabilities install {} --write` to change the file (it is backed up first).\n",
            cli_name(args.client)
        ));
    } else {
        let backup = match &current {
            Some(text) => Some(backup(&file, text)?),
            None => None,
        };
        write_keeping_permissions(&file, &new_text)?;
        out.push_str(&format!(
            "{} `{}` in {}.\n",
            if change.replaces { "Replaced" } else { "Added" },
            args.name,
            file.display()
        ));
        if let Some(backup) = backup {
            out.push_str(&format!("The previous file is at {}.\n", backup.display()));
        }
        out.push_str(&format!("Restart {client} to load it.\n"));
    }
    if !change.others.is_empty() {
        out.push_str(&format!(
            "{client} also starts {} other server(s) directly ({}). Put them behind the hub with `capabilities source import {}`, then remove them from that file.\n",
            change.others.len(),
            change.others.join(", "),
            file.display()
        ));
    }
    print(&out)?;
    Ok(ExitCode::SUCCESS)
}

/// This binary, `hub serve`, and whatever tells it where the config is when that is not the
/// default (an explicit `--config`, `$CAPABILITIES_HOME`, `$CAPABILITIES_CONFIG`): the client
/// starts the hub with neither our working directory nor our environment.
fn launch(app: &App, profile: Option<&str>) -> anyhow::Result<Launch> {
    let exe = std::env::current_exe().context("cannot find the path of this program")?;
    let command = exe.canonicalize().unwrap_or(exe).display().to_string();
    let mut args = vec!["hub".to_string(), "serve".to_string()];
    if let Some(profile) = profile {
        args.extend(["--profile".to_string(), profile.to_string()]);
    }
    let mut env = Vec::new();
    for var in [env_vars::CAPABILITIES_HOME, env_vars::CAPABILITIES_CONFIG] {
        if let Some(value) = std::env::var_os(var).filter(|v| !v.is_empty()) {
            env.push((
                var.to_string(),
                absolute(Path::new(&value)).display().to_string(),
            ));
        }
    }
    let environment_default = crate::config::Paths::discover(None)?;
    if environment_default.config_file != app.paths.config_file {
        args.extend([
            "--config".to_string(),
            absolute(&app.paths.config_file).display().to_string(),
        ]);
    }
    Ok(Launch { command, args, env })
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The `mcpServers` entry. Claude Code wants `"type": "stdio"`; the others infer it.
fn json_entry(launch: &Launch, typed: bool) -> Value {
    let mut entry = Map::new();
    if typed {
        entry.insert("type".into(), json!("stdio"));
    }
    entry.insert("command".into(), json!(launch.command));
    entry.insert("args".into(), json!(launch.args));
    if !launch.env.is_empty() {
        let env: Map<String, Value> = launch
            .env
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        entry.insert("env".into(), Value::Object(env));
    }
    Value::Object(entry)
}

fn config_file(client: InstallClient) -> anyhow::Result<PathBuf> {
    let dirs = directories::BaseDirs::new().context("cannot find your home directory")?;
    let home = dirs.home_dir();
    Ok(match client {
        InstallClient::Claude => home.join(".claude.json"),
        InstallClient::ClaudeDesktop => dirs
            .config_dir()
            .join("Claude")
            .join("claude_desktop_config.json"),
        InstallClient::Cursor => home.join(".cursor").join("mcp.json"),
        InstallClient::Codex => {
            match std::env::var_os(env_vars::CODEX_HOME).filter(|v| !v.is_empty()) {
                Some(codex_home) => PathBuf::from(codex_home).join("config.toml"),
                None => home.join(".codex").join("config.toml"),
            }
        }
        InstallClient::Print => bail!("`print` has no config file"),
    })
}

fn client_name(client: InstallClient) -> &'static str {
    match client {
        InstallClient::Claude => "Claude Code",
        InstallClient::ClaudeDesktop => "Claude Desktop",
        InstallClient::Cursor => "Cursor",
        InstallClient::Codex => "Codex",
        InstallClient::Print => "your client",
    }
}

fn cli_name(client: InstallClient) -> &'static str {
    match client {
        InstallClient::Claude => "claude",
        InstallClient::ClaudeDesktop => "claude-desktop",
        InstallClient::Cursor => "cursor",
        InstallClient::Codex => "codex",
        InstallClient::Print => "print",
    }
}

/// What installing would do to one file.
#[derive(Debug)]
struct Change {
    /// The whole new file, or `None` when the entry is already there as it should be.
    new_text: Option<String>,
    /// The entry as it will appear, for the dry run.
    entry: String,
    replaces: bool,
    /// The other servers the file starts.
    others: Vec<String>,
}

fn json_change(
    file: &Path,
    current: Option<&str>,
    name: &str,
    launch: &Launch,
    typed: bool,
) -> anyhow::Result<Change> {
    let mut doc = match current {
        None => Value::Object(Map::new()),
        Some(text) if text.trim().is_empty() => Value::Object(Map::new()),
        Some(text) => serde_json::from_str(text).with_context(|| {
            format!("{} is not valid JSON, so it was left alone; fix it, or add the entry from `capabilities install print` by hand", file.display())
        })?,
    };
    let Some(root) = doc.as_object_mut() else {
        bail!(
            "{} does not hold a JSON object, so it was left alone; add the entry from `capabilities install print` by hand",
            file.display()
        );
    };
    let servers = root
        .entry("mcpServers")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(servers) = servers.as_object_mut() else {
        bail!(
            "`mcpServers` in {} is not an object, so the file was left alone; fix it by hand",
            file.display()
        );
    };
    let entry = json_entry(launch, typed);
    let others = servers.keys().filter(|k| *k != name).cloned().collect();
    let shown = serde_json::to_string_pretty(&json!({ "mcpServers": { name: &entry } }))?;
    if servers.get(name) == Some(&entry) {
        return Ok(Change {
            new_text: None,
            entry: shown,
            replaces: false,
            others,
        });
    }
    let replaces = servers.insert(name.to_string(), entry).is_some();
    Ok(Change {
        new_text: Some(format!("{}\n", serde_json::to_string_pretty(&doc)?)),
        entry: shown,
        replaces,
        others,
    })
}

fn codex_change(
    file: &Path,
    current: Option<&str>,
    name: &str,
    launch: &Launch,
) -> anyhow::Result<Change> {
    use toml_edit::{Array, DocumentMut, InlineTable, Item, Table, value};
    let mut doc: DocumentMut = current.unwrap_or("").parse().with_context(|| {
        format!(
            "{} is not valid TOML, so it was left alone; fix it, or add the entry by hand",
            file.display()
        )
    })?;
    let servers = doc.entry("mcp_servers").or_insert_with(|| {
        let mut table = Table::new();
        table.set_implicit(true);
        Item::Table(table)
    });
    let Some(servers) = servers.as_table_mut() else {
        bail!(
            "`mcp_servers` in {} is not a table, so the file was left alone; fix it by hand",
            file.display()
        );
    };
    let others = servers
        .iter()
        .map(|(k, _)| k.to_string())
        .filter(|k| k != name)
        .collect();
    let mut table = Table::new();
    table.insert("command", value(launch.command.as_str()));
    let mut args = Array::new();
    launch.args.iter().for_each(|a| args.push(a.as_str()));
    table.insert("args", value(args));
    if !launch.env.is_empty() {
        let mut env = InlineTable::new();
        launch.env.iter().for_each(|(k, v)| {
            env.insert(k, v.as_str().into());
        });
        table.insert("env", value(env));
    }
    let mut shown = DocumentMut::new();
    let mut shown_servers = Table::new();
    shown_servers.set_implicit(true);
    shown_servers.insert(name, Item::Table(table.clone()));
    shown.insert("mcp_servers", Item::Table(shown_servers));
    let unchanged = servers
        .get(name)
        .and_then(Item::as_table)
        .is_some_and(|old| old.to_string() == table.to_string());
    if unchanged {
        return Ok(Change {
            new_text: None,
            entry: shown.to_string().trim_end().to_string(),
            replaces: false,
            others,
        });
    }
    let replaces = servers.insert(name, Item::Table(table)).is_some();
    Ok(Change {
        new_text: Some(doc.to_string()),
        entry: shown.to_string().trim_end().to_string(),
        replaces,
        others,
    })
}

/// Copies the file's current text next to it, named with the time, and returns the copy's path.
fn backup(file: &Path, text: &str) -> anyhow::Result<PathBuf> {
    let seconds = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let backup = file.with_file_name(format!("{name}.{seconds}.bak"));
    std::fs::write(&backup, text)
        .with_context(|| format!("cannot back up {} to {}", file.display(), backup.display()))?;
    if let Ok(metadata) = std::fs::metadata(file) {
        // A config may hold tokens; the backup is no more readable than the original.
        let _ = std::fs::set_permissions(&backup, metadata.permissions());
    }
    Ok(backup)
}

/// Writes through a temporary file and a rename, giving the new file the old one's permissions.
fn write_keeping_permissions(file: &Path, text: &str) -> anyhow::Result<()> {
    let permissions = std::fs::metadata(file).ok().map(|m| m.permissions());
    if let Some(parent) = file.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = file.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    if let Some(permissions) = permissions {
        std::fs::set_permissions(&tmp, permissions)
            .with_context(|| format!("cannot set the permissions of {}", tmp.display()))?;
    }
    std::fs::rename(&tmp, file).with_context(|| format!("cannot replace {}", file.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch() -> Launch {
        Launch {
            command: "/bin/capabilities".into(),
            args: vec!["hub".into(), "serve".into()],
            env: vec![],
        }
    }

    #[test]
    fn json_install_keeps_other_keys_and_is_idempotent() {
        let file = Path::new("mcp.json");
        let current = r#"{"theme":"dark","mcpServers":{"github":{"command":"gh-mcp"}}}"#;
        let change = json_change(file, Some(current), "capabilities", &launch(), false).unwrap();
        let text = change.new_text.unwrap();
        let doc: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(doc["theme"], "dark");
        assert_eq!(doc["mcpServers"]["github"]["command"], "gh-mcp");
        assert_eq!(
            doc["mcpServers"]["capabilities"]["args"],
            json!(["hub", "serve"])
        );
        assert_eq!(change.others, ["github"]);
        let again = json_change(file, Some(&text), "capabilities", &launch(), false).unwrap();
        assert!(again.new_text.is_none());
    }

    #[test]
    fn broken_client_files_are_left_alone_with_a_reason() {
        let err = json_change(
            Path::new("x.json"),
            Some("{ // comment"),
            "c",
            &launch(),
            false,
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("is not valid JSON, so it was left alone"),
            "{err}"
        );
        let err = json_change(
            Path::new("x.json"),
            Some(r#"{"mcpServers": []}"#),
            "c",
            &launch(),
            false,
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("`mcpServers` in x.json is not an object"),
            "{err}"
        );
    }

    #[test]
    fn codex_install_adds_a_table_and_keeps_comments() {
        let current = "# my settings\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"x\"\n";
        let change = codex_change(
            Path::new("config.toml"),
            Some(current),
            "capabilities",
            &launch(),
        )
        .unwrap();
        let text = change.new_text.unwrap();
        assert!(
            text.starts_with("# my settings\nmodel = \"o3\"\n"),
            "{text}"
        );
        assert!(text.contains("[mcp_servers.capabilities]\ncommand = \"/bin/capabilities\"\nargs = [\"hub\", \"serve\"]"), "{text}");
        let again = codex_change(
            Path::new("config.toml"),
            Some(&text),
            "capabilities",
            &launch(),
        )
        .unwrap();
        assert!(again.new_text.is_none());
    }
}
