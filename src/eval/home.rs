//! Homes: the global environment a procedure was made in.
//!
//! A closure, and a task, remembers the home it was made in: the globals, macros and
//! task library its free names mean. An interpreter holds one home's names in place
//! (`Interp::globals`, read at every global reference, stays one borrow away); the
//! others wait parked in their [`Home`]. A child interpreter (`eval-sandboxed`) knows
//! its ancestors' homes as well as its own: when it calls a procedure or task made in
//! one of them, it parks the names it holds and takes that home's in for the call, and
//! back after it. So a procedure means what it meant where it was made, wherever it is
//! called from: code given a procedure cannot change what the procedure's free names
//! call by defining those names itself.
//!
//! Every interpreter made by `Interp::with_layers` has the home [`TOP`]: they never
//! call one another. A child gets a fresh one.

use super::Interp;
use crate::error::{Error, Result};
use crate::symbol::Sym;
use crate::value::Value;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Which home a procedure or task belongs to.
pub type HomeId = u64;

/// The home of every interpreter that is no other's child.
pub const TOP: HomeId = 0;

/// A home and, while another home's names are in place, its own.
pub struct Home {
    id: HomeId,
    parked: RefCell<Parked>,
}

/// A home's names while they are not in place.
#[derive(Default)]
struct Parked {
    globals: Vec<Value>,
    macros: HashMap<Sym, Value>,
    builtins_rebound: u64,
    tasks: crate::task::ParkedTasks,
}

impl Home {
    pub fn new(id: HomeId) -> Rc<Home> {
        Rc::new(Home {
            id,
            parked: RefCell::default(),
        })
    }

    /// A home no other has had.
    pub fn fresh() -> Rc<Home> {
        static NEXT: AtomicU64 = AtomicU64::new(TOP + 1);
        Home::new(NEXT.fetch_add(1, Ordering::Relaxed))
    }
}

/// The home that was running before [`Interp::enter_home`], taken back when dropped.
pub struct Entered<'i> {
    interp: &'i Interp,
    back: HomeId,
}

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        self.interp.switch_home(self.back);
    }
}

/// An interpreter's names, parked in its running home while a child runs, and put back
/// when dropped (see [`Interp::lend_home`]).
pub struct Lent<'i>(&'i Interp);

impl Drop for Lent<'_> {
    fn drop(&mut self) {
        if let Some(home) = self.0.registered(self.0.home.get()) {
            self.0.exchange(&home);
        }
    }
}

impl Interp {
    /// The home running now: procedures and tasks made now belong to it.
    #[inline(always)]
    pub fn home(&self) -> HomeId {
        self.home.get()
    }

    /// Runs in `home` (of a procedure or task about to be called) until the guard is
    /// dropped. A home this interpreter does not know is refused: a procedure of an
    /// interpreter that is not its ancestor has no names to run with here.
    pub fn enter_home(&self, home: HomeId) -> Result<Entered<'_>> {
        if self.registered(home).is_none() {
            return Err(Error::eval(
                "a procedure made by another interpreter cannot be called here",
            ));
        }
        Ok(Entered {
            interp: self,
            back: self.switch_home(home),
        })
    }

    /// Parks this interpreter's names in its running home, where a child it is about to
    /// run finds them when it calls a procedure made here. Nothing of this interpreter
    /// runs until the guard is dropped: the child runs on this thread, inside a call.
    pub fn lend_home(&self) -> Lent<'_> {
        if let Some(home) = self.registered(self.home.get()) {
            self.exchange(&home);
        }
        Lent(self)
    }

    /// The homes of a child of this interpreter: this one's and `own`, which runs first.
    pub(super) fn adopt_homes(&self, child: &Interp, own: Rc<Home>) {
        let mut homes = self.homes.borrow().clone();
        child.home.set(own.id);
        homes.push(own);
        *child.homes.borrow_mut() = homes;
        child.rehome_start();
    }

    /// Makes the start's procedures (made once per thread, in the home [`TOP`]) this
    /// interpreter's own, so that they run with its names.
    fn rehome_start(&self) {
        let home = self.home.get();
        let rehome = |value: &mut Value| {
            if let Value::Closure(closure) = value {
                if closure.home != home {
                    *value = Value::Closure(Rc::new(super::Closure {
                        lambda: closure.lambda.clone(),
                        env: closure.env.clone(),
                        home,
                    }));
                }
            }
        };
        self.globals.borrow_mut().iter_mut().for_each(rehome);
        self.macros.borrow_mut().values_mut().for_each(rehome);
    }

    /// Parks the names in place and takes `to`'s in, returning the home that ran. A home
    /// not registered leaves the names as they are.
    pub(super) fn switch_home(&self, to: HomeId) -> HomeId {
        let from = self.home.get();
        if from == to {
            return from;
        }
        let (Some(parking), Some(taking)) = (self.registered(from), self.registered(to)) else {
            return from;
        };
        self.exchange(&parking);
        self.exchange(&taking);
        self.home.set(to);
        from
    }

    /// Exchanges the names in place with those parked in `home`.
    fn exchange(&self, home: &Home) {
        let mut parked = home.parked.borrow_mut();
        std::mem::swap(&mut *self.globals.borrow_mut(), &mut parked.globals);
        std::mem::swap(&mut *self.macros.borrow_mut(), &mut parked.macros);
        parked.builtins_rebound = self.builtins_rebound.replace(parked.builtins_rebound);
        self.tasks.exchange_library(&mut parked.tasks);
    }

    fn registered(&self, id: HomeId) -> Option<Rc<Home>> {
        self.homes.borrow().iter().find(|h| h.id == id).cloned()
    }
}
