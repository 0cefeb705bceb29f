//! Calls: of closures (binding their arguments), of builtins (the `Prim` fast paths),
//! and `apply`.

use super::ast;
use super::run::Tail;
use super::{Closure, Interp, Node};
use crate::builtins::{self, arity_error, Builtin};
use crate::error::{Error, Result};
use crate::eval::env::{self, Env, Frame, Slots};
use crate::task;
use crate::value::{self, Value};
use std::rc::Rc;

impl Interp {
    /// A call: builtins run at once; closures come back as a tail call to run. `TAIL`
    /// false: the call is known not to be in the tail of a procedure body, and the code
    /// for a call of the running procedure again is left out.
    #[inline(always)]
    pub(super) fn eval_call<const TAIL: bool>(&self, call: &ast::Call, env: &Env) -> Result<Tail> {
        // A global procedure is taken straight from its slot, never moved as a `Value`,
        // and not even counted when the running procedure calls itself again.
        if let Node::Global { name, .. } = &call.callee {
            let mut running = None;
            let closure = match self.globals.borrow().get(name.index()) {
                // A named `let`'s procedure reached through a global is called as any
                // closure: restoring its own slot would need the closure held.
                Some(Value::Closure(c)) if !c.lambda.rest => {
                    if c.lambda.self_slot.is_none() {
                        running = running_frame::<TAIL>(call, c, env);
                    }
                    running.is_none().then(|| c.clone())
                }
                _ => None,
            };
            if let Some(frame) = running {
                return self.call_again((frame, None), call, env);
            }
            if let Some(closure) = closure {
                return self.call_closure_with::<TAIL>(closure, call, env);
            }
        }
        let callee = self.operand(&call.callee, env)?;
        let result = match callee {
            Value::Builtin(b) if !self.layers.is_apply(b) => {
                self.call_builtin_with(b, &call.args, env).map(Tail::Value)
            }
            Value::Closure(closure) if !closure.lambda.rest => {
                return self.call_closure_with::<TAIL>(closure, call, env);
            }
            _ => {
                let mut args: Slots = Slots::with_capacity(call.args.len());
                for arg in &call.args {
                    args.push(self.eval(arg, env)?);
                }
                self.call_tail(callee, args, env)
            }
        };
        result.map_err(|e| e.or_span(call.span))
    }

    /// A call of a closure without a rest parameter: the arguments go straight into the
    /// slots of the callee's frame, and the call comes back as a tail call to run.
    #[inline(always)]
    fn call_closure_with<const TAIL: bool>(
        &self,
        closure: Rc<Closure>,
        call: &ast::Call,
        env: &Env,
    ) -> Result<Tail> {
        if let Some(frame) = running_frame::<TAIL>(call, &closure, env) {
            let own = closure.lambda.self_slot.map(|slot| (slot, &closure));
            return self.call_again((frame, own), call, env);
        }
        // `frame_with` does this for `apply`; written out here, in the hottest call, it
        // runs 2.5 % fewer instructions on fib (callgrind) than through the helper.
        let lambda = &closure.lambda;
        if call.args.len() == lambda.required as usize && lambda.self_slot.is_none() {
            let mut frame = self.empty_frame(&closure);
            if let Some(f) = Rc::get_mut(&mut frame) {
                let slots = f.slots_mut();
                for arg in &call.args {
                    slots.push(self.operand(arg, env)?);
                }
                env::fill_slots(slots, lambda.scope.len());
                return Ok(Tail::Call(closure, frame));
            }
        }
        let mut slots = Slots::new();
        for arg in &call.args {
            slots.push(self.operand(arg, env)?);
        }
        match self.bind(&closure, slots) {
            Ok(slots) => Ok(self.tail_call(closure, slots)),
            Err(e) => Err(e.or_span(call.span)),
        }
    }

