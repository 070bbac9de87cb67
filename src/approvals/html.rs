//! The approval page's HTML, rendered on the server from the store's approvals: no script, no
//! external asset, one inline style sheet. Every value that came from a tool, a source, a policy
//! or a script (addresses, connections, argument previews, reasons, run ids) goes through
//! [`escape`], so a tool argument like `<script>` shows as text. Previews are the store's, which
//! the bridge redacted before recording them: the page never sees raw arguments.

use crate::printable;
use crate::runs::{Approval, Decision};

/// `&`, `<`, `>`, `"` and `'` as entities: enough for text and for quoted attribute values.
/// First, every character that would read otherwise than it is (a right-to-left override, an
/// instruction spelled in invisible tag characters) is shown as its `\u` escape, as on a
/// terminal ([`printable::escaped`]).
pub fn escape(text: &str) -> String {
    let text = printable::escaped(text);
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b}\
h1{font-size:1.4rem}code,pre{font-family:ui-monospace,monospace}pre{background:#f3f3f3;padding:.6rem;white-space:pre-wrap;word-break:break-all}.reason{white-space:pre-wrap}\
.call{border:1px solid #ccc;border-radius:6px;padding:0 1rem;margin:1rem 0}dt{font-weight:600}dd{margin:0 0 .5rem 0}\
button{font-size:1rem;padding:.4rem .9rem;margin:.2rem .4rem .2rem 0;cursor:pointer}.deny{color:#a00}.note{color:#555;font-size:.9rem}";

fn document(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\">\
         <title>{} · capabilities</title><style>{STYLE}</style></head><body>{body}</body></html>\n",
        escape(title)
    )
}

/// "in 29 minutes", rounded up, so a call is never shown with less time than it has.
fn time_left(expires_at_ms: u64, now_ms: u64) -> String {
    let left_ms = expires_at_ms.saturating_sub(now_ms);
    match left_ms.div_ceil(60_000) {
        0 => "expired".into(),
        1 => "in less than a minute".into(),
        minutes => format!("in {minutes} minutes"),
    }
}

fn call(approval: &Approval, now_ms: u64) -> String {
    let connection = approval
        .connection
        .as_deref()
        .map(escape)
        .unwrap_or_else(|| "the default".into());
    let state = match (&approval.decision, &approval.decided_by) {
        (Some(decision), by) => format!(
            "decided: {} ({})",
            label(*decision),
            escape(by.as_deref().unwrap_or("unknown channel"))
        ),
        (None, _) => format!("expires {}", time_left(approval.expires_at_ms, now_ms)),
    };
    // The preview cut the arguments: all of them are one click away, so nobody decides on a
    // part they could not read.
    let whole = approval
        .whole
        .as_deref()
        .map(|whole| {
            format!(
                "<details class=\"whole\"><summary>Show all of the arguments</summary><pre>{}</pre></details>",
                escape(whole)
            )
        })
        .unwrap_or_default();
    format!(
        "<div class=\"call\"><dl><dt>Tool</dt><dd><code class=\"address\">{}</code> (call {})</dd>\
         <dt>Connection</dt><dd class=\"connection\">{connection}</dd>\
         <dt>Arguments</dt><dd><pre class=\"preview\">{}</pre>{whole}</dd>\
         <dt>Why it asks</dt><dd class=\"reason\">{}</dd>\
         <dt>Status</dt><dd class=\"state\">{state}</dd></dl></div>",
        escape(&approval.address),
        approval.seq,
        escape(&approval.preview),
        escape(&approval.reason),
    )
}

fn label(decision: Decision) -> &'static str {
    match decision {
        Decision::AllowOnce => "allowed once",
        Decision::AllowRun => "allowed for the rest of this run",
        Decision::AllowAlways => "always allowed",
        Decision::Deny => "denied",
    }
}

fn addresses(approvals: &[Approval]) -> String {
    let mut names: Vec<String> = approvals
        .iter()
        .map(|a| format!("<code>{}</code>", escape(&a.address)))
        .collect();
    names.dedup();
    names.join(", ")
}

fn terminal_hint(run_id: &str) -> String {
    format!(
        "<p class=\"note\">From a terminal: <code>capabilities hub approve {0}</code> or <code>capabilities hub deny {0}</code>.</p>",
        escape(run_id)
    )
}

/// The page for calls waiting on a person: each call, then the four choices for all of them.
pub fn ask(
    run_id: &str,
    started_by: Option<&str>,
    approvals: &[Approval],
    csrf: &str,
    now_ms: u64,
) -> String {
    let calls: String = approvals.iter().map(|a| call(a, now_ms)).collect();
    let these = if approvals.len() == 1 {
        "this call"
    } else {
        "these calls"
    };
    let body = format!(
        "<h1>An agent asks to run {}</h1>\
         <p>Run <code>{}</code>{} is paused until you decide. Your choice applies to {these}.</p>{calls}\
         <form method=\"post\"><input type=\"hidden\" name=\"csrf\" value=\"{}\">\
         <button name=\"decision\" value=\"allow_once\">Allow once</button>\
         <button name=\"decision\" value=\"allow_run\">Allow for this run</button>\
         <button name=\"decision\" value=\"allow_always\">Always allow…</button>\
         <button name=\"decision\" value=\"deny\" class=\"deny\">Deny</button></form>\
         <p class=\"note\">“Allow for this run” also allows later calls of the same tool in this run; \
         “Always allow” adds a rule to your policy (you confirm it next).</p>{}",
        addresses(approvals),
        escape(run_id),
        started_by
            .map(|client| format!(", started by <code>{}</code>,", escape(client)))
            .unwrap_or_default(),
        escape(csrf),
        terminal_hint(run_id),
    );
    document("Approve a tool call", &body)
}

/// The confirmation "always allow" needs, since it changes the policy of every later run.
pub fn confirm_always(
    run_id: &str,
    approvals: &[Approval],
    csrf: &str,
    config_file: &str,
) -> String {
    let body = format!(
        "<h1>Always allow {0}?</h1>\
         <p>This allows {0} from now on, in every run, without asking: a rule \
         <code>action = \"allow\"</code> is added to <code>{1}</code>. It also allows the waiting call of run <code>{2}</code>.</p>\
         <form method=\"post\"><input type=\"hidden\" name=\"csrf\" value=\"{3}\"><input type=\"hidden\" name=\"confirm\" value=\"yes\">\
         <button name=\"decision\" value=\"allow_always\">Yes, always allow</button></form>\
         <p><a href=\"\">Back to the choices</a></p>",
        addresses(approvals),
        escape(config_file),
        escape(run_id),
        escape(csrf),
    );
    document("Always allow?", &body)
}

/// What the person sees after deciding.
pub fn decided(run_id: &str, decided: &[Approval], decision: Decision, now_ms: u64) -> String {
    let calls: String = decided.iter().map(|a| call(a, now_ms)).collect();
    let next = if decision.allows() {
        "runs the call"
    } else {
        "gets a policy_denied error for the call and goes on without it"
    };
    let body = format!(
        "<h1 id=\"outcome\">Done: {} {}</h1>{calls}\
         <p id=\"continue\">The agent can continue: when it resumes run <code>{}</code> it {next}. You can close this page.</p>",
        label(decision),
        addresses(decided),
        escape(run_id),
    );
    document("Decided", &body)
}

/// The calls of this link were decided before (another channel, or this page earlier).
pub fn already_decided(run_id: &str, approvals: &[Approval], now_ms: u64) -> String {
    let calls: String = approvals.iter().map(|a| call(a, now_ms)).collect();
    let body = format!(
        "<h1 id=\"outcome\">Already decided</h1>{calls}<p id=\"continue\">Nothing is waiting on this page any more; \
         the agent can continue run <code>{}</code>.</p>",
        escape(run_id)
    );
    document("Already decided", &body)
}

/// A refusal or a failure, with what to do instead.
pub fn problem(title: &str, message: &str) -> String {
    let body = format!(
        "<h1 id=\"outcome\">{}</h1><p id=\"problem\">{}</p>\
         <p class=\"note\">You can always decide from a terminal: <code>capabilities hub runs --pending</code> lists the waiting runs, \
         <code>capabilities hub approve RUN_ID</code> approves one.</p>",
        escape(title),
        escape(message)
    );
    document(title, &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hostile() -> Approval {
        Approval {
            run_id: "run_<i>x</i>".into(),
            seq: 3,
            address: "gh.<script>alert(1)</script>".into(),
            connection: Some("work\"><img src=x onerror=alert(1)>".into()),
            preview: "{ title: \"</pre><script>alert('p')</script>\" }".into(),
            whole: Some(
                "{ title: \"</pre><script>alert('w')</script>\", body: \"all of it\" }".into(),
            ),
            // A changed tool's diff, with a sentence in invisible tag characters after it.
            reason: "policy & <b>reason</b>\u{E0020}\u{E0072}\u{200B}".into(),
            created_at_ms: 0,
            expires_at_ms: 30 * 60_000,
            decision: None,
            decided_at_ms: None,
            decided_by: None,
            call_digest: "d".into(),
            consumed_at_ms: None,
            tool_version: None,
        }
    }

    #[test]
    fn every_value_from_a_tool_or_script_is_escaped() {
        let approval = hostile();
        let pages = [
            ask(
                &approval.run_id,
                Some("<i>agent</i> · token ci"),
                std::slice::from_ref(&approval),
                "c\"srf",
                0,
            ),
            confirm_always(
                &approval.run_id,
                std::slice::from_ref(&approval),
                "c\"srf",
                "/home/<me>/config.toml",
            ),
            decided(
                &approval.run_id,
                std::slice::from_ref(&approval),
                Decision::Deny,
                0,
            ),
            already_decided(&approval.run_id, std::slice::from_ref(&approval), 0),
            problem("<t>", "<m>"),
        ];
        for page in &pages {
            for raw in [
                "<script", "<img", "<b>", "<i>", "<me>", "<t>", "<m>", "c\"srf",
            ] {
                assert!(
                    !page.contains(raw),
                    "`{raw}` reached the page unescaped:\n{page}"
                );
            }
        }
        assert!(pages[0].contains("gh.&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(pages[0].contains("&lt;/pre&gt;&lt;script&gt;alert(&#39;p&#39;)"));
        assert!(pages[0].contains("&lt;/pre&gt;&lt;script&gt;alert(&#39;w&#39;)"));
        assert!(pages[0].contains("Show all of the arguments"));
        assert!(
            pages[0].contains(
                "policy &amp; &lt;b&gt;reason&lt;/b&gt;\\udb40\\udc20\\udb40\\udc72\\u200b"
            )
        );
        for page in &pages {
            assert!(
                !page
                    .chars()
                    .any(|c| crate::printable::is_deceptive(c) && c != '\n' && c != '\t'),
                "an invisible character reached the page:\n{page:?}"
            );
        }
    }

    #[test]
    fn the_ask_page_offers_four_choices_and_the_time_left() {
        let page = ask(
            "run_a",
            Some("claude · token ci"),
            &[hostile()],
            "tok",
            60_000,
        );
        assert!(
            page.contains("started by <code>claude · token ci</code>"),
            "{page}"
        );
        for choice in ["allow_once", "allow_run", "allow_always", "deny"] {
            assert!(
                page.contains(&format!("value=\"{choice}\"")),
                "{choice} missing"
            );
        }
        assert!(page.contains("expires in 29 minutes"), "{page}");
        assert!(page.contains("name=\"csrf\" value=\"tok\""));
    }

    #[test]
    fn time_left_rounds_up_and_ends() {
        assert_eq!(time_left(60_000, 0), "in less than a minute");
        assert_eq!(time_left(60_001, 0), "in 2 minutes");
        assert_eq!(time_left(5, 10), "expired");
    }
}
