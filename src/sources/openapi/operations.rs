//! The document's operations → tools. Each operation is one [`Operation`] (what a call needs to
//! build its request) and one [`UpstreamTool`] (what the catalogue, search and describe see):
//! named by its `operationId`, else by method and path; its input is one object with a property
//! per path, query, header and cookie parameter plus `body` for a request body; its output is
//! the first 2xx response's JSON schema; HTTP method semantics become annotations, so the
//! policy's defaults follow (GET/HEAD read-only, DELETE destructive, PUT idempotent).

use std::collections::{BTreeSet, HashMap};

use serde_json::{Map, Value, json};

use super::schema::Schemas;
use super::spec::{Document, SpecError, escape};
use crate::model::tool::{Annotations, UpstreamTool};

const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];
/// The argument that carries the request body.
pub(crate) const BODY: &str = "body";

/// Headers that frame or route a request, which is the HTTP client's job: a script's `Host`
/// would pick which virtual host on a shared address receives the API's credentials, and a
/// `Content-Length` or `Transfer-Encoding` that disagrees with the body desynchronises the
/// connection the next call reuses. `Cookie` is built from the `in: cookie` parameters and the
/// credentials. `Proxy-*` headers (matched apart) are for proxies, never the API.
const FRAMING_HEADERS: [&str; 10] = [
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "te",
    "trailer",
    "upgrade",
    "expect",
    "cookie",
];

/// Whether `name` is a header that frames or routes the request ([`FRAMING_HEADERS`]): never an
/// argument, and never where a credential goes.
pub(super) fn frames_the_request(name: &str) -> bool {
    let name = name.trim().to_ascii_lowercase();
    FRAMING_HEADERS.contains(&name.as_str()) || name.starts_with("proxy-")
}

/// Whether a header parameter called `name` is left out of the tool's input, whatever the
/// document declares: `Accept`, `Content-Type` and `Authorization` are the HTTP client's
/// (OpenAPI says to ignore them), and the rest frame or route the request.
fn is_clients_header(name: &str) -> bool {
    ["accept", "content-type", "authorization"].contains(&name.trim().to_ascii_lowercase().as_str())
        || frames_the_request(name)
}

/// Everything a call of one operation needs to become an HTTP request.
#[derive(Debug, Clone)]
pub(crate) struct Operation {
    /// The tool's upstream name: the `operationId`, or `METHOD /path`.
    pub(crate) name: String,
    pub(crate) method: reqwest::Method,
    /// The path template, `/pets/{petId}`.
    pub(crate) path: String,
    /// The operation's (or its path's) own `servers[0].url` (variables at their defaults),
    /// when it has one. Only a connection without `base_url` uses it, and only on the API's
    /// origin (see `Api::connect`).
    pub(crate) server: Option<String>,
    pub(crate) parameters: Vec<Parameter>,
    pub(crate) body: Option<Body>,
    /// Its `security` requirements; `None` inherits the document's.
    pub(crate) security: Option<Vec<Vec<String>>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Location {
    Path,
    Query,
    Header,
    Cookie,
}

impl Location {
    fn parse(text: &str) -> Option<Location> {
        Some(match text {
            "path" => Location::Path,
            "query" => Location::Query,
            "header" => Location::Header,
            "cookie" => Location::Cookie,
            _ => return None,
        })
    }

    fn as_str(self) -> &'static str {
        match self {
            Location::Path => "path",
            Location::Query => "query",
            Location::Header => "header",
            Location::Cookie => "cookie",
        }
    }
}

/// How an array or object value is written (OpenAPI's `style`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    Simple,
    Label,
    Matrix,
    Form,
    SpaceDelimited,
    PipeDelimited,
    DeepObject,
}

