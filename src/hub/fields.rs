//! The arguments of the three tools, in one table: the JSON Schemas `surface` publishes and the
//! checks `args` runs both come from here, so each field is named, typed and bounded once.

use serde_json::{Map, Value, json};

use crate::catalog::describe::{
    DEFAULT_BUDGET_TOKENS, MAX_BUDGET_TOKENS, MAX_TARGETS, MIN_BUDGET_TOKENS,
};
use crate::sandbox::request::{OUTPUT_BUDGET_MAX, OUTPUT_BUDGET_MIN};

/// `search`'s default and largest `limit`.
pub const SEARCH_LIMIT_DEFAULT: u64 = 10;
pub const SEARCH_LIMIT_MAX: u64 = 50;
/// The range of `describe`'s `budget`, in tokens.
pub const DESCRIBE_BUDGET_MIN: u64 = MIN_BUDGET_TOKENS as u64;
pub const DESCRIBE_BUDGET_MAX: u64 = MAX_BUDGET_TOKENS as u64;

/// What a field holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Text,
    /// A whole number within bounds, with the value an absent field takes.
    Whole {
        min: u64,
        max: u64,
        default: Option<u64>,
    },
    /// A list of strings with a bounded length.
    Texts {
        min: usize,
        max: usize,
    },
}

/// One argument of a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    pub name: &'static str,
    pub kind: Kind,
    pub description: Option<&'static str>,
    pub required: bool,
}

pub const SEARCH: &[Field] = &[
    Field {
        name: "query",
        kind: Kind::Text,
        description: Some("What you want to do, in a few words."),
        required: true,
    },
    Field {
        name: "namespace",
        kind: Kind::Text,
        description: Some("Search or list only this source."),
        required: false,
    },
    Field {
        name: "limit",
        kind: Kind::Whole {
            min: 1,
            max: SEARCH_LIMIT_MAX,
            default: Some(SEARCH_LIMIT_DEFAULT),
        },
        description: None,
        required: false,
    },
];

pub const DESCRIBE: &[Field] = &[
    Field {
        name: "targets",
        kind: Kind::Texts {
            min: 1,
            max: MAX_TARGETS,
        },
        description: Some("Addresses, namespaces or type names."),
        required: true,
    },
    Field {
        name: "budget",
        kind: Kind::Whole {
            min: DESCRIBE_BUDGET_MIN,
            max: DESCRIBE_BUDGET_MAX,
            default: Some(DEFAULT_BUDGET_TOKENS as u64),
        },
        description: Some("Most tokens to return."),
        required: false,
    },
];

/// Neither field of `execute` is required on its own: exactly one of `code` and `resume` is.
pub const EXECUTE: &[Field] = &[
    Field {
        name: "code",
        kind: Kind::Text,
        description: Some("The body of an async function."),
        required: false,
    },
    Field {
        name: "outputBudgetBytes",
        kind: Kind::Whole {
            min: OUTPUT_BUDGET_MIN,
            max: OUTPUT_BUDGET_MAX,
            default: None,
        },
        description: None,
        required: false,
    },
    Field {
        name: "resume",
        kind: Kind::Text,
        description: Some("The runId of a run waiting for the user."),
        required: false,
    },
];

/// The field `name` of a tool's table.
pub fn field(fields: &'static [Field], name: &str) -> Option<&'static Field> {
    fields.iter().find(|f| f.name == name)
}

/// The JSON Schema of a tool's input.
pub fn input_schema(fields: &[Field]) -> Value {
    let mut properties = Map::new();
    for field in fields {
        let mut schema = match field.kind {
            Kind::Text => json!({ "type": "string" }),
            Kind::Whole { min, max, default } => {
                let mut schema = json!({ "type": "integer", "minimum": min, "maximum": max });
                if let (Some(default), Some(map)) = (default, schema.as_object_mut()) {
                    map.insert("default".into(), json!(default));
                }
                schema
            }
            Kind::Texts { min, max } => json!({
                "type": "array",
                "items": { "type": "string" },
                "minItems": min,
                "maxItems": max,
            }),
        };
        if let (Some(description), Some(map)) = (field.description, schema.as_object_mut()) {
            map.insert("description".into(), json!(description));
        }
        properties.insert(field.name.to_string(), schema);
    }
    let mut schema = json!({ "type": "object", "properties": properties });
    let required: Vec<&str> = fields
        .iter()
        .filter(|f| f.required)
        .map(|f| f.name)
        .collect();
    if let (false, Some(map)) = (required.is_empty(), schema.as_object_mut()) {
        map.insert("required".into(), json!(required));
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The schemas as they were written out by hand before this table: clients cache tool
    /// definitions, so the table must not change a byte of them.
    #[test]
    fn the_schemas_are_the_published_ones() {
        assert_eq!(
            input_schema(SEARCH).to_string(),
            json!({
                "type": "object",
                "properties": {
                    "query": { "type": "string", "description": "What you want to do, in a few words." },
                    "namespace": { "type": "string", "description": "Search or list only this source." },
                    "limit": { "type": "integer", "minimum": 1, "maximum": 50, "default": 10 },
                },
                "required": ["query"],
            })
            .to_string()
        );
        assert_eq!(
            input_schema(DESCRIBE).to_string(),
            json!({
                "type": "object",
                "properties": {
                    "targets": { "type": "array", "items": { "type": "string" }, "minItems": 1, "maxItems": 10, "description": "Addresses, namespaces or type names." },
                    "budget": { "type": "integer", "minimum": 200, "maximum": 20000, "default": 2500, "description": "Most tokens to return." },
                },
                "required": ["targets"],
            })
            .to_string()
        );
        assert_eq!(
            input_schema(EXECUTE).to_string(),
            json!({
                "type": "object",
                "properties": {
                    "code": { "type": "string", "description": "The body of an async function." },
                    "outputBudgetBytes": { "type": "integer", "minimum": 1024, "maximum": 65536 },
                    "resume": { "type": "string", "description": "The runId of a run waiting for the user." },
                },
            })
            .to_string()
        );
    }
}
