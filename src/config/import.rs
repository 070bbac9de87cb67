//! Reading the MCP servers out of another client's config (`source import`): the `mcpServers`
//! JSON of Claude, Cursor and most others (`servers` in VS Code's), or the `mcp_servers` TOML of
//! Codex. Each entry becomes a [`NewSource`] under a name scripts can use, or a reason why not.

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::{Context, bail};
use serde_json::{Map, Value};

use super::edit::NewSource;
use super::template::Template;
use crate::model::address::{namespace_problem, tool_name};

/// One server of the client's config and what becomes of it.
#[derive(Debug, Clone)]
pub struct ImportEntry {
    /// The name in the client's config.
    pub original: String,
    /// The source name it gets here (a JavaScript identifier).
    pub name: String,
    pub outcome: Result<NewSource, String>,
    /// Things the user should know about an imported entry (secrets stored as written, …).
    pub warnings: Vec<String>,
}

/// Reads every server of the client config `text` (read from `path`; `.toml` means Codex).
pub fn read_client_config(path: &Path, text: &str) -> anyhow::Result<Vec<ImportEntry>> {
    let root: Value = if path.extension().is_some_and(|e| e == "toml") {
        let table: toml::Table = toml::from_str(text)
            .with_context(|| format!("{} is not valid TOML", path.display()))?;
        serde_json::to_value(table)?
    } else {
        serde_json::from_str(text)
            .with_context(|| format!("{} is not valid JSON", path.display()))?
    };
    let servers = ["mcpServers", "servers", "mcp_servers"]
        .iter()
        .find_map(|key| root.get(*key).and_then(Value::as_object));
    let Some(servers) = servers else {
        bail!(
            "{} has no MCP servers: expected an object under `mcpServers` (Claude, Cursor), `servers` (VS Code) or `mcp_servers` (Codex)",
            path.display()
        );
    };
    let mut taken = BTreeSet::new();
    Ok(servers
        .iter()
        .map(|(original, entry)| {
            let name = unique(identifier(original), &mut taken);
            let mut warnings = Vec::new();
            let outcome = entry
                .as_object()
                .ok_or_else(|| "its entry is not an object".to_string())
                .and_then(|entry| new_source(entry, &mut warnings));
            ImportEntry {
                original: original.clone(),
                name,
                outcome,
                warnings,
            }
        })
        .collect())
}

fn new_source(entry: &Map<String, Value>, warnings: &mut Vec<String>) -> Result<NewSource, String> {
    if entry.get("disabled") == Some(&Value::Bool(true))
        || entry.get("enabled") == Some(&Value::Bool(false))
    {
        return Err("it is disabled in that file".into());
    }
    let url = ["url", "serverUrl", "httpUrl"]
        .iter()
        .find_map(|k| entry.get(*k));
    match (entry.get("command"), url) {
        (Some(Value::String(command)), _) => {
            let args = strings(entry.get("args"), "args")?;
            if is_the_hub(command, &args) {
                return Err("it is this hub itself".into());
            }
            let env = pairs(entry.get("env"), "env", warnings)?;
            let cwd = match entry.get("cwd") {
                None | Some(Value::Null) => None,
                Some(Value::String(cwd)) => Some(cwd.clone()),
                Some(_) => return Err("`cwd` is not a string".into()),
            };
            Ok(NewSource::Stdio {
                command: command.clone(),
                args,
                env,
                cwd,
            })
        }
        (Some(_), _) => Err("`command` is not a string".into()),
        (None, Some(Value::String(url))) => {
            if entry.get("type").and_then(Value::as_str) == Some("sse") {
                return Err("it uses the old HTTP+SSE transport; capabilities speaks Streamable HTTP, so check whether the server offers that and add it with `capabilities source add NAME --url URL`".into());
            }
            let headers = pairs(entry.get("headers"), "headers", warnings)?;
            Ok(NewSource::Http {
                url: url.clone(),
                headers,
            })
        }
        (None, Some(_)) => Err("`url` is not a string".into()),
        (None, None) => Err("it has neither `command` nor `url`".into()),
    }
}

fn strings(value: Option<&Value>, field: &str) -> Result<Vec<String>, String> {
    match value {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| {
                item.as_str()
                    .map(String::from)
                    .ok_or_else(|| format!("`{field}` holds something other than strings"))
            })
            .collect(),
        Some(_) => Err(format!("`{field}` is not a list of strings")),
    }
}

/// `env` or `headers`: `${VAR}` (the clients' syntax) becomes `${env:VAR}` (ours).
fn pairs(
    value: Option<&Value>,
    field: &str,
    warnings: &mut Vec<String>,
) -> Result<Vec<(String, String)>, String> {
    let map = match value {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Object(map)) => map,
        Some(_) => return Err(format!("`{field}` is not an object")),
    };
    map.iter()
        .map(|(key, value)| {
            let value = match value {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                _ => return Err(format!("`{field}.{key}` is not a string")),
            };
            let value = env_references(&value);
            Template::parse(&value).map_err(|e| format!("`{field}.{key}`: {}", e.message))?;
            if looks_secret(key) && !value.contains("${") {
                warnings.push(format!(
                    "`{field}.{key}` looks like a secret and is stored in the config as written; keep it in the credential store and write `${{secret:NAME}}` instead"
                ));
            }
            Ok((key.clone(), value))
        })
        .collect()
}

