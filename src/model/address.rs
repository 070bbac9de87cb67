//! Addresses (`namespace.tool`): turning upstream tool names into script-friendly lowerCamelCase
//! names, resolving collisions deterministically, and checking namespace names.

use std::collections::{BTreeMap, BTreeSet};

/// lowerCamelCase form of an upstream tool name: `create_issue`, `create-issue` and
/// `Create Issue` all become `createIssue`. Characters that cannot appear in a JavaScript
/// identifier separate words; a leading digit gets an underscore so the result stays an identifier.
pub fn tool_name(upstream: &str) -> String {
    let mut out = String::with_capacity(upstream.len());
    let segments = upstream
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '$'))
        .filter(|s| !s.is_empty());
    for (i, segment) in segments.enumerate() {
        if i == 0 {
            out.push_str(&lower_leading_capitals(segment));
        } else {
            let mut chars = segment.chars();
            if let Some(first) = chars.next() {
                out.push(first.to_ascii_uppercase());
                out.extend(chars);
            }
        }
    }
    if out.is_empty() {
        out.push_str("tool");
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    out
}

/// `API` → `api`, `URLFetch` → `urlFetch`, `Echo` → `echo`, `listTools` unchanged: the leading
/// run of capitals is lowered, except the last one when it starts the next word.
fn lower_leading_capitals(segment: &str) -> String {
    let chars: Vec<char> = segment.chars().collect();
    let run = chars.iter().take_while(|c| c.is_ascii_uppercase()).count();
    let lowered = if run > 1 && run < chars.len() && chars[run].is_ascii_lowercase() {
        run - 1
    } else {
        run
    };
    chars
        .iter()
        .enumerate()
        .map(|(i, c)| {
            if i < lowered {
                c.to_ascii_lowercase()
            } else {
                *c
            }
        })
        .collect()
}

/// Assigns each upstream name of one namespace a unique tool name. An upstream name that had
/// one in the namespace's previous listing (`before`: upstream name → tool name) keeps it: a
/// sibling that appears later (`Get Item` beside `get_item`) must not take over an address that
/// rules, tokens and people's decisions name. The rest does not depend on the order the
/// upstream listed its tools in: an upstream name that is already its own camelCase form takes
/// it, and the others take the base name in sorted order while it is free, later ones with a
/// number.
pub fn assign_tool_names<'a>(
    upstream_names: impl IntoIterator<Item = &'a str>,
    before: &BTreeMap<&str, &str>,
) -> BTreeMap<String, String> {
    let mut by_base: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for name in upstream_names {
        by_base
            .entry(callable(tool_name(name)))
            .or_default()
            .push(name);
    }
    let mut used: BTreeSet<String> = BTreeSet::new();
    let mut assigned = BTreeMap::new();
    for (base, group) in &by_base {
        for upstream in group {
            // Only a name this function could give it: the naming rules may have changed since.
            let kept = before.get(upstream).filter(|name| {
                name.strip_prefix(base.as_str())
                    .is_some_and(|n| n.chars().all(|c| c.is_ascii_digit()))
            });
            if let Some(name) = kept
                && !assigned.contains_key(*upstream)
                && used.insert(name.to_string())
            {
                assigned.insert(upstream.to_string(), name.to_string());
            }
        }
    }
    for (base, mut group) in by_base.clone() {
        group.sort_unstable();
        group.dedup();
        group.retain(|name| !assigned.contains_key(*name));
        // The exact match (if any) goes first so it takes the plain name.
        group.sort_by_key(|name| *name != base);
        for upstream in group {
            let name = if used.insert(base.clone()) {
                base.clone()
            } else {
                // A number never takes another group's base name.
                (2..)
                    .map(|n| format!("{base}{n}"))
                    .find(|candidate| {
                        !by_base.contains_key(candidate) && used.insert(candidate.clone())
                    })
                    .unwrap_or_default()
            };
            assigned.insert(upstream.to_string(), name);
        }
    }
    assigned
}

/// Names the language itself reads on any object: `await ns` reads `then`, JSON.stringify reads
/// `toJSON`, `String(ns)` reads `toString` and `valueOf`. The sandbox never exposes a tool under
/// one of them (those reads would call it), so a tool named like one gets `Tool` appended.
const PROBED_NAMES: &[&str] = &["then", "toJSON", "toString", "valueOf"];

fn callable(name: String) -> String {
    if PROBED_NAMES.contains(&name.as_str()) {
        format!("{name}Tool")
    } else {
        name
    }
}

/// JavaScript's reserved words (strict mode included) and the values no name may shadow:
/// neither a source's global nor a generated type may be called one of these.
pub(crate) const JS_RESERVED_WORDS: &[&str] = &[
    "break",
    "case",
    "catch",
    "class",
    "const",
    "continue",
    "debugger",
    "default",
    "delete",
    "do",
    "else",
    "enum",
    "export",
    "extends",
    "false",
    "finally",
    "for",
    "function",
    "if",
    "import",
    "in",
    "instanceof",
    "new",
    "null",
    "return",
    "super",
    "switch",
    "this",
    "throw",
    "true",
    "try",
    "typeof",
    "var",
    "void",
    "while",
    "with",
    "yield",
    "let",
    "static",
    "implements",
    "interface",
    "package",
    "private",
    "protected",
    "public",
    "await",
    "async",
    "undefined",
];

