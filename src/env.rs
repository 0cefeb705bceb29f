//! Environments: frames of slots, linked to their outer frame.
//!
//! The analyser resolves every lexical variable to `(depth, slot)`, so lookups never
//! compare names. Each frame still knows the names of its slots (its `Scope`), because
//! task bodies see their caller's bindings by name (SPEC §3, §6) and templates look names
//! up at call time. The global environment is not a frame: it is the interpreter's table
//! indexed by symbol, see `Interp::global`.

use crate::symbol::Sym;
use crate::value::Value;
use smallvec::SmallVec;
use std::cell::RefCell;
use std::rc::Rc;

/// The names of a frame's slots, in slot order. Shared by every frame of one lambda or
/// `let`; it grows only while that code is being analysed.
#[derive(Debug, Default)]
pub struct Scope {
    names: RefCell<Vec<Sym>>,
}

impl Scope {
    pub fn new(names: Vec<Sym>) -> Rc<Scope> {
        Rc::new(Scope {
            names: RefCell::new(names),
        })
    }

    pub fn len(&self) -> usize {
        self.names.borrow().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The slot of the latest binding of `name`.
    pub fn slot_of(&self, name: Sym) -> Option<usize> {
        self.names.borrow().iter().rposition(|&n| n == name)
    }

    /// Adds a slot and returns its index.
    pub fn declare(&self, name: Sym) -> usize {
        let mut names = self.names.borrow_mut();
        names.push(name);
        names.len() - 1
    }

    pub fn names(&self) -> Vec<Sym> {
        self.names.borrow().clone()
    }
}

pub type Slots = SmallVec<[Value; 4]>;

pub struct Frame {
    pub slots: RefCell<Slots>,
    pub scope: Rc<Scope>,
    pub parent: Env,
}

/// An environment: the innermost frame, or `None` for the global environment.
pub type Env = Option<Rc<Frame>>;

impl Frame {
    /// A frame whose first slots are `values`; the rest start undefined.
    pub fn new(scope: Rc<Scope>, mut values: Slots, parent: Env) -> Rc<Frame> {
        let size = scope.len();
        if values.len() < size {
            values.resize(size, Value::Undefined);
        }
        Rc::new(Frame {
            slots: RefCell::new(values),
            scope,
            parent,
        })
    }
}

/// The frame `depth` steps out from `env`.
#[inline]
pub fn frame_at(env: &Env, depth: usize) -> Option<&Rc<Frame>> {
    let mut frame = env.as_ref()?;
    for _ in 0..depth {
        frame = frame.parent.as_ref()?;
    }
    Some(frame)
}

/// Looks `name` up by name through the frames of `env` (not the globals).
pub fn lookup_by_name(env: &Env, name: Sym) -> Option<Value> {
    let mut frame = env.as_ref();
    while let Some(f) = frame {
        if let Some(slot) = f.scope.slot_of(name) {
            let value = f.slots.borrow().get(slot).cloned();
            if let Some(v) = value {
                if !matches!(v, Value::Undefined) {
                    return Some(v);
                }
            }
        }
        frame = f.parent.as_ref();
    }
    None
}

/// Assigns `name` in the innermost frame of `env` that binds it; false if none does.
pub fn assign_by_name(env: &Env, name: Sym, value: Value) -> bool {
    let mut frame = env.as_ref();
    while let Some(f) = frame {
        if let Some(slot) = f.scope.slot_of(name) {
            if let Some(s) = f.slots.borrow_mut().get_mut(slot) {
                *s = value;
                return true;
            }
        }
        frame = f.parent.as_ref();
    }
    false
}

/// Every binding visible in the frames of `env`, innermost first (for `:env` and
/// `inherit-context "subset"`).
pub fn visible_bindings(env: &Env) -> Vec<(Sym, Value)> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    let mut frame = env.as_ref();
    while let Some(f) = frame {
        let names = f.scope.names();
        let slots = f.slots.borrow();
        for (i, name) in names.iter().enumerate().rev() {
            if let Some(v) = slots.get(i) {
                if !matches!(v, Value::Undefined) && seen.insert(*name) {
                    out.push((*name, v.clone()));
                }
            }
        }
        frame = f.parent.as_ref();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use smallvec::smallvec;

    #[test]
    fn lookup_walks_outward_and_prefers_inner() {
        let x = Sym::new("env-test-x");
        let y = Sym::new("env-test-y");
        let outer = Frame::new(Scope::new(vec![x, y]), smallvec![Value::Int(1), Value::Int(2)], None);
        let inner = Frame::new(Scope::new(vec![x]), smallvec![Value::Int(10)], Some(outer));
        let env = Some(inner);
        assert!(matches!(lookup_by_name(&env, x), Some(Value::Int(10))));
        assert!(matches!(lookup_by_name(&env, y), Some(Value::Int(2))));
        assert!(assign_by_name(&env, y, Value::Int(5)));
        assert!(matches!(lookup_by_name(&env, y), Some(Value::Int(5))));
        assert!(lookup_by_name(&env, Sym::new("env-test-z")).is_none());
        assert_eq!(visible_bindings(&env).len(), 2);
    }
}
