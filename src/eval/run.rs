//! The loop that runs analysed code: `eval`, the trampoline through tail positions,
//! frames and their pool, `let`, `try`.

use super::ast::{self, LetKind};
use super::Node;
use super::{access_path, Closure, Interp};
use crate::error::{Error, Result};
use crate::eval::env::{self, Env, Frame, Slots};
use crate::symbol::Sym;
use crate::value::{self, Value};
use std::rc::Rc;

/// How an evaluation ended when its last step was a call in tail position.
pub(super) enum Tail {
    Value(Value),
    /// A closure to call in this frame (its arguments bound: arity checked, rest list
    /// and self slot made).
    Call(Rc<Closure>, Rc<Frame>),
    /// The running procedure again, in the running frame, whose slots hold the new
    /// arguments: a self tail call, with no count of the closure or frame taken.
    Again,
    /// The running procedure again, in this frame of the same layout (a self tail call
    /// whose frame a closure holds). Not its slots: `Tail` stays three words.
    AgainIn(Rc<Frame>),
}

impl Interp {
    // ---- evaluation -------------------------------------------------------------------

    /// Evaluates `node` in `env`. Constants and variables are answered here without
    /// entering the general loop, since they are most of what a program evaluates.
    #[inline]
    pub fn eval(&self, node: &Node, env: &Env) -> Result<Value> {
        match node {
            Node::Const(v) => Ok(v.clone()),
            Node::Local {
                depth,
                slot,
                name,
                span,
            } => self.local(env, *depth, *slot, *name, *span),
            Node::Global { name, span } => self.global_or_task(*name, *span),
            Node::Prim(prim) => self.eval_prim(prim, env),
            _ => self.eval_compound(node, env),
        }
    }

    /// `eval` for an argument: constants and variables of this frame without a call.
    #[inline(always)]
    pub(super) fn operand(&self, node: &Node, env: &Env) -> Result<Value> {
        match node {
            Node::Const(v) => Ok(v.clone()),
            Node::Local { depth: 0, slot, .. } => {
                if let Some(frame) = env {
                    if let Some(v) = frame.get(*slot) {
                        return Ok(v);
                    }
                }
                self.eval(node, env)
            }
            Node::Prim(prim) => self.eval_prim(prim, env),
            _ => self.eval(node, env),
        }
    }

    #[inline(never)]
    fn eval_compound(&self, node: &Node, env: &Env) -> Result<Value> {
        self.check_stack()?;
        // A call is most of what is left: made here, not through `eval_node`, whose
        // frame is many times this one's. A tail call runs in `eval_node`'s loop only.
        let tail = match node {
            Node::Call(call) if !call.tail => self.eval_call::<false>(call, env)?,
            _ => self.eval_node(node, env)?,
        };
        if let Tail::Value(v) = tail {
            return Ok(v);
        }
        self.finish(tail).map_err(|e| match node {
            Node::Call(call) => e.seen_from(call.span),
            _ => e,
        })
    }

    /// The value of an evaluation that ended in `tail`: the closure it calls run here.
    #[inline(always)]
    pub(super) fn finish(&self, tail: Tail) -> Result<Value> {
        match tail {
            Tail::Value(v) => Ok(v),
            Tail::Call(closure, frame) => self.run_closure_here(closure, frame),
            // Only the tail of a procedure body calls the running procedure again, and
            // only `run_closure` evaluates that.
            Tail::Again | Tail::AgainIn(_) => Err(Error::eval(
                "internal error: a self tail call outside its procedure",
            )),
        }
    }

    pub(super) fn run_closure(&self, closure: Rc<Closure>, first: Rc<Frame>) -> Result<Value> {
        self.run_closure_here(closure, first)
    }

