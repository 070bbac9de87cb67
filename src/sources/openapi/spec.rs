//! Reading an OpenAPI document: JSON or YAML text into one JSON value, the version check (3.0
//! and 3.1; Swagger 2.0 is refused with the way to convert it), the shape checks the rest
//! relies on, and local `$ref` lookup. Every problem is a [`SpecError`] that names the place as
//! a JSON pointer and, where the text has lines, the line.

use std::fmt;

use saphyr::{LoadableYamlNode, MarkedYaml, Scalar, YamlData};
use serde_json::{Map, Value};

/// A parsed document, with its text kept for as long as errors may still need a line number.
pub(crate) struct Document {
    pub(crate) root: Value,
    /// `3.0` or `3.1`: which dialect its schemas speak.
    pub(crate) version: Version,
    text: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Version {
    V30,
    V31,
}

/// What is wrong with a document, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SpecError {
    /// RFC 6901, `""` for the whole document.
    pub(crate) pointer: String,
    /// 1-based, when the text has more than one line and the place could be found in it.
    pub(crate) line: Option<usize>,
    pub(crate) message: String,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.pointer.as_str(), self.line) {
            ("", None) => write!(f, "{}", self.message),
            ("", Some(line)) => write!(f, "line {line}: {}", self.message),
            (pointer, None) => write!(f, "at {pointer}: {}", self.message),
            (pointer, Some(line)) => write!(f, "at {pointer} (line {line}): {}", self.message),
        }
    }
}

/// Parses and checks `text`. JSON is read as JSON (fast, for big documents); anything else as
/// YAML.
pub(crate) fn parse(text: String) -> Result<Document, SpecError> {
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    let root = if trimmed.starts_with('{') {
        serde_json::from_str::<Value>(trimmed).map_err(|error| SpecError {
            pointer: String::new(),
            line: Some(error.line()),
            message: format!("this is not valid JSON: {error}"),
        })?
    } else {
        yaml_to_json(trimmed)?
    };
    let document = Document {
        version: Version::V31,
        root,
        text,
    };
    document.checked()
}

impl Document {
    fn checked(mut self) -> Result<Self, SpecError> {
        let Value::Object(root) = &self.root else {
            return Err(self.error(
                "",
                "the document is not an object; an OpenAPI document starts with `openapi: 3.x.y`"
                    .into(),
            ));
        };
        if let Some(swagger) = root.get("swagger") {
            return Err(self.error(
                "/swagger",
                format!(
                    "this is a Swagger {} document; capabilities reads OpenAPI 3.0 and 3.1. Convert it first (for example `npx swagger2openapi spec.json -o openapi.json`) and point the source at the result",
                    scalar_text(swagger)
                ),
            ));
        }
        let version = match root.get("openapi") {
            None => {
                return Err(self.error(
                    "",
                    "there is no `openapi` field, so this is not an OpenAPI document; give the API's OpenAPI 3.0 or 3.1 description (often served at /openapi.json)".into(),
                ));
            }
            Some(Value::String(version)) if version.starts_with("3.0") => Version::V30,
            Some(Value::String(version)) if version.starts_with("3.1") => Version::V31,
            Some(other) => {
                return Err(self.error(
                    "/openapi",
                    format!(
                        "OpenAPI version {} is not supported; capabilities reads 3.0.x and 3.1.x (a string such as \"3.1.0\")",
                        scalar_text(other)
                    ),
                ));
            }
        };
        self.version = version;
        for (key, what) in [
            ("info", "an object"),
            ("paths", "an object"),
            ("components", "an object"),
        ] {
            match root.get(key) {
                Some(Value::Object(_)) => {}
                None if key != "info" => {}
                None => {
                    return Err(self.error(
                        "",
                        "the document has no `info` object (title and version), which OpenAPI requires".into(),
                    ));
                }
                Some(_) => {
                    return Err(self.error(&format!("/{key}"), format!("`{key}` must be {what}")));
                }
            }
        }
        if let Some(Value::Object(paths)) = root.get("paths") {
            for (path, item) in paths {
                let pointer = format!("/paths/{}", escape(path));
                if !path.starts_with('/') {
                    return Err(self.error(
                        &pointer,
                        format!("the path `{path}` does not start with `/`"),
                    ));
                }
                if !item.is_object() {
                    return Err(self.error(&pointer, "a path item must be an object".into()));
                }
            }
        }
        Ok(self)
    }

    /// An error at `pointer`, with its line when the text has lines.
    pub(crate) fn error(&self, pointer: &str, message: String) -> SpecError {
        SpecError {
            pointer: pointer.to_string(),
            line: self.line_of(pointer),
            message,
        }
    }

