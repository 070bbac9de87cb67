//! One call's arguments → one HTTP request: the path template filled in with percent-escaped
//! values, query parameters written per their `style` and `explode`, headers and cookies,
//! the body as JSON, a form, multipart fields or text, and the credentials the operation's
//! security requirements name. RFC 6570 and OpenAPI's parameter serialization are the rules.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use reqwest::header::{HeaderName, HeaderValue};
use serde_json::{Map, Value};

use super::operations::{BODY, BodyKind, Location, Operation, Parameter, Style, placeholders};
use super::security::Credentials;

/// RFC 3986's unreserved characters stay; everything else is escaped.
pub(crate) const UNRESERVED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');
/// `allowReserved: true`: RFC 3986's reserved characters stay too, except those that would end
/// the value (`&`, `#`) or be read as a space (`+`).
const RESERVED_ALLOWED: &AsciiSet = &UNRESERVED
    .remove(b':')
    .remove(b'/')
    .remove(b'?')
    .remove(b'[')
    .remove(b']')
    .remove(b'@')
    .remove(b'!')
    .remove(b'$')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')')
    .remove(b'*')
    .remove(b',')
    .remove(b';')
    .remove(b'=');

/// A request ready to send, and its request line for messages (`GET /pets/7`).
pub(crate) struct Built {
    pub(crate) request: reqwest::RequestBuilder,
    pub(crate) line: String,
}