    /// `run_closure`, inlined into `eval_compound`: most calls are made from there, and
    /// a call of a function less per call is worth its size.
    #[inline(always)]
    fn run_closure_here(&self, mut closure: Rc<Closure>, first: Rc<Frame>) -> Result<Value> {
        self.enter()?;
        let mut frame: Env = Some(first);
        let result = loop {
            match self.tick_call(closure.home) {
                Ok(true) => {}
                Ok(false) => break self.run_closure_at_home(&closure, frame.take()),
                Err(e) => break Err(e),
            }
            match self.eval_node(&closure.lambda.body, &frame) {
                Ok(Tail::Value(v)) => break Ok(v),
                // The finished frame goes back to the pool at once: a loop runs in the
                // same two frames, whatever its length (a self tail call in one).
                Ok(Tail::Again) => {}
                Ok(Tail::AgainIn(next_frame)) => self.recycle(frame.replace(next_frame)),
                Ok(Tail::Call(next, next_frame)) => {
                    // The closure is let go before its frame, so a helper the frame
                    // defined is held by the frame alone when the frame is recycled.
                    closure = next;
                    if !is_same(&frame, &next_frame) {
                        self.recycle(frame.replace(next_frame));
                    }
                }
                Err(e) => break Err(e),
            }
        };
        drop(closure);
        self.recycle(frame);
        self.leave();
        result
    }

    /// A call of a procedure made in another home (see `eval::home`), in `frame`: run
    /// with the names of its home, then this one's taken back. From the tail of a
    /// procedure of this home, it is a call of its own.
    #[cold]
    #[inline(never)]
    fn run_closure_at_home(&self, closure: &Rc<Closure>, frame: Env) -> Result<Value> {
        let frame = frame.ok_or_else(|| Error::eval("internal error: a call without a frame"))?;
        let _home = self.enter_home(closure.home)?;
        self.run_closure(closure.clone(), frame)
    }

    /// A frame for a call of `closure`, its slots empty for the arguments to be pushed:
    /// a pooled allocation when there is one.
    #[inline(always)]
    pub(super) fn empty_frame(&self, closure: &Closure) -> Rc<Frame> {
        self.empty_frame_of(&closure.lambda.scope, &closure.env)
    }

    #[inline(always)]
    fn empty_frame_of(&self, scope: &Rc<env::Scope>, parent: &Env) -> Rc<Frame> {
        let pooled = self.frame_pool.take();
        if let Some(mut frame) = pooled {
            if let Some(f) = Rc::get_mut(&mut frame) {
                if !Rc::ptr_eq(&f.scope, scope) {
                    f.scope = scope.clone();
                }
                f.parent = parent.clone();
                return frame;
            }
        }
        Rc::new(Frame::empty(scope.clone(), parent.clone()))
    }

    /// The frame of a call of `closure` with `slots` (bound by `bind`).
    pub(super) fn make_frame(&self, closure: &Closure, slots: Slots) -> Rc<Frame> {
        self.frame_of(&closure.lambda.scope, &closure.env, slots)
    }

    /// A frame of `scope` in `parent` whose first slots are `slots`.
    pub(super) fn frame_of(&self, scope: &Rc<env::Scope>, parent: &Env, slots: Slots) -> Rc<Frame> {
        let mut frame = self.empty_frame_of(scope, parent);
        match Rc::get_mut(&mut frame) {
            Some(f) => {
                let target = f.slots_mut();
                *target = slots;
                env::fill_slots(target, scope.len());
                frame
            }
            None => Frame::new(scope.clone(), slots, parent.clone()),
        }
    }

    /// Runs `body` in `frame` (a frame made outside a call: a `catch` handler's, a
    /// task's), then lets go of the frame as a finished call's is, so a body that
    /// defines a helper does not keep its frame forever.
    pub(crate) fn with_frame<T>(&self, frame: Rc<Frame>, body: impl FnOnce(&Env) -> T) -> T {
        let env = LetFrame(&self.frame_pool, Some(frame));
        body(&env.1)
    }

