//! Procedures whose frame lives on the Rust stack.
//!
//! A procedure whose body only reads variables, branches and calls (no `lambda`, `let`,
//! `set!`, internal `define`…) cannot have its frame captured or assigned by its own
//! code. Called from anywhere but a tail, it runs here: its arguments stay in a
//! `SmallVec` in `run_flat` instead of a reference-counted `Frame`, and the call takes
//! no frame from the pool and returns no `Tail`. Tail calls of such procedures, itself
//! or another, loop in `run_flat` in constant space.
//!
//! Only a builtin or a task is ever given the caller's environment (a task that
//! inherits the full context reads and may assign the caller's variables). The first
//! time the body gives its environment away, its slots are copied into a real frame,
//! "pinned"; after every call the body makes from then on, the frame's values are copied
//! back, so whatever the callee (or a closure it made) assigned is seen.

use super::ast::{self, Node};
use super::call::{int_pair, OperandPlace};
use super::run::{begin_parts, short_circuit, Tail};
use super::{Closure, Interp};
use crate::error::{Error, Result};
use crate::eval::env::{self, Env, Frame, Scope, Slots};
use crate::value::Value;
use std::rc::Rc;

/// Whether a procedure with these parameters and this body can run flat: no rest
/// parameter, no slot but its parameters, and a body made only of constants, variables,
/// `if`, `begin`, `and`, `or`, arithmetic, comparisons and calls.
pub fn fits(required: u32, rest: bool, scope: &Scope, body: &Node) -> bool {
    if rest || scope.len() != required as usize {
        return false;
    }
    let mut pending = vec![body];
    while let Some(node) = pending.pop() {
        match node {
            Node::Const(_) | Node::Local { .. } | Node::Global { .. } => {}
            Node::If(parts) => {
                let (test, then, otherwise) = &**parts;
                pending.extend([test, then, otherwise]);
            }
            Node::And(nodes) | Node::Or(nodes) | Node::Begin(nodes) => pending.extend(nodes.iter()),
            // Arithmetic and comparisons only: any other builtin is given the caller's
            // environment, and pinning it on every call costs more than a pooled frame.
            Node::Prim(prim) if prim.op != ast::PrimOp::Other => pending.extend(prim.args.iter()),
            Node::Call(call) => {
                pending.push(&call.callee);
                pending.extend(call.args.iter());
            }
            _ => return false,
        }
    }
    true
}

/// The frame of a procedure running flat.
struct Activation {
    slots: Slots,
    /// A frame holding a copy of the slots, made when the body first gave its
    /// environment away; copied back into them after every call (`sync`).
    pinned: Env,
}

impl Activation {
    #[inline(always)]
    fn read(&self, slot: u32) -> Option<Value> {
        env::read_slot(&self.slots, slot)
    }
}

/// How one pass through a flat body ended.
enum Next {
    Value(Value),
    /// The procedure calls itself from its tail: the new arguments are in the slots.
    Again,
    /// It calls another flat procedure from its tail: the arguments are in the slots.
    Switch(Rc<Closure>),
    /// It calls a procedure that cannot run flat from its tail, in this frame.
    General(Rc<Closure>, Rc<Frame>),
}

/// What a call in a flat body calls.
enum Callee {
    /// The running procedure itself.
    Running,
    /// Another closure without a rest parameter.
    Closure(Rc<Closure>),
    /// Anything else: a builtin, a task, a closure with a rest parameter, not a procedure.
    Other(Value),
}

/// Copies the values of `frame` back into `slots`.
fn sync(frame: &Frame, slots: &mut Slots) {
    for (slot, value) in (0..).zip(slots.iter_mut()) {
        if let Some(v) = frame.get(slot) {
            *value = v;
        }
    }
}

