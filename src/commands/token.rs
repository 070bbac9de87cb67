//! `capabilities token create|list|revoke`: the bearer tokens `hub serve --http` accepts. The
//! secret is printed once by `create` and stored only as a hash; nothing else ever shows it.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use serde_json::json;

use super::output::{eprint_line, print};
use crate::app::App;
use crate::cli::{TokenCreateArgs, TokenListArgs, TokenNameArgs};
use crate::runs::{TokenRecord, now_ms};

pub async fn create(app: &App, args: &TokenCreateArgs) -> anyhow::Result<ExitCode> {
    check_name(&args.name)?;
    let settings = app.settings()?;
    if let Some(profile) = &args.profile
        && !settings.profiles.contains_key(profile)
    {
        let known: Vec<&str> = settings.profiles.keys().map(String::as_str).collect();
        bail!(
            "there is no profile `{profile}` in {}; {}",
            app.paths.config_file.display(),
            if known.is_empty() {
                "the config defines none".to_string()
            } else {
                format!("profiles: {}", known.join(", "))
            }
        );
    }
    for pattern in &args.allow {
        if pattern.trim().is_empty() || pattern.chars().any(char::is_whitespace) {
            bail!(
                "--allow `{pattern}` is not an address pattern; give one like `github.*` or `time.getCurrentTime`"
            );
        }
        // As a policy rule's pattern is: a source named outright must be one of the config's.
        let source = pattern.split('.').next().unwrap_or(pattern);
        if !source.contains(['*', '?', '[']) && settings.source(source).is_none() {
            let known: Vec<&str> = settings.sources.iter().map(|s| s.name.as_str()).collect();
            bail!(
                "--allow `{pattern}` names source `{source}`, which is not in {}; known sources: {}",
                app.paths.config_file.display(),
                if known.is_empty() {
                    "none yet".to_string()
                } else {
                    known.join(", ")
                }
            );
        }
    }
    let expires_at_ms = match &args.expires {
        Some(text) => Some(now_ms().saturating_add(parse_duration(text)?.as_millis() as u64)),
        None => None,
    };
    let store = app.store().await?;
    let secret = store
        .bearer_tokens()
        .create(
            &args.name,
            args.profile.as_deref(),
            expires_at_ms,
            &args.allow,
        )
        .await?;
    // The only place a token is ever shown: stdout alone, so `$(capabilities token create x)` works.
    print(&format!("{secret}\n"))?;
    eprint_line(format_args!(
        "token `{}` created; it is shown only this once. Clients send it as `Authorization: Bearer <token>`.",
        args.name
    ));
    Ok(ExitCode::SUCCESS)
}

pub async fn list(app: &App, args: &TokenListArgs) -> anyhow::Result<ExitCode> {
    let tokens = app.store().await?.bearer_tokens().list().await?;
    let now = now_ms();
    if args.json {
        let rows: Vec<_> = tokens
            .iter()
            .map(|t| {
                json!({
                    "name": t.name,
                    "profile": t.profile,
                    "allow": t.allow,
                    "createdAtMs": t.created_at_ms,
                    "expiresAtMs": t.expires_at_ms,
                    "status": status(t, now),
                })
            })
            .collect();
        print(&format!("{}\n", serde_json::to_string_pretty(&rows)?))?;
        return Ok(ExitCode::SUCCESS);
    }
    if tokens.is_empty() {
        print("no tokens; create one with `capabilities token create NAME`\n")?;
        return Ok(ExitCode::SUCCESS);
    }
    let width = tokens
        .iter()
        .map(|t| t.name.len())
        .max()
        .unwrap_or(0)
        .max("NAME".len());
    let mut text = format!(
        "{:width$}  {:8}  {:12}  {:14}  ALLOW\n",
        "NAME", "STATUS", "PROFILE", "EXPIRES"
    );
    for token in &tokens {
        let expires = match token.expires_at_ms {
            None => "never".to_string(),
            Some(at) if at <= now => "expired".to_string(),
            Some(at) => format!("in {}", human(Duration::from_millis(at - now))),
        };
        let allow = if token.allow.is_empty() {
            "every tool".to_string()
        } else {
            token.allow.join(", ")
        };
        text.push_str(&format!(
            "{:width$}  {:8}  {:12}  {:14}  {allow}\n",
            token.name,
            status(token, now),
            token.profile.as_deref().unwrap_or("any"),
            expires,
        ));
    }
    print(&text)?;
    Ok(ExitCode::SUCCESS)
}