/// Rewrites `${VAR}` and `${VAR:-default}` as `${env:VAR}`; leaves our own references alone.
fn env_references(value: &str) -> String {
    let mut out = String::new();
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else { break };
        let body = &after[..end];
        let var = body.split(":-").next().unwrap_or(body);
        if !body.starts_with("env:")
            && !body.starts_with("secret:")
            && !var.is_empty()
            && var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            out.push_str(&format!("${{env:{var}}}"));
        } else {
            out.push_str(&rest[start..start + 2 + end + 1]);
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

fn looks_secret(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    [
        "token",
        "secret",
        "password",
        "api_key",
        "apikey",
        "api-key",
        "authorization",
        "credential",
    ]
    .iter()
    .any(|w| key.contains(w))
}

/// An entry that starts `capabilities hub serve`: importing it would make the hub its own source.
fn is_the_hub(command: &str, args: &[String]) -> bool {
    let program = Path::new(command)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    program == "capabilities" && args.first().is_some_and(|a| a == "hub")
}

/// A source name for `original`: its camelCase identifier, kept clear of reserved globals.
fn identifier(original: &str) -> String {
    let name = tool_name(original);
    if namespace_problem(&name).is_some() {
        format!("{name}Source")
    } else {
        name
    }
}

fn unique(name: String, taken: &mut BTreeSet<String>) -> String {
    let mut candidate = name.clone();
    let mut n = 2;
    while !taken.insert(candidate.clone()) {
        candidate = format!("{name}{n}");
        n += 1;
    }
    candidate
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_stdio_and_http_entries_and_says_why_others_are_skipped() {
        let text = r#"{"mcpServers": {
            "my-server": {"command": "npx", "args": ["-y", "pkg"], "env": {"GITHUB_TOKEN": "ghp_x", "HOME_DIR": "${HOME}"}},
            "remote": {"type": "http", "url": "https://example.test/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
            "old": {"type": "sse", "url": "https://example.test/sse"},
            "off": {"command": "x", "disabled": true},
            "hub": {"command": "/usr/bin/capabilities", "args": ["hub", "serve"]},
            "Math": {"command": "m"},
            "empty": {}
        }}"#;
        let entries = read_client_config(Path::new("mcp.json"), text).unwrap();
        let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "myServer",
                "remote",
                "old",
                "off",
                "hubSource",
                "math",
                "empty"
            ]
        );
        let Ok(NewSource::Stdio { env, .. }) = &entries[0].outcome else {
            panic!("{:?}", entries[0])
        };
        assert_eq!(env[1], ("HOME_DIR".to_string(), "${env:HOME}".to_string()));
        assert_eq!(entries[0].warnings.len(), 1, "{:?}", entries[0].warnings);
        let Ok(NewSource::Http { headers, .. }) = &entries[1].outcome else {
            panic!("{:?}", entries[1])
        };
        assert_eq!(headers[0].1, "Bearer ${env:TOKEN}");
        assert!(entries[1].warnings.is_empty());
        assert!(
            entries[2]
                .outcome
                .as_ref()
                .unwrap_err()
                .contains("HTTP+SSE")
        );
        assert_eq!(
            entries[3].outcome.as_ref().err().map(String::as_str),
            Some("it is disabled in that file")
        );
        assert_eq!(
            entries[4].outcome.as_ref().err().map(String::as_str),
            Some("it is this hub itself")
        );
        assert!(entries[5].outcome.is_ok());
        assert_eq!(
            entries[6].outcome.as_ref().err().map(String::as_str),
            Some("it has neither `command` nor `url`")
        );
    }

    #[test]
    fn reads_codex_toml_and_rejects_files_without_servers() {
        let text = "[mcp_servers.time]\ncommand = \"uvx\"\nargs = [\"mcp-server-time\"]\n";
        let entries = read_client_config(Path::new("config.toml"), text).unwrap();
        assert_eq!(entries[0].name, "time");
        let err = read_client_config(Path::new("x.json"), "{}")
            .unwrap_err()
            .to_string();
        assert!(err.contains("has no MCP servers"), "{err}");
    }

    #[test]
    fn names_stay_unique() {
        let text = r#"{"servers": {"a-b": {"command": "x"}, "aB": {"command": "y"}}}"#;
        let entries = read_client_config(Path::new("x.json"), text).unwrap();
        assert_eq!(
            entries.iter().map(|e| e.name.as_str()).collect::<Vec<_>>(),
            ["aB", "aB2"]
        );
    }
}
