//! A script that uses a configured source whose tools never arrived (it failed to connect, is
//! still connecting, or is disabled) meets no global of that name and fails with a bare
//! `ReferenceError: NAME is not defined`. This turns that into what happened: the source is not
//! available, why, and what to do, as an `upstream_unavailable` error. A source that is up but
//! lists no tools is the script's mistake instead (`runtime_error`): running it again cannot help,
//! and so is a source the run's profile leaves out. A source that never listed its tools because
//! it needs a sign-in makes the run wait for that sign-in (`awaiting_connection`) instead: once
//! it is given, a resume runs the script with the source's tools. A name that is no source but
//! reads as a typo of one (`everythin`, `Github`) keeps its error and gets a hint naming the
//! source.

use crate::catalog::Origin;
use crate::catalog::live::LiveCatalog;
use crate::config::Settings;
use crate::model::Permits;
use crate::model::closest::closest;
use crate::sandbox::{EnvelopeError, ErrorCode, ExecuteEnvelope, Pending, PendingKind, Status};
use crate::sources::{SourceStatus, is_sign_in_message};

/// Rewrites a failed run's `ReferenceError` for a configured source that is not in the
/// catalogue. Anything else is left as it is, and so is a source the client's token (`permits`)
/// does not see: to its holder, that name is as undefined as any other.
pub fn explain(envelope: &mut ExecuteEnvelope, catalog: &LiveCatalog, permits: Permits) {
    if envelope.status != Status::Failed {
        return;
    }
    let Some(error) = envelope.error.as_ref() else {
        return;
    };
    if error.code != ErrorCode::RuntimeError {
        return;
    }
    let Some(name) = undefined_name(&error.message).map(str::to_string) else {
        return;
    };
    let name = name.as_str();
    if !catalog.read(|catalog, _| catalog.shows_source(name, permits)) {
        suggest_source(envelope, catalog, permits, name);
        return;
    }
    let Some(status) = catalog.sources().status(name) else {
        suggest_source(envelope, catalog, permits, name);
        return;
    };
    // A source left alone after a recent failure was never started by this process.
    let held = catalog.read(
        |catalog, _| match catalog.namespace(name).map(|n| &n.origin) {
            Some(Origin::Unavailable { error }) => Some(error.clone()),
            _ => None,
        },
    );
    let failure = match (&status, &held) {
        (SourceStatus::Failed { error }, _) | (SourceStatus::Idle, Some(error)) => Some(error),
        _ => None,
    };
    if let Some(reason) = failure.filter(|error| is_sign_in_message(error)) {
        let (name, reason) = (name.to_string(), reason.clone());
        await_sign_in(envelope, &name, &reason);
        return;
    }
    let why = match status {
        // Ready with nothing to call: it is not coming back with tools by itself.
        SourceStatus::Ready { tool_count: 0, .. } => {
            envelope.error = Some(lists_no_tools(name));
            return;
        }
        SourceStatus::Failed { error } => format!("it could not connect: {error}"),
        SourceStatus::Restarting { last_error, .. } => {
            format!("it went away and is reconnecting: {last_error}")
        }
        SourceStatus::Connecting => "it is still connecting".to_string(),
        SourceStatus::Idle => match held {
            Some(error) => format!("it could not connect: {error}"),
            None => format!(
                "it was not started, so its tools were never listed; `capabilities source test {name}` lists them"
            ),
        },
        SourceStatus::Disabled => format!(
            "it is disabled (`enabled = false` in the config); `capabilities source enable {name}` turns it on"
        ),
        // Listed, but not (yet) in the view of the catalogue this run took.
        SourceStatus::Ready { .. } => {
            "it is connected, but its tools were not in the catalogue when the run started"
                .to_string()
        }
    };
    let mut explained = EnvelopeError::new(
        ErrorCode::UpstreamUnavailable,
        format!(
            "source `{name}` is configured but not available, so the script cannot use it: {why}"
        ),
    );
    explained.hint = Some(format!(
        "Nothing was called on `{name}`. Tell the user; `capabilities source test {name}` shows what is wrong. Run the script again once it is available."
    ));
    envelope.error = Some(explained);
}

