//! The catalogue as the sandbox sees it: one global per namespace, one function per tool, each
//! with its input schema (for argument checks), signature (for error hints) and connections.
//!
//! A run sees exactly the tools its caller sees in search and describe: what the policy denies
//! (judged, as there, by the namespace's default connection) and what a bearer token does not
//! allow are no property of the namespace's global, are never offered as the closest match of a
//! typo, and are never checked against their schema (an argument error quotes the signature).
//! Calling one is an unknown tool, told apart from a name that does not exist by nothing. The
//! bridge still decides every call, so a rule or a revocation that comes mid-run still applies.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::catalog::Catalog;
use crate::catalog::typescript::NamespaceTypes;
use crate::model::{Annotations, Permits};
use crate::policy::Policy;
use crate::sandbox::{Namespaces, ToolSpec};

/// Every catalogued tool as the sandbox would show it, with what deciding who may see it takes.
/// Built once per catalogue generation: building it renders every signature, and the specs
/// compile their input schemas once for every run that shares them.
pub struct Catalogued {
    /// Every tool, hidden ones included: the view of a run nothing hides from.
    all: Arc<Namespaces>,
    /// Per namespace (as in `all`), its default connection and each tool's address and
    /// annotations, in the order of its specs.
    access: BTreeMap<String, (Option<String>, Vec<Access>)>,
}

/// What the policy decides a tool's visibility by.
struct Access {
    address: String,
    annotations: Annotations,
}

impl Catalogued {
    pub fn build(catalog: &Catalog) -> Catalogued {
        let mut all = Namespaces::new();
        let mut access = BTreeMap::new();
        for namespace in &catalog.namespaces {
            if namespace.tools.is_empty() {
                continue;
            }
            let types = NamespaceTypes::build(&namespace.name, &namespace.tools);
            let specs = namespace
                .tools
                .iter()
                .map(|tool| {
                    let signature = types
                        .signature(&tool.name)
                        .unwrap_or_else(|| tool.address());
                    Arc::new(
                        ToolSpec::new(tool.name.clone(), tool.input_schema.clone(), signature)
                            .with_connections(namespace.connections.clone()),
                    )
                })
                .collect();
            let tools = namespace
                .tools
                .iter()
                .map(|tool| Access {
                    address: tool.address(),
                    annotations: tool.annotations.clone(),
                })
                .collect();
            all.insert(namespace.name.clone(), specs);
            access.insert(
                namespace.name.clone(),
                (namespace.connections.first().cloned(), tools),
            );
        }
        Catalogued {
            all: Arc::new(all),
            access,
        }
    }

