//! The command line as a user meets it: init, adding and removing sources, config errors,
//! `--help` examples, completions.

use crate::support::Home;

#[test]
fn init_writes_a_valid_starter_once() {
    let home = Home::new();
    let run = home.run(&["init"]).ok();
    assert!(run.stdout.contains("source add"), "{}", run.stdout);
    let text = std::fs::read_to_string(home.config_path()).unwrap();
    assert!(text.contains("[policy]"));
    let again = home.run(&["init"]).fails();
    assert!(
        again.stderr.contains("already exists") && again.stderr.contains("--force"),
        "{}",
        again.stderr
    );
    home.run(&["init", "--force"]).ok();
    let reference = home.run(&["init", "--reference"]).ok();
    assert!(
        reference
            .stdout
            .contains("[sources.github.connections.work]")
    );
}

#[test]
fn every_verb_has_an_example_in_its_help() {
    let home = Home::new();
    for verb in [
        vec!["init"],
        vec!["source", "add"],
        vec!["source", "list"],
        vec!["source", "remove"],
        vec!["source", "test"],
        vec!["search"],
        vec!["describe"],
        vec!["completions"],
        vec!["hub", "serve"],
        vec!["install"],
        vec!["source", "import"],
    ] {
        let mut args = verb.clone();
        args.push("--help");
        let run = home.run(&args).ok();
        assert!(
            run.stdout.contains("Example"),
            "`{}` has no example:\n{}",
            verb.join(" "),
            run.stdout
        );
        assert!(run.stdout.contains("capabilities "), "{}", run.stdout);
    }
}

#[test]
fn source_add_and_remove_edit_the_config() {
    let home = Home::new();
    home.run(&[
        "source",
        "add",
        "--no-test",
        "--env",
        "TOKEN=${secret:tok}",
        "one",
        "--",
        "node",
        "server.js",
        "--flag",
    ])
    .ok();
    home.run(&[
        "source",
        "add",
        "--no-test",
        "web",
        "--url",
        "http://127.0.0.1:9/mcp",
        "--header",
        "Authorization=Bearer ${env:WEB_TOKEN}",
    ])
    .ok();
    let text = std::fs::read_to_string(home.config_path()).unwrap();
    assert!(
        text.contains("TOKEN = \"${secret:tok}\""),
        "references are stored as written:\n{text}"
    );
    assert!(
        text.contains("args = [\"server.js\", \"--flag\"]"),
        "{text}"
    );
    assert!(
        text.contains("Authorization = \"Bearer ${env:WEB_TOKEN}\""),
        "{text}"
    );

    let dup = home
        .run(&["source", "add", "--no-test", "one", "--", "x"])
        .fails();
    assert!(dup.stderr.contains("already exists"), "{}", dup.stderr);
    home.run(&["source", "remove", "one"]).ok();
    let text = std::fs::read_to_string(home.config_path()).unwrap();
    assert!(!text.contains("[sources.one]"), "{text}");
    let missing = home.run(&["source", "remove", "one"]).fails();
    assert!(
        missing.stderr.contains("known sources: web"),
        "{}",
        missing.stderr
    );
}

#[test]
fn source_add_rejects_bad_input_without_touching_the_config() {
    let home = Home::new();
    home.write_config("# keep me\n");
    for (args, expected) in [
        (
            vec!["source", "add", "--no-test", "my-server", "--", "x"],
            "letters, digits and `_`",
        ),
        (
            vec!["source", "add", "--no-test", "hub", "--", "x"],
            "reserved",
        ),
        (
            vec![
                "source",
                "add",
                "--no-test",
                "a",
                "--env",
                "NOEQUALS",
                "--",
                "x",
            ],
            "KEY=VALUE",
        ),
        (
            vec![
                "source",
                "add",
                "--no-test",
                "a",
                "--env",
                "K=${sekret:x}",
                "--",
                "x",
            ],
            "${secret:NAME}",
        ),
        (
            vec!["source", "add", "--no-test", "a", "--url", "ftp://x"],
            "not an http",
        ),
    ] {
        let run = home.run(&args).fails();
        assert!(run.stderr.contains(expected), "{args:?}: {}", run.stderr);
    }
    let usage = home.run(&["source", "add", "a"]);
    assert_eq!(
        usage.code, 2,
        "no command and no url is a usage error: {}",
        usage.stderr
    );
    assert_eq!(
        std::fs::read_to_string(home.config_path()).unwrap(),
        "# keep me\n"
    );
}

#[test]
fn source_names_every_object_has_are_refused_end_to_end() {
    let home = Home::new();
    home.write_config("# keep me\n");
    for name in ["__proto__", "constructor", "toString", "valueOf"] {
        let run = home
            .run(&["source", "add", "--no-test", name, "--", "x"])
            .fails();
        assert!(
            run.stderr
                .contains(&format!("source name `{name}` is reserved in the sandbox"))
                && run.stderr.contains("Object.prototype")
                && run.stderr.contains("_source`"),
            "{name}: {}",
            run.stderr
        );
    }
    assert_eq!(
        std::fs::read_to_string(home.config_path()).unwrap(),
        "# keep me\n"
    );
    // A config written before the rule (or by hand) fails to load with the same explanation.
    home.write_config("[sources.constructor]\ncommand = \"x\"\n");
    let run = home.run(&["source", "list"]).fails();
    assert!(
        run.stderr.contains("source name `constructor` is reserved")
            && run.stderr.contains("constructor_source"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_broken_config_names_file_line_and_fix() {
    let home = Home::new();
    home.write_config("[sources.a]\ncommand = \"x\"\nargz = [\"y\"]\n");
    let run = home.run(&["source", "list"]).fails();
    let expected = format!("{}:3:1: unknown field `argz`", home.config_path().display());
    assert!(run.stderr.contains(&expected), "{}", run.stderr);
    assert!(run.stderr.contains("help:"), "{}", run.stderr);
}

#[test]
fn completions_print_for_each_shell() {
    let home = Home::new();
    for shell in ["bash", "zsh", "fish"] {
        let run = home.run(&["completions", shell]).ok();
        assert!(run.stdout.contains("capabilities"), "{shell}");
    }
    let bad = home.run(&["completions", "tcsh"]);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("possible values"), "{}", bad.stderr);
}

#[test]
fn every_example_config_is_valid() {
    let dir = crate::support::repo_root().join("config-examples");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).expect("config-examples") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "toml") {
            let text = std::fs::read_to_string(&path).expect("read");
            if let Err(e) = capabilities::config::parse(&path, &text) {
                panic!("{e}");
            }
            checked += 1;
        }
    }
    assert!(checked >= 4, "only {checked} example configs found");
}

#[test]
fn the_readme_quotes_the_example_script_as_it_is() {
    let readme = std::fs::read_to_string(crate::support::repo_root().join("README.md")).unwrap();
    let file = std::fs::read_to_string(
        crate::support::repo_root().join("config-examples/multi-source.js"),
    )
    .unwrap();
    let marker = "```js\n// config-examples/multi-source.js\n";
    let start = readme.find(marker).expect("the README quotes the example") + marker.len();
    let end = start + readme[start..].find("```").expect("the quote ends");
    assert_eq!(
        &readme[start..end],
        file,
        "README.md's quote drifted from the file"
    );
}