#[derive(Debug, Clone)]
pub(crate) struct Parameter {
    /// The name on the wire.
    pub(crate) name: String,
    /// The property of the tool's input that holds it (the name, unless two collide).
    pub(crate) argument: String,
    pub(crate) location: Location,
    pub(crate) style: Style,
    pub(crate) explode: bool,
    /// Query only: reserved characters are sent as they are.
    pub(crate) allow_reserved: bool,
    /// Described with `content: application/json`: the value is sent as JSON text.
    pub(crate) as_json: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BodyKind {
    Json,
    Form,
    Multipart,
    /// Sent as the string it is given (text, or a media type capabilities has no encoder for).
    Text,
}

#[derive(Debug, Clone)]
pub(crate) struct Body {
    pub(crate) content_type: String,
    pub(crate) kind: BodyKind,
}

/// Every operation of the document, with its tool, in document order.
pub(crate) fn operations(document: &Document) -> Result<Vec<(Operation, UpstreamTool)>, SpecError> {
    let mut schemas = Schemas::new(document);
    let mut out = Vec::new();
    let mut ids: HashMap<String, String> = HashMap::new();
    let Some(Value::Object(paths)) = document.root.get("paths") else {
        return Ok(out);
    };
    for (path, item) in paths {
        let item_pointer = format!("/paths/{}", escape(path));
        if let Err(problem) = check_template(path) {
            return Err(document.error(&item_pointer, problem));
        }
        let (item, item_pointer) = follow(document, item, &item_pointer)?;
        let shared = item.get("parameters");
        let path_server = first_server(item.get("servers"));
        for method in METHODS {
            let Some(operation) = item.get(method) else {
                continue;
            };
            let pointer = format!("{item_pointer}/{method}");
            if !operation.is_object() {
                return Err(document.error(&pointer, "an operation must be an object".into()));
            }
            let built = build(
                document,
                &mut schemas,
                Context {
                    path,
                    method,
                    pointer: &pointer,
                    item_pointer: &item_pointer,
                    shared,
                    server: first_server(operation.get("servers")).or(path_server.clone()),
                },
                operation,
            )?;
            if let Some(id) = operation.get("operationId").and_then(Value::as_str)
                && let Some(first) = ids.insert(id.to_string(), pointer.clone())
            {
                return Err(document.error(
                    &format!("{pointer}/operationId"),
                    format!("operationId `{id}` is also used at {first}; operationIds must be unique, so rename one of them"),
                ));
            }
            out.push(built);
        }
    }
    Ok(out)
}

struct Context<'a> {
    path: &'a str,
    method: &'a str,
    pointer: &'a str,
    item_pointer: &'a str,
    shared: Option<&'a Value>,
    server: Option<String>,
}

