//! The catalogue as the sandbox sees it: one global per namespace, one function per tool, each
//! with its input schema (for argument checks), signature (for error hints) and connections.

use std::sync::Arc;

use crate::catalog::Catalog;
use crate::catalog::typescript::NamespaceTypes;
use crate::sandbox::{Namespaces, ToolSpec};

/// Every catalogued tool, denied ones included: calling those must fail with `policy_denied`, not
/// look like a typo.
pub fn namespaces(catalog: &Catalog) -> Namespaces {
    let mut out = Namespaces::new();
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
        out.insert(namespace.name.clone(), specs);
    }
    out
}
