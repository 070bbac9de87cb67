//! OpenAPI sources against a real HTTP API: the FastAPI app in `tests/peers/openapi_app.py`,
//! whose own `/openapi.json` is the source's document. Adding, listing, searching, describing
//! and calling through `exec`; credentials placed as its security schemes say; path escaping and
//! query styles as the server receives them; error statuses as `ToolError`s; a chain of three
//! operations whose write waits for approval and runs once; and every way a document can be
//! refused, each with the place and the fix.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use crate::approvals::{envelope, exec};
use crate::common::{LocalServer, free_port, repo};
use crate::support::{Home, Run};

/// The FastAPI app on a free port; killed when dropped.
struct PetShop {
    base: String,
    _server: LocalServer,
}

impl PetShop {
    fn start() -> PetShop {
        PetShop::start_with(None)
    }

    /// The app recording every request it receives in `state`, where its hostile document
    /// also reads where to move an operation.
    fn start_with(state: Option<&Path>) -> PetShop {
        let port = free_port();
        let mut command = Command::new(repo().join(".venv/bin/python"));
        command
            .arg(repo().join("tests/peers/openapi_app.py"))
            .arg(port.to_string());
        if let Some(state) = state {
            command.arg(state);
        }
        let server = LocalServer::start(
            command,
            port,
            Duration::from_secs(60),
            "the venv's python with the FastAPI app (tests/setup.sh installs fastapi)",
        );
        PetShop {
            base: server.base.clone(),
            _server: server,
        }
    }

    fn document(&self) -> String {
        format!("{}/openapi.json", self.base)
    }
}

/// A home whose source `pets` is the app, with the credentials the app accepts taken from the
/// environment.
fn shop_home(shop: &PetShop) -> Home {
    let home = Home::new()
        .with_env("PETS_TOKEN", "tok-123")
        .with_env("PETS_KEY", "key-456");
    home.run(&[
        "source",
        "add",
        "pets",
        "--openapi",
        &shop.document(),
        "--auth",
        "HTTPBearer=${env:PETS_TOKEN}",
        "--auth",
        "APIKeyHeader=${env:PETS_KEY}",
        "--auth",
        "APIKeyQuery=${env:PETS_KEY}",
        "--auth",
        "HTTPBasic=ann:pw",
    ])
    .ok();
    // A form post that changes nothing, allowed so the escaping test needs no approval.
    let mut config = std::fs::read_to_string(home.config_path()).unwrap();
    config.push_str("\n[[policy.rules]]\nmatch = \"pets.addNote\"\naction = \"allow\"\n");
    home.write_config(&config);
    home
}

/// Runs `code` through `exec` and returns its result, failing unless the run completed.
pub(crate) fn completed(home: &Home, code: &str) -> Value {
    let run = exec(home, &["exec", "-", "--json"], code);
    let envelope = envelope(&run);
    assert_eq!(
        envelope["status"], "completed",
        "{envelope}\n{}",
        run.stderr
    );
    envelope["result"].clone()
}

#[test]
fn an_openapi_source_is_added_searched_described_and_called() {
    let shop = PetShop::start();
    let home = Home::new();
    let added = home
        .run(&["source", "add", "pets", "--openapi", &shop.document()])
        .ok();
    assert!(
        added
            .stdout
            .contains("is ready: 14 tools, OpenAPI 3.1.0, server Pet shop 1.2.3"),
        "{}",
        added.stdout
    );
    assert!(added.stdout.contains("pets.createPet"), "{}", added.stdout);
    let config = std::fs::read_to_string(home.config_path()).unwrap();
    assert!(
        config.contains(&format!("openapi = \"{}\"", shop.document())),
        "{config}"
    );

    let listed = home.run(&["source", "list", "--json"]).ok();
    let rows: Value = serde_json::from_str(&listed.stdout).unwrap();
    assert_eq!(rows[0]["transport"], "openapi");
    assert_eq!(rows[0]["toolCount"], 14);

    let found = home.run(&["search", "add a pet to the shop"]).ok();
    let first = found
        .stdout
        .lines()
        .find(|line| line.trim_start().starts_with("pets."))
        .unwrap_or_default();
    assert!(first.contains("pets.createPet("), "{}", found.stdout);

    let described = home.run(&["describe", "pets.createPet"]).ok();
    for expected in [
        "createPet(input: {",
        "body: pets.NewPet;",
        "interface NewPet {",
        "name: string;",
        "`POST /pets`",
        "Promise<pets.CreatePetResult>",
    ] {
        assert!(
            described.stdout.contains(expected),
            "{expected}\n{}",
            described.stdout
        );
    }
    // GET is read-only and so allowed by default; POST is not, and asks.
    let policy = home.run(&["search", "pets"]).ok();
    let line = |address: &str| {
        policy
            .stdout
            .lines()
            .find(|l| l.contains(address))
            .unwrap_or_default()
            .to_string()
    };
    assert!(
        !line("pets.getPet(").contains("[asks]"),
        "{}",
        policy.stdout
    );
    assert!(
        line("pets.deletePet(").contains("[asks]"),
        "{}",
        policy.stdout
    );

    let result = completed(
        &home,
        r#"
        const dogs = await pets.listPets({ tag: ["dog"], limit: 5 });
        const one = await pets.getPet({ pet_id: 2 });
        const text = await pets.plainText();
        return { dogs, one, text };
        "#,
    );
    assert_eq!(
        result,
        json!({
            "dogs": [{ "id": 1, "name": "Rex", "tag": "dog" }],
            "one": { "id": 2, "name": "Tom", "tag": "cat" },
            "text": "just text"
        })
    );
}

