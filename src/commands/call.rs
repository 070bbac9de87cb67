//! `capabilities call ADDRESS [JSON]`: one tool call from a shell script, without writing a
//! script. It runs as a one-line `exec` script (`return await ADDRESS(ARGS)`), so the call is
//! validated against the tool's schema, decided by policy, journaled, and asked about inline
//! on a terminal exactly as a script's call would be.

use std::io::Read;
use std::process::ExitCode;

use anyhow::{Context, bail};

use crate::app::App;
use crate::cli::{CallArgs, ExecArgs};

pub async fn run(app: &App, args: &CallArgs) -> anyhow::Result<ExitCode> {
    let code = script(app, args)?;
    let exec = ExecArgs {
        script: None,
        resume: None,
        json: args.json,
        output_budget: None,
        profile: args.profile.clone(),
        code: Some(code),
    };
    super::exec::run(app, &exec).await
}

/// The one-line script that makes the call. The address is checked to be one (so nothing but
/// a call can be written into the script) and the arguments are re-serialised from parsed JSON.
fn script(app: &App, args: &CallArgs) -> anyhow::Result<String> {
    let address = args.address.trim();
    let valid = address
        .split_once('.')
        .is_some_and(|(namespace, tool)| is_identifier(namespace) && is_identifier(tool));
    if !valid {
        bail!(
            "`{address}` is not a tool address; give one as `namespace.tool`, e.g. `everything.echo` (`{}` finds them)",
            app.command("search WORDS")
        );
    }
    let text = match args.arguments.as_deref() {
        None => "{}".to_string(),
        Some("-") => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("cannot read the arguments from standard input")?;
            text
        }
        Some(text) => text.to_string(),
    };
    let arguments: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        anyhow::anyhow!(
            "the arguments are not JSON ({e}); give an object, e.g. '{{\"message\": \"hi\"}}', or `{}` for its parameters",
            app.command(&format!("describe {address}"))
        )
    })?;
    if !arguments.is_object() {
        bail!(
            "the arguments must be a JSON object, e.g. '{{\"message\": \"hi\"}}'; `{}` shows the tool's parameters",
            app.command(&format!("describe {address}"))
        );
    }
    let options = match &args.connection {
        Some(connection) => format!(", {{ connection: {} }}", serde_json::to_string(connection)?),
        None => String::new(),
    };
    Ok(format!("return await {address}({arguments}{options});\n"))
}

/// A JavaScript identifier as addresses use them: ASCII letters, digits, `_` and `$`, not
/// starting with a digit.
fn is_identifier(text: &str) -> bool {
    let mut chars = text.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(address: &str, arguments: Option<&str>, connection: Option<&str>) -> CallArgs {
        CallArgs {
            address: address.into(),
            arguments: arguments.map(String::from),
            connection: connection.map(String::from),
            json: false,
            profile: None,
        }
    }

    fn app() -> App {
        App::new(crate::config::Paths {
            config_file: "/nonexistent/config.toml".into(),
            data_dir: "/nonexistent/data".into(),
        })
    }

    #[test]
    fn the_script_is_one_call_with_the_arguments_as_json() {
        let code = script(
            &app(),
            &args("everything.echo", Some(r#"{"message":"hi"}"#), None),
        );
        assert_eq!(
            code.ok().as_deref(),
            Some("return await everything.echo({\"message\":\"hi\"});\n")
        );
        let code = script(&app(), &args("time.now", None, Some("work")));
        assert_eq!(
            code.ok().as_deref(),
            Some("return await time.now({}, { connection: \"work\" });\n")
        );
    }

    #[test]
    fn nothing_but_an_address_and_an_object_is_accepted() {
        for (address, arguments, expected) in [
            ("everything.echo); evil(", None, "not a tool address"),
            ("echo", None, "not a tool address"),
            ("everything.echo", Some("[1]"), "must be a JSON object"),
            ("everything.echo", Some("{nope"), "not JSON"),
        ] {
            let err = script(&app(), &args(address, arguments, None)).unwrap_err();
            assert!(err.to_string().contains(expected), "{address}: {err}");
        }
    }
}
