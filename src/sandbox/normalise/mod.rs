//! The forgiving code-shape normaliser: it takes the body of a fenced block, strips TypeScript,
//! unwraps `export default`, calls a lone function and returns a final expression, and wraps the
//! result as the body of an async function module. Every rewrite adds one notice; every position
//! maps back to the user's line:column.

mod edits;
mod tools_check;
mod tsblank;

use oxc_allocator::Allocator;
use oxc_ast::ast::*;
use oxc_ast_visit::Visit;
use oxc_parser::{ParseOptions, Parser};
use oxc_span::{GetSpan, SourceType};

use super::envelope::EnvelopeError;
use super::error::ErrorCode;
use super::host::unknown_tool_message;
use super::request::Namespaces;
use edits::{Edits, PositionMap, line_column, offset_of};
use tools_check::ToolsCheck;

/// The user's code rewritten into a module whose default export is the script as an async function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Normalised {
    /// The module source to compile.
    pub module: String,
    pub notices: Vec<String>,
    /// The code the user's positions refer to (the de-fenced original).
    original: String,
    /// The rewritten body, before wrapping.
    body: String,
    map: PositionMap,
}

/// The wrapper's first line; user line N is module line N + 1.
const PREFIX: &str = "export default async function __script() {\n";
const SUFFIX: &str = "\n}\n";

impl Normalised {
    /// Maps a 1-based module line:column (from QuickJS) to the user's line:column.
    pub fn user_position(&self, line: u32, column: u32) -> (u32, u32) {
        let body_line = line.saturating_sub(1).max(1);
        let offset = offset_of(&self.body, body_line, column.max(1));
        line_column(&self.original, self.map.original_offset(offset))
    }
}

/// Rewrites `code`; a syntax error (or a call to an unknown tool) comes back as the envelope error.
pub fn normalise(code: &str, namespaces: &Namespaces) -> Result<Normalised, EnvelopeError> {
    let mut notices = Vec::new();
    let original = match fenced_body(code) {
        Some(body) => {
            notices.push("Took the code from the fenced ``` block.".to_string());
            body
        }
        None => code.to_string(),
    };
    // A script file made executable starts `#!/usr/bin/env capabilities exec`: only a comment
    // here, and one of the same length, so every position the script reports stays its own.
    let original = match original.strip_prefix("#!") {
        Some(rest) => format!("//{rest}"),
        None => original,
    };
    let allocator = Allocator::default();
    let options = ParseOptions {
        allow_return_outside_function: true,
        ..ParseOptions::default()
    };
    let ts = Parser::new(&allocator, &original, SourceType::ts().with_module(true))
        .with_options(options)
        .parse();
    let js_allocator = Allocator::default();
    let program = if ts.diagnostics.has_errors() || ts.panicked {
        // Plain JavaScript that TypeScript's grammar reads differently still runs as JavaScript.
        let js = Parser::new(&js_allocator, &original, SourceType::mjs())
            .with_options(options)
            .parse();
        if js.diagnostics.has_errors() || js.panicked {
            let first = ts.diagnostics.iter().next();
            let offset = first
                .and_then(|d| d.labels.first())
                .map_or(0, |l| l.offset() as usize);
            let message = first.map_or_else(
                || "the code does not parse".to_string(),
                |d| d.message.to_string(),
            );
            return Err(syntax_error(&original, offset, &message));
        }
        js.program
    } else {
        ts.program
    };

    let mut blanker = tsblank::TsBlanker::new(&original);
    blanker.visit_program(&program);
    if let Some(first) = blanker.unsupported.first() {
        return Err(syntax_error(
            &original,
            first.offset as usize,
            first.message,
        ));
    }
    if blanker.stripped {
        notices.push("Stripped TypeScript annotations.".to_string());
    }
    let mut edits = blanker.edits;

    let mut check = ToolsCheck::new(namespaces);
    check.visit_program(&program);
    if let Some(offset) = check.first_import() {
        return Err(syntax_error(
            &original,
            offset as usize,
            "import() is not available in the sandbox; every source is already a global (for example github.searchIssues(…))",
        ));
    }
    if let Some((offset, ns, tool)) = check.first_unknown() {
        let (line, column) = line_column(&original, offset as usize);
        let message = format!(
            "{} (line {line}, column {column})",
            unknown_tool_message(namespaces, &ns, &tool)
        );
        return Err(EnvelopeError::new(ErrorCode::UnknownTool, message));
    }

    reshape(&program, &original, &mut edits, &mut notices)?;

    let (body, map) = edits.apply(&original);
    let module = format!("{PREFIX}{body}{SUFFIX}");
    Ok(Normalised {
        module,
        notices,
        original,
        body,
        map,
    })
}

