//! The Python artifact is checked before it is written: one that CPython would not compile
//! (too many nested parentheses, a tree nested too deep, a bug of the generator) is refused,
//! and nothing is written. PyTorch imports every artifact in its folder, so one that does not
//! compile would break the others too.
//!
//! The check runs in-process, with no interpreter: the source is parsed by
//! [`rustpython_parser`] (Python 3 grammar; LALRPOP tables, so the parser itself does not
//! recurse) and then held to the limits of CPython that a parser alone does not enforce. It
//! works the same whether or not `python3` is installed, and costs about a millisecond for a
//! typical artifact (PyTorch's own artifacts, ours and the handler modules) where starting
//! `python3` cost 16 ms to 170 ms of CPU (more behind a version manager's shim), on the
//! critical path of `ah-train` on 2 cores.
//!
//! The limits, measured on CPython 3.9 to 3.13 (`compile` of sources growing until refused),
//! and which of them what we generate could reach:
//!
//! - **Indentation**: the tokenizer refuses a 100th nested indented block ("too many levels of
//!   indentation"): [`MAX_INDENT_LEVELS`]. Nested `if`s of a tree are indented one level per
//!   split, and the templates put them two levels deep (class, method); trees deeper than
//!   [`crate::plan::MAX_NESTED_DEPTH`] become a table, so this holds by construction, and the
//!   check catches a change that breaks it.
//! - **Brackets**: the tokenizer refuses a 201st nested `(`, `[` or `{` ("too many nested
//!   parentheses"): [`MAX_NESTED_BRACKETS`]. Augment expressions print at most one
//!   parenthesis per level, and `ah_core::ops::MAX_DEPTH` bounds their levels at 100.
//! - **Syntax-tree depth**: the parser's stack and the compiler's recursion limit refuse
//!   expressions and statements nested about 3,000 deep even without brackets
//!   (`not not ... x`, `a if c else b if ...`; 2,983 to 2,994 on 3.10 to 3.12, about 6,000 on
//!   3.9 and 3.13). The check refuses more than [`MAX_SYNTAX_DEPTH`] nested statements and
//!   expressions, far below any of them and far above what the generator writes (expressions
//!   within `ah_core::ops::MAX_DEPTH`, trees within `MAX_NESTED_DEPTH`).
//! - **Null bytes** are refused by CPython's `compile`; the generator escapes every control
//!   character in literals.
//! - **Statically nested blocks** (20 nested `for`, `while`, `try`, `with`; 10 nested
//!   `try ... except`) are not checked: the templates' blocks are fixed (one `try`, one
//!   `while`, not nested), whatever the model.
//!
//! The parser also accepts a few statements CPython's compiler refuses; those the generator
//! could produce by a bug (a line indented out of its method, a wrong assignment target) are
//! checked too: `return`, `yield` and `await` outside a function, `break` and `continue` outside
//! a loop, `nonlocal` at module level, and assignment and `del` targets that are not names,
//! attributes, subscripts or tuples and lists of them. Others (an unparenthesized generator
//! expression beside another argument, duplicate keyword arguments) cannot come out of the
//! templates and are not checked.
//!
//! CPython stays the oracle in the tests: every artifact the test suites generate is also
//! compiled or imported by `python3` there, and a test holds the two checks to the same answer
//! on artifacts over each limit.
//!
//! The parser is the crates.io `rustpython-parser` 0.4, RustPython's (the project now uses
//! Ruff's parser; Ruff's `ruff_python_parser` is published only as an internal crate whose
//! every release needs the newest Rust, 1.95 to 1.97, against this workspace's 1.89). Its cost,
//! measured on 2 cores: a clean `cargo build --release -p ah-train` +15 s (+25 s of CPU), a
//! clean test build of ah-codegen and ah-train +25 s (docs/results.md).

use rustpython_parser::ast::{self, Ranged, Visitor};
use rustpython_parser::{lexer, Mode, Tok};

use crate::error::CodegenError;

/// The most nested indented blocks CPython's tokenizer takes (its `MAXINDENT` is 100, and it
/// refuses the 100th).
pub const MAX_INDENT_LEVELS: usize = 99;

