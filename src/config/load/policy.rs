//! The `[policy]` table and the rules of the config and its profiles, checked: actions,
//! globs, the connections a rule names.

use toml::Spanned;

use super::super::options::{FreshnessOptions, PolicyOptions, RuleOptions};
use super::super::settings::SourceSettings;
use super::{ConfigError, Ctx, known_names_help};
use crate::policy::{Action, ConfirmChanges, Policy, Rule};

impl Ctx<'_> {
    pub(super) fn action(
        &self,
        value: &Option<Spanned<String>>,
        default: Action,
        key: &str,
    ) -> Result<Action, ConfigError> {
        match value {
            None => Ok(default),
            Some(v) => v.get_ref().parse().map_err(|e: String| {
                self.at(v, format!("policy.{key}: {e}"), "one of allow, ask, deny")
            }),
        }
    }

    pub(super) fn policy(
        &self,
        options: &PolicyOptions,
        freshness: &FreshnessOptions,
        sources: &[SourceSettings],
    ) -> Result<Policy, ConfigError> {
        let confirm_changes = match &freshness.confirm {
            None => ConfirmChanges::default(),
            Some(v) => v.get_ref().parse().map_err(|e: String| {
                self.at(
                    v,
                    format!("freshness.confirm: {e}"),
                    "`writes` asks again before a changed tool that may write; `all` before any changed tool; `none` only marks them",
                )
            })?,
        };
        Ok(Policy {
            read_only: self.action(&options.read_only, Action::Allow, "read_only")?,
            destructive: self.action(&options.destructive, Action::Ask, "destructive")?,
            default: self.action(&options.default, Action::Ask, "default")?,
            rules: self.rules(&options.rules, sources)?,
            confirm_changes,
            token_clients_approve: options
                .token_clients_approve
                .as_ref()
                .is_none_or(|v| *v.get_ref()),
            left_profile: Vec::new(),
        })
    }

    pub(super) fn rules(
        &self,
        rules: &[RuleOptions],
        sources: &[SourceSettings],
    ) -> Result<Vec<Rule>, ConfigError> {
        let mut out = Vec::new();
        for rule in rules {
            let pattern = rule.pattern.get_ref();
            let Some((namespace, tool)) = pattern.split_once('.') else {
                if pattern == "*" {
                    out.push(Rule {
                        pattern: pattern.clone(),
                        action: self.rule_action(rule)?,
                        connection: self.rule_connection(rule, None, sources)?,
                        version: rule.version.as_ref().map(|v| v.get_ref().clone()),
                    });
                    continue;
                }
                return Err(self.at(&rule.pattern, format!("rule `{pattern}` is not an address pattern"), "write `namespace.tool` with `*` as a wildcard, e.g. `github.create*`, `*.delete*` or `github.*`"));
            };
            if tool.is_empty()
                || !pattern
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '*' | '$'))
            {
                return Err(self.at(&rule.pattern, format!("rule `{pattern}` has characters an address cannot have"), "addresses are `namespace.tool` of letters, digits and `_`; use `*` as a wildcard"));
            }
            let source = if namespace.contains('*') {
                None
            } else {
                match sources.iter().find(|s| s.name == namespace) {
                    Some(source) => Some(source),
                    None => {
                        return Err(self.at(&rule.pattern, format!("rule `{pattern}` names source `{namespace}`, which is not in [sources]"), known_names_help("sources", sources.iter().map(|s| s.name.as_str()))));
                    }
                }
            };
            out.push(Rule {
                pattern: pattern.clone(),
                action: self.rule_action(rule)?,
                connection: self.rule_connection(rule, source, sources)?,
                version: rule.version.as_ref().map(|v| v.get_ref().clone()),
            });
        }
        Ok(out)
    }

    pub(super) fn rule_action(&self, rule: &RuleOptions) -> Result<Action, ConfigError> {
        rule.action
            .get_ref()
            .parse()
            .map_err(|e: String| self.at(&rule.action, e, "one of allow, ask, deny"))
    }

    pub(super) fn rule_connection(
        &self,
        rule: &RuleOptions,
        source: Option<&SourceSettings>,
        sources: &[SourceSettings],
    ) -> Result<Option<String>, ConfigError> {
        let Some(connection) = &rule.connection else {
            return Ok(None);
        };
        let name = connection.get_ref();
        let known: Vec<&str> = match source {
            Some(s) => s.connections.iter().map(|c| c.name.as_str()).collect(),
            None => sources
                .iter()
                .flat_map(|s| s.connections.iter().map(|c| c.name.as_str()))
                .collect(),
        };
        if !known.contains(&name.as_str()) {
            return Err(self.at(
                connection,
                format!(
                    "rule `{}` names connection `{name}`, which no matching source has",
                    rule.pattern.get_ref()
                ),
                known_names_help("connections", known.into_iter()),
            ));
        }
        Ok(Some(name.clone()))
    }
}
