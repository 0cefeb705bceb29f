//! The analysed form of code: special forms resolved, variables resolved to slots,
//! paths parsed. Built once by `compile`, run many times by `Interp::eval`.

use crate::error::Result;
use crate::eval::env::{Env, Scope};
use crate::eval::reader::PathSpec;
use crate::source::Span;
use crate::symbol::Sym;
use crate::value::Value;
use std::rc::Rc;

pub enum Node {
    Const(Value),
    /// A lexical variable: `depth` frames out, then `slot`.
    Local {
        depth: u32,
        slot: u32,
        name: Sym,
        span: Span,
    },
    Global {
        name: Sym,
        span: Span,
    },
    /// A free variable of a task body: looked up by name in the caller's environment.
    Dynamic {
        name: Sym,
        span: Span,
    },
    Path {
        base: Box<Node>,
        path: Rc<PathSpec>,
        span: Span,
    },
    SetLocal {
        depth: u32,
        slot: u32,
        value: Box<Node>,
    },
    SetGlobal {
        name: Sym,
        value: Box<Node>,
        span: Span,
    },
    SetDynamic {
        name: Sym,
        value: Box<Node>,
        span: Span,
    },
    DefineGlobal {
        name: Sym,
        value: Box<Node>,
    },
    /// `define` inside a body: the slot was declared when the body was analysed.
    DefineLocal {
        slot: u32,
        name: Sym,
        value: Box<Node>,
    },
    If(Box<(Node, Node, Node)>),
    And(Box<[Node]>),
    Or(Box<[Node]>),
    Begin(Box<[Node]>),
    Lambda(Rc<Lambda>),
    Let(Box<Let>),
    /// A named `let` (and `do`): the loop procedure is called at once with the inits.
    Loop(Box<Loop>),
    Call(Box<Call>),
    /// A call whose callee is a global that named a builtin when the call was analysed:
    /// while the global still holds that builtin, it is called without looking the
    /// callee up as a value, and integer arithmetic and comparisons run inline.
    Prim(Box<Prim>),
    Case(Box<Case>),
    Try(Box<Try>),
    DefMacro {
        name: Sym,
        lambda: Rc<Lambda>,
    },
    /// A special form defined outside the evaluator core (tasks, imports…).
    Extension(Box<dyn Extension>),
}

/// A special form implemented by another module: it evaluates itself.
pub trait Extension {
    fn eval(&self, interp: &super::Interp, env: &Env) -> Result<Value>;

    /// What evaluating would refuse that can be known without running code
    /// (`tasklisp check`): nothing, unless the extension knows better.
    fn check(&self, _interp: &super::Interp) -> Result<()> {
        Ok(())
    }
}

pub struct Lambda {
    pub name: Option<Sym>,
    pub required: u32,
    pub rest: bool,
    /// For named `let`: the slot that holds the procedure itself (no reference cycle).
    pub self_slot: Option<u32>,
    pub scope: Rc<Scope>,
    pub body: Node,
    pub span: Span,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum LetKind {
    /// `let`: inits see the outer environment.
    Parallel,
    /// `let*`, `letrec`, `letrec*`: inits run in the new frame, in order.
    Sequential,
}

pub struct Let {
    pub kind: LetKind,
    pub scope: Rc<Scope>,
    /// `(slot, init)` pairs, in order.
    pub inits: Vec<(u32, Node)>,
    pub body: Node,
}

pub struct Loop {
    pub lambda: Rc<Lambda>,
    pub inits: Vec<Node>,
    pub span: Span,
}

pub struct Call {
    pub callee: Node,
    pub args: Vec<Node>,
    pub span: Span,
    /// In tail position of a procedure's body (`mark_tail_calls`): evaluated only as
    /// that body's last step, in that procedure's frame, which a call of the same
    /// procedure may therefore reuse.
    pub tail: bool,
    /// Bit `i` set: argument `i` (of the first three, those a self tail call stores in
    /// place) is parameter `i` of the running frame, passed on as it is, and no later
    /// argument can assign it. A call of the running procedure from its tail leaves that
    /// slot alone.
    pub unchanged: u8,
}

/// Marks the calls in tail position of a procedure body: through `if`, `begin`, `and`,
/// `or` and `case`, which run their tail in the same frame (a `let` body runs in a frame
/// of its own, a `try` body is not a tail). A work list, not recursion: a `cond` of
/// thousands of clauses is as many nested `if`s.
pub fn mark_tail_calls(body: &mut Node) {
    let mut pending = vec![body];
    while let Some(node) = pending.pop() {
        match node {
            Node::Call(call) => {
                call.tail = true;
                call.unchanged = unchanged_parameters(&call.args);
            }
            Node::If(parts) => {
                let (_, then, otherwise) = &mut **parts;
                pending.push(then);
                pending.push(otherwise);
            }
            Node::Begin(nodes) | Node::And(nodes) | Node::Or(nodes) => {
                pending.extend(nodes.last_mut());
            }
            Node::Case(case) => {
                pending.extend(case.clauses.iter_mut().map(|(_, body)| body));
                pending.push(&mut case.default);
            }
            _ => {}
        }
    }
}

/// The mask of `Call::unchanged` for these arguments. Argument `i` is marked only when
/// every argument after it is a constant or a variable: one that runs code could assign
/// parameter `i` before the call.
fn unchanged_parameters(args: &[Node]) -> u8 {
    let only_reads = |node: &Node| {
        matches!(
            node,
            Node::Const(_) | Node::Local { .. } | Node::Global { .. }
        )
    };
    let mut mask = 0;
    for (i, arg) in args.iter().enumerate().take(3) {
        let passed_on = matches!(arg, Node::Local { depth: 0, slot, .. } if *slot as usize == i);
        if passed_on && args.iter().skip(i + 1).all(only_reads) {
            mask |= 1 << i;
        }
    }
    mask
}

pub struct Prim {
    pub name: Sym,
    pub builtin: &'static crate::builtins::Builtin,
    pub op: PrimOp,
    pub args: Vec<Node>,
    /// Where the integer fast path reads the two operands of an arithmetic op or a
    /// comparison, when both are constants or variables of the running frame: decided
    /// once here, rather than by matching the operand nodes on every evaluation.
    pub ints: Option<[IntArg; 2]>,
    /// Whether the builtin takes this many arguments: then a call of one or two skips
    /// the arity check and the argument list, made once here.
    pub arity_fits: bool,
    /// `Prim::name_bit(name)`, made once here.
    pub bit: u64,
    pub span: Span,
}

impl Prim {
    /// The bit of `name` in the interpreter's filter of rebound builtins.
    #[inline(always)]
    pub fn name_bit(name: Sym) -> u64 {
        1 << (name.index() % 64)
    }

