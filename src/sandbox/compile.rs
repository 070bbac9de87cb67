//! Compiling JavaScript to QuickJS module bytecode outside the sandbox. The sandbox context has no
//! `Eval` intrinsic, so it cannot compile anything itself; a per-thread compiler context (which has
//! it) turns source into bytecode that the sandbox then loads. The prelude is compiled once per
//! process.

use std::cell::RefCell;
use std::sync::OnceLock;

use rquickjs::module::WriteOptions;
use rquickjs::{Context, Module, Runtime, Value};

/// The guest prelude, one module made of the files in `prelude/` in order. The primordials come
/// first: their module-level captures run before anything else, and before any user code.
const PRELUDE_SOURCE: &str = concat!(
    include_str!("../../prelude/00_primordials.js"),
    "\n",
    include_str!("../../prelude/05_lockdown.js"),
    "\n",
    include_str!("../../prelude/07_walks.js"),
    "\n",
    include_str!("../../prelude/10_determinism.js"),
    "\n",
    include_str!("../../prelude/20_timers.js"),
    "\n",
    include_str!("../../prelude/30_console.js"),
    "\n",
    include_str!("../../prelude/40_encoding.js"),
    "\n",
    include_str!("../../prelude/50_clone.js"),
    "\n",
    include_str!("../../prelude/60_tools.js"),
    "\n",
    include_str!("../../prelude/80_result.js"),
    "\n",
    include_str!("../../prelude/90_install.js"),
);

/// The module name user code compiles under; stack traces show it.
pub const SCRIPT_NAME: &str = "script.js";

/// QuickJS keeps every compiled-but-never-run module in its context, so a compiler context is
/// replaced after this many compiles to bound that memory.
const COMPILES_PER_CONTEXT: u32 = 32;
/// The compiler's own limits: generous for 64 KB of code, but bounded.
const COMPILER_MEMORY: usize = 256 << 20;
const COMPILER_STACK: usize = 1 << 20;

/// A compile failure with the position QuickJS reported (1-based, in the compiled text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileError {
    pub message: String,
    pub line: Option<u32>,
    pub column: Option<u32>,
}

struct Compiler {
    // Field order matters: the context must drop before its runtime.
    context: Context,
    _runtime: Runtime,
    uses: u32,
}

impl Compiler {
    fn new() -> Result<Self, CompileError> {
        let internal = |e: rquickjs::Error| CompileError {
            message: e.to_string(),
            line: None,
            column: None,
        };
        let runtime = Runtime::new().map_err(internal)?;
        runtime.set_memory_limit(COMPILER_MEMORY);
        runtime.set_max_stack_size(COMPILER_STACK);
        let context = Context::full(&runtime).map_err(internal)?;
        Ok(Compiler {
            context,
            _runtime: runtime,
            uses: 0,
        })
    }
}

thread_local! {
    static COMPILER: RefCell<Option<Compiler>> = const { RefCell::new(None) };
}

/// Compiles `source` as an ES module named `name` and returns its bytecode.
pub fn compile_module(name: &str, source: &str) -> Result<Vec<u8>, CompileError> {
    compile(name, source, WriteOptions::default())
}

/// [`compile_module`] with the write options; every run loads the bytecode, so what it carries
/// costs time per run.
fn compile(name: &str, source: &str, options: WriteOptions) -> Result<Vec<u8>, CompileError> {
    COMPILER.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.as_ref().is_none_or(|c| c.uses >= COMPILES_PER_CONTEXT) {
            *slot = None;
            *slot = Some(Compiler::new()?);
        }
        let Some(compiler) = slot.as_mut() else {
            return Err(CompileError {
                message: "no compiler".into(),
                line: None,
                column: None,
            });
        };
        compiler.uses += 1;
        compiler.context.with(|ctx| {
            let declared = Module::declare(ctx.clone(), name, source);
            match declared {
                Ok(module) => module.write(options).map_err(|e| CompileError {
                    message: e.to_string(),
                    line: None,
                    column: None,
                }),
                Err(rquickjs::Error::Exception) => Err(exception_to_error(name, ctx.catch())),
                Err(other) => Err(CompileError {
                    message: other.to_string(),
                    line: None,
                    column: None,
                }),
            }
        })
    })
}

fn exception_to_error(name: &str, thrown: Value<'_>) -> CompileError {
    let Some(object) = thrown.as_object() else {
        return CompileError {
            message: "the code does not compile".into(),
            line: None,
            column: None,
        };
    };
    let message: String = object.get("message").unwrap_or_default();
    let stack: String = object.get("stack").unwrap_or_default();
    let (line, column) = position_in_stack(&stack, name).unzip();
    CompileError {
        message,
        line,
        column: column.flatten(),
    }
}

/// Finds the first `name:line[:column]` in a QuickJS stack trace.
pub fn position_in_stack(stack: &str, name: &str) -> Option<(u32, Option<u32>)> {
    let start = stack.find(name)? + name.len();
    let rest = stack[start..].strip_prefix(':')?;
    let mut parts = rest.split(|c: char| !c.is_ascii_digit());
    let line = parts.next()?.parse().ok()?;
    let column = parts.next().and_then(|c| c.parse().ok());
    Some((line, column))
}