    /// Returns a finished call's frame to the pool (see `FramePool::recycle`).
    #[inline(always)]
    fn recycle(&self, frame: Env) {
        if let Some(frame) = frame {
            self.frame_pool.recycle(frame);
        }
    }

    /// Runs `node`, looping in place through tail positions. `own` holds the frame of a
    /// `let` entered on the way; `env` is re-derived from it after every change.
    fn eval_node(&self, mut node: &Node, outer: &Env) -> Result<Tail> {
        let mut own = LetFrame(&self.frame_pool, None);
        loop {
            let env = if own.1.is_some() { &own.1 } else { outer };
            let value = match node {
                Node::Const(_) | Node::Local { .. } | Node::Global { .. } => {
                    self.eval(node, env)?
                }
                Node::Call(call) => return self.eval_call::<true>(call, env),
                // A rebound name keeps its tail call (a program's own `count`, say).
                Node::Prim(prim) if !self.prim_unchanged(prim) => {
                    return self.call_rebound(prim, env)
                }
                Node::Prim(prim) => self.eval_prim(prim, env)?,
                Node::If(parts) => {
                    node = self.branch(parts, env)?;
                    continue;
                }
                Node::Dynamic { name, span } => self
                    .lookup(env, *name)
                    .ok_or_else(|| self.unbound(*name, *span))?,
                Node::Path { base, path, span } => {
                    let base = self.eval(base, env)?;
                    access_path(&base, path, self).map_err(|e| e.into_error().with_span(*span))?
                }
                Node::Begin(nodes) => {
                    let (last, init) = nodes
                        .split_last()
                        .ok_or_else(|| Error::eval("empty begin"))?;
                    for n in init {
                        self.eval(n, env)?;
                    }
                    node = last;
                    continue;
                }
                Node::And(nodes) | Node::Or(nodes) => {
                    let is_and = matches!(node, Node::And(_));
                    match self.short_circuit(nodes, is_and, env)? {
                        Ok(early) => early,
                        Err(last) => {
                            node = last;
                            continue;
                        }
                    }
                }
                Node::Let(l) => {
                    let frame = self.let_frame(l, env)?;
                    own = LetFrame(&self.frame_pool, Some(frame));
                    node = &l.body;
                    continue;
                }
                Node::Case(c) => {
                    let key = self.eval(&c.key, env)?;
                    node = c
                        .clauses
                        .iter()
                        .find(|(datums, _)| datums.iter().any(|d| d.equal(&key)))
                        .map_or(&c.default, |(_, body)| body);
                    continue;
                }
                Node::Lambda(lambda) => Value::Closure(self.closure(lambda, env)),
                Node::Loop(l) => return self.enter_loop(l, env),
                Node::Try(t) => self.eval_try(t, env)?,
                Node::SetLocal { .. }
                | Node::DefineLocal { .. }
                | Node::SetGlobal { .. }
                | Node::SetDynamic { .. }
                | Node::DefineGlobal { .. }
                | Node::DefMacro { .. } => self.assign(node, env)?,
                Node::Extension(ext) => ext.eval(self, env)?,
            };
            return Ok(Tail::Value(value));
        }
    }