fn build(
    document: &Document,
    schemas: &mut Schemas<'_>,
    context: Context<'_>,
    operation: &Value,
) -> Result<(Operation, UpstreamTool), SpecError> {
    let Context {
        path,
        method,
        pointer,
        item_pointer,
        shared,
        server,
    } = context;
    let name = match operation.get("operationId") {
        Some(Value::String(id)) if !id.trim().is_empty() => id.clone(),
        Some(Value::String(_)) | None => format!("{} {path}", method.to_uppercase()),
        Some(_) => {
            return Err(document.error(
                &format!("{pointer}/operationId"),
                "`operationId` must be a string".into(),
            ));
        }
    };
    let mut properties = Map::new();
    let mut required = Vec::new();
    let mut refs = BTreeSet::new();
    let mut parameters = Vec::new();
    // Operation parameters override the path's of the same name and location; otherwise they
    // keep the document's order.
    let mut declared: Vec<(String, Location, &Value, String)> = Vec::new();
    let lists = [
        (shared, format!("{item_pointer}/parameters")),
        (operation.get("parameters"), format!("{pointer}/parameters")),
    ];
    for (list, list_pointer) in lists {
        let Some(list) = list else { continue };
        let Value::Array(list) = list else {
            return Err(document.error(&list_pointer, "`parameters` must be an array".into()));
        };
        for (index, parameter) in list.iter().enumerate() {
            let (parameter, at) = follow(document, parameter, &format!("{list_pointer}/{index}"))?;
            let Some(name) = parameter.get("name").and_then(Value::as_str) else {
                return Err(document.error(&at, "a parameter needs a `name`".into()));
            };
            let written = parameter.get("in").and_then(Value::as_str);
            let Some(location) = written.and_then(Location::parse) else {
                let problem = match written {
                    // Swagger 2.0's body and form parameters became `requestBody` in 3.0.
                    Some(other @ ("body" | "formData")) => format!(
                        "parameter `{name}` is `in: {other}`, which OpenAPI 3 has no more; describe it as the operation's `requestBody`"
                    ),
                    Some(other) => format!(
                        "parameter `{name}` is `in: {other}`; `in` is one of path, query, header, cookie"
                    ),
                    None => {
                        format!("parameter `{name}` needs `in`: one of path, query, header, cookie")
                    }
                };
                return Err(document.error(&at, problem));
            };
            let entry = (name.to_string(), location, parameter, at);
            match declared
                .iter_mut()
                .find(|(n, l, _, _)| n == name && *l == location)
            {
                Some(existing) => *existing = entry,
                None => declared.push(entry),
            }
        }
    }
    for (name, location, parameter, at) in declared {
        if location == Location::Header && is_clients_header(&name) {
            continue;
        }
        let argument = if properties.contains_key(&name) || name == BODY {
            format!("{}_{name}", location.as_str())
        } else {
            name.clone()
        };
        let (schema, as_json) = match (parameter.get("schema"), parameter.get("content")) {
            (Some(schema), _) => (schemas.convert(schema, &format!("{at}/schema"))?, false),
            (None, Some(Value::Object(content))) => match content.iter().next() {
                Some((media, entry)) => {
                    let schema = entry.get("schema").cloned().unwrap_or(json!({}));
                    let inner = format!("{at}/content/{}/schema", escape(media));
                    (schemas.convert(&schema, &inner)?, is_json(media))
                }
                None => (schemas.convert(&json!({}), &at)?, false),
            },
            _ => (schemas.convert(&json!({}), &at)?, false),
        };
        refs.extend(schema.refs);
        let mut schema = schema.schema;
        if let (Value::Object(map), Some(Value::String(text))) =
            (&mut schema, parameter.get("description"))
            && !map.contains_key("description")
        {
            map.insert("description".into(), Value::String(text.clone()));
        }
        let is_required = location == Location::Path
            || parameter.get("required").and_then(Value::as_bool) == Some(true);
        if is_required {
            required.push(Value::String(argument.clone()));
        }
        properties.insert(argument.clone(), schema);
        let style = match parameter.get("style").and_then(Value::as_str) {
            Some("label") => Style::Label,
            Some("matrix") => Style::Matrix,
            Some("form") => Style::Form,
            Some("spaceDelimited") => Style::SpaceDelimited,
            Some("pipeDelimited") => Style::PipeDelimited,
            Some("deepObject") => Style::DeepObject,
            Some("simple") => Style::Simple,
            _ if matches!(location, Location::Query | Location::Cookie) => Style::Form,
            _ => Style::Simple,
        };
        let explode = parameter
            .get("explode")
            .and_then(Value::as_bool)
            .unwrap_or(style == Style::Form);
        parameters.push(Parameter {
            name,
            argument,
            location,
            style,
            explode,
            allow_reserved: parameter.get("allowReserved").and_then(Value::as_bool) == Some(true),
            as_json,
        });
    }
    for (placeholder, _) in placeholders(path) {
        if !parameters
            .iter()
            .any(|p| p.location == Location::Path && p.name == placeholder)
        {
            return Err(document.error(
                pointer,
                format!("the path `{path}` has `{{{placeholder}}}`, but the operation declares no path parameter `{placeholder}`"),
            ));
        }
    }
    let body = match operation.get("requestBody") {
        None => None,
        Some(body) => {
            let (body, at) = follow(document, body, &format!("{pointer}/requestBody"))?;
            request_body(
                document,
                schemas,
                body,
                &at,
                &mut properties,
                &mut required,
                &mut refs,
            )?
        }
    };
    let mut input = json!({
        "type": "object",
        "properties": properties,
        "additionalProperties": false,
    });
    if !required.is_empty() {
        input["required"] = Value::Array(required);
    }
    schemas.attach(&mut input, &refs)?;
    let output = output_schema(document, schemas, operation, pointer)?;
    let security = operation.get("security").map(requirements);
    let tool = UpstreamTool {
        name: name.clone(),
        title: text(operation, "summary"),
        description: Some(description(operation, method, path)),
        input_schema: input,
        output_schema: output,
        annotations: annotations(method),
        // Set by the connection, which knows the API's root.
        endpoint: None,
    };
    let operation = Operation {
        name,
        method: reqwest::Method::from_bytes(method.to_uppercase().as_bytes())
            .unwrap_or(reqwest::Method::GET),
        path: path.to_string(),
        server,
        parameters,
        body,
        security,
    };
    Ok((operation, tool))
}