/// The most nested brackets (`(`, `[`, `{` together) CPython's tokenizer takes (`MAXLEVEL`).
pub const MAX_NESTED_BRACKETS: usize = 200;

/// The most nested statements and expressions the check accepts (CPython: about 3,000).
pub const MAX_SYNTAX_DEPTH: usize = 500;

/// The check's thread's stack: a source nesting far beyond [`MAX_SYNTAX_DEPTH`] without
/// brackets is parsed into a syntax tree that is dropped recursively.
const STACK_BYTES: usize = 64 << 20;

/// Checks that CPython compiles `source` as the module `file_name` (see the module docs);
/// the error names the file and the line.
pub fn check_compiles(source: &str, file_name: &str) -> Result<(), CodegenError> {
    let refusal = std::thread::scope(|s| {
        match std::thread::Builder::new()
            .name("python-check".into())
            .stack_size(STACK_BYTES)
            .spawn_scoped(s, || check(source))
        {
            Ok(handle) => handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            // No thread to be had: the check fits the caller's stack for anything generated.
            Err(_) => check(source),
        }
    });
    match refusal {
        None => Ok(()),
        Some(Refusal { offset, message }) => Err(CodegenError::ArtifactDoesNotCompile {
            file: file_name.to_string(),
            line: line_of(source, offset),
            message,
        }),
    }
}

/// Why CPython would not compile a source: where (a byte offset) and its message.
#[derive(Debug)]
struct Refusal {
    offset: usize,
    message: String,
}

impl Refusal {
    fn new(offset: impl Into<usize>, message: impl Into<String>) -> Self {
        Refusal {
            offset: offset.into(),
            message: message.into(),
        }
    }
}

/// The first reason CPython would refuse `source`, in the order it would find them: the
/// tokenizer's limits and syntax errors, then the compiler's.
fn check(source: &str) -> Option<Refusal> {
    if let Some(at) = source.find('\0') {
        return Some(Refusal::new(
            at,
            "SyntaxError: source code cannot contain null bytes",
        ));
    }
    let mut limit = None;
    let (mut indent, mut brackets) = (0usize, 0usize);
    // The tokens stop at the first one over a limit (the parser then fails on the early end).
    let tokens = lexer::lex(source, Mode::Module).map_while(|token| {
        if let Ok((tok, range)) = &token {
            let over = match tok {
                Tok::Indent => {
                    indent += 1;
                    (indent > MAX_INDENT_LEVELS).then_some(
                        "IndentationError: too many levels of indentation (CPython takes 99)",
                    )
                }
                Tok::Dedent => {
                    indent = indent.saturating_sub(1);
                    None
                }
                Tok::Lpar | Tok::Lsqb | Tok::Lbrace => {
                    brackets += 1;
                    (brackets > MAX_NESTED_BRACKETS)
                        .then_some("SyntaxError: too many nested parentheses (CPython takes 200)")
                }
                Tok::Rpar | Tok::Rsqb | Tok::Rbrace => {
                    brackets = brackets.saturating_sub(1);
                    None
                }
                _ => None,
            };
            if let Some(message) = over {
                limit = Some(Refusal::new(range.start(), message));
                return None;
            }
        }
        Some(token)
    });
    let parsed = rustpython_parser::parse_tokens(tokens, Mode::Module, "<artifact>");
    if limit.is_some() {
        return limit;
    }
    let body = match parsed {
        Ok(ast::Mod::Module(module)) => module.body,
        Ok(_) => unreachable!("parsed as a module"),
        Err(e) => {
            let kind = if e.error.is_indentation_error() {
                "IndentationError"
            } else {
                "SyntaxError"
            };
            return Some(Refusal::new(e.offset, format!("{kind}: {}", e.error)));
        }
    };
    let mut walk = Walk::default();
    walk.body(body);
    walk.refusal
}

/// The 1-based line of the byte `offset` (lines end at `\n`: the generator writes no other
/// line break).
fn line_of(source: &str, offset: usize) -> usize {
    let end = offset.min(source.len());
    1 + source.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
}

