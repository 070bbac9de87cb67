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

#[test]
fn every_page_a_man_page_lists_exists() {
    let files = capabilities::commands::generated_files().expect("generate");
    let pages: Vec<&str> = files
        .iter()
        .filter_map(|(p, _)| p.strip_prefix("man/"))
        .collect();
    for (path, text) in files.iter().filter(|(p, _)| p.starts_with("man/")) {
        // Names are written with `\-`; a listed page is `name(1)`.
        for listed in text
            .replace("\\-", "-")
            .split_whitespace()
            .filter_map(|word| word.strip_suffix("(1)"))
            .filter(|word| word.starts_with("capabilities"))
        {
            assert!(
                pages.contains(&format!("{listed}.1").as_str()),
                "{path} lists {listed}(1), which has no page"
            );
        }
        for section in [
            ".SH \"EXIT STATUS\"",
            ".SH ENVIRONMENT",
            ".SH FILES",
            "\n.nh\n",
        ] {
            assert!(text.contains(section), "{path} lacks {section}");
        }
    }
}
