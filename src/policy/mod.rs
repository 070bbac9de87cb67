//! Policy: which calls run (`allow`), which need a person (`ask`) and which are hidden and refused
//! (`deny`), and which tools whose definition changed since a person confirmed it ask again
//! ([`ConfirmChanges`]). Pure: `evaluate` looks only at the address, connection, annotations and
//! rules.

use std::fmt;
use std::str::FromStr;

use crate::model::Permits;
use crate::model::tool::Annotations;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Action {
    Allow,
    Ask,
    Deny,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Allow => "allow",
            Action::Ask => "ask",
            Action::Deny => "deny",
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Action {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "allow" => Ok(Action::Allow),
            "ask" => Ok(Action::Ask),
            "deny" => Ok(Action::Deny),
            other => Err(format!(
                "`{other}` is not an action; use `allow`, `ask` or `deny`"
            )),
        }
    }
}

/// One rule: a glob over addresses (`*` matches any run of characters), optionally limited to
/// one connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub pattern: String,
    pub action: Action,
    pub connection: Option<String>,
    /// The version of the tool's definition a person granted the rule for ("always" from an
    /// approval records it): the record of what they trusted. A later version of the tool asks
    /// again until it is confirmed, whatever the rule says (see [`ConfirmChanges`]).
    pub version: Option<String>,
}

impl Rule {
    fn matches(&self, address: &str, connection: Option<&str>) -> bool {
        if let Some(wanted) = &self.connection
            && connection != Some(wanted.as_str())
        {
            return false;
        }
        glob_matches(&self.pattern, address)
    }

    /// More literal characters and a connection make a rule more specific.
    fn specificity(&self) -> (usize, bool) {
        let literal = self.pattern.chars().filter(|c| *c != '*').count();
        (literal, self.connection.is_some())
    }
}

/// Which tools whose definition changed since a person confirmed it ask before each call until
/// someone confirms the new version (`[freshness] confirm`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ConfirmChanges {
    /// Tools that may write, in the old version or the new one: a read tool that became a
    /// write, or a write that now claims to be read-only, asks too. Changed read-only tools are
    /// marked, not stopped.
    #[default]
    Writes,
    /// Every changed tool.
    All,
    /// None: changes are marked only.
    None,
}

impl ConfirmChanges {
    /// Whether a call of a changed tool asks, from whether the tool is read-only now and was in
    /// the version last confirmed (`None` when no version was confirmed).
    pub fn asks(self, read_only_now: bool, read_only_before: Option<bool>) -> bool {
        match self {
            ConfirmChanges::All => true,
            ConfirmChanges::None => false,
            ConfirmChanges::Writes => !read_only_now || read_only_before != Some(true),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ConfirmChanges::Writes => "writes",
            ConfirmChanges::All => "all",
            ConfirmChanges::None => "none",
        }
    }
}

impl FromStr for ConfirmChanges {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "writes" => Ok(ConfirmChanges::Writes),
            "all" => Ok(ConfirmChanges::All),
            "none" => Ok(ConfirmChanges::None),
            other => Err(format!(
                "`{other}` is not a choice; use `writes`, `all` or `none`"
            )),
        }
    }
}

/// Defaults by annotation plus the rules, most specific first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    pub read_only: Action,
    pub destructive: Action,
    pub default: Action,
    pub rules: Vec<Rule>,
    /// Which changed tools ask again.
    pub confirm_changes: ConfirmChanges,
    /// Whether a client with a bearer token may answer the approval forms of its own calls
    /// (`[policy] token_clients_approve`); when not, a person at the hub's machine decides.
    pub token_clients_approve: bool,
    /// Sources the profile a running hub serves has left since the hub started (the config was
    /// edited): every call to them is denied, whatever the rules say, until a restart drops them.
    pub left_profile: Vec<String>,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            read_only: Action::Allow,
            destructive: Action::Ask,
            default: Action::Ask,
            rules: Vec::new(),
            confirm_changes: ConfirmChanges::default(),
            token_clients_approve: true,
            left_profile: Vec::new(),
        }
    }
}