/// The `body` property from a `requestBody`: the first JSON media type, else a form, multipart
/// or text one.
fn request_body(
    document: &Document,
    schemas: &mut Schemas<'_>,
    body: &Value,
    at: &str,
    properties: &mut Map<String, Value>,
    required: &mut Vec<Value>,
    refs: &mut BTreeSet<String>,
) -> Result<Option<Body>, SpecError> {
    let Some(Value::Object(content)) = body.get("content") else {
        return Err(document.error(
            at,
            "a request body needs `content` (its media types)".into(),
        ));
    };
    let kind_of = |media: &str| {
        let media = media.to_ascii_lowercase();
        if is_json(&media) {
            Some(BodyKind::Json)
        } else if media.starts_with("application/x-www-form-urlencoded") {
            Some(BodyKind::Form)
        } else if media.starts_with("multipart/form-data") {
            Some(BodyKind::Multipart)
        } else if media.starts_with("text/") {
            Some(BodyKind::Text)
        } else {
            None
        }
    };
    let chosen = [
        BodyKind::Json,
        BodyKind::Form,
        BodyKind::Multipart,
        BodyKind::Text,
    ]
    .into_iter()
    .find_map(|wanted| {
        content
            .iter()
            .find(|(media, _)| kind_of(media) == Some(wanted.clone()))
            .map(|(media, entry)| (media.clone(), entry, wanted))
    })
    // Anything else (`application/octet-stream`, …) is sent as the string the script
    // gives, with the document's content type.
    .or_else(|| {
        content
            .iter()
            .next()
            .map(|(media, _)| (media.clone(), &Value::Null, BodyKind::Text))
    });
    let Some((media, entry, kind)) = chosen else {
        return Err(document.error(
            &format!("{at}/content"),
            "a request body needs at least one media type under `content`".into(),
        ));
    };
    let schema = match (entry.get("schema"), &kind) {
        (Some(schema), _) => {
            let inner = format!("{at}/content/{}/schema", escape(&media));
            let converted = schemas.convert(schema, &inner)?;
            refs.extend(converted.refs);
            converted.schema
        }
        (None, BodyKind::Text) => json!({"type": "string"}),
        (None, _) => json!({}),
    };
    let mut schema = schema;
    if let (Value::Object(map), Some(text)) = (&mut schema, text(body, "description"))
        && !map.contains_key("description")
    {
        map.insert("description".into(), Value::String(text));
    }
    if body.get("required").and_then(Value::as_bool) == Some(true) {
        required.push(Value::String(BODY.into()));
    }
    properties.insert(BODY.into(), schema);
    Ok(Some(Body {
        content_type: media,
        kind,
    }))
}

/// The JSON schema of the first 2xx response that has one.
fn output_schema(
    document: &Document,
    schemas: &mut Schemas<'_>,
    operation: &Value,
    pointer: &str,
) -> Result<Option<Value>, SpecError> {
    let Some(Value::Object(responses)) = operation.get("responses") else {
        return Ok(None);
    };
    let mut codes: Vec<&String> = responses
        .keys()
        .filter(|code| code.starts_with('2'))
        .collect();
    // `200` before `201` before `2XX`.
    codes.sort();
    for code in codes {
        let at = format!("{pointer}/responses/{code}");
        let (response, at) = follow(document, &responses[code.as_str()], &at)?;
        let Some(Value::Object(content)) = response.get("content") else {
            continue;
        };
        let Some((media, entry)) = content.iter().find(|(media, _)| is_json(media)) else {
            continue;
        };
        let Some(schema) = entry.get("schema") else {
            continue;
        };
        let converted =
            schemas.convert(schema, &format!("{at}/content/{}/schema", escape(media)))?;
        let mut schema = converted.schema;
        schemas.attach(&mut schema, &converted.refs)?;
        return Ok(Some(schema));
    }
    Ok(None)
}