    pub fn new(
        name: Sym,
        builtin: &'static crate::builtins::Builtin,
        args: Vec<Node>,
        span: Span,
    ) -> Prim {
        let op = PrimOp::of(builtin.name);
        let ints = match args.as_slice() {
            [a, b] if !matches!(op, PrimOp::Not | PrimOp::Other) => {
                IntArg::of(a).zip(IntArg::of(b)).map(|(a, b)| [a, b])
            }
            _ => None,
        };
        let arity_fits =
            args.len() >= builtin.min_args && builtin.max_args.is_none_or(|max| args.len() <= max);
        Prim {
            name,
            builtin,
            op,
            args,
            ints,
            arity_fits,
            bit: Prim::name_bit(name),
            span,
        }
    }
}

/// An operand the integer fast path reads in place: a constant, or a slot of the
/// running frame (which holds an integer or sends the op down the general path).
#[derive(Clone, Copy)]
pub enum IntArg {
    Const(i64),
    Slot(u32),
}

impl IntArg {
    fn of(node: &Node) -> Option<IntArg> {
        match node {
            Node::Const(Value::Int(i)) => Some(IntArg::Const(*i)),
            Node::Local { depth: 0, slot, .. } => Some(IntArg::Slot(*slot)),
            _ => None,
        }
    }
}

/// The builtins with an inline fast path for two integers.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum PrimOp {
    Add,
    Sub,
    Mul,
    Lt,
    Gt,
    Le,
    Ge,
    NumEq,
    /// `not`: only its fast path in `if` tests is special.
    Not,
    Other,
}

impl PrimOp {
    pub fn of(name: &str) -> PrimOp {
        match name {
            "+" => PrimOp::Add,
            "-" => PrimOp::Sub,
            "*" => PrimOp::Mul,
            "<" => PrimOp::Lt,
            ">" => PrimOp::Gt,
            "<=" => PrimOp::Le,
            ">=" => PrimOp::Ge,
            "=" => PrimOp::NumEq,
            "not" => PrimOp::Not,
            _ => PrimOp::Other,
        }
    }

    /// The result for two integers, or `None` to take the general path (overflow).
    #[inline]
    pub fn on_ints(self, a: i64, b: i64) -> Option<crate::value::Value> {
        use crate::value::Value;
        Some(match self {
            PrimOp::Add => Value::Int(a.checked_add(b)?),
            PrimOp::Sub => Value::Int(a.checked_sub(b)?),
            PrimOp::Mul => Value::Int(a.checked_mul(b)?),
            PrimOp::Lt => Value::Bool(a < b),
            PrimOp::Gt => Value::Bool(a > b),
            PrimOp::Le => Value::Bool(a <= b),
            PrimOp::Ge => Value::Bool(a >= b),
            PrimOp::NumEq => Value::Bool(a == b),
            PrimOp::Not | PrimOp::Other => return None,
        })
    }
}

pub struct Case {
    pub key: Node,
    pub clauses: Vec<(Vec<Value>, Node)>,
    pub default: Node,
}

pub struct Try {
    pub body: Node,
    /// The catch clause: a one-slot frame for the error, and its body.
    pub handler: Option<(Rc<Scope>, Node)>,
    pub finally: Option<Node>,
}