    /// The branch of an `if` to take. A comparison of integers decides it without
    /// making a value.
    #[inline(always)]
    fn branch<'n>(&self, parts: &'n (Node, Node, Node), env: &Env) -> Result<&'n Node> {
        let (test, then, otherwise) = parts;
        if let Node::Prim(prim) = test {
            if let Some(truth) = self.int_comparison(prim, env) {
                return Ok(if truth { then } else { otherwise });
            }
        }
        Ok(if self.eval(test, env)?.is_truthy() {
            then
        } else {
            otherwise
        })
    }

    /// `and` (`is_and`) or `or`: the value that ends it early, or the last operand, to
    /// run in tail position.
    #[inline(always)]
    fn short_circuit<'n>(
        &self,
        nodes: &'n [Node],
        is_and: bool,
        env: &Env,
    ) -> Result<std::result::Result<Value, &'n Node>> {
        let (last, init) = nodes
            .split_last()
            .ok_or_else(|| Error::eval("empty and/or"))?;
        for n in init {
            let v = self.eval(n, env)?;
            if v.is_truthy() != is_and {
                return Ok(Ok(v));
            }
        }
        Ok(Err(last))
    }

    /// A named `let`: its loop procedure, called with the initial values.
    fn enter_loop(&self, l: &ast::Loop, env: &Env) -> Result<Tail> {
        let closure = self.closure(&l.lambda, env);
        let mut args: Slots = Slots::with_capacity(l.lambda.scope.len());
        for init in &l.inits {
            args.push(self.eval(init, env)?);
        }
        let slots = self.bind(&closure, args).map_err(|e| e.or_span(l.span))?;
        Ok(self.tail_call(closure, slots))
    }

    /// The procedure `lambda` makes in `env`, in the running home.
    #[inline(always)]
    fn closure(&self, lambda: &Rc<ast::Lambda>, env: &Env) -> Rc<Closure> {
        env::fit_captured(env);
        Rc::new(Closure {
            lambda: lambda.clone(),
            env: env.clone(),
            home: self.home(),
        })
    }

    /// The assignments and definitions: `set!`, `define`, `defmacro`.
    #[inline]
    fn assign(&self, node: &Node, env: &Env) -> Result<Value> {
        Ok(match node {
            Node::SetLocal { depth, slot, value } => {
                let v = self.eval(value, env)?;
                let frame = env::frame_at(env, *depth as usize)
                    .ok_or_else(|| Error::eval("internal error: no frame for variable"))?;
                store(frame, *slot, v)?;
                Value::Nil
            }
            Node::DefineLocal { slot, name, value } => {
                let v = self.eval(value, env)?;
                let frame = env
                    .as_ref()
                    .ok_or_else(|| Error::eval("internal error: local define at top level"))?;
                store(frame, *slot, v)?;
                Value::Symbol(*name)
            }
            Node::SetGlobal { name, value, span } => {
                let v = self.eval(value, env)?;
                if self.global(*name).is_none() {
                    return Err(
                        Error::eval(format!("set! of unbound variable: {name}")).with_span(*span)
                    );
                }
                self.define_global(*name, v);
                Value::Nil
            }
            Node::SetDynamic { name, value, span } => {
                let v = self.eval(value, env)?;
                if !env::assign_by_name(env, *name, v.clone()) {
                    if self.global(*name).is_none() {
                        return Err(Error::eval(format!("set! of unbound variable: {name}"))
                            .with_span(*span));
                    }
                    self.define_global(*name, v);
                }
                Value::Nil
            }
            Node::DefineGlobal { name, value } => {
                let v = self.eval(value, env)?;
                self.define_global(*name, v);
                Value::Symbol(*name)
            }
            Node::DefMacro { name, lambda } => {
                let closure = Value::Closure(self.closure(lambda, &None));
                self.macros.borrow_mut().insert(*name, closure);
                Value::Symbol(*name)
            }
            _ => return Err(Error::eval("internal error: not an assignment")),
        })
    }

    fn let_frame(&self, l: &ast::Let, env: &Env) -> Result<Rc<Frame>> {
        Ok(match l.kind {
            LetKind::Parallel => self.frame_pushed(&l.scope, env, |slots| {
                for (_, init) in &l.inits {
                    slots.push(self.eval(init, env)?);
                }
                Ok(())
            })?,
            LetKind::Sequential => {
                let frame = self.frame_pushed(&l.scope, env, |_| Ok(()))?;
                let inner = Some(frame.clone());
                for (slot, init) in &l.inits {
                    let v = self.eval(init, &inner)?;
                    store(&frame, *slot, v)?;
                }
                frame
            }
        })
    }

    /// A frame of `scope` in `parent` whose first slots `push_values` pushes, the rest
    /// undefined: a pooled frame, its slots' storage reused, when there is one.
    fn frame_pushed(
        &self,
        scope: &Rc<env::Scope>,
        parent: &Env,
        push_values: impl FnOnce(&mut Slots) -> Result<()>,
    ) -> Result<Rc<Frame>> {
        let mut frame = self.empty_frame_of(scope, parent);
        if let Some(f) = Rc::get_mut(&mut frame) {
            let slots = f.slots_mut();
            push_values(slots)?;
            env::fill_slots(slots, scope.len());
            return Ok(frame);
        }
        // A frame just made is held once; should that change, a fresh one.
        let mut slots = Slots::with_capacity(scope.len());
        push_values(&mut slots)?;
        Ok(Frame::new(scope.clone(), slots, parent.clone()))
    }

    #[inline]
    fn local(
        &self,
        env: &Env,
        depth: u32,
        slot: u32,
        name: Sym,
        span: crate::source::Span,
    ) -> Result<Value> {
        if let Some(v) = env::frame_at(env, depth as usize).and_then(|frame| frame.get(slot)) {
            return Ok(v);
        }
        Err(Error::eval(format!("{name} is used before its definition")).with_span(span))
    }

    fn eval_try(&self, t: &ast::Try, env: &Env) -> Result<Value> {
        let depth = self.state.depth.get();
        let result = self.eval(&t.body, env);
        let result = match (result, &t.handler) {
            (Err(e), Some((scope, handler))) if !self.interrupted() && e.exit_code().is_none() => {
                // The frames the error unwound through are gone: restore the count.
                self.state.depth.set(depth);
                let error = value::from_json(&e.to_json());
                let frame = Frame::new(scope.clone(), vec![error], env.clone());
                self.with_frame(frame, |env| self.eval(handler, env))
            }
            (result, _) => result,
        };
        if let Some(finally) = &t.finally {
            self.eval(finally, env)?;
        }
        result
    }
}