#[test]
fn paths_are_escaped_and_query_styles_reach_the_server_as_written() {
    let shop = PetShop::start();
    let home = shop_home(&shop);
    let result = completed(
        &home,
        r#"
        const path = await pets.echoPath({ value: "a/b c?#%é" });
        const query = await pets.echoQuery({ ids: [1, 2], q: "x&y=z +" });
        const form = await pets.addNote({ body: { title: "hi & bye", body: "a=b" } });
        return { path, query, form };
        "#,
    );
    assert_eq!(result["path"]["value"], "a/b c?#%é");
    assert_eq!(result["path"]["raw_path"], "/echo/a%2Fb%20c%3F%23%25%C3%A9");
    assert_eq!(result["query"]["ids"], json!([1, 2]));
    assert_eq!(result["query"]["q"], "x&y=z +");
    assert_eq!(
        result["query"]["raw_query"],
        "ids=1&ids=2&q=x%26y%3Dz%20%2B"
    );
    assert_eq!(
        result["form"],
        json!({ "title": "hi & bye", "body": "a=b" })
    );
}

#[test]
fn credentials_go_where_the_security_schemes_say_and_a_missing_one_is_named() {
    let shop = PetShop::start();
    let home = shop_home(&shop);
    let result = completed(
        &home,
        r#"
        const keyed = await pets.keyed();
        const who = await pets.whoami();
        return { keyed, who };
        "#,
    );
    assert_eq!(result["keyed"], json!({ "ok": true }));
    assert_eq!(result["who"], json!({ "user": "ann" }));

    // A source without credentials: the server's 401 says which scheme to configure.
    let bare = Home::new();
    bare.run(&[
        "source",
        "add",
        "pets",
        "--openapi",
        &shop.document(),
        "--no-test",
    ])
    .ok();
    let result = completed(
        &bare,
        r#"
        try { await pets.keyed(); } catch (e) {
            return { code: e.code, status: e.status, retryable: e.retryable, hint: e.hint };
        }
        "#,
    );
    assert_eq!(result["code"], "tool_error");
    assert_eq!(result["status"], 401);
    assert_eq!(result["retryable"], false);
    let hint = result["hint"].as_str().unwrap_or_default();
    assert!(
        hint.contains("APIKeyQuery") && hint.contains("auth = { APIKeyQuery"),
        "{hint}"
    );
}

#[test]
fn credentials_an_api_repeats_are_blanked_whether_stored_or_from_the_environment() {
    let shop = PetShop::start();
    let stored = "stored-query-key-0123456789";
    let from_env = "env-header-key-9876543210";
    let home = Home::new()
        .with_env("CAPABILITIES_PASSPHRASE", "a passphrase for the file")
        .with_env("PETS_HEADER_KEY", from_env);
    home.write_config("[credentials]\nstore = \"file\"\n");
    let mut set = home.command(&["credential", "set", "querykey"]);
    Run::with_stdin(&mut set, stored).ok();
    home.run(&[
        "source",
        "add",
        "pets",
        "--openapi",
        &shop.document(),
        "--auth",
        "APIKeyQuery=${secret:querykey}",
        "--header",
        "X-API-Key=${env:PETS_HEADER_KEY}",
        "--no-test",
    ])
    .ok();
    let result = completed(
        &home,
        r#"try { await pets.keyed(); } catch (e) { return { message: e.message, hint: e.hint }; }"#,
    );
    let said = result.to_string();
    assert!(
        said.contains("bad key ••• (header key •••)")
            && !said.contains(stored)
            && !said.contains(from_env),
        "{said}"
    );
}