impl Interp {
    /// Runs `first`, a flat procedure, with its arguments `slots` (as many as it
    /// requires).
    pub(super) fn run_flat(&self, first: &Rc<Closure>, slots: Slots) -> Result<Value> {
        self.enter()?;
        let mut act = Activation {
            slots,
            pinned: None,
        };
        // The procedure a tail call switched to, if any.
        let mut switched: Option<Rc<Closure>> = None;
        let result = loop {
            if let Err(e) = self.tick() {
                break Err(e);
            }
            let closure = switched.as_ref().unwrap_or(first);
            match self.flat_pass(closure, &mut act) {
                Ok(Next::Value(v)) => break Ok(v),
                Ok(Next::Again) => {}
                Ok(Next::Switch(next)) => switched = Some(next),
                Ok(Next::General(next, frame)) => {
                    self.unpin(&mut act);
                    // Run as the trampoline would have: at this depth, not below it.
                    self.leave();
                    return self.run_closure(next, frame);
                }
                Err(e) => break Err(e),
            }
        };
        self.unpin(&mut act);
        env::clear_slots(&mut act.slots);
        self.leave();
        result
    }

    /// The environment to give a builtin or a task: the pinned frame, made now if it
    /// was not yet.
    #[inline(never)]
    fn pin<'a>(&self, closure: &Closure, act: &'a mut Activation) -> &'a Env {
        if act.pinned.is_none() {
            let copy = act.slots.clone();
            act.pinned = Some(self.frame_of(&closure.lambda.scope, &closure.env, copy));
        }
        &act.pinned
    }

    /// `result`, after the pinned frame's values are copied back into the slots.
    #[inline(always)]
    fn synced<T>(&self, act: &mut Activation, result: T) -> T {
        if let Some(frame) = &act.pinned {
            sync(frame, &mut act.slots);
        }
        result
    }

    #[inline(always)]
    fn unpin(&self, act: &mut Activation) {
        if act.pinned.is_some() {
            self.recycle(act.pinned.take());
        }
    }

    /// One run of `closure`'s body.
    #[inline(always)]
    fn flat_pass(&self, closure: &Rc<Closure>, act: &mut Activation) -> Result<Next> {
        let last = match self.flat_last(&closure.lambda.body, closure, act)? {
            Ok(value) => return Ok(Next::Value(value)),
            Err(last) => last,
        };
        match last {
            Node::Call(call) => self.flat_tail_call(call, closure, act),
            // A rebound name keeps its tail call, as in `eval_node`.
            Node::Prim(prim) if !self.prim_unchanged(prim) => {
                let tail = self.call_rebound(prim, self.pin(closure, act))?;
                self.next_of(tail)
            }
            node => self.flat_eval(node, closure, act).map(Next::Value),
        }
    }

    /// Follows `if`, `begin`, `and` and `or` from `node` to the value they end with, or
    /// to the node in their tail.
    #[inline(always)]
    fn flat_last<'n>(
        &self,
        mut node: &'n Node,
        closure: &Rc<Closure>,
        act: &mut Activation,
    ) -> Result<std::result::Result<Value, &'n Node>> {
        loop {
            node = match node {
                Node::If(parts) => {
                    let (test, then, otherwise) = &**parts;
                    let known = match test {
                        Node::Prim(prim) => self.int_comparison(prim, act.slots.as_slice()),
                        _ => None,
                    };
                    let truth = match known {
                        Some(truth) => truth,
                        None => self.flat_eval(test, closure, act)?.is_truthy(),
                    };
                    if truth {
                        then
                    } else {
                        otherwise
                    }
                }
                Node::Begin(_) | Node::And(_) | Node::Or(_) => {
                    match self.flat_sequence(node, closure, act)? {
                        Ok(value) => return Ok(Ok(value)),
                        Err(last) => last,
                    }
                }
                _ => return Ok(Err(node)),
            }
        }
    }

    /// `begin`, `and` or `or`: the value that ends it early, or its last form.
    #[inline(never)]
    fn flat_sequence<'n>(
        &self,
        node: &'n Node,
        closure: &Rc<Closure>,
        act: &mut Activation,
    ) -> Result<std::result::Result<Value, &'n Node>> {
        match node {
            Node::Begin(nodes) => {
                let (last, init) = begin_parts(nodes)?;
                for n in init {
                    self.flat_eval(n, closure, act)?;
                }
                Ok(Err(last))
            }
            Node::And(nodes) | Node::Or(nodes) => {
                let is_and = matches!(node, Node::And(_));
                short_circuit(nodes, is_and, |n| self.flat_eval(n, closure, act))
            }
            _ => Ok(Err(node)),
        }
    }

    /// A value in a flat body: constants, parameters and integer arithmetic here, the
    /// rest in the functions below.
    #[inline(always)]
    fn flat_eval(&self, node: &Node, closure: &Rc<Closure>, act: &mut Activation) -> Result<Value> {
        match node {
            Node::Const(Value::Int(i)) => Ok(Value::Int(*i)),
            Node::Const(v) => Ok(v.clone()),
            Node::Local { depth: 0, slot, .. } => match act.read(*slot) {
                Some(v) => Ok(v),
                None => self.flat_eval_other(node, closure, act),
            },
            Node::Prim(prim) => match self.prim_on_ints(prim, act) {
                Some(v) => Ok(v),
                None => self.flat_prim(prim, closure, act),
            },
            Node::Call(call) => self.flat_call(call, closure, act),
            _ => self.flat_eval_other(node, closure, act),
        }
    }

    #[inline(never)]
    fn flat_eval_other(
        &self,
        node: &Node,
        closure: &Rc<Closure>,
        act: &mut Activation,
    ) -> Result<Value> {
        match node {
            Node::Local {
                depth: 0,
                slot,
                name,
                span,
            } => act
                .read(*slot)
                .ok_or_else(|| super::run::used_before_definition(*name, *span)),
            Node::Local {
                depth,
                slot,
                name,
                span,
            } => self.local(&closure.env, depth - 1, *slot, *name, *span),
            Node::Global { name, span } => self.global_or_task(*name, *span),
            Node::If(_) | Node::Begin(_) | Node::And(_) | Node::Or(_) => {
                self.check_stack()?;
                match self.flat_last(node, closure, act)? {
                    Ok(value) => Ok(value),
                    Err(last) => self.flat_eval(last, closure, act),
                }
            }
            _ => Err(Error::eval(
                "internal error: a form a flat procedure cannot hold",
            )),
        }
    }

    #[inline(always)]
    fn flat_args(
        &self,
        args: &[Node],
        closure: &Rc<Closure>,
        act: &mut Activation,
    ) -> Result<Slots> {
        let mut values = Slots::new();
        for arg in args {
            values.push(self.flat_eval(arg, closure, act)?);
        }
        Ok(values)
    }

    /// `eval_prim`'s fast path on the slots of a flat body.
    #[inline(always)]
    fn prim_on_ints(&self, prim: &ast::Prim, act: &Activation) -> Option<Value> {
        let (x, y) = int_pair(prim.ints?, act.slots.as_slice())?;
        if !self.prim_unchanged(prim) {
            return None;
        }
        prim.op.on_ints(x, y)
    }

    /// `eval_prim_general` in a flat body: the same errors and places.
    #[inline(never)]
    fn flat_prim(
        &self,
        prim: &ast::Prim,
        closure: &Rc<Closure>,
        act: &mut Activation,
    ) -> Result<Value> {
        let result = if self.prim_unchanged(prim) {
            self.call_prim(prim, &mut Flat { closure, act })
        } else {
            self.eval_rebound(prim, self.pin(closure, act))
        };
        self.synced(act, result)
    }

    /// What a call in a flat body calls: a global is read in place, and the running
    /// procedure is not even counted.
    #[inline(always)]
    fn flat_callee(
        &self,
        call: &ast::Call,
        closure: &Rc<Closure>,
        act: &mut Activation,
    ) -> Result<Callee> {
        if let Node::Global { name, .. } = &call.callee {
            if let Some(Value::Closure(c)) = self.globals.borrow().get(name.index()) {
                if Rc::ptr_eq(c, closure) {
                    return Ok(Callee::Running);
                }
                if !c.lambda.rest {
                    return Ok(Callee::Closure(c.clone()));
                }
            }
        }
        Ok(match self.flat_eval(&call.callee, closure, act)? {
            Value::Closure(c) if Rc::ptr_eq(&c, closure) => Callee::Running,
            Value::Closure(c) if !c.lambda.rest => Callee::Closure(c),
            other => Callee::Other(other),
        })
    }

    /// A call from a flat body, not from its tail.
    #[inline(never)]
    fn flat_call(
        &self,
        call: &ast::Call,
        closure: &Rc<Closure>,
        act: &mut Activation,
    ) -> Result<Value> {
        self.check_stack()?;
        let owned = match self.flat_callee(call, closure, act)? {
            Callee::Running => None,
            Callee::Closure(next) => Some(next),
            Callee::Other(other) => return self.flat_call_other(other, call, closure, act),
        };
        let next = owned.as_ref().unwrap_or(closure);
        let args = self.flat_args(&call.args, closure, act)?;
        let result = if runs_flat(next, &args) {
            self.run_flat(next, args)
        } else {
            let slots = self.bind(next, args).map_err(|e| e.or_span(call.span))?;
            let frame = self.make_frame(next, slots);
            self.run_closure(next.clone(), frame)
        };
        self.synced(act, result).map_err(|e| e.seen_from(call.span))
    }

    /// A call of a builtin, a task or `apply` from a flat body, not from its tail.
    #[inline(never)]
    fn flat_call_other(
        &self,
        callee: Value,
        call: &ast::Call,
        closure: &Rc<Closure>,
        act: &mut Activation,
    ) -> Result<Value> {
        let tail = self.call_other(callee, call, closure, act)?;
        let result = self.finish(tail);
        self.synced(act, result).map_err(|e| e.seen_from(call.span))
    }

    /// A call of a builtin, a task or `apply`, with the flat body's environment pinned:
    /// a builtin's value, or whatever `call_tail` makes of the rest.
    fn call_other(
        &self,
        callee: Value,
        call: &ast::Call,
        closure: &Rc<Closure>,
        act: &mut Activation,
    ) -> Result<Tail> {
        let result = match callee {
            Value::Builtin(b) if !self.layers.is_apply(b) => self
                .flat_args(&call.args, closure, act)
                .and_then(|args| self.call_builtin(b, &args, self.pin(closure, act)))
                .map(Tail::Value),
            other => {
                let args = self.flat_args(&call.args, closure, act)?;
                self.call_tail(other, args, self.pin(closure, act))
            }
        };
        self.synced(act, result).map_err(|e| e.or_span(call.span))
    }

    /// A call from the tail of a flat body.
    #[inline(always)]
    fn flat_tail_call(
        &self,
        call: &ast::Call,
        closure: &Rc<Closure>,
        act: &mut Activation,
    ) -> Result<Next> {
        let next = match self.flat_callee(call, closure, act)? {
            Callee::Running if call.args.len() == act.slots.len() => {
                self.flat_rebind(call, closure, act)?;
                return Ok(Next::Again);
            }
            Callee::Running => closure.clone(),
            Callee::Closure(next) => next,
            Callee::Other(other) => {
                let tail = self.call_other(other, call, closure, act)?;
                return self.next_of(tail);
            }
        };
        let args = self.flat_args(&call.args, closure, act)?;
        if runs_flat(&next, &args) {
            self.unpin(act);
            env::clear_slots(&mut act.slots);
            act.slots = args;
            return Ok(Next::Switch(next));
        }
        let slots = self.bind(&next, args).map_err(|e| e.or_span(call.span))?;
        let frame = self.make_frame(&next, slots);
        Ok(Next::General(next, frame))
    }

    /// The running procedure called again from its tail, with as many arguments as it
    /// has slots: the arguments are evaluated, then stored over the slots, those passed
    /// on unchanged (`Call::unchanged`) left where they are.
    #[inline(always)]
    fn flat_rebind(
        &self,
        call: &ast::Call,
        closure: &Rc<Closure>,
        act: &mut Activation,
    ) -> Result<()> {
        match call.args.as_slice() {
            [a] => {
                let a = self.flat_argument(call, 0, a, closure, act)?;
                self.store(act, [a]);
            }
            [a, b] => {
                let a = self.flat_argument(call, 0, a, closure, act)?;
                let b = self.flat_argument(call, 1, b, closure, act)?;
                self.store(act, [a, b]);
            }
            [a, b, c] => {
                let a = self.flat_argument(call, 0, a, closure, act)?;
                let b = self.flat_argument(call, 1, b, closure, act)?;
                let c = self.flat_argument(call, 2, c, closure, act)?;
                self.store(act, [a, b, c]);
            }
            args => {
                let values = self.flat_args(args, closure, act)?;
                self.unpin(act);
                env::clear_slots(&mut act.slots);
                act.slots = values;
            }
        }
        Ok(())
    }

    /// Argument `i` of a call of the running procedure: `None` when it is parameter `i`
    /// passed on unchanged.
    #[inline(always)]
    fn flat_argument(
        &self,
        call: &ast::Call,
        i: u8,
        arg: &Node,
        closure: &Rc<Closure>,
        act: &mut Activation,
    ) -> Result<Option<Value>> {
        if call.unchanged & (1 << i) != 0 {
            return Ok(None);
        }
        self.flat_eval(arg, closure, act).map(Some)
    }

    /// Stores the new values over the first slots, leaving those that are `None`: a new
    /// frame, so a pinned one is let go.
    #[inline(always)]
    fn store<const N: usize>(&self, act: &mut Activation, values: [Option<Value>; N]) {
        self.unpin(act);
        for (slot, value) in act.slots.iter_mut().zip(values) {
            if let Some(value) = value {
                env::drop_value(std::mem::replace(slot, value));
            }
        }
    }

    /// What a flat body's tail call ends in when the general path made it.
    fn next_of(&self, tail: Tail) -> Result<Next> {
        match tail {
            Tail::Call(next, frame) => Ok(Next::General(next, frame)),
            other => self.finish(other).map(Next::Value),
        }
    }
}