    /// For a call of `closure` (one without a rest parameter, as callers check) with
    /// `count` arguments, when it takes exactly that many and has no own slot: a pooled
    /// frame whose slots `push_arguments` fills, with no argument list made on the way.
    /// `None` for any other call, which `bind` makes.
    #[inline(always)]
    fn frame_with(
        &self,
        closure: &Closure,
        count: usize,
        push_arguments: impl FnOnce(&mut Slots) -> Result<()>,
    ) -> Result<Option<Rc<Frame>>> {
        let lambda = &closure.lambda;
        if count != lambda.required as usize || lambda.self_slot.is_some() {
            return Ok(None);
        }
        let mut frame = self.empty_frame(closure);
        let Some(f) = Rc::get_mut(&mut frame) else {
            return Ok(None);
        };
        let slots = f.slots_mut();
        push_arguments(slots)?;
        env::fill_slots(slots, lambda.scope.len());
        Ok(Some(frame))
    }

    /// The running procedure called again from the tail of its body (`running_frame`):
    /// the arguments are evaluated, then stored over the running frame's slots, those
    /// passed on unchanged left where they are; `Tail::AgainIn` a frame of their own when
    /// a closure holds the running frame, or for more than three arguments.
    /// Inlined in optimised builds only: an unoptimised build keeps every local of an
    /// inlined function in the caller's frame, and `eval_node`'s frame, stacked at
    /// every nesting, would exhaust the stack before the depth limit.
    #[cfg_attr(debug_assertions, inline(never))]
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn call_again(&self, (frame, own): Running, call: &ast::Call, env: &Env) -> Result<Tail> {
        Ok(match call.args.as_slice() {
            [] => rebind(self, frame, [], own),
            [a] => {
                let a = self.new_argument(call, 0, a, env)?;
                rebind(self, frame, [a], own)
            }
            [a, b] => {
                let a = self.new_argument(call, 0, a, env)?;
                let b = self.new_argument(call, 1, b, env)?;
                rebind(self, frame, [a, b], own)
            }
            [a, b, c] => {
                let a = self.new_argument(call, 0, a, env)?;
                let b = self.new_argument(call, 1, b, env)?;
                let c = self.new_argument(call, 2, c, env)?;
                rebind(self, frame, [a, b, c], own)
            }
            args => {
                let mut slots = Slots::with_capacity(args.len());
                for arg in args {
                    slots.push(self.operand(arg, env)?);
                }
                Tail::AgainIn(self.frame_like(frame, slots, own))
            }
        })
    }

    /// A frame of `frame`'s scope and parent whose first slots are `arguments`, and
    /// whose own slot, if any, holds the procedure.
    #[inline(never)]
    fn frame_like(&self, frame: &Frame, arguments: Slots, own: Option<OwnSlot>) -> Rc<Frame> {
        let fresh = self.frame_of(&frame.scope, &frame.parent, arguments);
        if let Some((slot, closure)) = own {
            let _in_range = fresh.set(slot, Value::Closure(closure.clone()));
        }
        fresh
    }

    /// Argument `i` of a call of the running procedure: `None` when it is parameter `i`
    /// passed on unchanged.
    #[inline(always)]
    fn new_argument(
        &self,
        call: &ast::Call,
        i: u8,
        arg: &Node,
        env: &Env,
    ) -> Result<Option<Value>> {
        if call.unchanged & (1 << i) != 0 {
            return Ok(None);
        }
        self.operand(arg, env).map(Some)
    }

    /// The call of `closure` with `slots` (bound by `bind`), to run as a tail call.
    pub(super) fn tail_call(&self, closure: Rc<Closure>, slots: Slots) -> Tail {
        let frame = self.make_frame(&closure, slots);
        Tail::Call(closure, frame)
    }

