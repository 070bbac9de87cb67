//! TypeScript stripping by blanking (sandbox-findings §2): every type-only piece of the source
//! becomes spaces, so the JavaScript left behind has the user's exact line:column. Constructs
//! that need code generation (enum, namespace, parameter properties, `<T>x`, decorators) are
//! rejected with their position instead.

use oxc_ast::ast::*;
use oxc_ast_visit::{Visit, walk};
use oxc_span::{GetSpan, Span};

use super::edits::Edits;

/// One construct that cannot be stripped, at a byte offset of the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported {
    pub offset: u32,
    pub message: &'static str,
}

/// Collects blanks for every TypeScript-only piece of `program`.
pub struct TsBlanker<'s> {
    source: &'s str,
    pub edits: Edits,
    pub unsupported: Vec<Unsupported>,
    /// True once anything was blanked (for the notice).
    pub stripped: bool,
}

const MODIFIERS: [&str; 7] = [
    "public",
    "private",
    "protected",
    "readonly",
    "override",
    "declare",
    "abstract",
];

impl<'s> TsBlanker<'s> {
    pub fn new(source: &'s str) -> Self {
        TsBlanker {
            source,
            edits: Edits::default(),
            unsupported: Vec::new(),
            stripped: false,
        }
    }

    fn blank(&mut self, start: u32, end: u32) {
        self.stripped = true;
        self.edits.blank(start, end);
    }

    fn blank_span(&mut self, span: Span) {
        self.blank(span.start, span.end);
    }

    fn blank_statement(&mut self, span: Span) {
        self.stripped = true;
        self.edits.blank_statement(span.start, span.end);
    }

    fn reject(&mut self, offset: u32, message: &'static str) {
        self.unsupported.push(Unsupported { offset, message });
    }

    fn text(&self, start: u32, end: u32) -> &'s str {
        self.source.get(start as usize..end as usize).unwrap_or("")
    }

    /// Blanks the first `marker` character between `start` and `end` (an optional `?` or a
    /// definite `!` that sits between a name and its annotation).
    fn blank_marker(&mut self, marker: char, start: u32, end: u32) {
        if let Some(i) = self.text(start, end).find(marker) {
            let at = start + i as u32;
            self.blank(at, at + 1);
        }
    }

    /// Blanks modifier keywords (`private`, `readonly`, …) between a member's start and its key.
    fn blank_modifiers(&mut self, start: u32, key_start: u32) {
        let text = self.text(start, key_start);
        let mut words = Vec::new();
        let mut offset = 0;
        for word in text.split(|c: char| !c.is_ascii_alphanumeric() && c != '_' && c != '$') {
            if MODIFIERS.contains(&word) {
                words.push((start + offset as u32, word.len() as u32));
            }
            offset += word.len() + 1;
        }
        for (at, len) in words {
            self.blank(at, at + len);
        }
    }

    /// Blanks a keyword that precedes `before`, searching back no further than `from`.
    fn blank_keyword_before(&mut self, keyword: &str, from: u32, before: u32) {
        if let Some(i) = self.text(from, before).rfind(keyword) {
            let at = from + i as u32;
            self.blank(at, at + keyword.len() as u32);
        }
    }
}

