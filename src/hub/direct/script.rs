//! The one-call script a direct call runs as: `return await ns.tool({…});` with the client's
//! arguments as a JSON literal, `hub.read` for [`READ_RESULT`](super::READ_RESULT), or
//! `hub.describe` for [`READ_SKILL`](super::READ_SKILL). The same
//! call always makes the same script, which is how a call repeated after a person allowed it
//! finds the run that waited for them.

use crate::error_text::echo;
use serde_json::{Map, Value};

use super::Target;
use crate::model::tool::canonical_json;

/// The options of `capabilities_read_result` besides `resultRef`, as `hub.read` names them.
const READ_OPTIONS: &[&str] = &["path", "fields", "offset"];

/// The script for calling `target` with `arguments`, or what is wrong with the arguments.
pub fn script(target: &Target, arguments: &Map<String, Value>) -> Result<String, String> {
    match target {
        Target::Tool { address } => {
            let (namespace, tool) = address
                .split_once('.')
                .ok_or_else(|| format!("`{}` is not a tool address", echo(address)))?;
            // JSON is a JavaScript expression; its keys are sorted, so equal arguments make
            // an equal script.
            let arguments = Value::Object(arguments.clone());
            let json = canonical_json(&arguments);
            // Except for one key: in an object literal `"__proto__": …` sets the prototype
            // instead of making a property, so the argument would vanish; `JSON.parse` keeps it.
            let expression = if has_proto_key(&arguments) {
                format!("JSON.parse({})", Value::String(json))
            } else {
                json
            };
            Ok(format!("return await {namespace}.{tool}({expression});"))
        }
        Target::ReadResult => read_script(arguments),
        Target::ReadSkill => read_skill_script(arguments),
    }
}

/// Whether an object anywhere in `value` has a `__proto__` key.
fn has_proto_key(value: &Value) -> bool {
    match value {
        Value::Object(map) => map
            .iter()
            .any(|(key, value)| key == "__proto__" || has_proto_key(value)),
        Value::Array(items) => items.iter().any(has_proto_key),
        _ => false,
    }
}

/// `hub.describe("skill:NAME")`, so a skill read in direct mode is what `describe` gives in
/// code mode, a changed source's skill withheld alike.
fn read_skill_script(arguments: &Map<String, Value>) -> Result<String, String> {
    if let Some(key) = arguments.keys().find(|k| *k != "name") {
        return Err(format!(
            "unknown argument `{key}`; the only argument is name"
        ));
    }
    match arguments.get("name") {
        Some(Value::String(name)) if !name.trim().is_empty() => {
            let name = name.trim();
            let name = name.strip_prefix(crate::skills::PREFIX).unwrap_or(name);
            let target = Value::String(format!("{}{name}", crate::skills::PREFIX));
            Ok(format!("return await hub.describe({target});"))
        }
        _ => {
            Err("`name` is missing: pass a skill's name as this tool's description lists it".into())
        }
    }
}

fn read_script(arguments: &Map<String, Value>) -> Result<String, String> {
    let result_ref = match arguments.get("resultRef") {
        Some(Value::String(r)) => r,
        Some(_) => {
            return Err("`resultRef` must be a string (the resultRef a tool's answer gave)".into());
        }
        None => {
            return Err("`resultRef` is missing: pass the resultRef a tool's answer gave".into());
        }
    };
    let mut options = Map::new();
    for (key, value) in arguments {
        if key == "resultRef" {
            continue;
        }
        if !READ_OPTIONS.contains(&key.as_str()) {
            return Err(format!(
                "unknown argument `{key}`; the arguments are resultRef, path, fields and offset"
            ));
        }
        options.insert(key.clone(), value.clone());
    }
    Ok(format!(
        "return await hub.read({}, {});",
        Value::String(result_ref.clone()),
        canonical_json(&Value::Object(options))
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    #[test]
    fn a_call_is_one_awaited_call_with_its_arguments() {
        let target = Target::Tool {
            address: "github.createIssue".into(),
        };
        let script = script(
            &target,
            &args(json!({ "title": "a \"quoted\" title", "n": 1 })),
        );
        assert_eq!(
            script.as_deref(),
            Ok(r#"return await github.createIssue({"n":1,"title":"a \"quoted\" title"});"#)
        );
    }

    #[test]
    fn a_proto_key_stays_an_argument() {
        let target = Target::Tool {
            address: "a.b".into(),
        };
        let script = script(
            &target,
            &args(json!({ "x": [{ "__proto__": { "p": 1 } }] })),
        );
        assert_eq!(
            script.as_deref(),
            Ok(r#"return await a.b(JSON.parse("{\"x\":[{\"__proto__\":{\"p\":1}}]}"));"#)
        );
    }

    #[test]
    fn the_same_arguments_in_another_order_make_the_same_script() {
        let target = Target::Tool {
            address: "a.b".into(),
        };
        let one = script(&target, &args(json!({ "x": 1, "y": [2] })));
        let other = script(&target, &args(json!({ "y": [2], "x": 1 })));
        assert_eq!(one, other);
    }

    #[test]
    fn read_result_takes_its_options() {
        let script = script(
            &Target::ReadResult,
            &args(json!({ "resultRef": "res_1", "path": "/items", "offset": 10 })),
        );
        assert_eq!(
            script.as_deref(),
            Ok(r#"return await hub.read("res_1", {"offset":10,"path":"/items"});"#)
        );
    }

    #[test]
    fn read_result_refuses_a_missing_ref_and_unknown_arguments() {
        let missing = script(&Target::ReadResult, &args(json!({})));
        assert!(missing.is_err_and(|e| e.contains("resultRef` is missing")));
        let unknown = script(
            &Target::ReadResult,
            &args(json!({ "resultRef": "r", "limit": 3 })),
        );
        assert!(unknown.is_err_and(|e| e.contains("unknown argument `limit`")));
    }
}