    /// The 1-based line where `pointer`'s value starts. The text is parsed again (as YAML,
    /// which reads JSON too) only here, when there is an error to report.
    fn line_of(&self, pointer: &str) -> Option<usize> {
        if !self.text.trim().contains('\n') {
            return None;
        }
        let documents = MarkedYaml::load_from_str(&self.text).ok()?;
        let mut node = documents.first()?;
        for token in tokens(pointer) {
            node = match &node.data {
                YamlData::Mapping(map) => map
                    .iter()
                    .find(|(key, _)| key_text(key).as_deref() == Some(token.as_str()))
                    .map(|(_, value)| value)?,
                YamlData::Sequence(items) => items.get(token.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        // saphyr counts lines from 1.
        Some(node.span.start.line())
    }

    /// The value a local `$ref` (`#/components/schemas/Pet`) points at.
    pub(crate) fn resolve(&self, reference: &str) -> Option<&Value> {
        resolve(&self.root, reference)
    }
}

/// The value a local `$ref` points at in `root`; `None` for a remote or dangling one.
pub(crate) fn resolve<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    let decoded = percent_encoding::percent_decode_str(pointer)
        .decode_utf8()
        .ok()?;
    root.pointer(&decoded)
}

/// `a/b~c` → `a~1b~0c`, one JSON pointer token.
pub(crate) fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

fn tokens(pointer: &str) -> Vec<String> {
    pointer
        .split('/')
        .skip(1)
        .map(|token| token.replace("~1", "/").replace("~0", "~"))
        .collect()
}

fn scalar_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

fn key_text(key: &MarkedYaml<'_>) -> Option<String> {
    match &key.data {
        YamlData::Value(scalar) => Some(scalar_string(scalar)),
        YamlData::Representation(text, _, _) => Some(text.to_string()),
        _ => None,
    }
}

fn scalar_string(scalar: &Scalar<'_>) -> String {
    match scalar {
        Scalar::Null => "null".into(),
        Scalar::Boolean(value) => value.to_string(),
        Scalar::Integer(value) => value.to_string(),
        Scalar::FloatingPoint(value) => value.to_string(),
        Scalar::String(text) => text.to_string(),
    }
}

/// YAML text → JSON. Mapping keys become strings (`200:` is the status code `"200"`); aliases
/// are expanded by the loader, which caps how many it expands.
fn yaml_to_json(text: &str) -> Result<Value, SpecError> {
    shallow_enough(text)?;
    let documents = MarkedYaml::load_from_str(text).map_err(|error| SpecError {
        pointer: String::new(),
        line: Some(error.marker().line()),
        message: format!("this is neither JSON nor valid YAML: {}", error.info()),
    })?;
    let Some(document) = documents.into_iter().next() else {
        return Err(SpecError {
            pointer: String::new(),
            line: None,
            message: "the document is empty".into(),
        });
    };
    convert(&document, "", 0)
}

/// How deep a YAML document may nest: as deep as serde_json reads JSON, so a document means
/// the same in either form, and loading and converting it cannot run out of stack.
const MAX_YAML_DEPTH: usize = 128;

fn too_deep(pointer: &str, line: usize) -> SpecError {
    SpecError {
        pointer: pointer.to_string(),
        line: Some(line),
        message: format!(
            "the document nests deeper than {MAX_YAML_DEPTH} levels here; no OpenAPI document needs that"
        ),
    }
}

/// Refuses a document nested past [`MAX_YAML_DEPTH`] before saphyr's loader, which recurses
/// once per level, would overflow the stack on it: its event parser keeps its own stack.
/// A syntax error is left for the loader to report.
fn shallow_enough(text: &str) -> Result<(), SpecError> {
    use saphyr_parser::{Event, Parser};
    let mut depth = 0usize;
    for parsed in Parser::new_from_str(text) {
        let Ok((event, span)) = parsed else {
            return Ok(());
        };
        match event {
            Event::SequenceStart(..) | Event::MappingStart(..) => {
                depth += 1;
                if depth > MAX_YAML_DEPTH {
                    return Err(too_deep("", span.start.line()));
                }
            }
            Event::SequenceEnd | Event::MappingEnd => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

fn convert(node: &MarkedYaml<'_>, pointer: &str, depth: usize) -> Result<Value, SpecError> {
    // Aliases can nest what the text does not: an anchor's copy inside itself.
    if depth > MAX_YAML_DEPTH {
        return Err(too_deep(pointer, node.span.start.line()));
    }
    Ok(match &node.data {
        YamlData::Value(scalar) => match scalar {
            Scalar::Null => Value::Null,
            Scalar::Boolean(value) => Value::Bool(*value),
            Scalar::Integer(value) => Value::from(*value),
            Scalar::FloatingPoint(value) => {
                serde_json::Number::from_f64(value.into_inner()).map_or(Value::Null, Value::Number)
            }
            Scalar::String(text) => Value::String(text.to_string()),
        },
        YamlData::Representation(text, _, _) => Value::String(text.to_string()),
        YamlData::Sequence(items) => Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(index, item)| convert(item, &format!("{pointer}/{index}"), depth + 1))
                .collect::<Result<_, _>>()?,
        ),
        YamlData::Mapping(map) => {
            let mut out = Map::new();
            for (key, value) in map {
                let Some(key) = key_text(key) else {
                    return Err(SpecError {
                        pointer: pointer.to_string(),
                        line: Some(key.span.start.line()),
                        message: "a mapping key is not a plain value; OpenAPI keys are strings"
                            .into(),
                    });
                };
                let inner = format!("{pointer}/{}", escape(&key));
                out.insert(key, convert(value, &inner, depth + 1)?);
            }
            Value::Object(out)
        }
        YamlData::Tagged(_, inner) => convert(inner, pointer, depth + 1)?,
        YamlData::Alias(_) | YamlData::BadValue => {
            return Err(SpecError {
                pointer: pointer.to_string(),
                line: Some(node.span.start.line()),
                message:
                    "this value cannot be read (an unresolved alias or a malformed tagged value)"
                        .into(),
            });
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(text: &str) -> SpecError {
        match parse(text.to_string()) {
            Ok(_) => panic!("expected an error for {text}"),
            Err(error) => error,
        }
    }

    #[test]
    fn yaml_and_json_read_alike() {
        let yaml = "openapi: 3.0.3\ninfo:\n  title: T\n  version: '1'\npaths:\n  /a:\n    get:\n      responses:\n        200:\n          description: ok\n";
        let json = r#"{"openapi":"3.0.3","info":{"title":"T","version":"1"},"paths":{"/a":{"get":{"responses":{"200":{"description":"ok"}}}}}}"#;
        let yaml = parse(yaml.into()).expect("valid YAML");
        let json = parse(json.into()).expect("valid JSON");
        assert_eq!(yaml.root, json.root);
        assert_eq!(yaml.version, Version::V30);
    }

    #[test]
    fn yaml_nested_past_json_s_limit_is_refused_where_it_nests() {
        let text = format!(
            "openapi: 3.1.0\ninfo: {{title: t, version: '1'}}\npaths: {{}}\nx-deep:\n  {}b\n",
            "- ".repeat(3000)
        );
        let e = error(&text);
        assert!(e.message.contains("nests deeper than 128 levels"), "{e}");
        assert_eq!(e.line, Some(5), "{e}");
    }

    #[test]
    fn swagger_2_is_refused_with_the_way_to_convert_it() {
        let e = error("{\n  \"swagger\": \"2.0\",\n  \"info\": {}\n}");
        assert_eq!(e.pointer, "/swagger");
        assert_eq!(e.line, Some(2));
        assert!(e.message.contains("Swagger 2.0"), "{e}");
        assert!(e.message.contains("swagger2openapi"), "{e}");
    }

    #[test]
    fn syntax_errors_name_the_line() {
        let e = error("{\n  \"openapi\": \"3.1.0\",\n  \"info\": {,}\n}");
        assert_eq!(e.line, Some(3), "{e}");
        assert!(e.message.contains("not valid JSON"), "{e}");
        let e = error("openapi: 3.1.0\ninfo: [a\npaths: {}\n");
        assert!(e.line.is_some(), "{e}");
        assert!(e.message.contains("YAML"), "{e}");
    }

    #[test]
    fn shape_errors_name_the_pointer_and_the_line() {
        let e = error(
            "openapi: 3.1.0\ninfo:\n  title: T\n  version: '1'\npaths:\n  pets:\n    get: {}\n",
        );
        assert_eq!(e.pointer, "/paths/pets");
        assert_eq!(e.line, Some(7), "{e}");
        assert!(e.message.contains("does not start with `/`"), "{e}");
        let e = error("openapi: 2.5\ninfo: {}\n");
        assert_eq!(e.pointer, "/openapi");
        assert!(e.message.contains("not supported"), "{e}");
        let e = error("{\"info\": {}}");
        assert!(e.message.contains("no `openapi` field"), "{e}");
        assert_eq!(e.line, None);
    }

    #[test]
    fn local_refs_resolve_with_escapes() {
        let root = serde_json::json!({"components": {"schemas": {"a/b": {"type": "string"}, "c d": {"type": "integer"}}}});
        assert_eq!(
            resolve(&root, "#/components/schemas/a~1b"),
            Some(&serde_json::json!({"type": "string"}))
        );
        assert_eq!(
            resolve(&root, "#/components/schemas/c%20d"),
            Some(&serde_json::json!({"type": "integer"}))
        );
        assert_eq!(resolve(&root, "other.json#/x"), None);
    }
}
