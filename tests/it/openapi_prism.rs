//! OpenAPI sources against published documents served by Prism (`@stoplight/prism-cli`, npm):
//! the Petstore (OpenAPI 3.0) and ReadMe's own API (3.1, 54 operations), both from
//! `@readme/oas-examples`. Prism answers from each document's examples and schemas and refuses a
//! request the document does not allow (a missing credential, a parameter or body that breaks
//! its schema) with a 4xx, so every call that completes here was built as the published document
//! says, by a server that is not ours.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::approvals::{envelope, exec};
use crate::common::{LocalServer, free_port, repo};
use crate::openapi::completed;
use crate::support::Home;

/// Prism mocking `document` on a free port; killed when dropped.
fn prism(document: &Path) -> LocalServer {
    let port = free_port();
    let mut command = Command::new(repo().join("tests/node_modules/.bin/prism"));
    command
        .args(["mock", "--host", "127.0.0.1", "--port", &port.to_string()])
        .arg(document);
    LocalServer::start(
        command,
        port,
        Duration::from_secs(120),
        "prism (tests/setup.sh installs @stoplight/prism-cli)",
    )
}

fn published(path: &str) -> PathBuf {
    repo()
        .join("tests/node_modules/@readme/oas-examples")
        .join(path)
}

/// The operations `document` defines, counted from the file itself.
fn operations(document: &Path) -> usize {
    let text = std::fs::read_to_string(document).expect("the published document");
    let spec: Value = serde_json::from_str(&text).expect("JSON");
    let methods = [
        "get", "put", "post", "delete", "patch", "head", "options", "trace",
    ];
    spec["paths"]
        .as_object()
        .expect("paths")
        .values()
        .flat_map(|item| item.as_object().into_iter().flat_map(|ops| ops.keys()))
        .filter(|key| methods.contains(&key.as_str()))
        .count()
}

/// Adds `document` as source `name`, served by `prism`, with `extra` arguments, and allows every
/// call to it (what asks is tested against the FastAPI app).
fn add(home: &Home, name: &str, document: &Path, prism: &LocalServer, extra: &[&str]) -> String {
    let document = document.to_string_lossy();
    let mut args = vec![
        "source",
        "add",
        name,
        "--openapi",
        &document,
        "--base-url",
        &prism.base,
    ];
    args.extend_from_slice(extra);
    let added = home.run(&args).ok();
    let mut config = std::fs::read_to_string(home.config_path()).expect("config");
    config.push_str(&format!(
        "\n[[policy.rules]]\nmatch = \"{name}.*\"\naction = \"allow\"\n"
    ));
    home.write_config(&config);
    added.stdout
}

#[test]
fn the_published_petstore_is_called_as_its_document_says() {
    let document = published("3.0/json/petstore.json");
    let prism = prism(&document);
    let home = Home::new().with_env("PETSTORE_KEY", "key-1");
    let added = add(
        &home,
        "petstore",
        &document,
        &prism,
        &[
            "--auth",
            "api_key=${env:PETSTORE_KEY}",
            // OAuth 2 is not spoken yet; Prism only checks that a bearer token is there.
            "--header",
            "Authorization=Bearer tok-1",
        ],
    );
    let tools = operations(&document);
    assert!(
        added.contains(&format!("is ready: {tools} tools, OpenAPI 3.0.0")),
        "{added}"
    );

    let result = completed(
        &home,
        r#"
        const pet = await petstore.getPetById({ petId: 7 });
        const available = await petstore.findPetsByStatus({ status: ["available", "sold"] });
        const order = await petstore.placeOrder({
          body: { petId: 7, quantity: 2, shipDate: "2026-12-01T10:00:00Z", status: "placed", complete: false },
        });
        const session = await petstore.loginUser({ username: "ann", password: "pw & more" });
        return { pet, available, order, session };
        "#,
    );
    // Prism's answers are built from the document's schemas: the fields it requires are there.
    assert!(result["pet"]["name"].is_string(), "{result}");
    assert!(result["pet"]["photoUrls"].is_array(), "{result}");
    assert!(result["available"].is_array(), "{result}");
    assert!(result["order"]["status"].is_string(), "{result}");
    assert!(result["session"].is_string(), "{result}");
}

#[test]
fn a_request_the_published_document_does_not_allow_is_refused_by_the_server() {
    let document = published("3.0/json/petstore.json");
    let prism = prism(&document);
    // No credentials: Prism refuses what the document secures, and the error says so.
    let home = Home::new();
    add(&home, "petstore", &document, &prism, &[]);
    let run = exec(
        &home,
        &["exec", "-", "--json"],
        "return await petstore.getPetById({ petId: 7 });",
    );
    let envelope = envelope(&run);
    assert_eq!(envelope["status"], "failed", "{envelope}");
    let error = envelope["error"].to_string();
    assert!(error.contains("401"), "{error}");
    assert!(error.contains("api_key"), "{error}");
}

#[test]
fn a_larger_published_api_loads_searches_describes_and_is_called() {
    let document = published("3.1/json/readme.json");
    let prism = prism(&document);
    let home = Home::new().with_env("README_TOKEN", "rdme-1");
    let added = add(
        &home,
        "readme",
        &document,
        &prism,
        &["--auth", "bearer=${env:README_TOKEN}"],
    );
    let tools = operations(&document);
    assert!(
        added.contains(&format!("is ready: {tools} tools, OpenAPI 3.1.0")),
        "{added}"
    );

    let found = home.run(&["search", "write a new changelog post"]).ok();
    let first = found
        .stdout
        .lines()
        .find(|line| line.trim_start().starts_with("readme."))
        .unwrap_or_default();
    assert!(
        first.contains("readme.createChangelog("),
        "{}",
        found.stdout
    );
    let described = home.run(&["describe", "readme.createChangelog"]).ok();
    for expected in ["createChangelog(input: {", "`POST /changelogs`", "title"] {
        assert!(
            described.stdout.contains(expected),
            "{expected}\n{}",
            described.stdout
        );
    }

    let result = completed(
        &home,
        r#"
        const project = await readme.getProject();
        const branch = await readme.getBranch({ branch: "v1.0" });
        return { project, branch };
        "#,
    );
    assert!(result["project"]["data"].is_object(), "{result}");
    assert!(result["branch"]["data"].is_object(), "{result}");
}
