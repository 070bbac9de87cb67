//! The shape of the source tree that `src/lib.rs` and DESIGN.md promise: no import cycle runs
//! between top-level modules (each `crate::x` path in `src/y/…` is an edge y → x), the module
//! table in `src/lib.rs` names every module there is, and no file grows past about 800 lines
//! before its tests. Read from the files themselves,
//! so a new `use` that closes a loop fails here rather than in a review.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Edges = BTreeMap<String, BTreeMap<String, BTreeSet<PathBuf>>>;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The top-level modules: `src/x.rs` and `src/x/`, without the crate roots.
fn top_level_modules() -> BTreeSet<String> {
    std::fs::read_dir(src())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter_map(|path| {
            let name = path.file_name()?.to_str()?.to_string();
            match name.strip_suffix(".rs") {
                Some("lib" | "main") => None,
                Some(stem) => Some(stem.to_string()),
                None if path.is_dir() => Some(name),
                None => None,
            }
        })
        .collect()
}

fn rust_files(dir: &Path, into: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, into);
        } else if path.extension().is_some_and(|e| e == "rs") {
            into.push(path);
        }
    }
}

fn identifier(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    &text[..end]
}

/// The first path segment of every `crate::…` in `code`, including each one of a
/// `crate::{a, b::c}` group.
fn crate_paths(code: &str) -> Vec<&str> {
    let mut found = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        let Some(group) = rest.strip_prefix('{') else {
            found.push(identifier(rest));
            continue;
        };
        let mut depth = 1;
        let mut starts_item = true;
        for (i, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 1 => break,
                '}' => depth -= 1,
                ',' if depth == 1 => starts_item = true,
                c if c.is_whitespace() => {}
                _ if starts_item => {
                    found.push(identifier(&group[i..]));
                    starts_item = false;
                }
                _ => {}
            }
        }
    }
    found
}

fn edges() -> Edges {
    let modules = top_level_modules();
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut edges = Edges::new();
    for file in files {
        let relative = file.strip_prefix(src()).unwrap().to_path_buf();
        let first = relative.components().next().unwrap();
        let first = first.as_os_str().to_str().unwrap();
        let from = first.strip_suffix(".rs").unwrap_or(first);
        if !modules.contains(from) {
            continue;
        }
        // Comments may name any module; only code makes an edge.
        let code: String = std::fs::read_to_string(&file)
            .unwrap()
            .lines()
            .filter(|line| !line.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        for to in crate_paths(&code) {
            if to != from && modules.contains(to) {
                edges
                    .entry(from.to_string())
                    .or_default()
                    .entry(to.to_string())
                    .or_default()
                    .insert(relative.clone());
            }
        }
    }
    edges
}

/// A cycle through `start`, as the modules along it, if there is one.
fn cycle_through(edges: &Edges, start: &str) -> Option<Vec<String>> {
    let mut path = vec![start.to_string()];
    let mut seen = BTreeSet::new();
    fn walk(
        edges: &Edges,
        start: &str,
        path: &mut Vec<String>,
        seen: &mut BTreeSet<String>,
    ) -> bool {
        let here = path.last().unwrap().clone();
        for next in edges.get(&here).into_iter().flat_map(BTreeMap::keys) {
            if next == start {
                path.push(next.clone());
                return true;
            }
            if seen.insert(next.clone()) {
                path.push(next.clone());
                if walk(edges, start, path, seen) {
                    return true;
                }
                path.pop();
            }
        }
        false
    }
    walk(edges, start, &mut path, &mut seen).then_some(path)
}

#[test]
fn the_scanner_reads_single_paths_and_groups() {
    let code = "use crate::model::Tool;\nuse crate::{\n    config::{Pacing, Settings},\n    runs,\n};\nlet x = crate::policy::decide();";
    assert_eq!(crate_paths(code), ["model", "config", "runs", "policy"]);
    let mut edges = Edges::new();
    for (from, to) in [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")] {
        edges
            .entry(from.into())
            .or_default()
            .entry(to.into())
            .or_default();
    }
    assert_eq!(cycle_through(&edges, "a").unwrap(), ["a", "b", "c", "a"]);
    assert_eq!(cycle_through(&edges, "d"), None);
}

#[test]
fn no_import_cycle_runs_between_top_level_modules() {
    let edges = edges();
    assert!(
        edges.len() > 10,
        "the scan found too few modules using others to be reading the tree: {edges:?}"
    );
    for module in top_level_modules() {
        if let Some(cycle) = cycle_through(&edges, &module) {
            let files: Vec<String> = cycle
                .windows(2)
                .map(|pair| {
                    let files = &edges[&pair[0]][&pair[1]];
                    format!("{} → {} in {files:?}", pair[0], pair[1])
                })
                .collect();
            panic!(
                "an import cycle: {}\n{}\nmove the shared item to the module both may use (often `model` or `config`)",
                cycle.join(" → "),
                files.join("\n")
            );
        }
    }
    assert!(
        !edges.contains_key("model"),
        "`model` is the shared vocabulary and depends on nothing: {:?}",
        edges.get("model")
    );
}

#[test]
fn the_module_table_in_lib_rs_names_every_module() {
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    for module in top_level_modules() {
        assert!(
            lib.contains(&format!("pub mod {module};")),
            "src/lib.rs does not declare `{module}`"
        );
        assert!(
            lib.contains(&format!("//! | [`{module}`] |")),
            "src/lib.rs's module table has no row for `{module}`"
        );
    }
}

/// The most lines a file may have before its `#[cfg(test)]` module: "about 800", with room for
/// a file that is one job to grow a little before it is split.
const MOST_LINES: usize = 850;

#[test]
fn no_file_is_longer_than_about_800_lines_before_its_tests() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let long: Vec<String> = files
        .iter()
        .filter_map(|file| {
            let text = std::fs::read_to_string(file).unwrap();
            let lines = text
                .lines()
                .take_while(|line| !line.starts_with("#[cfg(test)]"))
                .count();
            (lines > MOST_LINES).then(|| format!("{} ({lines} lines)", file.display()))
        })
        .collect();
    assert!(
        files.len() > 100 && long.is_empty(),
        "split these by job, as a module with children: {long:?}"
    );
}