/// The compiler's checks on the syntax tree (see the module docs). Visiting consumes the
/// tree node by node; the recursion stops at [`MAX_SYNTAX_DEPTH`].
#[derive(Default)]
struct Walk {
    /// Statements and expressions open around the node being visited.
    depth: usize,
    /// Functions (and lambdas) around it, within the innermost class body.
    functions: usize,
    /// Loop bodies around it, within the innermost function or class body.
    loops: usize,
    /// The first refusal found.
    refusal: Option<Refusal>,
}

impl Walk {
    fn refuse(&mut self, offset: impl Into<usize>, message: impl Into<String>) {
        if self.refusal.is_none() {
            self.refusal = Some(Refusal::new(offset, message));
        }
    }

    /// Opens one level at `offset`; `false` (refused) beyond [`MAX_SYNTAX_DEPTH`] or once
    /// anything is refused, when the node is not visited.
    fn enter(&mut self, offset: usize) -> bool {
        if self.refusal.is_some() {
            return false;
        }
        self.depth += 1;
        if self.depth > MAX_SYNTAX_DEPTH {
            self.refuse(
                offset,
                format!(
                    "RecursionError: statements and expressions nest deeper than {MAX_SYNTAX_DEPTH} levels here (CPython's compiler refuses about 3,000)"
                ),
            );
            self.depth -= 1;
            return false;
        }
        true
    }

    /// Runs `f` in a new scope: `function` (a def or lambda) or a class body.
    fn scope(&mut self, function: bool, f: impl FnOnce(&mut Self)) {
        let saved = (self.functions, self.loops);
        self.functions = if function { self.functions + 1 } else { 0 };
        self.loops = 0;
        f(self);
        (self.functions, self.loops) = saved;
    }

    fn body(&mut self, body: Vec<ast::Stmt>) {
        for stmt in body {
            self.visit_stmt(stmt);
        }
    }

    /// A loop's body, then its `else` (which is outside the loop).
    fn loop_bodies(&mut self, body: Vec<ast::Stmt>, orelse: Vec<ast::Stmt>) {
        self.loops += 1;
        self.body(body);
        self.loops -= 1;
        self.body(orelse);
    }

    /// `for` and `async for`: the target, the iterable, the bodies.
    fn for_loop(
        &mut self,
        target: ast::Expr,
        iter: ast::Expr,
        body: Vec<ast::Stmt>,
        orelse: Vec<ast::Stmt>,
    ) {
        self.target(&target, true, "assign to");
        self.visit_expr(target);
        self.visit_expr(iter);
        self.loop_bodies(body, orelse);
    }

    fn outside_function(&mut self, offset: impl Into<usize>, what: &str) {
        if self.functions == 0 {
            self.refuse(offset, format!("SyntaxError: '{what}' outside function"));
        }
    }

    /// CPython's "cannot assign to ..." (`delete`: "cannot delete ..."): `target` must be a
    /// name, attribute or subscript, or (`nested`) a tuple or list of targets, starred or not.
    fn target(&mut self, target: &ast::Expr, nested: bool, verb: &str) {
        let what = match target {
            ast::Expr::Name(_) | ast::Expr::Attribute(_) | ast::Expr::Subscript(_) => return,
            ast::Expr::Tuple(ast::ExprTuple { elts, .. })
            | ast::Expr::List(ast::ExprList { elts, .. })
                if nested =>
            {
                for e in elts {
                    match e {
                        ast::Expr::Starred(s) if verb == "assign to" => {
                            self.target(&s.value, true, verb)
                        }
                        _ => self.target(e, true, verb),
                    }
                }
                return;
            }
            ast::Expr::Constant(_) => "literal",
            ast::Expr::Call(_) => "function call",
            ast::Expr::Tuple(_) => "tuple",
            ast::Expr::List(_) => "list",
            ast::Expr::Starred(_) => "starred",
            _ => "expression",
        };
        self.refuse(target.start(), format!("SyntaxError: cannot {verb} {what}"));
    }
}

impl Visitor for Walk {
    fn visit_stmt(&mut self, node: ast::Stmt) {
        if self.enter(node.start().into()) {
            self.generic_visit_stmt(node);
            self.depth -= 1;
        }
    }

    fn visit_expr(&mut self, node: ast::Expr) {
        if self.enter(node.start().into()) {
            self.generic_visit_expr(node);
            self.depth -= 1;
        }
    }