fn syntax_error(text: &str, offset: usize, message: &str) -> EnvelopeError {
    let (line, column) = line_column(text, offset);
    EnvelopeError {
        code: ErrorCode::SyntaxError,
        message: format!("SyntaxError: {message} (line {line}, column {column})"),
        hint: Some(format!(
            "Fix the code at line {line}, column {column}, and run it again."
        )),
        recovery: None,
    }
}

/// The body of the first ``` fence, with every other line emptied so line numbers stay put.
fn fenced_body(code: &str) -> Option<String> {
    let lines: Vec<&str> = code.split('\n').collect();
    let open = lines
        .iter()
        .position(|l| l.trim_start().starts_with("```"))?;
    let close = lines
        .iter()
        .skip(open + 1)
        .position(|l| l.trim_start().starts_with("```"))
        .map_or(lines.len(), |i| open + 1 + i);
    let kept: Vec<&str> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| if i > open && i < close { *l } else { "" })
        .collect();
    Some(kept.join("\n"))
}

/// Statements that still mean something after TypeScript is blanked.
fn meaningful<'p, 'a>(program: &'p Program<'a>) -> Vec<&'p Statement<'a>> {
    program
        .body
        .iter()
        .filter(|s| {
            !matches!(
                s,
                Statement::EmptyStatement(_)
                    | Statement::TSTypeAliasDeclaration(_)
                    | Statement::TSInterfaceDeclaration(_)
            ) && !matches!(s, Statement::VariableDeclaration(d) if d.declare)
                && !matches!(s, Statement::FunctionDeclaration(f) if f.declare || f.body.is_none())
        })
        .collect()
}

fn reshape(
    program: &Program<'_>,
    text: &str,
    edits: &mut Edits,
    notices: &mut Vec<String>,
) -> Result<(), EnvelopeError> {
    let statements = meaningful(program);
    for statement in &statements {
        match statement {
            Statement::ImportDeclaration(i) => {
                return Err(syntax_error(
                    text,
                    i.span.start as usize,
                    "import is not available in the sandbox; every source is already a global (for example github.searchIssues(…))",
                ));
            }
            Statement::ExportNamedDeclaration(_) | Statement::ExportAllDeclaration(_) => {
                return Err(syntax_error(
                    text,
                    statement.span().start as usize,
                    "export is not needed; return the value instead",
                ));
            }
            _ => {}
        }
    }
    let has_return = statements
        .iter()
        .any(|s| matches!(s, Statement::ReturnStatement(_)));
    let last = statements.last();
    match last {
        Some(Statement::ExportDefaultDeclaration(export)) => {
            notices.push("Unwrapped export default.".to_string());
            let start = export.span.start;
            match &export.declaration {
                ExportDefaultDeclarationKind::FunctionDeclaration(f) => {
                    edits.blank(start, f.span.start);
                    call_function(
                        edits,
                        notices,
                        f.span.start,
                        f.span.end,
                        f.id.as_ref().map(|id| id.name.as_str()),
                    );
                }
                ExportDefaultDeclarationKind::ClassDeclaration(c) => {
                    edits.blank(start, c.span.start)
                }
                ExportDefaultDeclarationKind::TSInterfaceDeclaration(_) => {
                    edits.blank_statement(start, export.span.end)
                }
                expression => {
                    let Some(expression) = expression.as_expression() else {
                        return Ok(());
                    };
                    let inner = expression.get_inner_expression();
                    if let Expression::ArrowFunctionExpression(_)
                    | Expression::FunctionExpression(_) = inner
                    {
                        edits.blank(start, expression.span().start);
                        call_function(
                            edits,
                            notices,
                            expression.span().start,
                            expression.span().end,
                            None,
                        );
                    } else {
                        // `export default x` → `return         x`: same length, nothing moves.
                        edits.blank(start, expression.span().start);
                        edits.overwrite(start, "return");
                    }
                }
            }
        }
        Some(Statement::FunctionDeclaration(f)) if statements.len() == 1 && !f.generator => {
            if let Some(id) = &f.id {
                notices.push(format!(
                    "Called the lone function {}() and returned its result.",
                    id.name
                ));
                edits.insert(text.len() as u32, format!("\n;return await {}();", id.name));
            }
        }
        Some(Statement::ExpressionStatement(e))
            if statements.len() == 1 && is_function(&e.expression) =>
        {
            call_function(
                edits,
                notices,
                e.expression.span().start,
                e.expression.span().end,
                None,
            );
        }
        Some(Statement::ExpressionStatement(e))
            if !has_return
                && !is_console_call(&e.expression)
                && !matches!(e.expression, Expression::AssignmentExpression(_)) =>
        {
            notices.push("Returned the value of the final expression.".to_string());
            edits.insert(e.expression.span().start, "return ");
        }
        _ => {}
    }
    Ok(())
}

fn is_function(expression: &Expression<'_>) -> bool {
    matches!(
        expression.get_inner_expression(),
        Expression::ArrowFunctionExpression(_) | Expression::FunctionExpression(_)
    )
}

