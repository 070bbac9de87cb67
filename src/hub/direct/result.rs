//! A direct call's answer from its run's envelope: the tool's value as the upstream's
//! structured content (when it declares an output schema) or as text and media blocks; a
//! failure as an error result with the run's message; a stored large result as its reference
//! and shape, to page with `capabilities_read_result`; a call waiting for a person (a decision,
//! or a sign-in) as an error result saying who does what where, and that the same call runs once
//! they have.
//!
//! A client validates a successful answer's `structuredContent` against the tool's output
//! schema (the Python SDK raises when it is missing or does not conform). A stored or cut
//! result of such a tool therefore goes out as structured content only when the reference
//! itself conforms (a schema that allows any object); otherwise as an error result, which
//! clients do not validate, whose text says the call succeeded and how to read the result.

use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use serde_json::{Value, json};

use super::READ_RESULT;
use crate::sandbox::{ErrorCode, ExecuteEnvelope, PendingKind, Status};
use crate::sources::login_arguments;

/// The answer of the direct tool `name` from `envelope`. `output_schema` is the one the tool
/// declares, if any: an object result then goes out as `structuredContent`.
pub fn result(
    envelope: &ExecuteEnvelope,
    name: &str,
    output_schema: Option<&JsonObject>,
) -> CallToolResult {
    match envelope.status {
        Status::Completed => completed(envelope, output_schema),
        Status::AwaitingApproval => needs_a_person(envelope, name),
        Status::AwaitingConnection => needs_a_sign_in(envelope, name),
        Status::Failed | Status::Cancelled | Status::Running => failed(envelope),
    }
}

