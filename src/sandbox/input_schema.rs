//! Compiling a tool's input schema into the validator that checks a script's arguments before
//! they leave the sandbox. An upstream's schema is outside input: one keyword that does not
//! compile (a regular expression in a dialect the validator lacks, a `"type": "strng"`, a remote
//! `$ref` the hub never fetches) must not switch the check off for the whole tool. What does not
//! compile is dropped one keyword at a time, and the rest still checks; the upstream validates
//! the arguments again anyway.

use jsonschema::Validator;
use serde_json::Value;

/// How many keywords may be dropped before the schema is given up as a whole.
const MOST_DROPPED: usize = 32;
/// Schemas nested deeper than this are not compiled: the validator's compiling and checking
/// recurse as deep as the schema with large frames (a 2 MiB thread overflowed at about 80 levels
/// in a debug build), and a stack overflow would abort the whole hub.
const MOST_NESTED: usize = 64;

/// The validator for `schema`, leaving out what does not compile. `None` only when nothing
/// useful is left (the schema is not an object at all, or too much of it is broken).
pub(crate) fn compile(tool: &str, schema: &Value) -> Option<Validator> {
    if !crate::model::json_size::nests_within(schema, MOST_NESTED, usize::MAX) {
        tracing::warn!(
            tool,
            "the tool's input schema nests deeper than {MOST_NESTED} levels; arguments go unchecked here (the upstream still checks them)"
        );
        return None;
    }
    let mut schema = schema.clone();
    let mut dropped: Vec<String> = Vec::new();
    loop {
        let error = match jsonschema::validator_for(&schema) {
            Ok(validator) => {
                if !dropped.is_empty() {
                    tracing::warn!(
                        tool,
                        dropped = %dropped.join(", "),
                        "parts of the tool's input schema do not compile; arguments are checked without them"
                    );
                }
                return Some(validator);
            }
            Err(error) => error,
        };
        if dropped.len() >= MOST_DROPPED {
            tracing::warn!(tool, %error, "the tool's input schema does not compile; arguments go unchecked");
            return None;
        }
        // A meta-schema failure points into the schema (the schema is its instance); an
        // unresolvable reference points nowhere, and every reference out of the document goes.
        let at = error.instance_path().to_string();
        let removed = if at.is_empty() {
            drop_remote_refs(&mut schema)
        } else {
            drop_at(&mut schema, &at)
        };
        if !removed {
            tracing::warn!(tool, %error, "the tool's input schema does not compile; arguments go unchecked");
            return None;
        }
        dropped.push(if at.is_empty() { "$ref".to_owned() } else { at });
    }
}

/// Removes the member or item that `pointer` (RFC 6901) names; false when there is none.
fn drop_at(schema: &mut Value, pointer: &str) -> bool {
    let Some((parent, last)) = pointer.rsplit_once('/') else {
        return false;
    };
    let key = last.replace("~1", "/").replace("~0", "~");
    match schema.pointer_mut(parent) {
        Some(Value::Object(members)) => members.remove(&key).is_some(),
        Some(Value::Array(items)) => match key.parse::<usize>() {
            Ok(index) if index < items.len() => {
                items.remove(index);
                true
            }
            _ => false,
        },
        _ => false,
    }
}

/// Removes every `$ref` that leaves the document (anything but `#…`); true when one was.
fn drop_remote_refs(value: &mut Value) -> bool {
    match value {
        Value::Object(members) => {
            let remote = members
                .get("$ref")
                .and_then(Value::as_str)
                .is_some_and(|target| !target.starts_with('#'));
            let mut removed = remote && members.remove("$ref").is_some();
            for member in members.values_mut() {
                removed |= drop_remote_refs(member);
            }
            removed
        }
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |removed, item| drop_remote_refs(item) | removed),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn checks(schema: Value) -> Validator {
        compile("demo.tool", &schema).expect("a validator for what compiles")
    }

    #[test]
    fn a_valid_pattern_is_enforced() {
        let validator = checks(json!({
            "type": "object",
            "properties": { "a": { "type": "string", "pattern": "(a+)+$" } }
        }));
        assert!(validator.is_valid(&json!({ "a": "aaa" })));
        assert!(!validator.is_valid(&json!({ "a": "aaa!" })));
    }

    #[test]
    fn a_keyword_that_does_not_compile_leaves_the_rest_checked() {
        for broken in [
            json!({ "type": "string", "pattern": "(?<!x" }),
            json!({ "type": "strng" }),
            json!({ "minLength": "3" }),
            json!({ "$ref": "https://example.com/elsewhere.json" }),
        ] {
            let validator = checks(json!({
                "type": "object",
                "required": ["count"],
                "properties": { "label": broken, "count": { "type": "integer" } }
            }));
            assert!(validator.is_valid(&json!({ "count": 1, "label": "x" })));
            assert!(
                !validator.is_valid(&json!({ "label": "x" })),
                "required still holds"
            );
            assert!(
                !validator.is_valid(&json!({ "count": "one" })),
                "types still hold"
            );
        }
    }

    #[test]
    fn a_broken_pattern_property_and_several_faults_at_once_are_all_dropped() {
        let validator = checks(json!({
            "type": "object",
            "required": ["id"],
            "patternProperties": { "[": { "type": "string" }, "^n_": { "type": "number" } },
            "properties": {
                "id": { "type": "string", "format": "uuid", "pattern": "\\p{Nope}" },
                "path/with~slash": { "type": "strng" }
            }
        }));
        assert!(validator.is_valid(&json!({ "id": "x", "n_1": 2 })));
        assert!(!validator.is_valid(&json!({ "id": "x", "n_1": "two" })));
        assert!(!validator.is_valid(&json!({ "id": 7 })));
    }

    /// `{"anyOf": [{"anyOf": [… {"type": "string"} …]}, {"type": "null"}]}`, `levels` deep.
    fn nested_any_of(levels: usize) -> Value {
        let mut schema = json!({ "type": "string" });
        for _ in 0..levels {
            // Not `json!` around `schema`: it copies it with `to_value`, which recurses.
            let branches = Value::Array(vec![schema, json!({ "type": "null" })]);
            schema = Value::Object([("anyOf".to_string(), branches)].into_iter().collect());
        }
        schema
    }

    #[test]
    fn deep_schemas_compile_within_the_bound_and_are_skipped_past_it() {
        // Within the bound (2 levels a step): compiled, and it checks.
        let schema = json!({ "type": "object", "properties": { "v": nested_any_of(28) } });
        let validator = checks(schema);
        assert!(validator.is_valid(&json!({ "v": "x" })));
        assert!(validator.is_valid(&json!({ "v": null })));
        assert!(!validator.is_valid(&json!({ "v": 1 })));

        // Past the bound nothing recurses over it: no validator, no stack overflow.
        for levels in [50, 10_000] {
            let mut deep = json!({ "type": "object", "properties": {} });
            deep["properties"]["v"] = nested_any_of(levels);
            assert!(compile("demo.tool", &deep).is_none(), "{levels}");
            crate::model::json_size::dismantle(deep);
        }
    }

    #[test]
    fn a_schema_that_is_not_an_object_gives_no_validator_and_no_panic() {
        assert!(compile("demo.tool", &json!("object")).is_none());
        assert!(compile("demo.tool", &json!({ "type": 12 })).is_some());
    }
}
