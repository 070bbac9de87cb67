//! What a tool name or a request does to its object, in four kinds: create, read, update,
//! delete. A tool name's kind is its first verb (`createIssue`, `jiraAddWorklog`, `kvPut`), or
//! for a name without one (`xadd`, `run`) the first word of its description ("Add an entry …");
//! a request's is its first verb, or read when it opens as a question. "Add a label" then prefers
//! `createLabel` over its siblings `updateLabel` and `deleteLabel`, which match as many words.

use super::tokens::for_each_token;

/// A set of kinds, one bit each.
pub(super) type Kinds = u8;

pub(super) const CREATE: Kinds = 1;
pub(super) const READ: Kinds = 2;
pub(super) const UPDATE: Kinds = 4;
pub(super) const DELETE: Kinds = 8;

/// Verbs of tool names and requests with their kinds, sorted for binary search. Kept to verbs
/// that mean one of the four whatever the object; "set" and "upsert" mean two.
const VERBS: &[(&str, Kinds)] = &[
    ("add", CREATE),
    ("append", CREATE),
    ("archive", UPDATE),
    ("assign", UPDATE),
    ("attach", CREATE),
    ("browse", READ),
    ("build", CREATE),
    ("cancel", DELETE),
    ("change", UPDATE),
    ("check", READ),
    ("clear", DELETE),
    ("close", UPDATE),
    ("comment", CREATE),
    ("complete", UPDATE),
    ("count", READ),
    ("create", CREATE),
    ("delete", DELETE),
    ("describe", READ),
    ("destroy", DELETE),
    ("detach", DELETE),
    ("draft", CREATE),
    ("drop", DELETE),
    ("edit", UPDATE),
    ("erase", DELETE),
    ("fetch", READ),
    ("find", READ),
    ("generate", CREATE),
    ("get", READ),
    ("insert", CREATE),
    ("inspect", READ),
    ("link", CREATE),
    ("list", READ),
    ("lookup", READ),
    ("make", CREATE),
    ("mark", UPDATE),
    ("modify", UPDATE),
    ("move", UPDATE),
    ("new", CREATE),
    ("open", CREATE),
    ("patch", UPDATE),
    ("peek", READ),
    ("post", CREATE),
    ("publish", CREATE),
    ("purge", DELETE),
    ("push", CREATE),
    ("put", CREATE),
    ("query", READ),
    ("read", READ),
    ("register", CREATE),
    ("remove", DELETE),
    ("rename", UPDATE),
    ("replace", UPDATE),
    ("reply", CREATE),
    ("reschedule", UPDATE),
    ("resolve", UPDATE),
    ("retrieve", READ),
    ("revoke", DELETE),
    ("save", CREATE),
    ("search", READ),
    ("see", READ),
    ("set", CREATE | UPDATE),
    ("show", READ),
    ("submit", CREATE),
    ("switch", UPDATE),
    ("tag", CREATE),
    ("toggle", UPDATE),
    ("turn", UPDATE),
    ("unassign", DELETE),
    ("uninstall", DELETE),
    ("unlink", DELETE),
    ("unsubscribe", DELETE),
    ("update", UPDATE),
    ("upload", CREATE),
    ("upsert", CREATE | UPDATE),
    ("view", READ),
    ("write", CREATE | UPDATE),
];

/// Words that open a question: the request reads.
const QUESTION_WORDS: &[&str] = &[
    "any", "are", "did", "do", "does", "how", "is", "what", "when", "where", "which", "who",
    "whose", "why",
];