fn completed(envelope: &ExecuteEnvelope, output_schema: Option<&JsonObject>) -> CallToolResult {
    if let Some(stored) = &envelope.stored {
        let value = json!({
            "resultRef": stored.result_ref,
            "bytes": stored.bytes,
            "expiresAtMs": stored.expires_at_ms,
            "collections": stored.collections,
            "preview": stored.preview,
        });
        let text = format!(
            "The result is too large to send ({} bytes), so it is kept for a while. Read it in pages with {READ_RESULT} {{ \"resultRef\": \"{}\", \"path\": \"<one of the collections' paths>\" }}.\n{value}",
            stored.bytes, stored.result_ref
        );
        return instead_of_the_value(text, value, output_schema);
    }
    let value = envelope.result.clone().unwrap_or(Value::Null);
    if envelope.truncated.result {
        let text = value.to_string();
        return instead_of_the_value(text, value, output_schema);
    }
    match value {
        Value::Object(_) if output_schema.is_some() => CallToolResult::structured(value),
        Value::String(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
        Value::Array(items) if items.iter().all(is_media) => {
            CallToolResult::success(items.iter().filter_map(media).collect())
        }
        other if is_media(&other) => CallToolResult::success(media(&other).into_iter().collect()),
        other => CallToolResult::success(vec![ContentBlock::text(other.to_string())]),
    }
}

/// The answer that stands in for a value not sent whole (`text`, and `value`, the reference or
/// the cut value), valid for a client that checks it against the tool's `output_schema`:
/// structured when `value` conforms to it, else an error result whose text says the call ran.
fn instead_of_the_value(
    text: String,
    value: Value,
    output_schema: Option<&JsonObject>,
) -> CallToolResult {
    let Some(schema) = output_schema else {
        return CallToolResult::success(vec![ContentBlock::text(text)]);
    };
    let conforms = value.is_object()
        && jsonschema::validator_for(&Value::Object(schema.clone()))
            .is_ok_and(|validator| validator.is_valid(&value));
    if conforms {
        let mut answer = CallToolResult::structured(value);
        answer.content = vec![ContentBlock::text(text)];
        return answer;
    }
    CallToolResult::error(vec![ContentBlock::text(format!(
        "The call succeeded. Its answer is marked as an error only because the tool's output schema cannot describe a result that was not sent whole.\n{text}"
    ))])
}

/// An image or audio item as the sandbox shows one (`{ type, data, mimeType }`).
fn is_media(value: &Value) -> bool {
    media(value).is_some()
}

fn media(value: &Value) -> Option<ContentBlock> {
    let kind = value.get("type")?.as_str()?;
    let data = value.get("data")?.as_str()?;
    let mime = value.get("mimeType")?.as_str()?;
    match kind {
        "image" => Some(ContentBlock::image(data, mime)),
        "audio" => Some(ContentBlock::audio(data, mime)),
        _ => None,
    }
}

fn failed(envelope: &ExecuteEnvelope) -> CallToolResult {
    let message = match &envelope.error {
        Some(error) if error.code == ErrorCode::RuntimeError => {
            without_script_position(&error.message).to_string()
        }
        Some(error) => error.message.clone(),
        None => match envelope.status {
            Status::Cancelled => "the call was cancelled".to_string(),
            _ => "the call did not finish".to_string(),
        },
    };
    CallToolResult::error(vec![ContentBlock::text(message)])
}

/// An error thrown in the one-call script without what only a script's author could use: the
/// client wrote no script, so "Uncaught" and a line and column in the hub's own script would
/// only mislead it.
fn without_script_position(message: &str) -> &str {
    let message = message.strip_prefix("Uncaught ").unwrap_or(message);
    match message.rfind(" (line ") {
        Some(at) if message.ends_with(')') && message[at..].contains(", column ") => &message[..at],
        _ => message,
    }
}

/// The answer to a call that waits for a person: an error result (so no client takes it for
/// the tool's output) that says what waits, how the person decides, and what to do then.
fn needs_a_person(envelope: &ExecuteEnvelope, name: &str) -> CallToolResult {
    let run_id = &envelope.run_id;
    waiting_on_the_person(
        envelope,
        "This call did not run: a person must decide on it first.",
        "approval page",
        format!(
            "An approval page opened in the user's browser; `capabilities hub approve {run_id}` in a terminal works too. Tell the user."
        ),
        format!(
            "Ask the user to run `capabilities hub approve {run_id}` (or `hub deny`) in a terminal."
        ),
        format!(
            "Once they allowed it, call {name} again with exactly the same arguments: it runs then, once."
        ),
    )
}

/// The answer to a call that waits for the person to sign a connection in: an error result
/// that says which, how they sign in, and that the same call runs once they have. Never the
/// page itself: that is for the person.
fn needs_a_sign_in(envelope: &ExecuteEnvelope, name: &str) -> CallToolResult {
    let commands = envelope
        .pending
        .iter()
        .filter(|pending| pending.kind == PendingKind::Connection)
        .filter_map(|pending| {
            let source = pending.address.as_deref()?;
            let login = login_arguments(source, pending.connection.as_deref());
            Some(format!("`capabilities source login {login}`"))
        })
        .collect::<Vec<_>>()
        .join(", ");
    waiting_on_the_person(
        envelope,
        "This call did not run: the user must sign in first.",
        "sign-in page",
        format!(
            "A sign-in page opened in the user's browser; {commands} in a terminal works too. Tell the user."
        ),
        format!("Ask the user to run {commands} in a terminal."),
        format!("Once they have signed in, call {name} again with exactly the same arguments."),
    )
}

/// The error result (so no client takes it for the tool's output) for a call that waits on the
/// person: `first` says what waits, then each pending item, then `opened` when the hub opened
/// its `page` in the user's browser (else `otherwise`), then `then`: what to do once they acted.
fn waiting_on_the_person(
    envelope: &ExecuteEnvelope,
    first: &str,
    page: &str,
    opened: String,
    otherwise: String,
    then: String,
) -> CallToolResult {
    let mut lines = vec![first.to_string()];
    lines.extend(envelope.pending.iter().map(|p| format!("- {}", p.summary)));
    lines.push(if page_opened(envelope, page) {
        opened
    } else {
        otherwise
    });
    lines.push(then);
    CallToolResult::error(vec![ContentBlock::text(lines.join("\n"))])
}

/// Whether the hub opened a `page` (an "approval page", a "sign-in page") in the user's browser
/// for a call the run waits on, as its pending item's message says.
fn page_opened(envelope: &ExecuteEnvelope, page: &str) -> bool {
    envelope
        .pending
        .iter()
        .any(|p| p.message.as_deref().is_some_and(|m| m.contains(page)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::{EnvelopeError, Pending, PendingKind};

    fn done(value: Value) -> ExecuteEnvelope {
        let mut envelope = ExecuteEnvelope::new("run_1", Status::Completed, Vec::new());
        envelope.result = Some(value);
        envelope
    }

    fn any_object() -> JsonObject {
        match json!({ "type": "object" }) {
            Value::Object(schema) => schema,
            _ => JsonObject::new(),
        }
    }

    fn text(result: &CallToolResult) -> String {
        result
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect()
    }

    #[test]
    fn an_object_is_structured_content_when_the_tool_declares_a_schema() {
        let value = json!({ "count": 2 });
        let with = result(&done(value.clone()), "t", Some(&any_object()));
        assert_eq!(with.structured_content, Some(value.clone()));
        let without = result(&done(value), "t", None);
        assert_eq!(without.structured_content, None);
        assert_eq!(text(&without), r#"{"count":2}"#);
    }

    #[test]
    fn text_stays_text_and_an_image_stays_an_image() {
        assert_eq!(text(&result(&done(json!("hello")), "t", None)), "hello");
        let image = result(
            &done(json!({ "type": "image", "data": "AAAA", "mimeType": "image/png" })),
            "t",
            None,
        );
        assert!(image.content[0].as_image().is_some(), "{image:?}");
    }

    #[test]
    fn a_failure_is_an_error_with_the_runs_message() {
        let mut envelope = ExecuteEnvelope::new("run_1", Status::Failed, Vec::new());
        envelope.error = Some(EnvelopeError::new(ErrorCode::ToolError, "no such repo"));
        let answer = result(&envelope, "t", Some(&any_object()));
        assert_eq!(answer.is_error, Some(true));
        assert_eq!(text(&answer), "no such repo");
    }

    #[test]
    fn a_call_waiting_for_a_person_says_how_to_decide_and_to_call_again() {
        let mut envelope = ExecuteEnvelope::new("run_9", Status::AwaitingApproval, Vec::new());
        envelope.pending.push(Pending {
            id: "1".into(),
            kind: PendingKind::Approval,
            address: Some("counter.publish".into()),
            summary: "counter.publish({ key: \"b\" })".into(),
            message: None,
            connection: None,
        });
        let answer = result(&envelope, "counter_publish", None);
        assert_eq!(answer.is_error, Some(true));
        let said = text(&answer);
        assert!(said.contains("capabilities hub approve run_9"), "{said}");
        assert!(
            said.contains("call counter_publish again with exactly the same arguments"),
            "{said}"
        );
        assert!(said.contains("counter.publish({ key: \"b\" })"), "{said}");
    }

    #[test]
    fn a_call_waiting_for_a_sign_in_says_how_to_give_it_and_to_call_again() {
        let mut envelope = ExecuteEnvelope::new("run_7", Status::AwaitingConnection, Vec::new());
        envelope.pending.push(Pending {
            id: "run_7/h".into(),
            kind: PendingKind::Connection,
            address: Some("h".into()),
            summary: "`h` waits for a sign-in: it was never signed in".into(),
            message: Some("A sign-in page for `h` opened in the user's browser.".into()),
            connection: Some("work".into()),
        });
        let answer = result(&envelope, "h_echo", None);
        assert_eq!(answer.is_error, Some(true));
        let said = text(&answer);
        for expected in [
            "the user must sign in first",
            "`h` waits for a sign-in",
            "A sign-in page opened in the user's browser",
            "`capabilities source login h --connection work`",
            "call h_echo again with exactly the same arguments",
        ] {
            assert!(said.contains(expected), "{expected}: {said}");
        }
        assert!(!said.contains("execute"), "no code-mode words: {said}");
    }

    #[test]
    fn an_error_in_the_hubs_own_script_does_not_point_into_it() {
        let mut envelope = ExecuteEnvelope::new("run_2", Status::Failed, Vec::new());
        envelope.error = Some(EnvelopeError::new(
            ErrorCode::RuntimeError,
            "Uncaught TypeError: hub.read pages arrays (line 1, column 18)",
        ));
        let answer = result(&envelope, READ_RESULT, None);
        assert_eq!(text(&answer), "TypeError: hub.read pages arrays");
    }
}