#[test]
fn error_statuses_become_tool_errors_with_status_retryable_and_hint() {
    let shop = PetShop::start();
    let home = shop_home(&shop);
    let result = completed(
        &home,
        r#"
        const out = {};
        const calls = { missing: () => pets.getPet({ pet_id: 99 }), limited: () => pets.limited(),
                        broken: () => pets.broken(), image: () => pets.image() };
        for (const [name, call] of Object.entries(calls)) {
            try { await call(); out[name] = "no error"; } catch (e) {
                out[name] = { name: e.name, code: e.code, status: e.status, retryable: e.retryable,
                              hint: e.hint, message: e.message };
            }
        }
        return out;
        "#,
    );
    for (name, status, retryable, field, expected) in [
        (
            "missing",
            json!(404),
            false,
            "message",
            "GET /pets/99 answered HTTP 404 Not Found: {\"detail\":\"no pet 99\"}",
        ),
        ("limited", json!(429), true, "hint", "Retry-After: 7"),
        ("broken", json!(500), true, "message", "internal trouble"),
        (
            "image",
            Value::Null,
            false,
            "message",
            "image/png (11 bytes), which is binary",
        ),
    ] {
        let failure = &result[name];
        assert_eq!(failure["name"], "ToolError", "{failure}");
        assert_eq!(failure["code"], "tool_error", "{failure}");
        assert_eq!(failure["status"], status, "{failure}");
        assert_eq!(failure["retryable"], retryable, "{failure}");
        let text = failure[field].as_str().unwrap_or_default();
        assert!(text.contains(expected), "{failure}");
    }
}

#[test]
fn a_read_from_an_api_that_cannot_be_reached_was_not_sent_and_may_be_retried() {
    let shop = PetShop::start();
    let home = Home::new();
    // The document is the app's; the API's address names a port nothing listens on.
    let dead = format!("http://127.0.0.1:{}/", free_port());
    home.run(&[
        "source",
        "add",
        "pets",
        "--openapi",
        &shop.document(),
        "--base-url",
        &dead,
        "--no-test",
    ])
    .ok();
    let run = exec(
        &home,
        &["exec", "-", "--json"],
        r#"
        try { await pets.getPet({ pet_id: 1 }); return "sent"; }
        catch (e) { return { code: e.code, retryable: e.retryable, hint: e.hint ?? null, message: e.message }; }
        "#,
    );
    let envelope = envelope(&run);
    assert_eq!(envelope["status"], "completed", "{envelope}");
    let failure = &envelope["result"];
    assert_eq!(failure["code"], "upstream_unavailable", "{envelope}");
    assert_eq!(failure["retryable"], true, "{envelope}");
    let message = failure["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("cannot connect to") && message.contains("nothing was sent"),
        "{envelope}"
    );
    assert!(
        !failure["hint"]
            .as_str()
            .unwrap_or_default()
            .contains("may have taken effect"),
        "{envelope}"
    );
    assert_eq!(envelope["calls"][0]["outcome"], "not_sent", "{envelope}");
    assert!(envelope.get("recovery").is_none(), "{envelope}");
}

/// The API had the request, and only the redirect it answered with led nowhere: the write may
/// have acted, so its outcome is unknown and the script must not be sent again, however the
/// failure reads (a refused connection, like a request that never left).
#[test]
fn a_write_whose_redirect_cannot_be_followed_may_have_acted() {
    let home = Home::new();
    let port = free_port();
    let log = home.path().join("requests.log");
    let mut server = Command::new(repo().join(".venv/bin/python"))
        .arg(repo().join("tests/peers/redirect_once_server.py"))
        .arg(port.to_string())
        .arg(&log)
        .spawn()
        .expect("the venv's python runs");
    assert!(
        crate::common::listening_within(port, Duration::from_secs(30)),
        "the server did not listen"
    );
    let document = one_operation_document(
        &home,
        &format!("http://127.0.0.1:{port}"),
        json!({ "/write": { "post": { "operationId": "write",
            "responses": { "200": { "description": "ok" } } } } }),
    );
    home.run(&["source", "add", "api", "--openapi", &document, "--no-test"])
        .ok();
    home.run(&["policy", "set", "api.write", "allow"]).ok();
    let run = exec(
        &home,
        &["exec", "-", "--json"],
        "return await api.write({});",
    );
    let _ = server.wait();
    let failed = envelope(&run);
    assert_eq!(
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .next(),
        Some("POST /write HTTP/1.1"),
        "the request reached the API"
    );
    assert_eq!(failed["calls"][0]["outcome"], "unknown", "{failed}");
    assert_eq!(
        failed["error"]["recovery"]["execute_request"], "do_not_replay",
        "{failed}"
    );
}