/// What decided a call and why, for `policy explain` and `[asks]` markers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub action: Action,
    pub reason: String,
}

impl Policy {
    /// The rule that decides calls of `address`, if any does.
    /// Whether `address` is a tool of a source the profile has left ([`Policy::left_profile`]).
    fn left(&self, address: &str) -> bool {
        // Empty but for a hub whose profile was edited: a search asks for every hit.
        if self.left_profile.is_empty() {
            return false;
        }
        let source = address.split('.').next().unwrap_or(address);
        self.left_profile.iter().any(|left| left == source)
    }

    fn best_rule(&self, address: &str, connection: Option<&str>) -> Option<&Rule> {
        self.rules
            .iter()
            .filter(|rule| rule.matches(address, connection))
            // Most specific wins; among equals, the most restrictive (Deny > Ask > Allow).
            .max_by(|a, b| {
                a.specificity()
                    .cmp(&b.specificity())
                    .then(a.action.cmp(&b.action))
            })
    }

    /// What [`Policy::evaluate`] decides, without writing the reason: a search checks
    /// thousands of hits and shows no reasons.
    pub fn action(
        &self,
        address: &str,
        connection: Option<&str>,
        annotations: &Annotations,
    ) -> Action {
        if self.left(address) {
            return Action::Deny;
        }
        match self.best_rule(address, connection) {
            Some(rule) => rule.action,
            None if annotations.is_read_only() => self.read_only,
            None if annotations.is_destructive() => self.destructive,
            None => self.default,
        }
    }

    /// Whether a caller does not see the tool at `address` at all: the policy denies it (on
    /// `connection`, its namespace's default), or `permits` (a bearer token's patterns) refuses
    /// it. Search, describe, skills and scripts all hide by this, so none shows what another hides.
    pub fn hides(
        &self,
        address: &str,
        connection: Option<&str>,
        annotations: &Annotations,
        permits: Permits,
    ) -> bool {
        !permits.allows(address) || self.action(address, connection, annotations) == Action::Deny
    }

    /// Whether any tool can be denied at all: when none can, a search counts its hits without
    /// checking each one.
    pub fn may_deny(&self) -> bool {
        !self.left_profile.is_empty()
            || [self.read_only, self.destructive, self.default].contains(&Action::Deny)
            || self.rules.iter().any(|rule| rule.action == Action::Deny)
    }

    pub fn evaluate(
        &self,
        address: &str,
        connection: Option<&str>,
        annotations: &Annotations,
    ) -> Decision {
        if self.left(address) {
            return Decision {
                action: Action::Deny,
                reason: "its source is no longer in the profile this hub serves (the config changed since it started)".into(),
            };
        }
        if let Some(rule) = self.best_rule(address, connection) {
            let on = rule
                .connection
                .as_deref()
                .map(|c| format!(" on connection `{c}`"))
                .unwrap_or_default();
            return Decision {
                action: rule.action,
                reason: format!("rule `{}`{on} says {}", rule.pattern, rule.action),
            };
        }
        if annotations.is_read_only() {
            Decision {
                action: self.read_only,
                reason: format!(
                    "the tool is marked read-only; read-only tools default to {}",
                    self.read_only
                ),
            }
        } else if annotations.is_destructive() {
            Decision {
                action: self.destructive,
                reason: format!(
                    "the tool is marked destructive; destructive tools default to {}",
                    self.destructive
                ),
            }
        } else {
            Decision {
                action: self.default,
                reason: format!(
                    "no rule matches and the tool is not marked read-only; the default is {}",
                    self.default
                ),
            }
        }
    }
}

/// Rules that match none of `addresses`: a `deny` that denies nothing is a mistake the user
/// must see (a typo, or a tool that was renamed upstream).
pub fn unmatched_rules<'a>(policy: &'a Policy, addresses: &[String]) -> Vec<&'a Rule> {
    policy
        .rules
        .iter()
        .filter(|rule| !addresses.iter().any(|a| glob_matches(&rule.pattern, a)))
        .collect()
}