    /// Integer arithmetic on constants and variables of this frame, read in place: no
    /// clone, no call. Everything else takes `eval_prim_general`.
    #[inline]
    pub(super) fn eval_prim(&self, prim: &ast::Prim, env: &Env) -> Result<Value> {
        if let Some((x, y)) = prim.ints.and_then(|ints| int_pair(ints, env)) {
            if self.prim_unchanged(prim) {
                if let Some(v) = prim.op.on_ints(x, y) {
                    return Ok(v);
                }
            }
        }
        self.eval_prim_general(prim, env)
    }

    /// The truth of `(< a b)`-like tests on integer constants and frame variables, or of
    /// `(not (< a b))`, or `None` when the general path must decide. Not recursive, so it
    /// inlines into the branch of an `if`.
    #[inline(always)]
    pub(super) fn int_comparison(&self, prim: &ast::Prim, env: &Env) -> Option<bool> {
        let (test, negated) = match (prim.op, prim.args.as_slice()) {
            (ast::PrimOp::Not, [Node::Prim(inner)]) if inner.op != ast::PrimOp::Not => {
                if !self.prim_unchanged(prim) {
                    return None;
                }
                (inner.as_ref(), true)
            }
            _ => (prim, false),
        };
        let (x, y) = int_pair(test.ints?, env)?;
        if !self.prim_unchanged(test) {
            return None;
        }
        let truth = match test.op {
            ast::PrimOp::Lt => x < y,
            ast::PrimOp::Gt => x > y,
            ast::PrimOp::Le => x <= y,
            ast::PrimOp::Ge => x >= y,
            ast::PrimOp::NumEq => x == y,
            _ => return None,
        };
        Some(truth != negated)
    }

    /// A `Prim` whose name the program rebound: a call of whatever the name holds now,
    /// coming back as a tail call when it is a closure.
    pub(super) fn call_rebound(&self, prim: &ast::Prim, env: &Env) -> Result<Tail> {
        let callee = self.global_or_task(prim.name, prim.span)?;
        let mut args: Slots = Slots::with_capacity(prim.args.len());
        for arg in &prim.args {
            args.push(self.eval(arg, env)?);
        }
        self.call_tail(callee, args, env)
            .map_err(|e| e.or_span(prim.span))
    }

    /// Whether the global a `Prim` names still holds the builtin it was analysed with.
    #[inline]
    pub(super) fn prim_unchanged(&self, prim: &ast::Prim) -> bool {
        self.builtins_rebound.get() & prim.bit == 0
            || matches!(
                self.globals.borrow().get(prim.name.index()),
                Some(Value::Builtin(b)) if std::ptr::eq(*b, prim.builtin)
            )
    }

    #[inline(never)]
    fn eval_prim_general(&self, prim: &ast::Prim, env: &Env) -> Result<Value> {
        if !self.prim_unchanged(prim) {
            return self.eval_rebound(prim, env);
        }
        let func = prim.builtin.func;
        let result = match prim.args.as_slice() {
            // The arity was checked at analysis: the builtin is called on the operands
            // where they lie.
            [a] if prim.arity_fits => self
                .operand(a, env)
                .and_then(|a| func(self, std::slice::from_ref(&a), env)),
            [a, b] if prim.arity_fits => {
                let (a, b) = match self
                    .operand(a, env)
                    .and_then(|a| Ok((a, self.operand(b, env)?)))
                {
                    Ok(operands) => operands,
                    // An operand's error without a place takes the call's, as in any
                    // builtin call; arithmetic and comparisons let it through as it is.
                    Err(e) if prim.op != ast::PrimOp::Other => return Err(e),
                    Err(e) => return Err(e.or_span(prim.span)),
                };
                if let (Value::Int(x), Value::Int(y)) = (&a, &b) {
                    if let Some(v) = prim.op.on_ints(*x, *y) {
                        return Ok(v);
                    }
                }
                func(self, &[a, b], env)
            }
            args => self.call_builtin_with(prim.builtin, args, env),
        };
        result.map_err(|e| e.or_span(prim.span))
    }