/// Builds the request for `operation` with `arguments` (already validated against the tool's
/// input schema) against `base` (no trailing slash). Errors say which argument is wrong.
pub(crate) fn build(
    client: &reqwest::Client,
    base: &str,
    operation: &Operation,
    arguments: &Map<String, Value>,
    credentials: &Credentials,
    default_security: Option<&Vec<Vec<String>>>,
    token: Option<&str>,
) -> Result<Built, String> {
    // A path with a query or a fragment of its own would put its parameters beside the query a
    // credential travels in (an API reading the first `api_key` acts under the document's or
    // the script's), or cut that query off: nothing is sent.
    if operation.path.contains(['?', '#']) {
        return Err(format!(
            "the OpenAPI document's path `{}` holds a `?` or `#`, which would mix a query of its own with the parameters and credential capabilities adds, so nothing was sent; a document gives query parameters as `in: query`",
            operation.path
        ));
    }
    let mut path = operation.path.clone();
    for (name, range) in placeholders(&operation.path).into_iter().rev() {
        let Some(parameter) = operation
            .parameters
            .iter()
            .find(|p| p.location == Location::Path && p.name == name)
        else {
            continue;
        };
        let Some(value) = arguments.get(&parameter.argument).filter(|v| !v.is_null()) else {
            return Err(format!(
                "the path parameter `{}` is required",
                parameter.argument
            ));
        };
        let expanded = path_value(parameter, value);
        if expanded.is_empty() {
            return Err(format!(
                "the path parameter `{}` is empty; a path segment needs a value",
                parameter.argument
            ));
        }
        path.replace_range(range, &expanded);
    }
    // A segment that is only dots means "here" or "the parent" to every URL parser, which
    // removes it, and the request lands on another resource (`DELETE /items/..` on the
    // collection). Escaping does not help: `%2E%2E` counts as `..` too (WHATWG URL). Values
    // never add a `/` (it is escaped), so the template's segments line up with the path's.
    for (template, built) in operation.path.split('/').zip(path.split('/')) {
        if template != built && is_dot_segment(built) {
            let names: Vec<String> = placeholders(template)
                .into_iter()
                .map(|(name, _)| format!("`{name}`"))
                .collect();
            return Err(format!(
                "the path parameter {} makes the path segment `{built}`, which URLs read as \"this folder\" or \"the parent\" and drop, so the request would reach another resource; pass the identifier itself",
                names.join(", ")
            ));
        }
    }
    let mut query: Vec<String> = Vec::new();
    let mut headers: Vec<(String, String)> = Vec::new();
    let mut cookies: Vec<String> = Vec::new();
    for parameter in &operation.parameters {
        let Some(value) = arguments.get(&parameter.argument).filter(|v| !v.is_null()) else {
            continue;
        };
        match parameter.location {
            Location::Path => {}
            Location::Query => query.extend(query_pairs(parameter, value)),
            Location::Header => headers.push((
                parameter.name.clone(),
                simple(parameter, value, |s| s.to_string()),
            )),
            Location::Cookie => cookies.push(format!(
                "{}={}",
                parameter.name,
                simple(parameter, value, |s| encode(s, UNRESERVED))
            )),
        }
    }
    let mut added = credentials.apply(operation.security.as_ref().or(default_security), token);
    // A query parameter, header or cookie the credential travels in never comes from the
    // arguments too (an exploded object's member, a deepObject key, a declared parameter of the
    // same name): an API reading the first of two would act under a key the script chose. Names
    // are compared ignoring case, as many servers read them (headers, ASP.NET's query).
    let names = |pairs: &[String]| pairs.iter().map(|pair| pair_name(pair)).collect::<Vec<_>>();
    let header_names = |headers: &[(String, String)]| {
        headers
            .iter()
            .map(|(name, _)| name.clone())
            .collect::<Vec<_>>()
    };
    for (what, sent, carried) in [
        ("query parameter", names(&query), names(&added.query)),
        (
            "header",
            header_names(&headers),
            header_names(&added.headers),
        ),
        ("cookie", names(&cookies), names(&added.cookies)),
    ] {
        if let Some(name) = sent
            .iter()
            .find(|name| carried.iter().any(|c| c.eq_ignore_ascii_case(name)))
        {
            return Err(format!(
                "the arguments would send the {what} `{name}`, which carries the source's credential; leave it out (the credential is added to every request)"
            ));
        }
    }
    query.append(&mut added.query);
    headers.append(&mut added.headers);
    cookies.append(&mut added.cookies);
    let mut url = format!("{base}{path}");
    if !query.is_empty() {
        url.push('?');
        url.push_str(&query.join("&"));
    }
    let parsed = reqwest::Url::parse(&url)
        .map_err(|error| format!("the request URL `{base}{path}` is not valid: {error}"))?;
    // Defence in depth: whatever the values were, the request stays under the API's root and
    // the operation's own path up to its first placeholder. The root is compared as given, not
    // as the document's path resolves against it: a path of `/../admin` (or `/%2e%2e/admin`)
    // in a document from elsewhere must not take the source's credentials out of the root.
    let literal = &operation.path[..operation.path.find('{').unwrap_or(operation.path.len())];
    let under_root = reqwest::Url::parse(base).is_ok_and(|root| {
        let root = root.path().trim_end_matches('/');
        root.is_empty()
            || parsed.path() == root
            || parsed
                .path()
                .strip_prefix(root)
                .is_some_and(|rest| rest.starts_with('/'))
    });
    let within = under_root
        && !climbs(literal)
        && reqwest::Url::parse(&format!("{base}{literal}"))
            .is_ok_and(|expected| parsed.path().starts_with(expected.path()));
    if !within {
        return Err(format!(
            "the request URL `{base}{path}` would leave the operation's path `{}`; check the path parameters",
            operation.path
        ));
    }
    let mut request = client
        .request(operation.method.clone(), parsed)
        .header(reqwest::header::ACCEPT, "application/json, */*;q=0.8");
    for (name, value) in headers {
        let header = HeaderName::try_from(name.as_str())
            .map_err(|_| format!("`{name}` is not a valid HTTP header name"))?;
        let sensitive = added.sensitive.contains(&name);
        let mut value = HeaderValue::try_from(value).map_err(|_| {
            if sensitive {
                format!("the credential sent in header `{name}` has characters a header cannot carry (often a line break at its end, from a pasted value or a file); check the source's `auth` value and the secret or variable it names")
            } else {
                format!("the value of header `{name}` has characters a header cannot carry (line breaks, control characters)")
            }
        })?;
        value.set_sensitive(sensitive);
        request = request.header(header, value);
    }
    if !cookies.is_empty() {
        let mut value = HeaderValue::try_from(cookies.join("; "))
            .map_err(|_| "a cookie value has characters a header cannot carry".to_string())?;
        value.set_sensitive(true);
        request = request.header(reqwest::header::COOKIE, value);
    }
    if let Some(body) = &operation.body
        && let Some(value) = arguments.get(BODY)
    {
        request = match body.kind {
            BodyKind::Json => request
                .header(reqwest::header::CONTENT_TYPE, &body.content_type)
                .body(value.to_string()),
            BodyKind::Form => {
                let fields = fields(value)?;
                let mut form = url::form_urlencoded::Serializer::new(String::new());
                for (key, text) in &fields {
                    form.append_pair(key, text);
                }
                request
                    .header(
                        reqwest::header::CONTENT_TYPE,
                        "application/x-www-form-urlencoded",
                    )
                    .body(form.finish())
            }
            BodyKind::Multipart => {
                let mut form = reqwest::multipart::Form::new();
                for (key, text) in fields(value)? {
                    form = form.text(key, text);
                }
                request.multipart(form)
            }
            BodyKind::Text => request
                .header(reqwest::header::CONTENT_TYPE, &body.content_type)
                .body(primitive(value)),
        };
    }
    Ok(Built {
        request,
        line: format!("{} {path}", operation.method),
    })
}