#[test]
fn a_chain_of_three_operations_waits_for_approval_of_its_write_and_writes_once() {
    let shop = PetShop::start();
    let home = shop_home(&shop);
    const SCRIPT: &str = r#"
        const before = await pets.listPets();
        const created = await pets.createPet({ body: { name: "Fido", tag: "dog" } });
        const fetched = await pets.getPet({ pet_id: created.id });
        return { before: before.length, created, fetched };
    "#;
    let paused = exec(&home, &["exec", "-", "--json"], SCRIPT);
    assert_eq!(paused.code, 3, "{}\n{}", paused.stdout, paused.stderr);
    let paused = envelope(&paused);
    assert_eq!(paused["status"], "awaiting_approval");
    assert_eq!(paused["pending"][0]["address"], "pets.createPet");
    let run_id = paused["runId"].as_str().unwrap().to_string();
    let stats = || completed(&home, "return await pets.stats();");
    assert_eq!(stats(), json!({}), "nothing was written before approval");

    home.run(&["hub", "approve", &run_id]).ok();
    let resumed = envelope(&home.run(&["exec", "--resume", &run_id, "--json"]).ok());
    assert_eq!(resumed["status"], "completed", "{resumed}");
    assert_eq!(resumed["result"]["before"], 2);
    assert_eq!(
        resumed["result"]["created"],
        json!({ "id": 3, "name": "Fido", "tag": "dog" })
    );
    assert_eq!(resumed["result"]["fetched"], resumed["result"]["created"]);
    assert_eq!(stats(), json!({ "createPet": 1 }));

    // Resuming the finished run answers from its journal and writes nothing again.
    let again = envelope(&home.run(&["exec", "--resume", &run_id, "--json"]).ok());
    assert_eq!(again["result"], resumed["result"]);
    assert_eq!(stats(), json!({ "createPet": 1 }));
}

/// An OpenAPI document in `home` (its path) whose requests go to `server`, with `paths`.
fn one_operation_document(home: &Home, server: &str, paths: Value) -> String {
    let document = home.path().join("api.json");
    let text = json!({
        "openapi": "3.1.0",
        "info": { "title": "t", "version": "1" },
        "servers": [{ "url": server }],
        "paths": paths
    });
    std::fs::write(&document, text.to_string()).unwrap();
    document.display().to_string()
}

fn fixture(name: &str) -> String {
    repo()
        .join("tests/fixtures/openapi")
        .join(name)
        .display()
        .to_string()
}

/// `source add NAME --openapi SPEC ARGS…`: the source is written, its test fails, and the
/// message is returned.
fn refused(spec: &str, extra: &[&str]) -> String {
    let home = Home::new();
    let mut args = vec!["source", "add", "api", "--openapi", spec];
    args.extend_from_slice(extra);
    let run = home.run(&args).fails();
    run.stderr
}

#[test]
fn bad_documents_are_refused_with_the_place_and_the_fix() {
    let swagger = refused(&fixture("swagger2.json"), &[]);
    assert!(swagger.contains("at /swagger (line 2)"), "{swagger}");
    assert!(
        swagger.contains("Swagger 2.0") && swagger.contains("swagger2openapi"),
        "{swagger}"
    );

    let syntax = refused(&fixture("broken_syntax.yaml"), &[]);
    // The parser notices the unclosed sequence where the text ends.
    assert!(syntax.contains("broken_syntax.yaml: line 9:"), "{syntax}");
    assert!(syntax.contains("neither JSON nor valid YAML"), "{syntax}");

    let dangling = refused(
        &fixture("dangling_ref.yaml"),
        &["--base-url", "http://127.0.0.1:9"],
    );
    assert!(
        dangling.contains("at /paths/~1pets/get/parameters/0/$ref (line 10)"),
        "{dangling}"
    );
    assert!(dangling.contains("points at nothing"), "{dangling}");
    // A schema's reference too is named where it is written, not where its target is missing.
    let schema = refused(
        &fixture("dangling_schema_ref.yaml"),
        &["--base-url", "http://127.0.0.1:9"],
    );
    assert!(
        schema.contains("/schema/$ref (line 15)") && schema.contains("points at nothing"),
        "{schema}"
    );

    let twice = refused(
        &fixture("duplicate_ids.json"),
        &["--base-url", "http://127.0.0.1:9"],
    );
    assert!(
        twice.contains("at /paths/~1b/get/operationId (line 6)")
            && twice.contains("operationId `fetch` is also used at /paths/~1a/get"),
        "{twice}"
    );

    // Nested past what JSON reads (a stack overflow in the YAML loader before): refused with
    // the line, by every command that reads it.
    let deep = tempfile::NamedTempFile::with_suffix(".yaml").expect("a temp file");
    std::fs::write(
        deep.path(),
        format!(
            "openapi: 3.1.0\ninfo: {{title: t, version: '1'}}\nservers: [{{url: 'http://127.0.0.1:9'}}]\npaths: {{}}\nx-deep:\n  {}b\n",
            "- ".repeat(3000)
        ),
    )
    .expect("write the document");
    let too_deep = refused(&deep.path().display().to_string(), &[]);
    assert!(
        too_deep.contains("line 6") && too_deep.contains("nests deeper than 128 levels"),
        "{too_deep}"
    );

    // More than any description needs (here a file of zeros): refused without reading it all.
    let huge = tempfile::NamedTempFile::with_suffix(".json").expect("a temp file");
    huge.as_file()
        .set_len(65 * 1024 * 1024)
        .expect("size the file");
    let too_large = refused(&huge.path().display().to_string(), &[]);
    assert!(too_large.contains("is larger than 64 MiB"), "{too_large}");

    let relative = refused(&fixture("unnamed.yaml"), &[]);
    assert!(
        relative.contains("`servers` says `/relative`") && relative.contains("set `base_url`"),
        "{relative}"
    );

    let port = free_port();
    let unreachable = refused(&format!("http://127.0.0.1:{port}/openapi.json"), &[]);
    assert!(
        unreachable.contains(&format!(
            "cannot fetch the OpenAPI document from http://127.0.0.1:{port}/openapi.json"
        )) && unreachable.contains("Connection refused"),
        "{unreachable}"
    );

    // A file that is not there is refused before anything is written.
    let home = Home::new();
    let missing = home
        .run(&[
            "source",
            "add",
            "api",
            "--openapi",
            "/nonexistent/spec.yaml",
        ])
        .fails();
    assert!(
        missing
            .stderr
            .contains("there is no file at /nonexistent/spec.yaml"),
        "{}",
        missing.stderr
    );
    assert!(
        !home.config_path().exists() || {
            let text = std::fs::read_to_string(home.config_path()).unwrap();
            !text.contains("[sources.api]")
        }
    );

    // A URL that answers with an error status, and an `auth` entry that names none of the
    // document's schemes.
    let shop = PetShop::start();
    let not_found = refused(&format!("{}/nope.json", shop.base), &[]);
    assert!(
        not_found.contains("answered HTTP 404 Not Found")
            && not_found.contains("FastAPI serves it at /openapi.json"),
        "{not_found}"
    );
    let unknown = refused(&shop.document(), &["--auth", "Token=x"]);
    assert!(
        unknown.contains("`auth` names the security scheme `Token`")
            && unknown.contains("HTTPBearer, APIKeyHeader, APIKeyQuery, HTTPBasic"),
        "{unknown}"
    );
}