    fn visit_stmt_function_def(&mut self, node: ast::StmtFunctionDef) {
        self.scope(true, |w| w.generic_visit_stmt_function_def(node));
    }

    fn visit_stmt_async_function_def(&mut self, node: ast::StmtAsyncFunctionDef) {
        self.scope(true, |w| w.generic_visit_stmt_async_function_def(node));
    }

    fn visit_expr_lambda(&mut self, node: ast::ExprLambda) {
        self.scope(true, |w| w.generic_visit_expr_lambda(node));
    }

    fn visit_stmt_class_def(&mut self, node: ast::StmtClassDef) {
        self.scope(false, |w| w.generic_visit_stmt_class_def(node));
    }

    fn visit_stmt_for(&mut self, node: ast::StmtFor) {
        self.for_loop(*node.target, *node.iter, node.body, node.orelse);
    }

    fn visit_stmt_async_for(&mut self, node: ast::StmtAsyncFor) {
        self.outside_function(node.range.start(), "async for");
        self.for_loop(*node.target, *node.iter, node.body, node.orelse);
    }

    fn visit_stmt_while(&mut self, node: ast::StmtWhile) {
        self.visit_expr(*node.test);
        self.loop_bodies(node.body, node.orelse);
    }

    fn visit_stmt_break(&mut self, node: ast::StmtBreak) {
        if self.loops == 0 {
            self.refuse(node.range.start(), "SyntaxError: 'break' outside loop");
        }
    }

    fn visit_stmt_continue(&mut self, node: ast::StmtContinue) {
        if self.loops == 0 {
            self.refuse(
                node.range.start(),
                "SyntaxError: 'continue' not properly in loop",
            );
        }
    }

    fn visit_stmt_return(&mut self, node: ast::StmtReturn) {
        self.outside_function(node.range.start(), "return");
        self.generic_visit_stmt_return(node);
    }

    fn visit_expr_yield(&mut self, node: ast::ExprYield) {
        self.outside_function(node.range.start(), "yield");
        self.generic_visit_expr_yield(node);
    }

    fn visit_expr_yield_from(&mut self, node: ast::ExprYieldFrom) {
        self.outside_function(node.range.start(), "yield");
        self.generic_visit_expr_yield_from(node);
    }

    fn visit_expr_await(&mut self, node: ast::ExprAwait) {
        self.outside_function(node.range.start(), "await");
        self.generic_visit_expr_await(node);
    }

    fn visit_stmt_nonlocal(&mut self, node: ast::StmtNonlocal) {
        if self.functions == 0 {
            self.refuse(
                node.range.start(),
                "SyntaxError: nonlocal declaration not allowed at module level",
            );
        }
    }

    fn visit_stmt_assign(&mut self, node: ast::StmtAssign) {
        for t in &node.targets {
            self.target(t, true, "assign to");
        }
        self.generic_visit_stmt_assign(node);
    }

    fn visit_stmt_aug_assign(&mut self, node: ast::StmtAugAssign) {
        self.target(&node.target, false, "assign to");
        self.generic_visit_stmt_aug_assign(node);
    }

    fn visit_stmt_ann_assign(&mut self, node: ast::StmtAnnAssign) {
        self.target(&node.target, false, "assign to");
        self.generic_visit_stmt_ann_assign(node);
    }

    fn visit_stmt_delete(&mut self, node: ast::StmtDelete) {
        for t in &node.targets {
            self.target(t, true, "delete");
        }
        self.generic_visit_stmt_delete(node);
    }

