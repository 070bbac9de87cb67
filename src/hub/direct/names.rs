//! The MCP tool name of each catalogued tool in direct mode: `namespace_tool`, from the tool's
//! address (`github.createIssue` → `github_createIssue`), so a name reads like the address a
//! policy rule or a script uses. Names fit the strictest rule clients apply (`[A-Za-z0-9_-]`,
//! at most 64 characters, within MCP's own `[A-Za-z0-9_.-]{1,128}`), and depend only on the
//! set of addresses, never on the order an upstream listed its tools: the same catalogue gives
//! the same names after a restart.

use std::collections::{BTreeMap, BTreeSet};

use sha2::{Digest, Sha256};

/// The longest name: what the most widely used model APIs accept.
pub const MAX_NAME: usize = 64;

/// Names every address of `addresses`, avoiding `reserved` (the hub's own direct tools).
/// Returns name → address.
pub fn assign<'a>(
    addresses: impl IntoIterator<Item = &'a str>,
    reserved: &[&str],
) -> BTreeMap<String, String> {
    let sorted: BTreeSet<&str> = addresses.into_iter().collect();
    let mut taken: BTreeSet<String> = reserved.iter().map(|r| r.to_string()).collect();
    let mut out = BTreeMap::new();
    // Plain names first, so a tool whose plain name is free never loses it to another
    // tool's numbered fallback.
    let mut clashing = Vec::new();
    for address in &sorted {
        let name = plain(address);
        if taken.insert(name.clone()) {
            out.insert(name, address.to_string());
        } else {
            clashing.push(*address);
        }
    }
    for address in clashing {
        let base = plain(address);
        let name = (2..)
            .map(|n| fit(&format!("{base}_{n}"), address))
            .find(|name| !taken.contains(name))
            .unwrap_or(base);
        taken.insert(name.clone());
        out.insert(name, address.to_string());
    }
    out
}

/// `namespace.tool` → `namespace_tool`, every character outside `[A-Za-z0-9_-]` (a `$` in a
/// tool part) an underscore, shortened to [`MAX_NAME`] with a digest of the address.
fn plain(address: &str) -> String {
    let name: String = address
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    fit(&name, address)
}

/// `name` if short enough, else its head and eight hex digits of `address`'s digest, so two
/// long names with the same head stay apart.
fn fit(name: &str, address: &str) -> String {
    if name.len() <= MAX_NAME {
        return name.to_string();
    }
    let digest = Sha256::digest(address.as_bytes());
    let tail: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
    // The name is ASCII, so any byte index is a character boundary.
    format!("{}_{tail}", &name[..MAX_NAME - tail.len() - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid(name: &str) -> bool {
        !name.is_empty()
            && name.len() <= MAX_NAME
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    }

    #[test]
    fn a_name_is_the_address_with_an_underscore() {
        let names = assign(["github.createIssue", "time.getCurrentTime"], &[]);
        assert_eq!(names["github_createIssue"], "github.createIssue");
        assert_eq!(names["time_getCurrentTime"], "time.getCurrentTime");
    }

    #[test]
    fn characters_outside_the_rule_become_underscores() {
        let names = assign(["ns.$get"], &[]);
        assert_eq!(names.keys().collect::<Vec<_>>(), ["ns__get"]);
    }

    #[test]
    fn clashing_names_are_numbered_whatever_the_listing_order() {
        // `a_b.c` and `a.b_c` both read `a_b_c`.
        let one = assign(["a_b.c", "a.b_c"], &[]);
        let other = assign(["a.b_c", "a_b.c"], &[]);
        assert_eq!(one, other);
        assert_eq!(one["a_b_c"], "a.b_c");
        assert_eq!(one["a_b_c_2"], "a_b.c");
    }

    #[test]
    fn a_reserved_name_is_never_given_to_a_tool() {
        let names = assign(["capabilities.readResult"], &["capabilities_readResult"]);
        assert_eq!(
            names["capabilities_readResult_2"],
            "capabilities.readResult"
        );
        assert!(!names.contains_key("capabilities_readResult"));
    }

    #[test]
    fn long_names_are_cut_with_a_digest_and_stay_apart() {
        let long = "x".repeat(80);
        let a = format!("ns.{long}A");
        let b = format!("ns.{long}B");
        let names = assign([a.as_str(), b.as_str()], &[]);
        assert_eq!(names.len(), 2);
        assert!(names.keys().all(|n| valid(n)), "{names:?}");
        assert_ne!(names.keys().next(), names.keys().nth(1));
    }
}