/// The operands of a builtin called from a flat body.
struct Flat<'a> {
    closure: &'a Rc<Closure>,
    act: &'a mut Activation,
}

impl OperandPlace for Flat<'_> {
    #[inline(always)]
    fn operand(&mut self, interp: &Interp, node: &Node) -> Result<Value> {
        interp.flat_eval(node, self.closure, self.act)
    }

    fn env(&mut self, interp: &Interp) -> &Env {
        interp.pin(self.closure, self.act)
    }
}

/// Whether a call of `closure` (one without a rest parameter) with `args` runs flat.
#[inline(always)]
pub(super) fn runs_flat(closure: &Closure, args: &[Value]) -> bool {
    closure.lambda.flat && args.len() == closure.lambda.required as usize
}

#[cfg(test)]
mod tests {
    use crate::eval::{reader, run_on_large_stack, Compiler, Interp, Limits, Node};

    /// Whether the procedure `(define (f …) …)` defines runs flat.
    fn is_flat(program: &'static str) -> bool {
        run_on_large_stack(&Limits::default(), move |limits| {
            let interp = Interp::with_output(limits, Box::new(std::io::sink())).expect("prelude");
            let forms = reader::read_source("<test>", program).expect("reads");
            let node = Compiler::new(&interp).compile(&forms[0]).expect("analyses");
            match node {
                Node::DefineGlobal { value, .. } => match *value {
                    Node::Lambda(lambda) => lambda.flat,
                    _ => false,
                },
                _ => false,
            }
        })
        .expect("thread")
    }

    #[test]
    fn reading_branching_arithmetic_and_calls_run_flat() {
        assert!(is_flat(
            "(define (fib n) (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2)))))"
        ));
        assert!(is_flat(
            "(define (f a b) (and (< a b) (or a (g b)) (begin a b)))"
        ));
        assert!(is_flat("(define (f) 1)"));
    }

    #[test]
    fn what_could_capture_or_assign_the_frame_does_not() {
        // a closure, a `let` frame, an assignment, an internal definition
        assert!(!is_flat("(define (f n) (fn () n))"));
        assert!(!is_flat("(define (f n) (let ((m n)) m))"));
        assert!(!is_flat("(define (f n) (set! n 1))"));
        assert!(!is_flat("(define (f n) (define m 1) m)"));
        // a rest parameter, and a builtin other than arithmetic (given the environment)
        assert!(!is_flat("(define (f . xs) xs)"));
        assert!(!is_flat("(define (f xs) (car xs))"));
    }
}