    /// A `Prim` whose name the program rebound, evaluated for its value.
    #[cold]
    #[inline(never)]
    fn eval_rebound(&self, prim: &ast::Prim, env: &Env) -> Result<Value> {
        self.check_stack()?;
        let tail = self.call_rebound(prim, env)?;
        self.finish(tail)
    }

    /// Evaluates the arguments of a builtin call on the stack for the common small
    /// arities, then calls it.
    fn call_builtin_with(&self, b: &'static Builtin, args: &[Node], env: &Env) -> Result<Value> {
        match args {
            [] => self.call_builtin(b, &[], env),
            [a] => {
                let a = self.operand(a, env)?;
                self.call_builtin(b, &[a], env)
            }
            [a, b2] => {
                let a = self.operand(a, env)?;
                let b2 = self.operand(b2, env)?;
                self.call_builtin(b, &[a, b2], env)
            }
            [a, b2, c] => {
                let a = self.operand(a, env)?;
                let b2 = self.operand(b2, env)?;
                let c = self.operand(c, env)?;
                self.call_builtin(b, &[a, b2, c], env)
            }
            _ => {
                let values = args
                    .iter()
                    .map(|a| self.eval(a, env))
                    .collect::<Result<Vec<_>>>()?;
                self.call_builtin(b, &values, env)
            }
        }
    }

    /// The slots of a call of `closure` with `args`: the arity checked, the rest list and
    /// the self slot made.
    #[inline(always)]
    pub(super) fn bind(&self, closure: &Rc<Closure>, args: Slots) -> Result<Slots> {
        let lambda = &closure.lambda;
        if args.len() == lambda.required as usize && !lambda.rest && lambda.self_slot.is_none() {
            return Ok(args);
        }
        self.bind_general(closure, args)
    }

    #[inline(never)]
    fn bind_general(&self, closure: &Rc<Closure>, mut args: Slots) -> Result<Slots> {
        let lambda = &closure.lambda;
        let required = lambda.required as usize;
        if args.len() < required || (!lambda.rest && args.len() > required) {
            return Err(arity_error(
                &closure
                    .name()
                    .map_or("anonymous procedure".to_owned(), |n| n.to_string()),
                required,
                if lambda.rest { None } else { Some(required) },
                args.len(),
            ));
        }
        if lambda.rest {
            let rest = value::List::from_vec(args.drain(required..).collect());
            args.push(Value::from(rest));
        }
        if let Some(slot) = lambda.self_slot {
            args.resize(slot as usize, Value::Undefined);
            args.push(Value::Closure(closure.clone()));
        }
        Ok(args)
    }

    fn call_tail(&self, callee: Value, args: Slots, env: &Env) -> Result<Tail> {
        match callee {
            Value::Closure(closure) => {
                let slots = self.bind(&closure, args)?;
                Ok(self.tail_call(closure, slots))
            }
            Value::Builtin(b) if self.layers.is_apply(b) => {
                let (f, spread) = builtins::spread_apply_args(&args)?;
                self.call_tail(f, spread.into_iter().collect(), env)
            }
            other => self.call_value(&other, &args, env).map(Tail::Value),
        }
    }

    fn call_value(&self, callee: &Value, args: &[Value], env: &Env) -> Result<Value> {
        match callee {
            Value::Builtin(b) => self.call_builtin(b, args, env),
            Value::Task(t) => task::call(self, t, args, env),
            Value::Closure(_) => self.apply(callee, args, env),
            other => Err(Error::eval(format!(
                "not a procedure: {} ({})",
                value::write_prefix(other, 80),
                builtins::article(other.type_name())
            ))),
        }
    }

    fn call_builtin(&self, b: &'static Builtin, args: &[Value], env: &Env) -> Result<Value> {
        if args.len() < b.min_args || b.max_args.is_some_and(|max| args.len() > max) {
            return Err(arity_error(b.name, b.min_args, b.max_args, args.len()));
        }
        (b.func)(self, args, env)
    }