/// The kinds of a verb in any of its forms ("adds", "added", "adding", "creating"), or none for
/// any other word.
pub(super) fn of_word(word: &str) -> Kinds {
    let lookup = |verb: &str| {
        VERBS
            .binary_search_by(|(v, _)| (*v).cmp(verb))
            .map_or(0, |i| VERBS[i].1)
    };
    let base = lookup(word);
    if base != 0 {
        return base;
    }
    for suffix in ["s", "es", "ed", "d", "ing"] {
        if let Some(stem) = word.strip_suffix(suffix) {
            let kinds = lookup(stem);
            if kinds != 0 {
                return kinds;
            }
            if suffix == "ing" {
                let kinds = lookup(&format!("{stem}e"));
                if kinds != 0 {
                    return kinds;
                }
            }
        }
    }
    0
}

/// The HTTP method that tools generated from an API description put before any operation
/// (`API-post-search`), where the next word is the verb that counts. Only POST: the other
/// methods say what they do, and the word after them is their object, often one that is also a
/// verb (`delete_comment`, `get_tags`, `get_links`).
const GENERIC_HTTP_METHOD: &str = "post";

/// The kinds of the first verb among `words`, or none.
pub(super) fn of_name<'a>(words: impl IntoIterator<Item = &'a str>) -> Kinds {
    let mut words = words.into_iter().peekable();
    while let Some(word) = words.next() {
        let kinds = of_word(word);
        if kinds == 0 {
            continue;
        }
        if word == GENERIC_HTTP_METHOD {
            let next = words.peek().map_or(0, |w| of_word(w));
            if next != 0 {
                return next;
            }
        }
        return kinds;
    }
    0
}

/// The kinds of a tool: its name's, or when the name has no verb, those of the description's
/// first word, which for such tools is usually the verb the name abbreviates ("Add …" for
/// `xadd`). Only the first word: a verb further in describes something else ("Returns the
/// fields to update").
pub(super) fn of_tool<'a>(name: impl IntoIterator<Item = &'a str>, description: &str) -> Kinds {
    let kinds = of_name(name);
    if kinds != 0 {
        return kinds;
    }
    // Split off the first word before tokenising: descriptions run to thousands of words.
    let Some(word) = description
        .split(|c: char| !c.is_alphanumeric())
        .find(|w| !w.is_empty())
    else {
        return 0;
    };
    let mut first = 0;
    let mut seen = false;
    for_each_token(word, |token| {
        if !seen {
            seen = true;
            first = of_word(token);
        }
    });
    first
}

/// The kinds a request asks for: read for a question ("what changes are staged"), else its
/// first verb's, or none.
pub(super) fn of_request(words: &[String]) -> Kinds {
    match words.first() {
        Some(first) if QUESTION_WORDS.binary_search(&first.as_str()).is_ok() => READ,
        _ => of_name(words.iter().map(String::as_str)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_lists_are_sorted_for_binary_search() {
        assert!(VERBS.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(QUESTION_WORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn names_and_requests_have_kinds() {
        assert_eq!(of_name(["jira", "add", "worklog"]), CREATE);
        assert_eq!(of_name(["kv", "put"]), CREATE);
        assert_eq!(of_name(["api", "post", "search"]), READ);
        assert_eq!(of_name(["api", "post", "page"]), CREATE);
        assert_eq!(of_name(["echo"]), 0);
        // The object of a method that means what it says is not a verb of its own.
        assert_eq!(of_name(["delete", "comment"]), DELETE);
        assert_eq!(of_name(["asana", "get", "tags"]), READ);
        assert_eq!(of_word("creating"), CREATE);
        assert_eq!(of_word("lists"), READ);
        assert_eq!(of_word("added"), CREATE);
        assert_eq!(of_tool(["xadd"], "Add an entry to a stream"), CREATE);
        assert_eq!(of_tool(["delete", "comment"], "Adds nothing"), DELETE);
        assert_eq!(of_tool(["echo"], "Returns the text; can create nothing"), 0);
        let words = |s: &str| s.split(' ').map(str::to_string).collect::<Vec<_>>();
        assert_eq!(of_request(&words("add a label")), CREATE);
        assert_eq!(of_request(&words("how many documents")), READ);
        assert_eq!(of_request(&words("spotify playlists")), 0);
    }
}
