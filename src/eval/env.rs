//! Environments: frames of slots, linked to their outer frame.
//!
//! The analyser resolves every lexical variable to `(depth, slot)`, so lookups never
//! compare names. Each frame still knows the names of its slots (its `Scope`), because
//! task bodies see their caller's bindings by name (SPEC §3, §6) and templates look names
//! up at call time. The global environment is not a frame: it is the interpreter's table
//! indexed by symbol, see `Interp::global`.

use crate::symbol::Sym;
use crate::value::Value;
use std::cell::{Cell, RefCell, UnsafeCell};
use std::collections::HashMap;
use std::rc::{Rc, Weak};

/// The names of a frame's slots, in slot order. Shared by every frame of one lambda or
/// `let`; it grows only while that code is being analysed.
#[derive(Debug, Default)]
pub struct Scope {
    names: RefCell<Vec<Sym>>,
    /// `names.len()`, readable on every call without a `RefCell` borrow.
    len: Cell<usize>,
    /// Name → latest slot, kept once a scope outgrows a linear scan (a body with
    /// thousands of `define`s would otherwise be analysed in quadratic time).
    index: RefCell<HashMap<Sym, usize>>,
    /// Whether a procedure was ever stored in a slot of one of its frames after the
    /// frame was made (`define`, `set!`): only such a frame can be held by a procedure
    /// it holds, so only it is checked for that cycle when let go (see `release`).
    stores_procedures: Cell<bool>,
}

/// Scopes up to this size are searched linearly: faster than hashing for the usual few.
const LINEAR_SCOPE: usize = 16;

impl Scope {
    pub fn new(names: Vec<Sym>) -> Rc<Scope> {
        let scope = Scope {
            len: Cell::new(names.len()),
            names: RefCell::new(names),
            index: RefCell::new(HashMap::new()),
            stores_procedures: Cell::new(false),
        };
        scope.reindex();
        Rc::new(scope)
    }

