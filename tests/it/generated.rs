//! The completion scripts in `completions/` and man pages in `man/` are generated from the clap
//! definitions; this fails when the committed copies drift. Regenerate with
//! `UPDATE_GENERATED=1 cargo test --test it generated`.

use crate::support::repo_root;

#[test]
fn completions_and_man_pages_match_the_cli() {
    let files = capabilities::commands::generated_files().expect("generate");
    let update = std::env::var_os("UPDATE_GENERATED").is_some();
    let mut drifted = Vec::new();
    for (relative, expected) in &files {
        let path = repo_root().join(relative);
        let actual = std::fs::read_to_string(&path).unwrap_or_default();
        if actual != *expected {
            if update {
                std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
                std::fs::write(&path, expected).expect("write generated file");
            } else {
                drifted.push(relative.clone());
            }
        }
    }
    assert!(
        drifted.is_empty(),
        "generated files are out of date: {drifted:?}; run `UPDATE_GENERATED=1 cargo test --test it generated` and commit them"
    );
    assert!(files.iter().any(|(p, _)| p == "man/capabilities-search.1"));
}