/// Follows a `$ref` (to `components.parameters`, `requestBodies`, `responses`, `pathItems`, …)
/// until it reaches a value, returning the value and where it is.
fn follow<'d>(
    document: &'d Document,
    mut value: &'d Value,
    pointer: &str,
) -> Result<(&'d Value, String), SpecError> {
    let mut at = pointer.to_string();
    let mut seen = BTreeSet::new();
    while let Some(reference) = value.get("$ref").and_then(Value::as_str) {
        if !seen.insert(reference.to_string()) {
            return Err(document.error(
                &format!("{at}/$ref"),
                format!("`$ref: {reference}` leads back to itself"),
            ));
        }
        let Some(target) = document.resolve(reference) else {
            return Err(document.error(
                &format!("{at}/$ref"),
                format!("`$ref: {reference}` points at nothing in this document; capabilities resolves references within the document only"),
            ));
        };
        at = reference.trim_start_matches('#').to_string();
        value = target;
    }
    Ok((value, at))
}

/// A path template the request builder can fill in (its leading `/` is checked on parsing):
/// every `{` closes with a `}` around a name before the next one opens. A stray brace would
/// otherwise be sent as it is, or swallow the rest of the path into one placeholder.
fn check_template(path: &str) -> Result<(), String> {
    let mut open: Option<usize> = None;
    for (at, c) in path.char_indices() {
        match (c, open) {
            ('{', None) => open = Some(at),
            ('}', Some(start)) if at == start + 1 => {
                return Err(format!(
                    "the path `{path}` has an empty `{{}}`; name the path parameter inside it"
                ));
            }
            ('}', Some(_)) => open = None,
            ('{', Some(_)) | ('}', None) => {
                return Err(format!(
                    "the path `{path}` has a `{c}` at byte {at} that does not pair up; a path parameter is written `{{name}}`"
                ));
            }
            _ => {}
        }
    }
    match open {
        Some(at) => Err(format!(
            "the path `{path}` opens a `{{` at byte {at} that never closes; a path parameter is written `{{name}}`"
        )),
        None => Ok(()),
    }
}

/// `{name}` placeholders of a path template, with their byte ranges.
pub(crate) fn placeholders(path: &str) -> Vec<(String, std::ops::Range<usize>)> {
    let mut out = Vec::new();
    let mut rest = 0;
    while let Some(open) = path[rest..].find('{').map(|i| rest + i) {
        let Some(close) = path[open..].find('}').map(|i| open + i) else {
            break;
        };
        out.push((path[open + 1..close].to_string(), open..close + 1));
        rest = close + 1;
    }
    out
}

fn is_json(media: &str) -> bool {
    let media = media
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    media == "application/json" || media.ends_with("+json") || media == "*/*"
}

/// The URL of the first entry of a `servers` list, its variables replaced by their defaults.
pub(crate) fn first_server(servers: Option<&Value>) -> Option<String> {
    let server = servers?.get(0)?;
    let mut url = server.get("url")?.as_str()?.to_string();
    if let Some(Value::Object(variables)) = server.get("variables") {
        for (name, variable) in variables {
            if let Some(default) = variable.get("default").and_then(Value::as_str) {
                url = url.replace(&format!("{{{name}}}"), default);
            }
        }
    }
    Some(url)
}

/// Security requirements as lists of scheme names, one list per alternative.
pub(crate) fn requirements(value: &Value) -> Vec<Vec<String>> {
    value
        .as_array()
        .map(|alternatives| {
            alternatives
                .iter()
                .filter_map(Value::as_object)
                .map(|requirement| requirement.keys().cloned().collect())
                .collect()
        })
        .unwrap_or_default()
}

fn text(value: &Value, key: &str) -> Option<String> {
    value
        .get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|text| !text.is_empty())
        .map(str::to_string)
}

/// Summary, description and the HTTP request line: what search reads and describe shows.
fn description(operation: &Value, method: &str, path: &str) -> String {
    let mut parts = Vec::new();
    let summary = text(operation, "summary");
    let description = text(operation, "description");
    match (&summary, &description) {
        (Some(summary), Some(description)) if !description.starts_with(summary.as_str()) => {
            parts.push(format!("{summary}\n\n{description}"));
        }
        (_, Some(description)) => parts.push(description.clone()),
        (Some(summary), None) => parts.push(summary.clone()),
        (None, None) => {}
    }
    if operation.get("deprecated").and_then(Value::as_bool) == Some(true) {
        parts.push("Deprecated.".into());
    }
    parts.push(format!("`{} {path}`", method.to_uppercase()));
    parts.join("\n\n")
}