/// `*` matches any run of characters (including dots); everything else matches itself.
pub fn glob_matches(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if pi < p.len() && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(pattern: &str, action: Action, connection: Option<&str>) -> Rule {
        Rule {
            version: None,
            pattern: pattern.into(),
            action,
            connection: connection.map(Into::into),
        }
    }

    fn read_only() -> Annotations {
        Annotations {
            read_only_hint: Some(true),
            ..Default::default()
        }
    }

    #[test]
    fn globs() {
        assert!(glob_matches("github.*", "github.createIssue"));
        assert!(glob_matches("*.delete*", "github.deleteRepo"));
        assert!(glob_matches("github.search*", "github.searchIssues"));
        assert!(!glob_matches("github.search*", "gitlab.searchIssues"));
        assert!(glob_matches("*", "a.b"));
        assert!(!glob_matches("a.b", "a.bc"));
    }

    #[test]
    fn defaults_follow_annotations() {
        let p = Policy::default();
        assert_eq!(p.evaluate("a.b", None, &read_only()).action, Action::Allow);
        let destructive = Annotations {
            destructive_hint: Some(true),
            ..Default::default()
        };
        assert_eq!(p.evaluate("a.b", None, &destructive).action, Action::Ask);
        assert_eq!(
            p.evaluate("a.b", None, &Annotations::default()).action,
            Action::Ask
        );
    }

    #[test]
    fn most_specific_rule_wins_then_most_restrictive() {
        let p = Policy {
            rules: vec![
                rule("github.*", Action::Deny, None),
                rule("github.search*", Action::Allow, None),
                rule("github.searchIssues", Action::Ask, None),
                rule("github.searchIssues", Action::Deny, None),
            ],
            ..Policy::default()
        };
        assert_eq!(
            p.evaluate("github.searchCode", None, &read_only()).action,
            Action::Allow
        );
        assert_eq!(
            p.evaluate("github.searchIssues", None, &read_only()).action,
            Action::Deny
        );
        assert_eq!(
            p.evaluate("github.createIssue", None, &read_only()).action,
            Action::Deny
        );
    }

    #[test]
    fn a_changed_tool_asks_when_either_version_may_write() {
        let writes = ConfirmChanges::Writes;
        assert!(writes.asks(false, Some(false)), "a write that changed");
        assert!(writes.asks(false, Some(true)), "a read that became a write");
        assert!(
            writes.asks(true, Some(false)),
            "a write that now claims to read"
        );
        assert!(writes.asks(true, None), "nothing was ever confirmed");
        assert!(
            !writes.asks(true, Some(true)),
            "a read-only tool is only marked"
        );
        assert!(ConfirmChanges::All.asks(true, Some(true)));
        assert!(!ConfirmChanges::None.asks(false, Some(false)));
        assert_eq!("all".parse(), Ok(ConfirmChanges::All));
        assert!(
            "some"
                .parse::<ConfirmChanges>()
                .unwrap_err()
                .contains("writes")
        );
    }

    #[test]
    fn rules_matching_nothing_are_found() {
        let p = Policy {
            rules: vec![
                rule("github.*", Action::Deny, None),
                rule("github.deleteRepo", Action::Deny, None),
            ],
            ..Policy::default()
        };
        let unmatched = unmatched_rules(&p, &["github.createIssue".to_string()]);
        assert_eq!(unmatched.len(), 1);
        assert_eq!(unmatched[0].pattern, "github.deleteRepo");
    }

    #[test]
    fn connection_rules_only_apply_to_their_connection() {
        let p = Policy {
            rules: vec![rule("github.*", Action::Deny, Some("work"))],
            ..Policy::default()
        };
        assert_eq!(
            p.evaluate("github.x", Some("work"), &read_only()).action,
            Action::Deny
        );
        assert_eq!(
            p.evaluate("github.x", Some("personal"), &read_only())
                .action,
            Action::Allow
        );
    }
}