    /// The tools a run may see: all but those `policy` denies and those `permits` (a bearer
    /// token's patterns) refuses, except the addresses `kept` names (calls a resumed run already
    /// made, which answer from its journal). A namespace whose every tool the policy hides stays,
    /// with none: search names every source to this client, and a script naming it then meets an
    /// unknown tool rather than a source that looks unavailable. One the token lets it call
    /// nothing of is gone, as it is from search: to this client it does not exist.
    pub fn visible(
        &self,
        policy: &Policy,
        permits: Permits,
        kept: &dyn Fn(&str) -> bool,
    ) -> Arc<Namespaces> {
        if !permits.narrows() && !policy.may_deny() {
            return self.all.clone();
        }
        let mut view = Namespaces::new();
        let mut hides_any = false;
        for (namespace, specs) in self.all.iter() {
            let Some((connection, tools)) = self.access.get(namespace) else {
                continue;
            };
            if permits.narrows()
                && !tools
                    .iter()
                    .any(|access| permits.allows(&access.address) || kept(&access.address))
            {
                hides_any = true;
                continue;
            }
            let shown = specs
                .iter()
                .zip(tools)
                .filter(|(_, access)| {
                    let address = access.address.as_str();
                    let hidden = !kept(address)
                        && policy.hides(
                            address,
                            connection.as_deref(),
                            &access.annotations,
                            permits,
                        );
                    hides_any |= hidden;
                    !hidden
                })
                .map(|(spec, _)| spec.clone())
                .collect();
            view.insert(namespace.clone(), shown);
        }
        if !hides_any {
            return self.all.clone();
        }
        Arc::new(view)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::catalog::{Namespace, Origin};
    use crate::model::UpstreamTool;
    use crate::model::tool::build_namespace;
    use crate::policy::{Action, Rule};

    /// `counter` with `counts` (read-only), `publish` and `write`, and `notes` with `add`.
    fn catalog() -> Catalog {
        let namespace = |name: &str, tools: serde_json::Value| {
            let tools: Vec<UpstreamTool> = serde_json::from_value(tools).expect("tools");
            Namespace {
                name: name.into(),
                connections: vec!["default".into()],
                named_connections: false,
                tools: build_namespace(name, tools, &[]),
                skills: Vec::new(),
                origin: Origin::Live,
            }
        };
        let key = json!({ "type": "object", "properties": { "key": { "type": "string" } }, "required": ["key"] });
        Catalog {
            namespaces: vec![
                namespace(
                    "counter",
                    json!([
                        { "name": "counts", "inputSchema": { "type": "object" }, "annotations": { "readOnlyHint": true } },
                        { "name": "publish", "inputSchema": key },
                        { "name": "write", "inputSchema": key },
                    ]),
                ),
                namespace(
                    "notes",
                    json!([{ "name": "add", "inputSchema": { "type": "object" } }]),
                ),
            ],
        }
    }

    fn names(view: &Namespaces, namespace: &str) -> Option<Vec<String>> {
        view.get(namespace)
            .map(|specs| specs.iter().map(|s| s.name.clone()).collect())
    }

    fn rule(pattern: &str, action: Action) -> Policy {
        Policy {
            rules: vec![Rule {
                pattern: pattern.into(),
                action,
                connection: None,
                version: None,
            }],
            ..Policy::default()
        }
    }

    #[test]
    fn what_the_policy_denies_is_not_in_a_runs_view() {
        let catalogued = Catalogued::build(&catalog());
        let view = catalogued.visible(
            &rule("counter.publish", Action::Deny),
            Permits::ALL,
            &|_| false,
        );
        assert_eq!(
            names(&view, "counter"),
            Some(vec!["counts".into(), "write".into()])
        );
        assert_eq!(names(&view, "notes"), Some(vec!["add".into()]));
        // A default of deny hides by annotation, as search does: only the read-only tool stays.
        let strict = Policy {
            default: Action::Deny,
            ..Policy::default()
        };
        let view = catalogued.visible(&strict, Permits::ALL, &|_| false);
        assert_eq!(names(&view, "counter"), Some(vec!["counts".into()]));
        // Asking is not hiding.
        let view = catalogued.visible(&rule("counter.*", Action::Ask), Permits::ALL, &|_| false);
        assert_eq!(names(&view, "counter").map(|n| n.len()), Some(3));
    }

    #[test]
    fn what_a_token_does_not_allow_is_not_in_its_runs_view() {
        let catalogued = Catalogued::build(&catalog());
        let permits = |address: &str| address == "notes.add";
        let view = catalogued.visible(&Policy::default(), Permits::only(&permits), &|_| false);
        assert_eq!(names(&view, "notes"), Some(vec!["add".into()]));
        // A source it may call nothing of does not exist for it.
        assert_eq!(names(&view, "counter"), None);
        // One whose every tool the policy denies stays, empty: search names it to this client,
        // and a script naming it meets an unknown tool, not a source that looks unavailable.
        let view = catalogued.visible(
            &rule("notes.*", Action::Deny),
            Permits::only(&permits),
            &|_| false,
        );
        assert_eq!(names(&view, "notes"), Some(Vec::new()));
        // A call a resumed run already made keeps its source, to answer from the journal.
        let view = catalogued.visible(&Policy::default(), Permits::only(&permits), &|a| {
            a == "counter.write"
        });
        assert_eq!(names(&view, "counter"), Some(vec!["write".into()]));
    }

    #[test]
    fn a_view_that_hides_nothing_is_the_shared_one() {
        let catalogued = Catalogued::build(&catalog());
        let view = catalogued.visible(&Policy::default(), Permits::ALL, &|_| false);
        assert!(Arc::ptr_eq(&view, &catalogued.all));
        // A rule that denies nothing listed hides nothing either.
        let view = catalogued.visible(&rule("nowhere.*", Action::Deny), Permits::ALL, &|_| false);
        assert!(Arc::ptr_eq(&view, &catalogued.all));
        let hiding = catalogued.visible(&rule("notes.*", Action::Deny), Permits::ALL, &|_| false);
        assert!(!Arc::ptr_eq(&hiding, &catalogued.all));
    }

    #[test]
    fn calls_a_resumed_run_already_made_stay_reachable() {
        let catalogued = Catalogued::build(&catalog());
        let view = catalogued.visible(&rule("counter.*", Action::Deny), Permits::ALL, &|address| {
            address == "counter.write"
        });
        assert_eq!(names(&view, "counter"), Some(vec!["write".into()]));
    }
}