/// The globals of the sandbox: JavaScript's built-ins as QuickJS-ng defines them, the ones the
/// prelude adds, and names scripts rely on. A source named like one would hide it from scripts,
/// or (for the prelude's own) not be installed at all. A test reads the real list from a sandbox
/// run (`every_sandbox_global_is_refused_as_a_source_name`), so this cannot fall behind.
const SANDBOX_GLOBALS: &[&str] = &[
    // The prelude's.
    "hub",
    "console",
    "sleep",
    "setTimeout",
    "clearTimeout",
    "structuredClone",
    "TextEncoder",
    "TextDecoder",
    "atob",
    "btoa",
    "decodeBase64",
    "encodeBase64",
    "ToolError",
    "crypto",
    "performance",
    // The type `describe` gives a call's options argument.
    "CallOptions",
    // The language's.
    "arguments",
    "eval",
    "NaN",
    "Infinity",
    "globalThis",
    "Object",
    "Function",
    "Array",
    "Number",
    "Boolean",
    "String",
    "Symbol",
    "BigInt",
    "Math",
    "JSON",
    "Reflect",
    "Proxy",
    "Promise",
    "Date",
    "RegExp",
    "Map",
    "Set",
    "WeakMap",
    "WeakSet",
    "WeakRef",
    "FinalizationRegistry",
    "Iterator",
    "Error",
    "EvalError",
    "RangeError",
    "ReferenceError",
    "SyntaxError",
    "TypeError",
    "URIError",
    "InternalError",
    "AggregateError",
    "SuppressedError",
    "DOMException",
    "DisposableStack",
    "AsyncDisposableStack",
    "ArrayBuffer",
    "SharedArrayBuffer",
    "DataView",
    "Atomics",
    "Int8Array",
    "Uint8Array",
    "Uint8ClampedArray",
    "Int16Array",
    "Uint16Array",
    "Int32Array",
    "Uint32Array",
    "BigInt64Array",
    "BigUint64Array",
    "Float16Array",
    "Float32Array",
    "Float64Array",
    "parseInt",
    "parseFloat",
    "isNaN",
    "isFinite",
    "decodeURI",
    "decodeURIComponent",
    "encodeURI",
    "encodeURIComponent",
    "escape",
    "unescape",
    "queueMicrotask",
];

/// What every object inherits from Object.prototype, the global object included: a global of
/// that name would hide the inherited one from every bare reference in a script.
const OBJECT_PROTOTYPE_MEMBERS: &[&str] = &[
    "__proto__",
    "constructor",
    "toString",
    "toLocaleString",
    "valueOf",
    "hasOwnProperty",
    "isPrototypeOf",
    "propertyIsEnumerable",
    "__defineGetter__",
    "__defineSetter__",
    "__lookupGetter__",
    "__lookupSetter__",
];