#[test]
fn operations_without_an_operation_id_are_named_from_method_and_path() {
    let home = Home::new();
    let added = home
        .run(&[
            "source",
            "add",
            "api",
            "--openapi",
            &fixture("unnamed.yaml"),
            "--base-url",
            "http://127.0.0.1:9",
        ])
        .ok();
    let tested = home.run(&["source", "test", "api", "--json"]).ok();
    let report: Value = serde_json::from_str(&tested.stdout).unwrap();
    // `getPetsPetId` is the other operation's own id and keeps it; `GET /pets/{petId}` takes
    // the next name.
    assert_eq!(
        report["tools"],
        json!([
            "api.deletePetsPetId",
            "api.getPetsPetId",
            "api.getPetsPetId2"
        ]),
        "{}",
        added.stdout
    );
    let described = home.run(&["describe", "api.getPetsPetId2"]).ok();
    // `nullable: true` (3.0) on the component makes the type nullable; the cycle through
    // `Owner` ends in names.
    for expected in [
        "petId: number;",
        "type Pet = {",
        "} | null;",
        "owner?: Owner;",
        "pets?: Pet[];",
        "@upstream GET /pets/{petId}",
    ] {
        assert!(
            described.stdout.contains(expected),
            "{expected}\n{}",
            described.stdout
        );
    }
}

#[test]
fn a_document_redirected_to_another_origin_says_where_and_why_it_is_not_followed() {
    let shop = PetShop::start();
    let said = refused(&format!("{}/moved/openapi.json", shop.base), &[]);
    let port = shop.base.rsplit(':').next().unwrap_or_default();
    assert!(
        said.contains(&format!(
            "a redirect to http://localhost:{port}: another origin"
        )) && said.contains("give the address it redirects to as the document")
            && !said.contains("from=moved"),
        "{said}"
    );
}

#[test]
fn a_document_behind_the_apis_own_key_gets_the_sources_headers_only_on_its_origin() {
    let shop = PetShop::start();
    let document = format!("{}/private/openapi.json", shop.base);

    let without = refused(&document, &[]);
    assert!(without.contains("answered HTTP 401"), "{without}");
    assert!(without.contains("no credentials were sent"), "{without}");
    assert!(without.contains("--base-url"), "{without}");
    // Headers alone stay with the API: its origin is not known before the document is read.
    let elsewhere = refused(&document, &["--header", "X-Docs-Key=docs-789"]);
    assert!(
        elsewhere.contains("no credentials were sent"),
        "{elsewhere}"
    );
    let wrong = refused(
        &document,
        &["--base-url", &shop.base, "--header", "X-Docs-Key=nope"],
    );
    assert!(
        wrong.contains("the source's headers were sent and not accepted"),
        "{wrong}"
    );
    assert!(
        !wrong.contains("nope"),
        "a header value reached the message: {wrong}"
    );

    let home = Home::new().with_env("DOCS_KEY", "docs-789");
    let added = home
        .run(&[
            "source",
            "add",
            "pets",
            "--openapi",
            &document,
            "--base-url",
            &shop.base,
            "--header",
            "X-Docs-Key=${env:DOCS_KEY}",
        ])
        .ok();
    // The document's title repeats the key it was fetched with: blanked where it is shown.
    assert!(
        added.stdout.contains("is ready: 14 tools")
            && added.stdout.contains("server Pet shop for •••")
            && !added.stdout.contains("docs-789"),
        "{}",
        added.stdout
    );
    let listed = completed(&home, "return await pets.getPet({ pet_id: 2 });");
    assert_eq!(listed["name"], "Tom");
}

