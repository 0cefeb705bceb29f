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
use smallvec::SmallVec;
use std::rc::Rc;

impl Interp {
    /// A call: builtins run at once; closures come back as a tail call to run.
    #[inline(always)]
    pub(super) fn eval_call(&self, call: &ast::Call, env: &Env) -> Result<Tail> {
        // A global procedure is taken straight from its slot, never moved as a `Value`.
        if let Node::Global { name, .. } = &call.callee {
            let closure = match self.globals.borrow().get(name.index()) {
                Some(Value::Closure(c)) if !c.lambda.rest => Some(c.clone()),
                _ => None,
            };
            if let Some(closure) = closure {
                return self.call_closure_with(closure, call, env);
            }
        }
        let callee = self.eval(&call.callee, env)?;
        let result = match callee {
            Value::Builtin(b) if !self.layers.is_apply(b) => {
                self.call_builtin_with(b, &call.args, env).map(Tail::Value)
            }
            Value::Closure(closure) if !closure.lambda.rest => {
                return self.call_closure_with(closure, call, env);
            }
            _ => {
                let mut args: SmallVec<[Value; 4]> = SmallVec::with_capacity(call.args.len());
                for arg in &call.args {
                    args.push(self.eval(arg, env)?);
                }
                self.call_tail(callee, args, env)
            }
        };
        result.map_err(|e| e.or_span(call.span))
    }