fn annotations(method: &str) -> Annotations {
    let mut annotations = Annotations::default();
    match method {
        "get" | "head" | "options" | "trace" => annotations.read_only_hint = Some(true),
        "delete" => {
            annotations.read_only_hint = Some(false);
            annotations.destructive_hint = Some(true);
            annotations.idempotent_hint = Some(true);
        }
        "put" => {
            annotations.read_only_hint = Some(false);
            annotations.idempotent_hint = Some(true);
        }
        _ => annotations.read_only_hint = Some(false),
    }
    annotations
}

#[cfg(test)]
mod tests {
    use super::super::spec::parse;
    use super::*;

    fn tools(paths: Value) -> Result<Vec<(Operation, UpstreamTool)>, SpecError> {
        let document = parse(
            json!({
                "openapi": "3.1.0",
                "info": {"title": "Pets", "version": "1"},
                "paths": paths,
                "components": {
                    "schemas": {"Pet": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}},
                    "parameters": {"limit": {"name": "limit", "in": "query", "schema": {"type": "integer"}}}
                }
            })
            .to_string(),
        )
        .expect("a valid document");
        operations(&document)
    }

    #[test]
    fn an_operation_becomes_a_tool_with_typed_input_output_and_annotations() {
        let all = tools(json!({
            "/pets/{petId}": {
                "parameters": [{"name": "petId", "in": "path", "required": true, "schema": {"type": "integer"}}],
                "put": {
                    "operationId": "replacePet",
                    "summary": "Replace a pet",
                    "parameters": [{"$ref": "#/components/parameters/limit"}, {"name": "X-Trace", "in": "header", "schema": {"type": "string"}}],
                    "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}}},
                    "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}}}}
                },
                "delete": {"responses": {"204": {"description": "gone"}}}
            }
        }))
        .expect("builds");
        assert_eq!(all.len(), 2);
        let (operation, tool) = &all[0];
        assert_eq!(tool.name, "replacePet");
        assert_eq!(tool.title.as_deref(), Some("Replace a pet"));
        assert_eq!(operation.method, reqwest::Method::PUT);
        assert_eq!(tool.annotations.idempotent_hint, Some(true));
        assert_eq!(tool.annotations.read_only_hint, Some(false));
        let input = &tool.input_schema;
        assert_eq!(input["required"], json!(["petId", "body"]));
        assert_eq!(input["properties"]["body"], json!({"$ref": "#/$defs/Pet"}));
        assert_eq!(input["properties"]["limit"], json!({"type": "integer"}));
        assert!(input["$defs"]["Pet"].is_object());
        let output = tool.output_schema.as_ref().expect("an output");
        assert_eq!(output["$ref"], "#/$defs/Pet");
        assert!(output["$defs"]["Pet"].is_object());
        let (delete, tool) = &all[1];
        assert_eq!(tool.name, "DELETE /pets/{petId}");
        assert_eq!(delete.parameters.len(), 1);
        assert!(tool.annotations.is_destructive());
        assert!(
            tool.description
                .as_deref()
                .unwrap_or_default()
                .contains("`DELETE /pets/{petId}`")
        );
    }

    #[test]
    fn headers_that_frame_or_route_the_request_are_never_arguments() {
        let header = |name: &str, required: bool| json!({"name": name, "in": "header", "required": required, "schema": {"type": "string"}});
        let declared = [
            "Host",
            "Content-Length",
            "transfer-encoding",
            "Connection",
            "Keep-Alive",
            "TE",
            "Trailer",
            "Upgrade",
            "Expect",
            "Cookie",
            "Proxy-Authorization",
            "Proxy-Connection",
            "Accept",
            "Content-Type",
            "Authorization",
        ];
        let mut parameters: Vec<Value> = declared.iter().map(|n| header(n, true)).collect();
        parameters.push(header("X-Request-Id", false));
        parameters.push(header("X-Forwarded-Host", false));
        parameters.push(json!({"name": "session", "in": "cookie", "schema": {"type": "string"}}));
        let all = tools(json!({
            "/upload": {"put": {"operationId": "upload", "parameters": parameters, "responses": {}}}
        }))
        .expect("builds");
        let (operation, tool) = &all[0];
        let input: Vec<&String> = tool.input_schema["properties"]
            .as_object()
            .map(|p| p.keys().collect())
            .unwrap_or_default();
        assert_eq!(input, ["X-Request-Id", "X-Forwarded-Host", "session"]);
        // A required one is dropped from `required` too, or no call could satisfy the schema.
        assert_eq!(
            tool.input_schema.get("required"),
            None,
            "{}",
            tool.input_schema
        );
        let sent: Vec<&str> = operation
            .parameters
            .iter()
            .map(|p| p.name.as_str())
            .collect();
        assert_eq!(sent, ["X-Request-Id", "X-Forwarded-Host", "session"]);
    }

    #[test]
    fn duplicate_operation_ids_and_undeclared_path_parameters_are_errors() {
        let error = tools(json!({
            "/a": {"get": {"operationId": "same", "responses": {}}},
            "/b": {"get": {"operationId": "same", "responses": {}}}
        }))
        .expect_err("duplicate");
        assert_eq!(error.pointer, "/paths/~1b/get/operationId");
        assert!(
            error.message.contains("also used at /paths/~1a/get"),
            "{error}"
        );
        let error = tools(json!({"/a/{id}": {"get": {"responses": {}}}})).expect_err("undeclared");
        assert!(error.message.contains("no path parameter `id`"), "{error}");
        // Where a parameter says it is, each mistake in words of its own.
        for (written, expected) in [
            (
                json!("body"),
                "which OpenAPI 3 has no more; describe it as the operation's `requestBody`",
            ),
            (
                json!("form"),
                "is `in: form`; `in` is one of path, query, header, cookie",
            ),
            (
                Value::Null,
                "needs `in`: one of path, query, header, cookie",
            ),
        ] {
            let mut parameter = json!({"name": "p", "schema": {"type": "string"}});
            if !written.is_null() {
                parameter["in"] = written;
            }
            let error =
                tools(json!({"/a": {"post": {"parameters": [parameter], "responses": {}}}}))
                    .expect_err("a wrong `in`");
            assert!(error.message.contains(expected), "{error}");
        }
    }

    #[test]
    fn a_path_template_with_stray_braces_is_refused_at_its_place() {
        let id =
            json!([{"name": "a", "in": "path", "required": true, "schema": {"type": "string"}}]);
        for (path, says) in [
            ("/x/{a", "never closes"),
            ("/x/a}", "does not pair up"),
            ("/x/{{a}}", "does not pair up"),
            ("/x/{}", "empty `{}`"),
        ] {
            let error = tools(json!({ path: {"parameters": id, "get": {"responses": {}}} }))
                .expect_err(path);
            assert_eq!(error.pointer, format!("/paths/{}", path.replace('/', "~1")));
            assert!(error.message.contains(says), "{path}: {error}");
        }
        assert!(
            tools(json!({"/x/{a}.json": {"parameters": id, "get": {"responses": {}}}})).is_ok()
        );
    }

    #[test]
    fn query_styles_default_to_form_exploded() {
        let all = tools(json!({"/s": {"get": {"parameters": [
            {"name": "tags", "in": "query", "schema": {"type": "array", "items": {"type": "string"}}},
            {"name": "ids", "in": "query", "explode": false, "schema": {"type": "array", "items": {"type": "integer"}}},
            {"name": "filter", "in": "query", "style": "deepObject", "schema": {"type": "object"}}
        ], "responses": {}}}}))
        .expect("builds");
        let parameters = &all[0].0.parameters;
        let find = |name: &str| parameters.iter().find(|p| p.name == name).expect(name);
        assert_eq!(
            (find("tags").style, find("tags").explode),
            (Style::Form, true)
        );
        assert_eq!(
            (find("ids").style, find("ids").explode),
            (Style::Form, false)
        );
        assert_eq!(find("filter").style, Style::DeepObject);
    }
}
