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
///
/// Each address has a few names it could take (its plain name, then that name with a digest
/// of the address) and takes the first that no other address could take. So a name two
/// addresses read as (`acme.box$lookup` and `acme_box.lookup` both read `acme_box_lookup`)
/// goes to neither, and a source that adds a tool never takes over a name another source's
/// tool is listed under, even one chosen to match that tool's digest (a client still calling
/// the name is told there is no such tool). Nothing depends on which address sorts first.
pub fn assign<'a>(
    addresses: impl IntoIterator<Item = &'a str>,
    reserved: &[&str],
) -> BTreeMap<String, String> {
    let addresses: BTreeSet<&str> = addresses.into_iter().collect();
    let mut claimants: BTreeMap<String, BTreeSet<&str>> = BTreeMap::new();
    for address in &addresses {
        for level in 0..LEVELS {
            claimants
                .entry(candidate(address, level))
                .or_default()
                .insert(address);
        }
    }
    let mut out = BTreeMap::new();
    for address in addresses {
        let free = (0..LEVELS)
            .map(|level| candidate(address, level))
            .find(|name| {
                !reserved.contains(&name.as_str())
                    && claimants.get(name).is_some_and(|c| c.len() == 1)
            });
        match free {
            Some(name) => {
                out.insert(name, address.to_string());
            }
            // Only tools named to match other tools' digests get here.
            None => tracing::warn!(
                "the tool `{address}` is not listed in direct mode: every name it could have is another tool's too"
            ),
        }
    }
    out
}

/// How many names an address can try: its plain name, then with 8 and 16 hex digits of its
/// digest.
const LEVELS: usize = 3;

/// The name `address` tries at `level`.
fn candidate(address: &str, level: usize) -> String {
    let name = plain(address);
    match level {
        0 => name,
        _ => with_digest(&name, address, 4 * level),
    }
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
    with_digest(name, address, 4)
}

/// `name_` and `bytes` bytes of `address`'s digest in hex, `name` cut to fit [`MAX_NAME`].
fn with_digest(name: &str, address: &str, bytes: usize) -> String {
    let digest = Sha256::digest(address.as_bytes());
    let tail: String = digest[..bytes].iter().map(|b| format!("{b:02x}")).collect();
    let head = MAX_NAME - tail.len() - 1;
    // The name is ASCII, so any byte index is a character boundary.
    format!("{}_{tail}", &name[..name.len().min(head)])
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
    fn a_name_two_addresses_read_as_goes_to_neither_whatever_the_order() {
        // `a_b.c` and `a.b_c` both read `a_b_c`.
        let one = assign(["a_b.c", "a.b_c"], &[]);
        let other = assign(["a.b_c", "a_b.c"], &[]);
        assert_eq!(one, other);
        assert_eq!(one.len(), 2);
        assert!(!one.contains_key("a_b_c"), "{one:?}");
        assert!(one.keys().all(|n| n.starts_with("a_b_c_") && valid(n)));
    }

    #[test]
    fn a_tool_added_later_never_takes_over_another_tools_name() {
        let before = assign(["acme_box.lookup", "acme.ping"], &[]);
        assert_eq!(before["acme_box_lookup"], "acme_box.lookup");
        let after = assign(["acme_box.lookup", "acme.ping", "acme.box$lookup"], &[]);
        assert!(!after.contains_key("acme_box_lookup"), "{after:?}");
        // Nor the name the clash moved the first tool to.
        let moved = after
            .iter()
            .find(|(_, address)| *address == "acme_box.lookup")
            .map(|(name, _)| name.clone())
            .unwrap_or_default();
        let squatter = format!("acme.{}", moved.trim_start_matches("acme_"));
        let squatted = assign(
            [
                "acme_box.lookup",
                "acme.ping",
                "acme.box$lookup",
                squatter.as_str(),
            ],
            &[],
        );
        assert_ne!(
            squatted.get(&moved).map(String::as_str),
            Some(squatter.as_str())
        );
        assert_eq!(squatted.len(), 4, "{squatted:?}");
    }

    #[test]
    fn a_reserved_name_is_never_given_to_a_tool() {
        let names = assign(["capabilities.readResult"], &["capabilities_readResult"]);
        assert!(!names.contains_key("capabilities_readResult"));
        assert_eq!(names.len(), 1);
        assert!(
            names
                .keys()
                .all(|n| n.starts_with("capabilities_readResult_"))
        );
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