impl<'a> Visit<'a> for TsBlanker<'_> {
    fn visit_statement(&mut self, it: &Statement<'a>) {
        match it {
            Statement::TSTypeAliasDeclaration(_) | Statement::TSInterfaceDeclaration(_) => {
                self.blank_statement(it.span())
            }
            Statement::VariableDeclaration(d) if d.declare => self.blank_statement(d.span),
            Statement::FunctionDeclaration(f) if f.declare || f.body.is_none() => {
                self.blank_statement(f.span)
            }
            Statement::ClassDeclaration(c) if c.declare => self.blank_statement(c.span),
            Statement::TSEnumDeclaration(e) if e.declare => self.blank_statement(e.span),
            Statement::TSExternalModuleDeclaration(m) if m.declare => self.blank_statement(m.span),
            Statement::TSNamespaceDeclaration(m) if m.declare => self.blank_statement(m.span),
            Statement::TSGlobalDeclaration(m) if m.declare => self.blank_statement(m.span),
            Statement::TSEnumDeclaration(e) => self.reject(
                e.span.start,
                "enum is not supported; use a plain object of constants",
            ),
            Statement::TSExternalModuleDeclaration(_)
            | Statement::TSNamespaceDeclaration(_)
            | Statement::TSGlobalDeclaration(_) => self.reject(
                it.span().start,
                "namespace is not supported; use plain objects or functions",
            ),
            Statement::TSImportEqualsDeclaration(_) => {
                self.reject(it.span().start, "import = is not supported")
            }
            _ => walk::walk_statement(self, it),
        }
    }

    fn visit_ts_type_annotation(&mut self, it: &TSTypeAnnotation<'a>) {
        self.blank_span(it.span);
    }

    fn visit_ts_type_parameter_declaration(&mut self, it: &TSTypeParameterDeclaration<'a>) {
        self.blank_span(it.span);
    }

    fn visit_ts_type_parameter_instantiation(&mut self, it: &TSTypeParameterInstantiation<'a>) {
        self.blank_span(it.span);
    }

    fn visit_ts_as_expression(&mut self, it: &TSAsExpression<'a>) {
        self.visit_expression(&it.expression);
        self.blank(it.expression.span().end, it.span.end);
    }

    fn visit_ts_satisfies_expression(&mut self, it: &TSSatisfiesExpression<'a>) {
        self.visit_expression(&it.expression);
        self.blank(it.expression.span().end, it.span.end);
    }

    fn visit_ts_non_null_expression(&mut self, it: &TSNonNullExpression<'a>) {
        self.visit_expression(&it.expression);
        self.blank(it.expression.span().end, it.span.end);
    }

    fn visit_ts_type_assertion(&mut self, it: &TSTypeAssertion<'a>) {
        self.reject(
            it.span.start,
            "<T>expr casts are not supported; write expr as T",
        );
    }

    fn visit_decorator(&mut self, it: &Decorator<'a>) {
        self.reject(it.span.start, "decorators are not supported");
    }

    fn visit_ts_export_assignment(&mut self, it: &TSExportAssignment<'a>) {
        self.reject(it.span.start, "export = is not supported");
    }

    fn visit_formal_parameter(&mut self, it: &FormalParameter<'a>) {
        if it.accessibility.is_some() || it.readonly || it.r#override {
            self.reject(it.span.start, "constructor parameter properties are not supported; assign the field in the constructor");
            return;
        }
        if it.optional {
            let end = it
                .type_annotation
                .as_ref()
                .map_or(it.span.end, |t| t.span.start);
            self.blank_marker('?', it.pattern.span().end, end);
        }
        walk::walk_formal_parameter(self, it);
    }

    fn visit_variable_declarator(&mut self, it: &VariableDeclarator<'a>) {
        if it.definite {
            let end = it
                .type_annotation
                .as_ref()
                .map_or(it.span.end, |t| t.span.start);
            self.blank_marker('!', it.id.span().end, end);
        }
        walk::walk_variable_declarator(self, it);
    }

    fn visit_ts_this_parameter(&mut self, it: &TSThisParameter<'a>) {
        // `this: T` is the first parameter; take the comma after it too.
        let rest = &self.source[(it.span.end as usize).min(self.source.len())..];
        let comma = rest
            .find(|c: char| !c.is_whitespace())
            .filter(|&i| rest[i..].starts_with(','));
        let end = comma.map_or(it.span.end, |i| it.span.end + i as u32 + 1);
        self.blank(it.span.start, end);
    }

    fn visit_class(&mut self, it: &Class<'a>) {
        if it.r#abstract {
            let body = it
                .id
                .as_ref()
                .map_or(it.body.span.start, |id| id.span.start);
            self.blank_keyword_before("abstract", it.span.start, body);
        }
        if let (Some(first), Some(last)) = (it.implements.first(), it.implements.last()) {
            let from = it
                .heritage
                .as_ref()
                .map_or(it.span.start, |h| h.expression.span().end);
            self.blank_keyword_before("implements", from, first.span.start);
            self.blank(first.span.start, last.span.end);
        }
        walk::walk_class(self, it);
    }

    fn visit_class_element(&mut self, it: &ClassElement<'a>) {
        match it {
            ClassElement::TSIndexSignature(s) => self.blank_statement(s.span),
            ClassElement::MethodDefinition(m)
                if m.r#type == MethodDefinitionType::TSAbstractMethodDefinition
                    || m.value.body.is_none() =>
            {
                self.blank_statement(m.span)
            }
            ClassElement::PropertyDefinition(p)
                if p.declare
                    || p.r#type == PropertyDefinitionType::TSAbstractPropertyDefinition =>
            {
                self.blank_statement(p.span)
            }
            ClassElement::MethodDefinition(m) => {
                self.blank_modifiers(m.span.start, m.key.span().start);
                if m.optional {
                    self.blank_marker('?', m.key.span().end, m.value.params.span.start);
                }
                walk::walk_class_element(self, it);
            }
            ClassElement::PropertyDefinition(p) => {
                self.blank_modifiers(p.span.start, p.key.span().start);
                if p.optional || p.definite {
                    let end = p
                        .type_annotation
                        .as_ref()
                        .map_or(p.span.end, |t| t.span.start);
                    self.blank_marker(if p.optional { '?' } else { '!' }, p.key.span().end, end);
                }
                walk::walk_class_element(self, it);
            }
            ClassElement::AccessorProperty(p) => {
                self.blank_modifiers(p.span.start, p.key.span().start);
                walk::walk_class_element(self, it);
            }
            ClassElement::StaticBlock(_) => walk::walk_class_element(self, it),
        }
    }
}