/// The prelude's bytecode, compiled on first use.
pub fn prelude_bytecode() -> Result<&'static [u8], CompileError> {
    static PRELUDE: OnceLock<Result<Vec<u8>, CompileError>> = OnceLock::new();
    // Without source text: QuickJS stores each function's own slice of it, nested functions
    // again, and copies all of it on every load. Line numbers stay for stack traces.
    let options = WriteOptions {
        strip_source: true,
        ..WriteOptions::default()
    };
    PRELUDE
        .get_or_init(|| compile("prelude.js", PRELUDE_SOURCE, options))
        .as_ref()
        .map(Vec::as_slice)
        .map_err(Clone::clone)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use oxc_allocator::Allocator;
    use oxc_ast::ast::*;
    use oxc_ast_visit::{Visit, walk};
    use oxc_parser::Parser;
    use oxc_span::SourceType;

    use super::*;

    /// What the prelude's rules (prelude/00_primordials.js) forbid, found by walking its syntax.
    #[derive(Default)]
    struct Rules {
        /// Every name the module binds anywhere (a reference to one is not a global read).
        bound: BTreeSet<String>,
        /// (offset, name) of every identifier reference.
        references: Vec<(u32, String)>,
        /// (offset, what) of every construct the rules forbid.
        broken: Vec<(u32, &'static str)>,
    }

    impl<'a> Visit<'a> for Rules {
        fn visit_binding_identifier(&mut self, it: &BindingIdentifier<'a>) {
            self.bound.insert(it.name.to_string());
        }

        fn visit_identifier_reference(&mut self, it: &IdentifierReference<'a>) {
            self.references.push((it.span.start, it.name.to_string()));
        }

        fn visit_template_literal(&mut self, it: &TemplateLiteral<'a>) {
            if !it.expressions.is_empty() {
                self.broken.push((
                    it.span.start,
                    "a template literal with substitutions (QuickJS calls String.prototype.concat)",
                ));
            }
            walk::walk_template_literal(self, it);
        }

        fn visit_tagged_template_expression(&mut self, it: &TaggedTemplateExpression<'a>) {
            self.broken.push((it.span.start, "a tagged template"));
            walk::walk_tagged_template_expression(self, it);
        }

        fn visit_for_of_statement(&mut self, it: &ForOfStatement<'a>) {
            self.broken
                .push((it.span.start, "for…of (the iteration protocol)"));
            walk::walk_for_of_statement(self, it);
        }

        fn visit_spread_element(&mut self, it: &SpreadElement<'a>) {
            self.broken
                .push((it.span.start, "a spread (the iteration protocol)"));
            walk::walk_spread_element(self, it);
        }

        fn visit_array_pattern(&mut self, it: &ArrayPattern<'a>) {
            self.broken.push((
                it.span.start,
                "array destructuring (the iteration protocol)",
            ));
            walk::walk_array_pattern(self, it);
        }

        fn visit_await_expression(&mut self, it: &AwaitExpression<'a>) {
            self.broken
                .push((it.span.start, "await (it reads `constructor` and `then`)"));
            walk::walk_await_expression(self, it);
        }
    }

    /// The line of `offset` in the prelude, for messages.
    fn line_of(offset: u32) -> usize {
        let end = usize::try_from(offset).unwrap_or(usize::MAX);
        PRELUDE_SOURCE[..end.min(PRELUDE_SOURCE.len())]
            .matches('\n')
            .count()
            + 1
    }

    /// After the primordials, the prelude reads no global (a script can reassign any of them)
    /// and uses no syntax that calls built-ins behind its back.
    #[test]
    fn the_prelude_keeps_its_own_rules() {
        let allocator = Allocator::default();
        let parsed = Parser::new(&allocator, PRELUDE_SOURCE, SourceType::mjs()).parse();
        assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
        let mut rules = Rules::default();
        rules.visit_program(&parsed.program);
        let primordials_end =
            u32::try_from(include_str!("../../prelude/00_primordials.js").len()).unwrap_or(0);
        // Not writable, not configurable: no script can change what these mean.
        let constants = ["undefined", "NaN", "Infinity"];
        let globals: Vec<String> = rules
            .references
            .iter()
            .filter(|(at, name)| {
                *at > primordials_end
                    && !rules.bound.contains(name)
                    && !constants.contains(&name.as_str())
            })
            .map(|(at, name)| format!("line {}: {name}", line_of(*at)))
            .collect();
        assert!(
            globals.is_empty(),
            "the prelude reads globals it did not capture in prelude/00_primordials.js: {globals:#?}"
        );
        let broken: Vec<String> = rules
            .broken
            .iter()
            .map(|(at, what)| format!("line {}: {what}", line_of(*at)))
            .collect();
        assert!(broken.is_empty(), "{broken:#?}");
    }

    #[test]
    fn the_prelude_compiles() {
        let bytes = prelude_bytecode();
        assert!(
            bytes.is_ok_and(|b| !b.is_empty()),
            "{:?}",
            prelude_bytecode().err()
        );
    }

    #[test]
    fn syntax_errors_carry_their_position() {
        let err = compile_module(SCRIPT_NAME, "export default 1;\nlet x = ;").err();
        let err = err.unwrap_or_else(|| CompileError {
            message: String::new(),
            line: None,
            column: None,
        });
        assert_eq!(err.line, Some(2), "{err:?}");
        assert!(!err.message.is_empty());
    }

    #[test]
    fn finds_positions_in_stacks() {
        assert_eq!(
            position_in_stack("    at main (script.js:3:19)\n", SCRIPT_NAME),
            Some((3, Some(19)))
        );
        assert_eq!(
            position_in_stack("    at script.js:7\n", SCRIPT_NAME),
            Some((7, None))
        );
        assert_eq!(position_in_stack("    at <anonymous>\n", SCRIPT_NAME), None);
    }
}