    fn reindex(&self) {
        if self.len() > LINEAR_SCOPE {
            let names = self.names.borrow();
            let mut index = self.index.borrow_mut();
            index.clear();
            index.extend(names.iter().enumerate().map(|(slot, &name)| (name, slot)));
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len.get()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The slot of the latest binding of `name`.
    pub fn slot_of(&self, name: Sym) -> Option<usize> {
        if self.len() > LINEAR_SCOPE {
            return self.index.borrow().get(&name).copied();
        }
        self.names.borrow().iter().rposition(|&n| n == name)
    }

    /// Adds a slot and returns its index.
    pub fn declare(&self, name: Sym) -> usize {
        let slot = {
            let mut names = self.names.borrow_mut();
            names.push(name);
            names.len() - 1
        };
        self.len.set(slot + 1);
        if slot + 1 == LINEAR_SCOPE + 1 {
            self.reindex();
        } else if slot + 1 > LINEAR_SCOPE {
            self.index.borrow_mut().insert(name, slot);
        }
        slot
    }

    pub fn names(&self) -> Vec<Sym> {
        self.names.borrow().clone()
    }
}

pub type Slots = Vec<Value>;

pub struct Frame {
    /// The values, reached only through the methods below. Not a `RefCell`: a slot is
    /// read or written on nearly every step, and none of these methods runs other code
    /// while it holds a reference into the slots (cloning a `Value` only counts a
    /// reference; a value a write replaces is dropped after the write), so no two
    /// references into them ever meet. A `Frame` is not `Sync`: one thread at a time.
    slots: UnsafeCell<Slots>,
    pub scope: Rc<Scope>,
    pub parent: Env,
}

/// An environment: the innermost frame, or `None` for the global environment.
pub type Env = Option<Rc<Frame>>;

impl Frame {
    /// An empty frame of `scope` inside `parent`, for the slots to be pushed.
    pub fn empty(scope: Rc<Scope>, parent: Env) -> Frame {
        Frame {
            slots: UnsafeCell::new(Slots::with_capacity(scope.len())),
            scope,
            parent,
        }
    }

    /// The slots, for a frame nothing else holds.
    #[inline(always)]
    pub fn slots_mut(&mut self) -> &mut Slots {
        self.slots.get_mut()
    }

    /// A copy of the value in `slot`: `None` past the frame's slots or for a slot not
    /// yet defined.
    #[inline(always)]
    pub fn get(&self, slot: u32) -> Option<Value> {
        // SAFETY: see `slots`; the shared reference ends with the clone.
        let slots = unsafe { &*self.slots.get() };
        match slots.get(slot as usize) {
            // Integers, lists and procedures, the commonest, copied without the general
            // clone's call.
            Some(Value::Int(i)) => Some(Value::Int(*i)),
            Some(Value::List(top, block)) => Some(Value::List(*top, block.clone())),
            Some(Value::Closure(closure)) => Some(Value::Closure(closure.clone())),
            Some(Value::Builtin(builtin)) => Some(Value::Builtin(builtin)),
            Some(Value::Undefined) | None => None,
            Some(v) => Some(v.clone()),
        }
    }

    /// The integer in `slot`, if it holds one.
    #[inline(always)]
    pub fn int_at(&self, slot: u32) -> Option<i64> {
        // SAFETY: see `slots`; nothing runs while the reference is held.
        let slots = unsafe { &*self.slots.get() };
        match slots.get(slot as usize) {
            Some(Value::Int(i)) => Some(*i),
            _ => None,
        }
    }

    /// Whether `slot` holds `closure` itself.
    #[inline(always)]
    pub fn holds_closure(&self, slot: u32, closure: &Rc<crate::eval::Closure>) -> bool {
        // SAFETY: see `slots`; nothing runs while the reference is held.
        let slots = unsafe { &*self.slots.get() };
        matches!(slots.get(slot as usize), Some(Value::Closure(c)) if Rc::ptr_eq(c, closure))
    }

    /// Stores `value` in `slot`, or gives it back past the frame's slots. The value it
    /// replaces is dropped after the write, when no reference into the slots is held.
    #[inline(always)]
    pub fn set(&self, slot: u32, value: Value) -> std::result::Result<(), Value> {
        // SAFETY: see `slots`; the exclusive reference ends with the swap.
        let place = unsafe { (&mut *self.slots.get()).get_mut(slot as usize) };
        match place {
            Some(place) => {
                if let Value::Closure(_) = value {
                    self.scope.stores_procedures.set(true);
                }
                drop(std::mem::replace(place, value));
                Ok(())
            }
            None => Err(value),
        }
    }

    /// A self tail call's arguments: stores each `Some` value in its slot (a `None`
    /// leaves the parameter as it is) and undefines the slots past them (a body's
    /// `define`s) except `keep` (a named `let`'s own procedure).
    #[inline(always)]
    pub fn rebind<const N: usize>(&self, mut values: [Option<Value>; N], keep: Option<u32>) {
        let len = {
            // SAFETY: see `slots`; the reference ends before the values it swapped out
            // (now in `values`) are dropped.
            let slots = unsafe { &mut *self.slots.get() };
            for (place, value) in slots.iter_mut().zip(values.iter_mut()) {
                if let Some(value) = value {
                    std::mem::swap(place, value);
                }
            }
            slots.len()
        };
        for value in values.iter_mut() {
            if let Some(value) = value.take() {
                drop_value(value);
            }
        }
        // Every value was taken: nothing is left to drop.
        std::mem::forget(values);
        for slot in (N as u32..len as u32).filter(|&slot| Some(slot) != keep) {
            let _in_range = self.set(slot, Value::Undefined);
        }
    }

    /// Gives back the storage past the slots: a pooled frame keeps the storage of the
    /// largest frame it was, which a procedure that captures it would hold for its life.
    #[inline]
    fn fit(&self) {
        // SAFETY: see `slots`; no reference into them is held elsewhere while they move.
        let slots = unsafe { &mut *self.slots.get() };
        if slots.capacity() > slots.len() {
            slots.shrink_to_fit();
        }
    }

    /// Copies of every slot's value, in slot order.
    pub fn values(&self) -> Slots {
        // SAFETY: see `slots`; the shared reference ends with the clones.
        unsafe { (&*self.slots.get()).clone() }
    }

    /// Moves out everything this frame owns, so dropping it afterwards is shallow.
    pub(crate) fn take_contents(&mut self, values: &mut Vec<Value>, frames: &mut Vec<Rc<Frame>>) {
        values.append(self.slots.get_mut());
        frames.extend(self.parent.take());
    }

    /// Who holds this frame besides the caller's handle, as far as a cycle through its
    /// own procedures goes: a procedure in its slots closing over it (an internal
    /// `define`) holds the frame that holds it.
    fn holders(self: &Rc<Frame>) -> Holders {
        let others = Rc::strong_count(self) - 1;
        // SAFETY: see `slots`; nothing runs while the reference is held.
        let slots = unsafe { &*self.slots.get() };
        let (mut own, mut own_alone) = (0, 0);
        for value in slots.iter() {
            if let Value::Closure(closure) = value {
                if closure
                    .env
                    .as_ref()
                    .is_some_and(|env| Rc::ptr_eq(env, self))
                {
                    own += 1;
                    own_alone += usize::from(Rc::strong_count(closure) == 1);
                }
            }
        }
        match others {
            0 => Holders::None,
            _ if own_alone == others => Holders::OwnCycle,
            _ if own == others => Holders::OwnEscaped,
            _ => Holders::Others,
        }
    }

    /// Empties the slots of a frame only its own cycle holds (`Holders::OwnCycle`),
    /// which breaks it: its procedures, and their hold on the frame, are dropped.
    fn break_own_cycle(&self) {
        // SAFETY: see `slots`; the values are moved out before any of them is dropped.
        let values = std::mem::take(unsafe { &mut *self.slots.get() });
        drop(values);
    }

    /// Whether this frame has the layout and parent a call of `closure` gets: its
    /// scope and its environment.
    #[inline(always)]
    pub fn is_frame_of(&self, closure: &crate::eval::Closure) -> bool {
        Rc::ptr_eq(&self.scope, &closure.lambda.scope)
            && match (&self.parent, &closure.env) {
                (None, None) => true,
                (Some(a), Some(b)) => Rc::ptr_eq(a, b),
                _ => false,
            }
    }

    /// A frame whose first slots are `values`; the rest start undefined.
    pub fn new(scope: Rc<Scope>, mut values: Slots, parent: Env) -> Rc<Frame> {
        fill_slots(&mut values, scope.len());
        Rc::new(Frame {
            slots: UnsafeCell::new(values),
            scope,
            parent,
        })
    }
}

impl Drop for Frame {
    /// Frees what the frame is the last owner of without recursion (see
    /// `value::dismantle_all`); a frame holding only atoms or shared values drops as usual.
    fn drop(&mut self) {
        let parent_freed = self
            .parent
            .as_ref()
            .is_some_and(|parent| Rc::strong_count(parent) == 1);
        if parent_freed || self.slots.get_mut().iter().any(Value::frees_nested) {
            let (mut values, mut frames) = (Vec::new(), Vec::new());
            self.take_contents(&mut values, &mut frames);
            crate::value::dismantle_all(values, frames);
        }
    }
}

/// Who holds a frame besides the handle being let go (see `Frame::holders`).
#[derive(Debug, PartialEq)]
enum Holders {
    None,
    /// Only procedures in its own slots that nothing else holds: a reference cycle
    /// nothing else can reach.
    OwnCycle,
    /// Only procedures in its own slots, some of them also held elsewhere (returned by
    /// the call that defined them): a cycle once those holds are gone.
    OwnEscaped,
    /// Something else: a running call, a procedure kept elsewhere.
    Others,
}

/// The frames the evaluator lets go of. Spare frames whose last reference was a
/// finished call are reused by the next call instead of freeing one and allocating
/// another: cells, not a `RefCell<Vec>`, since taking and giving back happen on every
/// call and neither runs other code. And the frames that are reference cycles of their
/// own procedures are freed (see `release`).
pub struct FramePool {
    frames: [Cell<Option<Rc<Frame>>>; FramePool::SIZE],
    len: Cell<usize>,
    /// Frames let go while an own procedure was still held elsewhere
    /// (`Holders::OwnEscaped`), looked at again by `sweep`. Weak, so a suspect the
    /// program frees itself (its procedures dropped and its slots reassigned) is freed
    /// at once, and a frame is a suspect once: the only `Weak`s of frames are these.
    suspects: RefCell<Vec<Weak<Frame>>>,
    /// The number of suspects at which they are next looked at.
    next_sweep: Cell<usize>,
}

impl Default for FramePool {
    fn default() -> FramePool {
        FramePool {
            frames: std::array::from_fn(|_| Cell::new(None)),
            len: Cell::new(0),
            suspects: RefCell::new(Vec::new()),
            next_sweep: Cell::new(FramePool::FIRST_SWEEP),
        }
    }
}

impl FramePool {
    /// How many spare frames the pool keeps.
    pub const SIZE: usize = 64;

    /// Frames with room for more slots than this are freed, not kept: the pool would
    /// hold their storage while no call needs it.
    const MAX_POOLED_SLOTS: usize = 32;

    /// How many suspects are gathered before they are first looked at again.
    const FIRST_SWEEP: usize = 64;

    /// Lets go of `frame`, the evaluator's handle on the frame of a finished call or
    /// `let`, when a procedure may hold it. A frame whose other holders are only its
    /// own procedures is freed by breaking that cycle, and so is each parent whose last
    /// outside hold was the frame freed: a loop whose body defines a helper runs in
    /// constant space. A frame an own procedure returned from the call still holds is
    /// kept as a suspect, freed by a later `sweep` once that procedure is dropped.
    #[inline(always)]
    pub fn release(&self, frame: Rc<Frame>) {
        // Most frames let go are still held by a procedure and never stored one:
        // dropping the handle is all there is to do.
        if Rc::strong_count(&frame) == 1 || frame.scope.stores_procedures.get() {
            self.release_from(frame);
        }
    }

    #[inline(never)]
    fn release_from(&self, mut frame: Rc<Frame>) {
        loop {
            if Rc::strong_count(&frame) > 1 {
                if !frame.scope.stores_procedures.get() {
                    return;
                }
                match frame.holders() {
                    Holders::OwnCycle => frame.break_own_cycle(),
                    Holders::OwnEscaped => {
                        let sweep_due = self.suspect(&frame);
                        // Let go first: a sweep would count this handle as a holder.
                        drop(frame);
                        if sweep_due {
                            self.sweep();
                        }
                        return;
                    }
                    Holders::None | Holders::Others => return,
                }
            }
            // The last strong handle (a suspect's `Weak` does not count).
            let Ok(mut last) = Rc::try_unwrap(frame) else {
                return;
            };
            let Some(parent) = last.parent.take() else {
                return;
            };
            drop(last);
            frame = parent;
        }
    }

    /// Keeps `frame` to look at again, unless it is a suspect already; true when the
    /// suspects are due a sweep.
    fn suspect(&self, frame: &Rc<Frame>) -> bool {
        if Rc::weak_count(frame) > 0 {
            return false;
        }
        let mut suspects = self.suspects.borrow_mut();
        suspects.push(Rc::downgrade(frame));
        suspects.len() >= self.next_sweep.get()
    }

    /// Lets go of every suspect still alive again, freeing those only their cycle
    /// holds now. The next sweep comes when the suspects kept have doubled, so the time
    /// sweeping takes stays in proportion to the frames let go.
    fn sweep(&self) {
        let suspects = std::mem::take(&mut *self.suspects.borrow_mut());
        // No sweep from within this one: `release_from` keeps suspects again.
        self.next_sweep.set(usize::MAX);
        for suspect in suspects {
            let Some(frame) = suspect.upgrade() else {
                continue;
            };
            // Its `Weak` goes first, so a frame still a suspect is kept again.
            drop(suspect);
            self.release_from(frame);
        }
        let kept = self.suspects.borrow().len();
        self.next_sweep
            .set((kept.saturating_mul(2)).max(FramePool::FIRST_SWEEP));
    }

    /// Gives back the frame of a finished call or `let`: emptied and kept for the next
    /// frame when nothing else holds it, let go (`release`) when a procedure does. Its
    /// parent is let go too.
    #[inline(always)]
    pub fn recycle(&self, mut frame: Rc<Frame>) {
        let Some(f) = Rc::get_mut(&mut frame) else {
            return self.release(frame);
        };
        // Emptied before pooling, so what the frame held is freed now, not later.
        let slots = f.slots_mut();
        clear_slots(slots);
        let large = slots.capacity() > FramePool::MAX_POOLED_SLOTS;
        let parent = f.parent.take();
        if !large {
            self.give(frame);
        }
        if let Some(parent) = parent {
            self.release(parent);
        }
    }

    /// A spare frame, if there is one.
    #[inline(always)]
    pub fn take(&self) -> Option<Rc<Frame>> {
        let len = self.len.get().checked_sub(1)?;
        self.len.set(len);
        self.frames.get(len)?.take()
    }

    /// Keeps `frame` (emptied by the caller) unless the pool is full.
    #[inline(always)]
    pub fn give(&self, frame: Rc<Frame>) {
        let len = self.len.get();
        if let Some(place) = self.frames.get(len) {
            self.len.set(len + 1);
            place.set(Some(frame));
        }
    }
}

/// Empties `slots`, dropping only the values that own something: most slots hold
/// integers and other atoms, which need no call to drop.
#[inline(always)]
pub fn clear_slots(slots: &mut Slots) {
    while let Some(value) = slots.pop() {
        drop_value(value);
    }
}

/// Drops `value`, calling nothing for an atom.
#[inline(always)]
pub fn drop_value(value: Value) {
    if value.is_atom() {
        std::mem::forget(value);
    } else {
        drop(value);
    }
}

/// Gives `slots` the `size` slots of its scope: those past the arguments (a body's
/// `define`s) start undefined.
#[inline(always)]
pub fn fill_slots(slots: &mut Slots, size: usize) {
    if slots.len() < size {
        slots.resize(size, Value::Undefined);
    }
}

/// Fits the frames `env` reaches to their slots (`Frame::fit`), as a procedure made in
/// `env` is about to hold them all.
pub fn fit_captured(env: &Env) {
    let mut frame = env.as_ref();
    while let Some(f) = frame {
        f.fit();
        frame = f.parent.as_ref();
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
            if let Some(v) = f.get(slot as u32) {
                return Some(v);
            }
        }
        frame = f.parent.as_ref();
    }
    None
}

/// Assigns `name` in the innermost frame of `env` that binds it; false if none does.
pub fn assign_by_name(env: &Env, name: Sym, mut value: Value) -> bool {
    let mut frame = env.as_ref();
    while let Some(f) = frame {
        if let Some(slot) = f.scope.slot_of(name) {
            match f.set(slot as u32, value) {
                Ok(()) => return true,
                Err(back) => value = back,
            }
        }
        frame = f.parent.as_ref();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_scopes_find_the_latest_slot_of_a_name() {
        let scope = Scope::new(Vec::new());
        let names: Vec<Sym> = (0..40)
            .map(|i| Sym::new(&format!("env-test-{}", i % 30)))
            .collect();
        for &name in &names {
            scope.declare(name);
        }
        assert_eq!(scope.slot_of(names[5]), Some(35));
        assert_eq!(scope.slot_of(names[20]), Some(20));
        assert_eq!(scope.slot_of(Sym::new("env-test-absent")), None);
        let built = Scope::new(names.clone());
        assert_eq!(built.slot_of(names[9]), Some(39));
    }

    #[test]
    fn a_frame_reads_writes_and_rebinds_its_slots_in_range_only() {
        let names = ["a", "b", "c"].map(|n| Sym::new(&format!("env-test-slot-{n}")));
        let frame = Frame::new(
            Scope::new(names.to_vec()),
            vec![Value::Int(1), Value::str("held")],
            None,
        );
        assert_eq!(frame.int_at(0), Some(1));
        assert_eq!(frame.int_at(1), None);
        assert!(
            frame.get(2).is_none(),
            "a slot not yet defined reads as nothing"
        );
        assert!(frame.get(3).is_none());
        assert!(matches!(frame.set(3, Value::Int(9)), Err(Value::Int(9))));
        assert!(frame.set(2, Value::Int(3)).is_ok());
        let text = Rc::new(String::from("shared"));
        assert!(frame.set(1, Value::Str(text.clone())).is_ok());
        assert_eq!(Rc::strong_count(&text), 2);
        // A self tail call's arguments: the old values are let go, the `define`d slot
        // past them undefined again.
        frame.rebind([Some(Value::Int(7)), Some(Value::Int(8))], None);
        assert_eq!(Rc::strong_count(&text), 1);
        assert!(matches!(
            frame.values().as_slice(),
            [Value::Int(7), Value::Int(8), Value::Undefined]
        ));
        // A parameter passed on unchanged stays; so does the slot to keep.
        assert!(frame.set(2, Value::Int(5)).is_ok());
        frame.rebind([None, Some(Value::Int(9))], Some(2));
        assert!(matches!(
            frame.values().as_slice(),
            [Value::Int(7), Value::Int(9), Value::Int(5)]
        ));
    }

    /// A frame of one slot per name, the first holding a procedure that closes over it,
    /// the second `canary`, whose count shows whether the frame was emptied.
    fn frame_holding_its_own_procedure(canary: &Rc<String>, parent: Env) -> Rc<Frame> {
        let names = ["own", "canary"].map(|n| Sym::new(&format!("env-test-cycle-{n}")));
        let frame = Frame::new(Scope::new(names.to_vec()), Slots::new(), parent);
        let lambda = crate::eval::ast::Lambda {
            name: None,
            required: 0,
            rest: false,
            self_slot: None,
            scope: Scope::new(Vec::new()),
            body: crate::eval::Node::Const(Value::Nil),
            span: crate::source::Span::generated(),
        };
        let own = Rc::new(crate::eval::Closure {
            lambda: Rc::new(lambda),
            env: Some(frame.clone()),
            home: crate::eval::home::TOP,
        });
        assert!(frame.set(0, Value::Closure(own)).is_ok());
        assert!(frame.set(1, Value::Str(canary.clone())).is_ok());
        frame
    }

    #[test]
    fn releasing_a_frame_held_only_by_its_own_procedure_frees_it() {
        let canary = Rc::new(String::from("slot"));
        FramePool::default().release(frame_holding_its_own_procedure(&canary, None));
        assert_eq!(Rc::strong_count(&canary), 1, "the cycle was broken");
    }

    #[test]
    fn a_frame_whose_procedure_escaped_is_kept_whole_until_a_sweep_after_it_is_dropped() {
        let pool = FramePool::default();
        let canary = Rc::new(String::from("slot"));
        let frame = frame_holding_its_own_procedure(&canary, None);
        let Some(Value::Closure(escaped)) = frame.get(0) else {
            panic!("not a procedure")
        };
        pool.release(frame);
        pool.sweep();
        assert_eq!(
            Rc::strong_count(&canary),
            2,
            "the frame still holds its values"
        );
        let env = escaped.env.as_ref().expect("the frame");
        assert!(matches!(env.get(1), Some(Value::Str(s)) if Rc::ptr_eq(&s, &canary)));
        drop(escaped);
        assert_eq!(Rc::strong_count(&canary), 2, "kept as a suspect");
        pool.sweep();
        assert_eq!(Rc::strong_count(&canary), 1);
        assert!(pool.suspects.borrow().is_empty());
    }

    #[test]
    fn a_suspect_whose_cycle_the_program_breaks_is_freed_at_once() {
        let pool = FramePool::default();
        let canary = Rc::new(String::from("slot"));
        let frame = frame_holding_its_own_procedure(&canary, None);
        let escaped = frame.get(0);
        pool.release(frame);
        assert_eq!(pool.suspects.borrow().len(), 1);
        // The procedure lets go of itself (`(set! h #f)`), then is dropped.
        if let Some(Value::Closure(closure)) = &escaped {
            let env = closure.env.as_ref().expect("the frame");
            assert!(env.set(0, Value::Bool(false)).is_ok());
        }
        drop(escaped);
        assert_eq!(Rc::strong_count(&canary), 1, "not kept for the next sweep");
    }

    #[test]
    fn suspects_are_swept_as_they_gather_so_dropped_ones_stay_few() {
        let pool = FramePool::default();
        let canary = Rc::new(String::from("slot"));
        for _ in 0..10_000 {
            let frame = frame_holding_its_own_procedure(&canary, None);
            let escaped = frame.get(0);
            pool.release(frame);
            drop(escaped);
        }
        let live = Rc::strong_count(&canary) - 1;
        assert!(live <= FramePool::FIRST_SWEEP, "{live} frames still held");
        assert_eq!(pool.suspects.borrow().len(), live);
    }

    #[test]
    fn releasing_a_child_frees_a_parent_it_was_the_last_outside_hold_on() {
        let canary = Rc::new(String::from("slot"));
        let parent = frame_holding_its_own_procedure(&canary, None);
        let child = Frame::new(Scope::new(Vec::new()), Slots::new(), Some(parent.clone()));
        drop(parent);
        assert_eq!(
            Rc::strong_count(&canary),
            2,
            "the cycle alone holds the parent"
        );
        FramePool::default().release(child);
        assert_eq!(Rc::strong_count(&canary), 1);
    }

    #[test]
    fn the_pool_keeps_at_most_its_size_and_gives_back_the_latest_first() {
        let pool = FramePool::default();
        assert!(pool.take().is_none(), "a new pool is empty");
        let scope = Scope::new(Vec::new());
        let frames: Vec<Rc<Frame>> = (0..FramePool::SIZE + 1)
            .map(|_| Frame::new(scope.clone(), Slots::new(), None))
            .collect();
        let last_kept = frames[FramePool::SIZE - 1].clone();
        let extra = frames[FramePool::SIZE].clone();
        for frame in frames {
            pool.give(frame);
        }
        assert_eq!(
            Rc::strong_count(&extra),
            1,
            "the frame past the size is let go"
        );
        let first = pool.take().expect("a kept frame");
        assert!(Rc::ptr_eq(&first, &last_kept));
        drop(first);
        let rest = std::iter::from_fn(|| pool.take()).count();
        assert_eq!(rest, FramePool::SIZE - 1);
    }

    #[test]
    fn clearing_slots_frees_what_they_own_and_forgets_atoms() {
        let text = Rc::new(String::from("owned"));
        let mut slots: Slots = vec![
            Value::Int(1),
            Value::Str(text.clone()),
            Value::Nil,
            Value::Bool(true),
        ];
        assert_eq!(Rc::strong_count(&text), 2);
        clear_slots(&mut slots);
        assert!(slots.is_empty());
        assert_eq!(Rc::strong_count(&text), 1);
    }

    #[test]
    fn lookup_walks_outward_and_prefers_inner() {
        let x = Sym::new("env-test-x");
        let y = Sym::new("env-test-y");
        let outer = Frame::new(
            Scope::new(vec![x, y]),
            vec![Value::Int(1), Value::Int(2)],
            None,
        );
        let inner = Frame::new(Scope::new(vec![x]), vec![Value::Int(10)], Some(outer));
        let env = Some(inner);
        assert!(matches!(lookup_by_name(&env, x), Some(Value::Int(10))));
        assert!(matches!(lookup_by_name(&env, y), Some(Value::Int(2))));
        assert!(assign_by_name(&env, y, Value::Int(5)));
        assert!(matches!(lookup_by_name(&env, y), Some(Value::Int(5))));
        assert!(lookup_by_name(&env, Sym::new("env-test-z")).is_none());
    }
}
