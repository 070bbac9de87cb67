//! The static half of the unknown-tool check: before anything runs, every `ns.tool(…)` call in
//! the code is compared with the catalogue, so a typo fails fast with the closest names instead
//! of after earlier calls already ran. The same walk finds `import(…)`, which the sandbox does
//! not offer (the engine's loader holds its own modules, not the script's).

use std::collections::BTreeSet;

use oxc_ast::ast::*;
use oxc_ast_visit::{Visit, walk};

use crate::model::address::namespace_problem;
use crate::sandbox::request::Namespaces;

/// Finds calls to tools a namespace does not have.
pub struct ToolsCheck<'n> {
    namespaces: &'n Namespaces,
    /// Names the script binds itself; a local `github` is not the namespace.
    bound: BTreeSet<String>,
    /// (offset, namespace, tool) of each unknown call, in source order.
    unknown: Vec<(u32, String, String)>,
    /// Where the first `import(…)` is.
    import: Option<u32>,
}

impl<'n> ToolsCheck<'n> {
    pub fn new(namespaces: &'n Namespaces) -> Self {
        ToolsCheck {
            namespaces,
            bound: BTreeSet::new(),
            unknown: Vec::new(),
            import: None,
        }
    }

    /// Where the first `import(…)` is, if the code has one.
    pub fn first_import(&self) -> Option<u32> {
        self.import
    }

    /// The first unknown call whose namespace the script does not shadow.
    pub fn first_unknown(self) -> Option<(u32, String, String)> {
        self.unknown
            .into_iter()
            .find(|(_, ns, _)| !self.bound.contains(ns))
    }
}

impl<'a> Visit<'a> for ToolsCheck<'_> {
    fn visit_binding_identifier(&mut self, it: &BindingIdentifier<'a>) {
        self.bound.insert(it.name.to_string());
    }

    fn visit_import_expression(&mut self, it: &ImportExpression<'a>) {
        self.import.get_or_insert(it.span.start);
        walk::walk_import_expression(self, it);
    }

    fn visit_call_expression(&mut self, it: &CallExpression<'a>) {
        if let Expression::StaticMemberExpression(member) = &it.callee
            && let Expression::Identifier(object) = &member.object
            && let Some(tools) = self.namespaces.get(object.name.as_str())
            // A name no source may have (a global, an Object.prototype member) only reaches
            // the sandbox from an older config or a direct request; the prelude decides there
            // whether it is the namespace or the built-in, so it is not checked here.
            && namespace_problem(&object.name).is_none()
        {
            let name = member.property.name.as_str();
            if !tools.iter().any(|t| t.name == name) {
                self.unknown.push((
                    member.property.span.start,
                    object.name.to_string(),
                    name.to_string(),
                ));
            }
        }
        walk::walk_call_expression(self, it);
    }
}