/// The requests an app started with `state` received: path, query and credentials.
fn received(state: &Path) -> Vec<Value> {
    std::fs::read_to_string(state.join("requests.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// A home whose source `pets` reads the API's hostile document, with `extra` arguments, the
/// API key in `auth` and a header from the environment.
fn hostile_home(api: &PetShop, extra: &[&str]) -> Home {
    let home = Home::new().with_env("PETS_KEY", "key-456");
    let document = format!("{}/hostile/openapi.json", api.base);
    let mut args = vec![
        "source",
        "add",
        "pets",
        "--openapi",
        &document,
        "--auth",
        "APIKeyQuery=${env:PETS_KEY}",
        "--header",
        "X-Extra=${env:PETS_KEY}",
    ];
    args.extend_from_slice(extra);
    home.run(&args).ok();
    home
}

/// The styles a document may give its parameters, as a real server receives them: deepObject,
/// comma-, pipe- and space-delimited arrays, a cookie, an array header, and a multipart form.
#[test]
fn parameter_styles_cookies_and_multipart_reach_the_server_as_the_document_says() {
    let api = PetShop::start();
    let home = hostile_home(&api, &[]);
    home.run(&["policy", "set", "pets.upload", "allow"]).ok();
    let result = completed(
        &home,
        r#"
        const styled = await pets.styled({
          deep: { role: "admin", team: "a&b" }, csv: ["a", "b,c"], pipes: ["p", "q"],
          spaces: ["s", "t"], theme: "dark", "X-Tags": ["x", "y"],
        });
        const upload = await pets.upload({ body: { title: "hi & bye", tags: ["one", "two"] } });
        return { styled, upload };
        "#,
    );
    let query = result["styled"]["raw_query"].as_str().unwrap_or_default();
    for expected in [
        "deep%5Brole%5D=admin",
        "deep%5Bteam%5D=a%26b",
        "csv=a,b%2Cc",
        "pipes=p|q",
        "spaces=s%20t",
    ] {
        assert!(query.contains(expected), "`{expected}` in {query}");
    }
    assert_eq!(
        result["styled"]["cookies"],
        json!({ "theme": "dark" }),
        "{result}"
    );
    assert_eq!(result["styled"]["x_tags"], "x,y", "{result}");
    assert_eq!(
        result["upload"],
        json!({
            "content_type": "multipart/form-data",
            "fields": [["title", "hi & bye"], ["tags", "one"], ["tags", "two"]],
        }),
        "{result}"
    );
}

#[test]
fn operation_servers_never_take_the_sources_credentials_to_another_host() {
    let api_state = tempfile::tempdir().unwrap();
    let other_state = tempfile::tempdir().unwrap();
    let api = PetShop::start_with(Some(api_state.path()));
    let other = PetShop::start_with(Some(other_state.path()));
    let configured = hostile_home(&api, &["--base-url", &api.base]);
    let derived = hostile_home(&api, &[]);
    for home in [&configured, &derived] {
        assert_eq!(
            completed(home, "return await pets.keyed();"),
            json!({ "ok": true })
        );
    }

    // The document now serves the operation from another host.
    std::fs::write(api_state.path().join("keyed-server"), &other.base).unwrap();

    // With `base_url`, that is where requests go: the document's servers do not move them.
    let refreshed = configured.run(&["source", "refresh", "pets"]).ok();
    assert!(
        !refreshed.stdout.contains("changed"),
        "nothing moved: {}",
        refreshed.stdout
    );
    assert_eq!(
        completed(&configured, "return await pets.keyed();"),
        json!({ "ok": true })
    );

    // Without it, the operation moved: its tool changed, and the call is refused unsent.
    let refreshed = derived.run(&["source", "refresh", "pets"]).ok();
    assert!(
        refreshed.stdout.contains("changed since confirmed: keyed"),
        "the move is a change: {}",
        refreshed.stdout
    );
    let review = derived.run(&["source", "review", "pets"]).ok();
    assert!(
        review
            .stdout
            .contains(&format!("requests go to: {} → {}", api.base, other.base)),
        "{}",
        review.stdout
    );
    // A read-only operation whose requests moved asks first: its credentials would follow.
    let paused = exec(
        &derived,
        &["exec", "-", "--json"],
        "try { await pets.keyed(); return 'sent'; } catch (e) { return e.message; }",
    );
    let waiting = envelope(&paused);
    assert_eq!(waiting["status"], "awaiting_approval", "{waiting}");
    assert!(
        waiting["pending"][0]["summary"]
            .as_str()
            .is_some_and(|s| s.contains(&format!("its requests now go to {}", other.base))),
        "{waiting}"
    );
    // Allowed anyway, it is still not sent to a host the source was not given.
    let run_id = waiting["runId"].as_str().expect("a runId");
    derived.run(&["hub", "approve", run_id]).ok();
    let resumed = exec(&derived, &["exec", "--resume", run_id, "--json"], "");
    let finished = envelope(&resumed);
    assert_eq!(finished["status"], "completed", "{finished}");
    let result = &finished["result"];
    let message = result.as_str().unwrap_or_default();
    assert!(
        message.contains(&format!("is served at {}", other.base))
            && message.contains("only to the API's origin")
            && message.contains(&format!("--base-url {}", other.base)),
        "{result}"
    );
    assert_eq!(
        received(other_state.path()),
        Vec::<Value>::new(),
        "the other host received requests"
    );
}

#[test]
fn path_values_made_of_dots_are_refused_before_anything_is_sent() {
    let state = tempfile::tempdir().unwrap();
    let api = PetShop::start_with(Some(state.path()));
    let home = hostile_home(&api, &["--base-url", &api.base]);
    let result = completed(
        &home,
        r#"
        const out = [];
        for (const value of [".", "..", "%2e%2e", "..x"]) {
            try { out.push((await pets.echoPath({ value })).raw_path); } catch (e) { out.push(e.message); }
        }
        return out;
        "#,
    );
    for (index, refused) in [(0, "segment `.`"), (1, "segment `..`")] {
        let message = result[index].as_str().unwrap_or_default();
        assert!(
            message.contains("path parameter `value`") && message.contains(refused),
            "{result}"
        );
    }
    assert_eq!(result[2], "/echo/%252e%252e");
    assert_eq!(result[3], "/echo/..x");
    let paths: Vec<Value> = received(state.path())
        .into_iter()
        .map(|request| request["path"].clone())
        .filter(|path| path != "/hostile/openapi.json")
        .collect();
    assert_eq!(paths, [json!("/echo/%2e%2e"), json!("/echo/..x")]);
}

#[test]
fn header_parameters_that_frame_or_route_a_request_never_come_from_a_script() {
    let api = PetShop::start();
    let home = hostile_home(&api, &["--base-url", &api.base]);
    // Only the header that is the API's own is an argument: the rest are not even offered.
    let described = home.run(&["describe", "pets.echoHeaders"]).ok();
    assert!(
        described.stdout.contains("X-Request-Id"),
        "{}",
        described.stdout
    );
    for framing in [
        "Host",
        "Content-Length",
        "Transfer-Encoding",
        "Connection",
        "Cookie",
    ] {
        assert!(
            !described.stdout.contains(framing),
            "{framing} is an argument:\n{}",
            described.stdout
        );
    }
    let result = completed(
        &home,
        r#"
        const refused = [];
        for (const name of ["Host", "Content-Length", "Transfer-Encoding", "Connection", "Cookie"]) {
            try { await pets.echoHeaders({ [name]: name === "Content-Length" ? "40" : "evil.example" }); refused.push(name + " sent"); }
            catch (e) { refused.push(e.code); }
        }
        const received = await pets.echoHeaders({ "X-Request-Id": "r-1" });
        return { refused, received };
        "#,
    );
    assert_eq!(
        result["refused"],
        json!(vec!["invalid_arguments"; 5]),
        "{result}"
    );
    let received = &result["received"];
    assert_eq!(received["x-request-id"], "r-1", "{result}");
    let authority = api.base.trim_start_matches("http://");
    assert_eq!(received["host"], authority, "{result}");
    assert!(received.get("content-length").is_none(), "{result}");
    assert!(received.get("cookie").is_none(), "{result}");
}

#[test]
fn a_secret_in_an_error_page_is_blanked_even_where_the_excerpt_ends() {
    let api = PetShop::start();
    let home = Home::new().with_env("CAPABILITIES_PASSPHRASE", "pp-123456789");
    home.write_config("[credentials]\nstore = \"file\"\n");
    let secret = "ghp_R3alT0kenValue9876543210abcdefXYZ";
    Run::with_stdin(&mut home.command(&["credential", "set", "token"]), secret).ok();
    home.run(&[
        "source",
        "add",
        "pets",
        "--openapi",
        &format!("{}/hostile/openapi.json", api.base),
        "--header",
        "Authorization=Bearer ${secret:token}",
    ])
    .ok();
    let result = completed(
        &home,
        r#"
        const out = [];
        for (const pad of [0, 311, 330, 355]) {
            try { await pets.debugHeaders({ pad }); } catch (e) { out.push(e.message); }
        }
        return out;
        "#,
    );
    assert_eq!(result.as_array().map(Vec::len), Some(4), "{result}");
    for message in result.as_array().unwrap() {
        let message = message.as_str().unwrap_or_default();
        assert!(message.contains("HTTP 401"), "{message}");
        assert!(!message.contains("ghp_R3al"), "{message}");
    }
    assert!(
        result[0]
            .as_str()
            .unwrap_or_default()
            .contains("Bearer •••"),
        "{result}"
    );
}

#[test]
fn a_base_url_or_header_name_that_cannot_work_is_refused_when_the_source_is_added() {
    let document = fixture("unnamed.yaml");
    let home = Home::new();
    let added = home
        .run(&[
            "source",
            "add",
            "api",
            "--openapi",
            &document,
            "--base-url",
            "http://[::1",
        ])
        .fails();
    assert!(
        added
            .stderr
            .contains("base_url `http://[::1`, which is not a valid URL"),
        "{}",
        added.stderr
    );
    assert!(added.stderr.contains("[::1]:8080"), "{}", added.stderr);
    let added = home
        .run(&[
            "source",
            "add",
            "api",
            "--openapi",
            &document,
            "--header",
            "Bad Name=x",
        ])
        .fails();
    assert!(
        added
            .stderr
            .contains("header `Bad Name` of source `api` is not a valid HTTP header name"),
        "{}",
        added.stderr
    );
    let config = std::fs::read_to_string(home.config_path()).unwrap_or_default();
    assert!(!config.contains("sources.api"), "written: {config}");
}

/// The document is read again when the source connects, and the hub builds each request from
/// it: an operation the document now describes otherwise than the definition the call was
/// decided on (here a read-only GET, allowed without asking, turned into a DELETE) is not sent.
#[test]
fn an_operation_the_document_changed_since_it_was_listed_is_not_sent() {
    let shop = PetShop::start();
    let dir = tempfile::tempdir().unwrap();
    let document = dir.path().join("pets.json");
    let write_document = |method: &str| {
        let text = json!({
            "openapi": "3.0.3",
            "info": { "title": "Pets", "version": "1" },
            "paths": {
                "/pets": { "get": { "operationId": "listPets", "responses": { "200": { "description": "ok" } } } },
                "/pets/{pet_id}": { method: {
                    "operationId": "pet",
                    "parameters": [{ "name": "pet_id", "in": "path", "required": true, "schema": { "type": "integer" } }],
                    "responses": { "200": { "description": "ok" } },
                } },
            },
        });
        std::fs::write(&document, text.to_string()).unwrap();
    };
    write_document("get");
    let home = Home::new();
    home.run(&[
        "source",
        "add",
        "pets",
        "--openapi",
        &document.display().to_string(),
        "--base-url",
        &shop.base,
        "--header",
        "X-API-Key=key-456",
    ])
    .ok();
    write_document("delete");
    let result = completed(
        &home,
        r#"
        let refused;
        try { await pets.pet({ pet_id: 1 }); } catch (e) { refused = e.message; }
        return { refused, pets: await pets.listPets() };
        "#,
    );
    let refused = result["refused"].as_str().unwrap_or_default();
    assert!(
        refused.contains("nothing was sent") && refused.contains("capabilities source review pets"),
        "{result}"
    );
    assert!(
        result["pets"].to_string().contains("\"Rex\""),
        "the pet was not deleted: {result}"
    );
}

/// `source refresh` of a source that cannot be listed again fails (exit 1) and says so, even
/// though its older listing stays in use: the person who just changed the document must not
/// read the old listing as the new one.
#[test]
fn a_refresh_that_cannot_list_the_source_again_fails_and_says_the_old_listing_stays() {
    let home = Home::new();
    let document = one_operation_document(
        &home,
        "http://127.0.0.1:9/api",
        json!({ "/items": { "get": { "operationId": "listItems",
            "responses": { "200": { "description": "ok" } } } } }),
    );
    home.run(&["source", "add", "api", "--openapi", &document])
        .ok();
    std::fs::remove_file(&document).unwrap();
    let refreshed = home.run(&["source", "refresh", "api"]).fails();
    assert!(
        refreshed.stdout.contains("api: not listed:")
            && refreshed
                .stdout
                .contains("the listing cached before stays in use"),
        "{}",
        refreshed.stdout
    );
    // The older listing still answers.
    let found = home.run(&["search", "list items"]).ok();
    assert!(found.stdout.contains("api.listItems"), "{}", found.stdout);
}