    /// Calls any procedure (closure, builtin or task) with evaluated arguments. `env` is
    /// the caller's environment, which tasks with `inherit-context "full"` see.
    pub fn apply(&self, f: &Value, args: &[Value], env: &Env) -> Result<Value> {
        match f {
            Value::Closure(closure) => {
                self.check_stack()?;
                let pushed = if closure.lambda.rest {
                    None
                } else {
                    // Pushed one by one: `extend` reserves first, many times the cost of
                    // a push for the usual one or two arguments.
                    self.frame_with(closure, args.len(), |slots| {
                        for arg in args {
                            slots.push(arg.clone());
                        }
                        Ok(())
                    })?
                };
                let frame = match pushed {
                    Some(frame) => frame,
                    None => {
                        let slots = self.bind(closure, args.to_vec())?;
                        self.make_frame(closure, slots)
                    }
                };
                self.run_closure(closure.clone(), frame)
            }
            // Builtins and tasks called from builtins (`map`, `filter`…) count as calls
            // too, so those loops meet the limits.
            other => {
                self.tick()?;
                self.call_value(other, args, env)
            }
        }
    }
}

/// A frame a self tail call rebinds, and its own slot, if the procedure has one (a
/// named `let`'s): the slot and the procedure it holds.
type Running<'e> = (&'e Rc<Frame>, Option<OwnSlot<'e>>);
type OwnSlot<'e> = (u32, &'e Rc<Closure>);

/// The running frame, when `call`, in the tail of a procedure body, calls `closure` (one
/// without a rest parameter, as both callers know) with its arity and the frame is one
/// of `closure`'s: the running procedure called again, whose frame can take the new
/// arguments.
#[inline(always)]
fn running_frame<'e, const TAIL: bool>(
    call: &ast::Call,
    closure: &Closure,
    env: &'e Env,
) -> Option<&'e Rc<Frame>> {
    if !TAIL {
        return None;
    }
    let frame = env.as_ref()?;
    let fits = call.tail && call.args.len() == closure.lambda.required as usize;
    (fits && frame.is_frame_of(closure)).then_some(frame)
}

/// Stores `values` over the first slots of `frame` (`Tail::Again`), unless a closure
/// holds the frame: then the arguments, in a frame of their own (`Tail::AgainIn`). The
/// own slot holds the procedure again, whatever the body assigned to it.
#[inline(always)]
fn rebind<const N: usize>(
    interp: &Interp,
    frame: &Rc<Frame>,
    values: [Option<Value>; N],
    own: Option<OwnSlot>,
) -> Tail {
    if Rc::strong_count(frame) != 1 {
        let slots = values.into_iter().zip(0..).map(|(value, slot)| {
            value
                .or_else(|| frame.get(slot))
                .unwrap_or(Value::Undefined)
        });
        return Tail::AgainIn(interp.frame_like(frame, slots.collect(), own));
    }
    frame.rebind(values, own.map(|(slot, _)| slot));
    if let Some((slot, closure)) = own {
        if !frame.holds_closure(slot, closure) {
            let _in_range = frame.set(slot, Value::Closure(closure.clone()));
        }
    }
    Tail::Again
}

/// The integers a `Prim`'s two operands hold (constants, or slots of the running frame
/// read in place), if both are integers.
#[inline(always)]
fn int_pair(ints: [ast::IntArg; 2], env: &Env) -> Option<(i64, i64)> {
    let [a, b] = ints;
    Some((int_arg(a, env)?, int_arg(b, env)?))
}

#[inline(always)]
fn int_arg(arg: ast::IntArg, env: &Env) -> Option<i64> {
    match arg {
        ast::IntArg::Const(i) => Some(i),
        ast::IntArg::Slot(slot) => env.as_ref()?.int_at(slot),
    }
}