/// A form's or multipart body's fields: each top-level property, arrays as repeated fields,
/// nested objects as JSON text.
fn fields(value: &Value) -> Result<Vec<(String, String)>, String> {
    let Value::Object(map) = value else {
        return Err("`body` must be an object of form fields".into());
    };
    let mut out = Vec::new();
    for (key, value) in map {
        match value {
            Value::Null => {}
            Value::Array(items) => {
                out.extend(items.iter().map(|item| (key.clone(), primitive(item))))
            }
            other => out.push((key.clone(), primitive(other))),
        }
    }
    Ok(out)
}

/// A scalar as text; anything else as JSON.
fn primitive(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// `.`, `..` and their percent-escaped spellings, which URL parsers treat alike.
fn is_dot_segment(segment: &str) -> bool {
    matches!(
        segment.to_ascii_lowercase().as_str(),
        "." | "%2e" | ".." | ".%2e" | "%2e." | "%2e%2e"
    )
}

fn encode(text: &str, set: &'static AsciiSet) -> String {
    utf8_percent_encode(text, set).to_string()
}

/// An object's members, or an array's items, as escaped text.
fn items(value: &Value, escape: &dyn Fn(&str) -> String) -> Items {
    match value {
        Value::Array(items) => Items::List(items.iter().map(|v| escape(&primitive(v))).collect()),
        Value::Object(map) => Items::Pairs(
            map.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (escape(k), escape(&primitive(v))))
                .collect(),
        ),
        other => Items::One(escape(&primitive(other))),
    }
}

enum Items {
    One(String),
    List(Vec<String>),
    Pairs(Vec<(String, String)>),
}

/// `simple` style (path and header values): `a,b`; objects `k,v` or, exploded, `k=v`.
fn simple(parameter: &Parameter, value: &Value, escape: impl Fn(&str) -> String) -> String {
    if parameter.as_json {
        return escape(&value.to_string());
    }
    match items(value, &escape) {
        Items::One(text) => text,
        Items::List(list) => list.join(","),
        Items::Pairs(pairs) => join_pairs(&pairs, parameter.explode, "=", ","),
    }
}

fn join_pairs(pairs: &[(String, String)], explode: bool, inner: &str, outer: &str) -> String {
    pairs
        .iter()
        .map(|(k, v)| {
            if explode {
                format!("{k}{inner}{v}")
            } else {
                format!("{k},{v}")
            }
        })
        .collect::<Vec<_>>()
        .join(outer)
}

/// A path parameter per its style: `simple` (`a,b`), `label` (`.a.b`), `matrix` (`;id=a;id=b`).
fn path_value(parameter: &Parameter, value: &Value) -> String {
    let escape = |text: &str| encode(text, UNRESERVED);
    if parameter.as_json {
        return escape(&value.to_string());
    }
    let name = &parameter.name;
    match parameter.style {
        Style::Label => {
            let separator = if parameter.explode { "." } else { "," };
            let inner = match items(value, &escape) {
                Items::One(text) => text,
                Items::List(list) => list.join(separator),
                Items::Pairs(pairs) => join_pairs(&pairs, parameter.explode, "=", separator),
            };
            format!(".{inner}")
        }
        Style::Matrix => match items(value, &escape) {
            Items::One(text) => format!(";{name}={text}"),
            Items::List(list) if parameter.explode => {
                list.iter().map(|v| format!(";{name}={v}")).collect()
            }
            Items::List(list) => format!(";{name}={}", list.join(",")),
            Items::Pairs(pairs) if parameter.explode => {
                pairs.iter().map(|(k, v)| format!(";{k}={v}")).collect()
            }
            Items::Pairs(pairs) => format!(";{name}={}", join_pairs(&pairs, false, "=", ",")),
        },
        _ => simple(parameter, value, escape),
    }
}