pub async fn revoke(app: &App, args: &TokenNameArgs) -> anyhow::Result<ExitCode> {
    let now = app
        .store()
        .await?
        .bearer_tokens()
        .revoke(&args.name)
        .await?;
    if now {
        eprint_line(format_args!(
            "token `{}` revoked; the hub refuses it from the next request on",
            args.name
        ));
    } else {
        eprint_line(format_args!("token `{}` was already revoked", args.name));
    }
    Ok(ExitCode::SUCCESS)
}

fn status(token: &TokenRecord, now: u64) -> &'static str {
    if token.revoked_at_ms.is_some() {
        "revoked"
    } else if !token.is_active_at(now) {
        "expired"
    } else {
        "active"
    }
}

fn check_name(name: &str) -> anyhow::Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !ok {
        bail!(
            "`{name}` is not a token name; use 1 to 64 letters, digits, `-` or `_` (e.g. `laptop`)"
        );
    }
    Ok(())
}

/// `30d`, `12h`, `90m`, `45s`, `2w`.
fn parse_duration(text: &str) -> anyhow::Result<Duration> {
    let text = text.trim();
    let help = || {
        format!(
            "--expires `{text}` is not a duration; give a number and a unit, s, m, h, d or w (e.g. 30d)"
        )
    };
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .with_context(help)?;
    let (number, unit) = text.split_at(split);
    let number: u64 = number.parse().ok().filter(|n| *n > 0).with_context(help)?;
    let seconds = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        "w" => 604_800,
        _ => bail!(help()),
    };
    // Past a century an expiry means nothing, and past u64 milliseconds it would wrap into the
    // past and make a token that is expired as it is created.
    const CENTURY: u64 = 100 * 365 * 86_400;
    match number.checked_mul(seconds) {
        Some(total) if total <= CENTURY => Ok(Duration::from_secs(total)),
        _ => bail!(
            "--expires `{text}` is more than 100 years; leave --expires out for a token that does not expire"
        ),
    }
}

/// A coarse remaining time for the table: rounded to the nearest minute, hour or day, in the
/// largest unit the rounded time fills (a token made for 30 days a moment ago expires "in 30d",
/// not "in 29d"; 59m50s is "1h").
fn human(remaining: Duration) -> String {
    let s = remaining.as_secs();
    let rounded = |unit: u64| (s + unit / 2) / unit;
    if s < 60 {
        format!("{s}s")
    } else if rounded(60) < 60 {
        format!("{}m", rounded(60))
    } else if rounded(3600) < 24 {
        format!("{}h", rounded(3600))
    } else {
        format!("{}d", rounded(86_400))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remaining_time_is_rounded_to_its_unit() {
        assert_eq!(human(Duration::from_secs(30 * 86_400 - 1)), "30d");
        assert_eq!(human(Duration::from_secs(45 * 60 - 20)), "45m");
        assert_eq!(human(Duration::from_secs(59)), "59s");
        assert_eq!(human(Duration::from_secs(3590)), "1h");
        assert_eq!(human(Duration::from_secs(86_399)), "1d");
    }

    #[test]
    fn durations_take_a_number_and_a_unit() {
        assert_eq!(
            parse_duration("30d").unwrap(),
            Duration::from_secs(30 * 86_400)
        );
        assert_eq!(parse_duration("90m").unwrap(), Duration::from_secs(5400));
        for bad in ["30", "d", "0d", "3 days", "-1h", ""] {
            let err = parse_duration(bad).unwrap_err().to_string();
            assert!(err.contains("is not a duration"), "{bad}: {err}");
        }
        assert_eq!(
            parse_duration("36500d").unwrap(),
            Duration::from_secs(36_500 * 86_400)
        );
        for endless in ["36501d", "99999999999999w", "18446744073709551615s"] {
            let err = parse_duration(endless).unwrap_err().to_string();
            assert!(err.contains("more than 100 years"), "{endless}: {err}");
        }
    }

    #[test]
    fn names_are_short_identifiers() {
        assert!(check_name("ci-runner_2").is_ok());
        for bad in ["", "a b", "x/y", &"a".repeat(65)] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }
}