/// Why a source name cannot be a namespace, or `None` when it can.
pub fn namespace_problem(name: &str) -> Option<String> {
    let mut chars = name.chars();
    let Some(first) = chars.next() else {
        return Some("a source name cannot be empty".into());
    };
    if !(first.is_ascii_alphabetic() || first == '_') {
        return Some(format!(
            "source name `{name}` must start with a letter or `_`, because scripts use it as a JavaScript global (try `{}`)",
            tool_name(name)
        ));
    }
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Some(format!(
            "source name `{name}` may only contain letters, digits and `_`, because scripts use it as a JavaScript global (try `{}`)",
            tool_name(name)
        ));
    }
    let why = if JS_RESERVED_WORDS.contains(&name) {
        "it is a JavaScript reserved word".to_string()
    } else if SANDBOX_GLOBALS.contains(&name) {
        format!("scripts already have a global `{name}`")
    } else if OBJECT_PROTOTYPE_MEMBERS.contains(&name) {
        format!(
            "every JavaScript object inherits `{name}` from Object.prototype, and a global of that name would hide it"
        )
    } else {
        return None;
    };
    let base = name.trim_matches('_');
    let suggestion = if base.is_empty() {
        "source".to_string()
    } else {
        format!("{base}_source")
    };
    Some(format!(
        "source name `{name}` is reserved in the sandbox: {why}; pick another, e.g. `{suggestion}`"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn camel_cases_common_shapes() {
        assert_eq!(tool_name("create_issue"), "createIssue");
        assert_eq!(tool_name("get-sum"), "getSum");
        assert_eq!(tool_name("echo"), "echo");
        assert_eq!(tool_name("Create Issue"), "createIssue");
        assert_eq!(tool_name("browser_navigate_back"), "browserNavigateBack");
        assert_eq!(tool_name("2fa.check"), "_2faCheck");
        assert_eq!(tool_name("listAllTools"), "listAllTools");
        assert_eq!(tool_name("--"), "tool");
        assert_eq!(tool_name("API-post-search"), "apiPostSearch");
        assert_eq!(tool_name("URLFetch"), "urlFetch");
        assert_eq!(tool_name("get_URL"), "getURL");
    }

    #[test]
    fn collisions_are_resolved_the_same_in_any_order() {
        let a = assign_tool_names(["get_sum", "getSum", "get-sum"], &BTreeMap::new());
        let b = assign_tool_names(["get-sum", "get_sum", "getSum"], &BTreeMap::new());
        assert_eq!(a, b);
        assert_eq!(a["getSum"], "getSum");
        assert_eq!(a["get-sum"], "getSum2");
        assert_eq!(a["get_sum"], "getSum3");
    }

    #[test]
    fn a_name_keeps_its_address_when_a_sibling_appears_that_would_sort_first() {
        let first = assign_tool_names(["get_item"], &BTreeMap::new());
        assert_eq!(first["get_item"], "getItem");
        let before: BTreeMap<&str, &str> = first
            .iter()
            .map(|(upstream, name)| (upstream.as_str(), name.as_str()))
            .collect();
        for listing in [
            ["Get Item", "get_item", "getItem"],
            ["getItem", "Get Item", "get_item"],
        ] {
            let now = assign_tool_names(listing, &before);
            assert_eq!(now["get_item"], "getItem", "{now:?}");
            // The rest as ever: the exact camelCase name first.
            assert_eq!(now["getItem"], "getItem2", "{now:?}");
            assert_eq!(now["Get Item"], "getItem3", "{now:?}");
        }
        // Without the history, sorted order decides, as on a fresh machine.
        assert_eq!(
            assign_tool_names(["Get Item", "get_item"], &BTreeMap::new())["Get Item"],
            "getItem"
        );
        // A remembered numbered name stays, even where a new tool's own name is that number.
        let before = BTreeMap::from([("get-sum", "getSum2"), ("get_sum", "getSum")]);
        let now = assign_tool_names(["get_sum", "get-sum", "getSum2"], &before);
        assert_eq!(now["get-sum"], "getSum2");
        assert_eq!(now["get_sum"], "getSum");
        assert_ne!(now["getSum2"], "getSum2");
        let unique: BTreeSet<&String> = now.values().collect();
        assert_eq!(unique.len(), 3);
        // A name the rules would not give (a renamed rule since) is not kept.
        let now = assign_tool_names(["get_sum"], &BTreeMap::from([("get_sum", "other")]));
        assert_eq!(now["get_sum"], "getSum");
    }

    #[test]
    fn numbered_names_skip_existing_ones() {
        let a = assign_tool_names(["a_b", "aB", "aB2"], &BTreeMap::new());
        let values: BTreeSet<&String> = a.values().collect();
        assert_eq!(values.len(), 3);
        assert_eq!(a["aB2"], "aB2");
        assert_eq!(a["a_b"], "aB3");
    }

    #[test]
    fn namespace_rules() {
        assert!(namespace_problem("github").is_none());
        assert!(namespace_problem("my_server2").is_none());
        assert!(
            namespace_problem("my-server")
                .unwrap()
                .contains("my_server")
                || namespace_problem("my-server").unwrap().contains("myServer")
        );
        assert!(namespace_problem("2x").is_some());
        assert!(namespace_problem("hub").unwrap().contains("reserved"));
        assert!(namespace_problem("").is_some());
    }

    #[test]
    fn object_prototype_members_are_refused_with_a_reason_and_a_name() {
        for name in OBJECT_PROTOTYPE_MEMBERS {
            let problem = namespace_problem(name).unwrap_or_default();
            assert!(problem.contains("Object.prototype"), "{problem}");
        }
        assert_eq!(
            namespace_problem("__proto__").as_deref(),
            Some(
                "source name `__proto__` is reserved in the sandbox: every JavaScript object inherits `__proto__` from Object.prototype, and a global of that name would hide it; pick another, e.g. `proto_source`"
            )
        );
        assert!(
            namespace_problem("constructor")
                .unwrap_or_default()
                .ends_with("e.g. `constructor_source`")
        );
        assert!(
            namespace_problem("Map")
                .unwrap_or_default()
                .contains("scripts already have a global `Map`")
        );
        assert!(
            namespace_problem("class")
                .unwrap_or_default()
                .contains("reserved word")
        );
        assert!(namespace_problem("toStringly").is_none());
    }

    #[test]
    fn tools_named_like_probed_members_stay_callable() {
        let names = assign_tool_names(
            ["then", "to_string", "valueOf", "toJSON", "constructor"],
            &BTreeMap::new(),
        );
        assert_eq!(names["then"], "thenTool");
        assert_eq!(names["to_string"], "toStringTool");
        assert_eq!(names["valueOf"], "valueOfTool");
        assert_eq!(names["toJSON"], "toJSONTool");
        assert_eq!(names["constructor"], "constructor");
    }
}