    /// A call of a closure without a rest parameter: the arguments go straight into the
    /// slots of the callee's frame, and the call comes back as a tail call. A call in
    /// tail position of a procedure body (`call.tail`) of a procedure of the same code
    /// and environment as the running one (a self tail call) reuses the running frame.
    #[inline(always)]
    fn call_closure_with(&self, closure: Rc<Closure>, call: &ast::Call, env: &Env) -> Result<Tail> {
        let lambda = &closure.lambda;
        if call.args.len() == lambda.required as usize && lambda.self_slot.is_none() {
            if let Some(frame) = env
                .as_ref()
                .filter(|f| call.tail && f.is_frame_of(&closure))
            {
                if let Some(reused) = self.rebind_in_place(frame, &call.args, env)? {
                    return Ok(match reused {
                        Ok(()) => Tail::Call(closure, frame.clone()),
                        Err(slots) => self.tail_call(closure, slots),
                    });
                }
            }
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

    /// A self tail call's arguments, evaluated and then stored over the running frame's
    /// slots (its body's `define`s undefined again): `Ok(())`, or the arguments in slots
    /// of their own when evaluating them let a closure capture the frame. `None` for
    /// arities this does not handle. Inlined in optimised builds only: an unoptimised
    /// build keeps every local of an inlined function in the caller's frame, and
    /// `eval_node`'s frame, stacked at every nesting, would exhaust the stack before the
    /// depth limit.
    #[cfg_attr(debug_assertions, inline(never))]
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn rebind_in_place(
        &self,
        frame: &Rc<Frame>,
        args: &[Node],
        env: &Env,
    ) -> Result<Option<std::result::Result<(), Slots>>> {
        Ok(Some(match args {
            [a] => {
                let a = self.operand(a, env)?;
                rebind(frame, [a])
            }
            [a, b] => {
                let a = self.operand(a, env)?;
                let b = self.operand(b, env)?;
                rebind(frame, [a, b])
            }
            [a, b, c] => {
                let a = self.operand(a, env)?;
                let b = self.operand(b, env)?;
                let c = self.operand(c, env)?;
                rebind(frame, [a, b, c])
            }
            _ => return Ok(None),
        }))
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

    /// The truth of `(< a b)`-like tests on integer constants and frame variables, or
    /// `None` when the general path must decide.
    #[inline(always)]
    pub(super) fn int_comparison(&self, prim: &ast::Prim, env: &Env) -> Option<bool> {
        if let (ast::PrimOp::Not, [Node::Prim(inner)]) = (prim.op, prim.args.as_slice()) {
            return (self.prim_unchanged(prim) && inner.op != ast::PrimOp::Not)
                .then(|| self.int_comparison(inner, env).map(|truth| !truth))
                .flatten();
        }
        let (x, y) = int_pair(prim.ints?, env)?;
        if !self.prim_unchanged(prim) {
            return None;
        }
        match prim.op {
            ast::PrimOp::Lt => Some(x < y),
            ast::PrimOp::Gt => Some(x > y),
            ast::PrimOp::Le => Some(x <= y),
            ast::PrimOp::Ge => Some(x >= y),
            ast::PrimOp::NumEq => Some(x == y),
            _ => None,
        }
    }

    /// A `Prim` whose name the program rebound: a call of whatever the name holds now,
    /// coming back as a tail call when it is a closure.
    pub(super) fn call_rebound(&self, prim: &ast::Prim, env: &Env) -> Result<Tail> {
        let callee = self.global_or_task(prim.name, prim.span)?;
        let mut args: SmallVec<[Value; 4]> = SmallVec::with_capacity(prim.args.len());
        for arg in &prim.args {
            args.push(self.eval(arg, env)?);
        }
        self.call_tail(callee, args, env)
            .map_err(|e| e.or_span(prim.span))
    }

    /// Whether the global a `Prim` names still holds the builtin it was analysed with.
    #[inline]
    pub(super) fn prim_unchanged(&self, prim: &ast::Prim) -> bool {
        !self.builtin_rebound.get()
            || matches!(
                self.globals.borrow().get(prim.name.index()),
                Some(Value::Builtin(b)) if std::ptr::eq(*b, prim.builtin)
            )
    }

    #[inline(never)]
    fn eval_prim_general(&self, prim: &ast::Prim, env: &Env) -> Result<Value> {
        if !self.prim_unchanged(prim) {
            self.check_stack()?;
            return match self.call_rebound(prim, env)? {
                Tail::Value(v) => Ok(v),
                Tail::Call(closure, frame) => self.run_closure(closure, frame),
            };
        }
        let (a, b) = match prim.args.as_slice() {
            [a, b] if !matches!(prim.op, ast::PrimOp::Other) => (a, b),
            args => {
                return self
                    .call_builtin_with(prim.builtin, args, env)
                    .map_err(|e| e.or_span(prim.span))
            }
        };
        let a = self.eval(a, env)?;
        let b = self.eval(b, env)?;
        if let (Value::Int(x), Value::Int(y)) = (&a, &b) {
            if let Some(v) = prim.op.on_ints(*x, *y) {
                return Ok(v);
            }
        }
        self.call_builtin(prim.builtin, &[a, b], env)
            .map_err(|e| e.or_span(prim.span))
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
    pub(super) fn bind(&self, closure: &Rc<Closure>, args: SmallVec<[Value; 4]>) -> Result<Slots> {
        let lambda = &closure.lambda;
        if args.len() == lambda.required as usize && !lambda.rest && lambda.self_slot.is_none() {
            return Ok(args);
        }
        self.bind_general(closure, args)
    }

    #[inline(never)]
    fn bind_general(&self, closure: &Rc<Closure>, mut args: SmallVec<[Value; 4]>) -> Result<Slots> {
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

    fn call_tail(&self, callee: Value, args: SmallVec<[Value; 4]>, env: &Env) -> Result<Tail> {
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
                let slots = self.bind(closure, args.iter().cloned().collect())?;
                let frame = self.make_frame(closure, slots);
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

/// Stores `values` over the first slots of `frame` and undefines the rest, unless a
/// closure holds the frame: then the values, as the slots of a frame of their own.
#[inline(always)]
fn rebind<const N: usize>(frame: &Rc<Frame>, values: [Value; N]) -> std::result::Result<(), Slots> {
    if Rc::strong_count(frame) != 1 {
        return Err(values.into_iter().collect());
    }
    frame.overwrite(values);
    Ok(())
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