/// Points a `ReferenceError` for a name that is no source at the sources it is a typo of
/// (`everythin`, `Github`), among those the client sees, and the `hub` global. The error stays
/// the script's; a name unlike any source (a variable's) keeps the plain hint.
fn suggest_source(
    envelope: &mut ExecuteEnvelope,
    catalog: &LiveCatalog,
    permits: Permits,
    name: &str,
) {
    let visible: Vec<String> = catalog.read(|catalog, _| {
        catalog
            .namespaces
            .iter()
            .filter(|namespace| namespace.seen_by(permits))
            .map(|namespace| namespace.name.clone())
            .collect()
    });
    let candidates = visible.iter().map(String::as_str).chain(["hub"]);
    // Fuzzy matching finds a short name inside any longer one (`e` in `everything`); a typo is
    // about as long as what it misspells.
    let length = name.chars().count();
    let like: Vec<&str> = closest(name, candidates, 3)
        .into_iter()
        .filter(|candidate| *candidate != name)
        .filter(|candidate| {
            let theirs = candidate.chars().count();
            3 * length >= 2 * theirs && 3 * theirs >= 2 * length
        })
        .collect();
    let (Some(first), Some(error)) = (like.first(), envelope.error.as_mut()) else {
        return;
    };
    let others = if like.len() > 1 {
        format!(
            " (or {})",
            like[1..]
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    } else {
        String::new()
    };
    error.hint = Some(format!(
        "`{name}` is not defined, and no source has that name. Did you mean `{first}`{others}? Each source is a global named as search and describe show its tools (`{first}.…`)."
    ));
}

/// Turns the run into one waiting for `name`'s sign-in. The model is told what to ask of the
/// person, never where to sign in.
fn await_sign_in(envelope: &mut ExecuteEnvelope, name: &str, reason: &str) {
    envelope.status = Status::AwaitingConnection;
    envelope.error = None;
    envelope.pending = vec![Pending {
        id: format!("{}/{name}", envelope.run_id),
        kind: PendingKind::Connection,
        address: Some(name.to_string()),
        summary: format!("`{name}` waits for a sign-in: {reason}"),
        message: Some(format!(
            "Tell the user that `{name}` needs them to sign in (`capabilities source login {name}` in a terminal), then call execute with {{ \"resume\": \"{}\" }} once they have.",
            envelope.run_id
        )),
        connection: None,
    }];
}

/// Rewrites a failed run's `ReferenceError` for a source of the config that the run's profile
/// (`settings`, narrowed) leaves out: the script cannot reach it from this run, whatever it does.
/// Only for the local user: to a client holding a token (`token_holder`) a source outside the
/// profile is as undefined as any other name, so its existence is not confirmed to whoever
/// guesses names.
pub fn outside_profile(envelope: &mut ExecuteEnvelope, settings: &Settings, token_holder: bool) {
    let Some(profile) = settings.profile.as_deref() else {
        return;
    };
    if token_holder {
        return;
    }
    let Some(name) = undefined_source(envelope).map(str::to_string) else {
        return;
    };
    if !settings.left_out.contains(&name) {
        return;
    }
    let sources: Vec<&str> = settings.sources.iter().map(|s| s.name.as_str()).collect();
    let mut error = EnvelopeError::new(
        ErrorCode::RuntimeError,
        format!(
            "source `{name}` is not in profile `{profile}`, which this run uses (its sources: {}), so the script cannot use it",
            if sources.is_empty() {
                "none".to_string()
            } else {
                sources.join(", ")
            }
        ),
    );
    error.hint = Some(format!(
        "Nothing was called on `{name}`. Do the task with this profile's sources (search shows their tools), or tell the user it needs `{name}`, which another profile or the whole config has."
    ));
    envelope.error = Some(error);
}

/// The name of an undefined global a failed run's `runtime_error` reports.
fn undefined_source(envelope: &ExecuteEnvelope) -> Option<&str> {
    if envelope.status != Status::Failed {
        return None;
    }
    let error = envelope.error.as_ref()?;
    if error.code != ErrorCode::RuntimeError {
        return None;
    }
    undefined_name(&error.message)
}

fn lists_no_tools(name: &str) -> EnvelopeError {
    let mut error = EnvelopeError::new(
        ErrorCode::RuntimeError,
        format!("source `{name}` lists no tools, so the script cannot call it"),
    );
    error.hint = Some(format!(
        "Nothing was called on `{name}`. Use search or describe (or `hub.search` in a script) to find the tools that exist, and do the task with those."
    ));
    error
}

/// `NAME` from `ReferenceError: NAME is not defined` (QuickJS's wording), as the first line of
/// the message says it.
fn undefined_name(message: &str) -> Option<&str> {
    let rest = &message[message.find("ReferenceError: ")? + "ReferenceError: ".len()..];
    let name = rest.split(" is not defined").next()?;
    let is_identifier = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '$');
    (is_identifier && rest.starts_with(&format!("{name} is not defined"))).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_without_tools_is_the_script_s_mistake() {
        let error = lists_no_tools("empty");
        assert_eq!(error.code, ErrorCode::RuntimeError);
        assert_eq!(
            error.message,
            "source `empty` lists no tools, so the script cannot call it"
        );
        assert!(error.hint.is_some_and(|h| h.contains("search or describe")));
    }

    #[test]
    fn only_an_undefined_identifier_is_recognised() {
        assert_eq!(
            undefined_name("ReferenceError: secure is not defined\n    at <eval> (script:1)"),
            Some("secure")
        );
        assert_eq!(undefined_name("ReferenceError: x.y is not defined"), None);
        assert_eq!(undefined_name("TypeError: secure is not a function"), None);
        assert_eq!(undefined_name("ReferenceError: is not defined"), None);
        assert_eq!(undefined_name("secure is not defined"), None);
    }
}