/// The name of an escaped `name=value` query pair, as the server reads it.
/// Whether a path the document wrote has a segment that servers read as "the parent" though a
/// URL parser leaves it (`..;` for Tomcat and Spring, `%2e%2e%2f`, a backslash): one that only
/// climbs on the server never shows in the parsed URL, and would take the credentials there.
fn climbs(path: &str) -> bool {
    path.split('/').any(|segment| {
        let decoded = percent_encoding::percent_decode_str(segment).decode_utf8_lossy();
        let name = decoded.split(';').next().unwrap_or_default();
        name == ".." || (name == "." && decoded.contains(';')) || decoded.contains(['/', '\\'])
    })
}

fn pair_name(pair: &str) -> String {
    let name = pair.split_once('=').map_or(pair, |(name, _)| name);
    percent_encoding::percent_decode_str(name)
        .decode_utf8_lossy()
        .into_owned()
}

/// A query parameter as `name=value` pairs, escaped, per its style and `explode`.
fn query_pairs(parameter: &Parameter, value: &Value) -> Vec<String> {
    let set = if parameter.allow_reserved {
        RESERVED_ALLOWED
    } else {
        UNRESERVED
    };
    let escape = |text: &str| encode(text, set);
    let name = encode(&parameter.name, UNRESERVED);
    if parameter.as_json {
        return vec![format!("{name}={}", escape(&value.to_string()))];
    }
    let delimiter = match parameter.style {
        Style::SpaceDelimited => "%20",
        Style::PipeDelimited => "|",
        _ => ",",
    };
    match (items(value, &escape), parameter.style) {
        (Items::One(text), _) => vec![format!("{name}={text}")],
        (Items::List(list), _) if parameter.explode => {
            list.iter().map(|v| format!("{name}={v}")).collect()
        }
        (Items::List(list), _) => vec![format!("{name}={}", list.join(delimiter))],
        (Items::Pairs(pairs), Style::DeepObject) => pairs
            .iter()
            .map(|(k, v)| format!("{name}%5B{k}%5D={v}"))
            .collect(),
        (Items::Pairs(pairs), _) if parameter.explode => {
            pairs.iter().map(|(k, v)| format!("{k}={v}")).collect()
        }
        (Items::Pairs(pairs), _) => vec![format!("{name}={}", join_pairs(&pairs, false, "=", ","))],
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn parameter(name: &str, location: Location, style: Style, explode: bool) -> Parameter {
        Parameter {
            name: name.into(),
            argument: name.into(),
            location,
            style,
            explode,
            allow_reserved: false,
            as_json: false,
        }
    }

    #[test]
    fn path_values_are_escaped_so_they_stay_one_segment() {
        let p = parameter("id", Location::Path, Style::Simple, false);
        assert_eq!(path_value(&p, &json!("a/b c?#%")), "a%2Fb%20c%3F%23%25");
        assert_eq!(path_value(&p, &json!("%2e")), "%252e");
        assert_eq!(path_value(&p, &json!(7)), "7");
        assert_eq!(path_value(&p, &json!(["a", "b"])), "a,b");
        assert_eq!(path_value(&p, &json!({"x": 1, "y": 2})), "x,1,y,2");
        let p = parameter("id", Location::Path, Style::Label, true);
        assert_eq!(path_value(&p, &json!(["a", "b"])), ".a.b");
        let p = parameter("id", Location::Path, Style::Matrix, false);
        assert_eq!(path_value(&p, &json!(["a", "b"])), ";id=a,b");
        let p = parameter("id", Location::Path, Style::Matrix, true);
        assert_eq!(path_value(&p, &json!(["a", "b"])), ";id=a;id=b");
    }

    /// The URL `build` makes for `path` with `arguments`, against `https://api.example/v1/t`.
    fn url(path: &str, style: Style, arguments: Value) -> Result<String, String> {
        let parameters = placeholders(path)
            .into_iter()
            .map(|(name, _)| parameter(&name, Location::Path, style, false))
            .collect();
        url_with(path, parameters, Vec::new(), arguments)
    }

    /// [`url`] with `parameters` and `credentials` for the schemes `key` (an API key in the
    /// query parameter `api_key`), or else `header` and `cookie` together (one in the header
    /// `X-API-Key`, one in the cookie `sess`), and `token` (bearer).
    fn url_with(
        path: &str,
        parameters: Vec<Parameter>,
        credentials: Vec<(String, String)>,
        arguments: Value,
    ) -> Result<String, String> {
        let document = super::super::spec::parse(
            json!({
                "openapi": "3.1.0",
                "info": {"title": "t", "version": "1"},
                "paths": {},
                "components": {"securitySchemes": {
                    "key": {"type": "apiKey", "in": "query", "name": "api_key"},
                    "token": {"type": "http", "scheme": "bearer"},
                    "header": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
                    "cookie": {"type": "apiKey", "in": "cookie", "name": "sess"}
                }},
                "security": [{"key": []}]
            })
            .to_string(),
        )
        .expect("a valid document");
        let credentials = Credentials::new(&document, credentials, None).expect("known schemes");
        let operation = Operation {
            name: "op".into(),
            method: reqwest::Method::DELETE,
            path: path.into(),
            server: None,
            parameters,
            body: None,
            security: None,
        };
        let Value::Object(arguments) = arguments else {
            panic!("arguments are an object");
        };
        let built = build(
            &reqwest::Client::new(),
            "https://api.example/v1/t",
            &operation,
            &arguments,
            &credentials,
            Some(&vec![
                vec!["key".into()],
                vec!["header".into(), "cookie".into()],
            ]),
            None,
        )?;
        let request = built.request.build().map_err(|e| e.to_string())?;
        Ok(request.url().to_string())
    }

    #[test]
    fn dot_segments_in_path_values_are_refused_so_the_request_stays_on_its_resource() {
        crate::tls::install_crypto_provider();
        for value in [".", "..", "%2e"] {
            let built = url("/items/{id}", Style::Simple, json!({"id": value}));
            // `%2e` is escaped to `%252e`, a value like any other.
            if value == "%2e" {
                assert_eq!(built.as_deref(), Ok("https://api.example/v1/t/items/%252e"));
                continue;
            }
            let error = built.expect_err(value);
            assert!(error.contains("path parameter `id`"), "{error}");
            assert!(error.contains(&format!("segment `{value}`")), "{error}");
        }
        // `label` adds a dot of its own: `.` becomes `..`.
        let error = url("/files/{name}", Style::Label, json!({"name": "."})).expect_err("..");
        assert!(error.contains("segment `..`"), "{error}");
        // Two values that are dots only together.
        let error = url("/f/{a}{b}", Style::Simple, json!({"a": ".", "b": "."})).expect_err("..");
        assert!(error.contains("`a`, `b`"), "{error}");
        // Dots beside other characters are a name like any other.
        assert_eq!(
            url("/items/{id}", Style::Simple, json!({"id": "..a"})).as_deref(),
            Ok("https://api.example/v1/t/items/..a")
        );
    }

    #[test]
    fn a_document_path_that_climbs_out_of_the_apis_root_is_refused() {
        crate::tls::install_crypto_provider();
        for path in [
            "/../../escape",
            "/%2e%2e/enc",
            "/./../t2",
            "/..;/admin",
            "/%2e%2e%2fadmin",
            "/..%5cadmin",
        ] {
            let error = url(path, Style::Simple, json!({})).expect_err(path);
            assert!(
                error.contains("would leave the operation's path"),
                "{path}: {error}"
            );
        }
        for path in ["/keyed?api_key={k}&x=", "/keyed?api_key={k}#", "/frag#{k}"] {
            let error = url(path, Style::Simple, json!({"k": "mine"})).expect_err(path);
            assert!(error.contains("holds a `?` or `#`"), "{path}: {error}");
        }
        // A dot segment that stays under the root is only a longer way to write the path.
        let within = url("/items/./x", Style::Simple, json!({})).expect("under the root");
        assert!(
            within.starts_with("https://api.example/v1/t/items/x"),
            "{within}"
        );
    }

    #[test]
    fn no_argument_sends_the_header_or_cookie_the_credential_travels_in() {
        crate::tls::install_crypto_provider();
        let credentials = || {
            vec![
                ("header".to_string(), "real".to_string()),
                ("cookie".to_string(), "real".to_string()),
            ]
        };
        for (parameter, arguments, named) in [
            (
                parameter("x-api-key", Location::Header, Style::Simple, false),
                json!({ "x-api-key": "chosen" }),
                "the header `x-api-key`",
            ),
            (
                parameter("sess", Location::Cookie, Style::Form, false),
                json!({ "sess": "chosen" }),
                "the cookie `sess`",
            ),
        ] {
            let refused = url_with("/items", vec![parameter], credentials(), arguments)
                .expect_err("a second credential");
            assert!(
                refused.contains(&format!("{named}, which carries the source's credential")),
                "{refused}"
            );
        }
        // A key with a line break (pasted, or read from a file) is named as the credential.
        let broken = vec![
            ("header".to_string(), "real\n".to_string()),
            ("cookie".to_string(), "real".to_string()),
        ];
        let refused = url_with("/items", Vec::new(), broken, json!({})).expect_err("a line break");
        assert!(
            refused.contains("the credential sent in header `X-API-Key`"),
            "{refused}"
        );
        // Another cookie beside the credential's goes out.
        let other = parameter("theme", Location::Cookie, Style::Form, false);
        assert!(
            url_with(
                "/items",
                vec![other],
                credentials(),
                json!({"theme": "dark"})
            )
            .is_ok()
        );
    }

    #[test]
    fn no_argument_sends_the_query_parameter_the_credential_travels_in() {
        let key = || vec![("key".to_string(), "real".to_string())];
        let form = parameter("filter", Location::Query, Style::Form, true);
        let deep = parameter("filter", Location::Query, Style::DeepObject, true);
        let declared = parameter("api_key", Location::Query, Style::Form, true);
        for (parameter, arguments) in [
            (form.clone(), json!({ "filter": { "api_key": "chosen" } })),
            (declared, json!({ "api_key": "chosen" })),
            (
                parameter("Api_Key", Location::Query, Style::Form, true),
                json!({ "Api_Key": "chosen" }),
            ),
        ] {
            let refused = url_with("/items", vec![parameter], key(), arguments)
                .expect_err("a second api_key");
            assert!(
                refused
                    .to_lowercase()
                    .contains("`api_key`, which carries the source's credential"),
                "{refused}"
            );
        }
        // Other members go, and the credential with them; a deepObject's keys are its own.
        let sent = url_with(
            "/items",
            vec![form],
            key(),
            json!({ "filter": { "owner": "me" } }),
        )
        .expect("builds");
        assert_eq!(sent, "https://api.example/v1/t/items?owner=me&api_key=real");
        let sent = url_with(
            "/items",
            vec![deep],
            key(),
            json!({ "filter": { "api_key": "x" } }),
        )
        .expect("builds");
        assert!(sent.ends_with("&api_key=real"), "{sent}");
        // Without a stored key nothing carries it, and the argument is the API's to read.
        let sent = url_with(
            "/items",
            vec![parameter("filter", Location::Query, Style::Form, true)],
            Vec::new(),
            json!({ "filter": { "api_key": "mine" } }),
        )
        .expect("builds");
        assert_eq!(sent, "https://api.example/v1/t/items?api_key=mine");
    }

    #[test]
    fn query_styles_follow_openapi() {
        let form = parameter("tag", Location::Query, Style::Form, true);
        assert_eq!(
            query_pairs(&form, &json!(["a b", "c&d"])),
            ["tag=a%20b", "tag=c%26d"]
        );
        assert_eq!(
            query_pairs(&form, &json!({"x": 1, "y": "z"})),
            ["x=1", "y=z"]
        );
        let form = parameter("tag", Location::Query, Style::Form, false);
        assert_eq!(query_pairs(&form, &json!(["a", "b,c"])), ["tag=a,b%2Cc"]);
        assert_eq!(query_pairs(&form, &json!({"x": 1})), ["tag=x,1"]);
        let space = parameter("t", Location::Query, Style::SpaceDelimited, false);
        assert_eq!(query_pairs(&space, &json!(["a", "b"])), ["t=a%20b"]);
        let pipe = parameter("t", Location::Query, Style::PipeDelimited, false);
        assert_eq!(query_pairs(&pipe, &json!(["a", "b"])), ["t=a|b"]);
        let deep = parameter("f", Location::Query, Style::DeepObject, true);
        assert_eq!(
            query_pairs(&deep, &json!({"role": "admin", "n": 2})),
            ["f%5Brole%5D=admin", "f%5Bn%5D=2"]
        );
        assert_eq!(query_pairs(&deep, &json!(true)), ["f=true"]);
    }
}