    fn visit_withitem(&mut self, node: ast::WithItem) {
        if let Some(vars) = &node.optional_vars {
            self.target(vars, true, "assign to");
        }
        self.generic_visit_withitem(node);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(source: &str) -> Option<String> {
        check_compiles(source, "_T.py").err().map(|e| e.to_string())
    }

    #[test]
    fn refuses_what_cpython_cannot_compile_naming_file_and_line() {
        check_compiles("x = 1\n", "_Ok.py").unwrap();
        let deep = format!("x = 1\ny = {}1{}\n", "(".repeat(201), ")".repeat(201));
        let err = check_compiles(&deep, "_Deep.py").unwrap_err();
        match &err {
            CodegenError::ArtifactDoesNotCompile { file, line, .. } => {
                assert_eq!((file.as_str(), *line), ("_Deep.py", 2));
            }
            other => panic!("{other}"),
        }
        let err = err.to_string();
        assert!(
            err.contains("_Deep.py") && err.contains("line 2") && err.contains("parentheses"),
            "{err}"
        );
        assert!(err.len() < 1500, "{err}");
        let err = refusal("x = 1\ndef f(:\n").unwrap();
        assert!(
            err.contains("SyntaxError") && err.contains("line 2"),
            "{err}"
        );
    }

    /// At each limit accepted, one past it refused.
    #[test]
    fn the_limits_are_cpythons() {
        let parens = |n: usize| format!("x = {}1{}\n", "(".repeat(n), ")".repeat(n));
        assert_eq!(refusal(&parens(MAX_NESTED_BRACKETS)), None);
        let err = refusal(&parens(MAX_NESTED_BRACKETS + 1)).unwrap();
        assert!(err.contains("too many nested parentheses"), "{err}");
        let mixed = format!("x = {}1{}\n", "([{".repeat(67), "}])".repeat(67));
        assert!(refusal(&mixed).unwrap().contains("parentheses"));

        let indent = |n: usize| {
            let mut s: String = (0..n)
                .map(|i| format!("{}if x:\n", "    ".repeat(i)))
                .collect();
            s.push_str(&format!("{}pass\n", "    ".repeat(n)));
            s
        };
        assert_eq!(refusal(&indent(MAX_INDENT_LEVELS)), None);
        let err = refusal(&indent(MAX_INDENT_LEVELS + 1)).unwrap();
        assert!(
            err.contains("too many levels of indentation") && err.contains("line 101"),
            "{err}"
        );

        // `not` nests one expression per word, inside the statement.
        let nots = |n: usize| format!("x = {}1\n", "not ".repeat(n));
        assert_eq!(refusal(&nots(MAX_SYNTAX_DEPTH - 2)), None);
        assert!(refusal(&nots(MAX_SYNTAX_DEPTH))
            .unwrap()
            .contains("deeper than 500"));
        // Far beyond the limit, without brackets: refused, and no stack overflow.
        assert!(refusal(&format!("x = {}1\n", "-".repeat(100_000))).is_some());
        assert!(refusal(&format!("x = 1{}\n", " + 1".repeat(100_000))).is_some());
        assert!(refusal(&format!("x = 1{} +\n", " + 1".repeat(100_000))).is_some());
        assert!(refusal("x = 1\0\n").unwrap().contains("null bytes"));
    }

    #[test]
    fn refuses_what_cpythons_compiler_refuses_after_parsing() {
        for (source, message) in [
            ("return 1\n", "'return' outside function"),
            ("class C:\n    return 1\n", "'return' outside function"),
            (
                "def f():\n    class C:\n        yield 1\n",
                "'yield' outside function",
            ),
            ("break\n", "'break' outside loop"),
            (
                "while x:\n    pass\nelse:\n    break\n",
                "'break' outside loop",
            ),
            (
                "for x in y:\n    def f():\n        continue\n",
                "not properly in loop",
            ),
            ("nonlocal x\n", "nonlocal"),
            ("1 = 2\n", "cannot assign to literal"),
            ("a, f() = 1, 2\n", "cannot assign to function call"),
            ("(a, b) += 1\n", "cannot assign to tuple"),
            ("del f()\n", "cannot delete function call"),
            (
                "for f() in x:\n    pass\n",
                "cannot assign to function call",
            ),
        ] {
            let err = refusal(source).unwrap_or_else(|| panic!("accepted: {source}"));
            assert!(err.contains(message), "{source}: {err}");
        }
        for source in [
            "def f():\n    while x:\n        for y in z:\n            break\n        continue\n    return (yield)\n",
            "a, *b = c\n[x.y, z[0]] = w\nwith f() as (a, b):\n    pass\ndel a, b[0], (c, d)\n",
            "class C:\n    def f(self):\n        nonlocal_ = lambda: (yield)\n        return 1\n",
        ] {
            assert_eq!(refusal(source), None, "{source}");
        }
    }
}