/// `console.log(…)` as the last line is output, not a result.
fn is_console_call(expression: &Expression<'_>) -> bool {
    let Expression::CallExpression(call) = expression.get_inner_expression() else {
        return false;
    };
    let Expression::StaticMemberExpression(member) = &call.callee else {
        return false;
    };
    matches!(&member.object, Expression::Identifier(id) if id.name == "console")
}

/// Turns the function at `start..end` into `return await (function)();`.
fn call_function(
    edits: &mut Edits,
    notices: &mut Vec<String>,
    start: u32,
    end: u32,
    name: Option<&str>,
) {
    edits.insert(start, "return await (");
    edits.insert(end, ")();");
    notices.push(match name {
        Some(name) => format!("Called the lone function {name}() and returned its result."),
        None => "Called the lone function and returned its result.".to_string(),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(code: &str) -> (String, Vec<String>) {
        let out = normalise(code, &Namespaces::new()).unwrap_or_else(|e| panic!("{e:?}"));
        let body = out
            .module
            .strip_prefix(PREFIX)
            .and_then(|m| m.strip_suffix(SUFFIX))
            .unwrap_or_default()
            .to_string();
        (body, out.notices)
    }

    fn error(code: &str) -> EnvelopeError {
        match normalise(code, &Namespaces::new()) {
            Ok(out) => panic!("expected an error, got {out:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn plain_bodies_pass_through() {
        let (out, notices) = body("const a = 1;\nreturn a;");
        assert_eq!(out, "const a = 1;\nreturn a;");
        assert!(notices.is_empty());
    }

    #[test]
    fn final_expression_is_returned() {
        let (out, notices) = body("const a = 1;\na + 1");
        assert_eq!(out, "const a = 1;\nreturn a + 1");
        assert_eq!(notices, vec!["Returned the value of the final expression."]);
        let (out, notices) = body("console.log(1)");
        assert_eq!(out, "console.log(1)");
        assert!(notices.is_empty());
        let (_, notices) = body("let a; a = 1");
        assert!(notices.is_empty());
    }

    #[test]
    fn fenced_blocks_keep_line_numbers() {
        let (out, notices) = body("Here:\n```ts\nconst a: number = 1;\nreturn a;\n```\nthanks");
        assert_eq!(out, "\n\nconst a         = 1;\nreturn a;\n\n");
        assert_eq!(notices.len(), 2);
    }

    #[test]
    fn export_default_and_lone_functions() {
        let (out, _) = body("export default 42");
        assert_eq!(out, "return         42");
        let (out, notices) = body("export default async function main() { return 1 }");
        assert_eq!(
            out,
            "               return await (async function main() { return 1 })();"
        );
        assert_eq!(notices.len(), 2);
        let (out, _) = body("async function main() { return 1 }");
        assert_eq!(
            out,
            "async function main() { return 1 }\n;return await main();"
        );
        let (out, _) = body("async () => { return 1 }");
        assert_eq!(out, "return await (async () => { return 1 })();");
    }

    #[test]
    fn typescript_is_blanked_in_place() {
        let code = "interface A { x: number }\nconst a = { x: 1 } as A;\nfunction f<T>(this: Window, v?: T): T { return v! }\nlet b!: string;\nreturn f<number>(a.x satisfies number);";
        let (out, _) = body(code);
        assert_eq!(out.len(), code.len());
        assert_eq!(
            out,
            ";                        \nconst a = { x: 1 }     ;\nfunction f   (              v    )    { return v  }\nlet b         ;\nreturn f        (a.x                 );"
        );
        let (out, _) =
            body("abstract class C extends B<T> implements I { private readonly x?: number = 1; }");
        assert_eq!(
            out,
            "         class C extends B                 {                  x          = 1; }"
        );
        let e = error("class C { constructor(public y: number) {} }");
        assert!(e.message.contains("parameter properties"), "{}", e.message);
    }

    #[test]
    fn unsupported_typescript_and_syntax_errors_have_positions() {
        let e = error("const a = 1;\nenum E { A }");
        assert_eq!(e.code, ErrorCode::SyntaxError);
        assert!(e.message.contains("line 2, column 1"), "{}", e.message);
        let e = error("let x = ;");
        assert!(e.message.contains("line 1, column 9"), "{}", e.message);
        let e = error("import fs from 'fs';\nreturn 1");
        assert!(
            e.message.contains("import is not available"),
            "{}",
            e.message
        );
    }

    #[test]
    fn positions_map_back_through_insertions() {
        let out = normalise("const a = 1;\na.b.c", &Namespaces::new())
            .unwrap_or_else(|e| panic!("{e:?}"));
        // `.c` sits at module line 3 (wrapper line + 2), column 11 after `return `.
        assert_eq!(out.user_position(3, 11), (2, 4));
    }
}
