//! The text of the details view of one run, as lines tagged with what they are, so the state can
//! count them (to scroll) and the renderer can style them, both from one source.

use serde_json::Value;

use super::format;
use super::snapshot::RunDetail;

/// What a line of the details view is, for its style.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Heading,
    Text,
    /// A line of the script, with its number.
    Code,
    Good,
    Bad,
    Quiet,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DetailLine {
    pub kind: Kind,
    pub text: String,
}

/// One line of the view; what an upstream or a script wrote in it is shown as escapes where
/// it would drive the terminal or hide text ([`crate::printable::escaped`]).
fn line(kind: Kind, text: impl Into<String>) -> DetailLine {
    let text = text.into();
    DetailLine {
        kind,
        text: crate::printable::escaped(&text).into_owned(),
    }
}

/// Every line of the details view: script, calls with timings, approvals, logs, error, envelope
/// and audit trail.
pub fn lines(detail: &RunDetail) -> Vec<DetailLine> {
    let mut out = vec![line(Kind::Heading, "Script")];
    let code_lines: Vec<&str> = detail.run.code.lines().collect();
    let number_width = code_lines.len().to_string().len();
    for (i, code) in code_lines.iter().enumerate() {
        out.push(line(
            Kind::Code,
            format!("{:>number_width$}  {code}", i + 1),
        ));
    }

    out.push(line(
        Kind::Heading,
        format!("Calls ({})", detail.journal.len()),
    ));
    if detail.journal.is_empty() {
        out.push(line(Kind::Quiet, "no calls ran"));
    }
    for call in &detail.journal {
        let connection = call
            .connection
            .as_deref()
            .map(|c| format!(" ({c})"))
            .unwrap_or_default();
        let (kind, outcome) = if call.ok {
            (Kind::Good, "ok")
        } else {
            (Kind::Bad, "failed")
        };
        out.push(line(
            kind,
            format!(
                "#{}  {}{connection}  {outcome}  {}",
                call.seq,
                call.address,
                format::duration(call.ms)
            ),
        ));
    }

    if !detail.approvals.is_empty() {
        out.push(line(
            Kind::Heading,
            format!("Approvals ({})", detail.approvals.len()),
        ));
        for approval in &detail.approvals {
            let (kind, state) = match (approval.decision, &approval.decided_by) {
                (Some(decision), by) => {
                    let by = by
                        .as_deref()
                        .map(|b| format!(" by {b}"))
                        .unwrap_or_default();
                    (
                        if decision.allows() {
                            Kind::Good
                        } else {
                            Kind::Bad
                        },
                        format!("{decision}{by}"),
                    )
                }
                (None, _) => (Kind::Text, "waiting for a decision".to_string()),
            };
            out.push(line(
                kind,
                format!(
                    "#{}  {}  {}  {state}",
                    approval.seq,
                    approval.address,
                    format::one_line(&approval.preview)
                ),
            ));
            // All of what the preview cut, so nobody decides on a part they could not read.
            if let Some(whole) = &approval.whole {
                out.push(line(
                    Kind::Text,
                    format!("    all of it: {}", format::one_line(whole)),
                ));
            }
            // A changed tool's reason carries the diff of its definition, line by line.
            for reason in approval.reason.lines() {
                out.push(line(Kind::Quiet, format!("    {reason}")));
            }
        }
    }

    let envelope = detail.run.envelope.as_ref();
    let logs: Vec<&str> = envelope
        .and_then(|e| e["logs"].as_array())
        .map(|l| l.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    out.push(line(Kind::Heading, format!("Logs ({})", logs.len())));
    if logs.is_empty() {
        out.push(line(Kind::Quiet, "no logs"));
    }
    out.extend(
        logs.iter()
            .flat_map(|l| l.lines())
            .map(|l| line(Kind::Text, l)),
    );

    if let Some(error) = envelope
        .and_then(|e| e.get("error"))
        .filter(|e| !e.is_null())
    {
        out.push(line(Kind::Heading, "Error"));
        let code = error["code"].as_str().unwrap_or("error");
        out.push(line(
            Kind::Bad,
            format!("{code}: {}", error["message"].as_str().unwrap_or("")),
        ));
        if let Some(hint) = error["hint"].as_str() {
            out.push(line(Kind::Quiet, hint));
        }
    }

    out.push(line(Kind::Heading, "Envelope"));
    match envelope {
        Some(envelope) => {
            let pretty = serde_json::to_string_pretty(envelope).unwrap_or_default();
            out.extend(pretty.lines().map(|l| line(Kind::Text, l)));
        }
        None => out.push(line(
            Kind::Quiet,
            "none yet: the run has not finished or paused",
        )),
    }

    if !detail.audit.is_empty() {
        out.push(line(
            Kind::Heading,
            format!("Audit ({})", detail.audit.len()),
        ));
        for audited in &detail.audit {
            out.push(line(
                Kind::Quiet,
                format!("{}  {}", audited.kind, audited.detail),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::fixtures::detail;

    #[test]
    fn every_section_is_there() {
        let lines = lines(&detail());
        let headings: Vec<&str> = lines
            .iter()
            .filter(|l| l.kind == Kind::Heading)
            .map(|l| l.text.as_str())
            .collect();
        assert_eq!(
            headings,
            [
                "Script",
                "Calls (1)",
                "Approvals (1)",
                "Logs (1)",
                "Envelope"
            ]
        );
        assert!(
            lines
                .iter()
                .any(|l| l.text == "#0  counter.write (default)  ok  12ms")
        );
    }
}