/// The frame of the `let` being run, given back through `FramePool::recycle` when the
/// `let` ends: pooled for the next frame, or, when a procedure holds it, let go so that
/// a `let` whose body defines a helper does not keep its frame forever.
struct LetFrame<'p>(&'p env::FramePool, Env);

impl Drop for LetFrame<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        if let Some(frame) = self.1.take() {
            recycle_out_of_line(self.0, frame);
        }
    }
}

/// `FramePool::recycle` as a call: `eval_node`, where most `LetFrame`s are dropped,
/// runs fewer instructions on calls without it inlined (callgrind).
#[inline(never)]
fn recycle_out_of_line(pool: &env::FramePool, frame: Rc<Frame>) {
    pool.recycle(frame);
}

/// Whether `frame` is `next` (a self tail call ran in the frame it had).
#[inline(always)]
fn is_same(frame: &Env, next: &Rc<Frame>) -> bool {
    frame.as_ref().is_some_and(|f| Rc::ptr_eq(f, next))
}

/// Stores `value` in `slot` of `frame`. The analyser gives a node only slots of its
/// scope, and a frame holds a slot for each name of its scope.
#[inline]
fn store(frame: &Frame, slot: u32, value: Value) -> Result<()> {
    frame
        .set(slot, value)
        .map_err(|_| Error::eval("internal error: no slot for variable"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storing_past_a_frames_slots_is_an_error_not_a_panic() {
        let frame = Frame::new(env::Scope::new(vec![Sym::new("x")]), Slots::new(), None);
        assert!(store(&frame, 0, Value::Int(1)).is_ok());
        let error = store(&frame, 1, Value::Int(2)).unwrap_err();
        assert_eq!(error.message(), "internal error: no slot for variable");
        assert!(matches!(frame.values().as_slice(), [Value::Int(1)]));
    }
}
