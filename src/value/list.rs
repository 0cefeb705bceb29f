//! The persistent list: a chain of append-only blocks (a VList).
//!
//! A list is a view `(block, top)`: the block's first `top` items, newest first, then the
//! block's `rest`. `cons` onto the newest view of a block pushes into the block in place,
//! so building a list with `cons` allocates amortised O(1) and keeps one block; `rest`
//! is O(1) (the view shrinks); `length` is O(1); indexing walks blocks, which is O(1) for
//! lists built by one producer (JSON arrays, `map`, `range`, a `cons` loop) and O(b) where
//! the list was branched b times. A `cons` onto an older view starts a new block, so
//! every older view stays valid: nothing is ever overwritten.

use super::Value;
use std::cell::RefCell;
use std::rc::Rc;

pub struct Block {
    /// Items stored oldest first: the list's first element is `items[top - 1]`.
    items: RefCell<Vec<Value>>,
    rest: List,
    rest_len: u32,
}

/// A list value. `Clone` is one reference-count increment.
#[derive(Clone, Default)]
pub struct List {
    block: Option<Rc<Block>>,
    top: u32,
}

impl List {
    pub fn new() -> List {
        List::default()
    }

    pub(crate) fn from_parts(block: Option<Rc<Block>>, top: u32) -> List {
        List { block, top }
    }

    pub(crate) fn into_parts(self) -> (Option<Rc<Block>>, u32) {
        (self.block, self.top)
    }

    pub fn from_vec(mut items: Vec<Value>) -> List {
        if items.is_empty() {
            return List::new();
        }
        items.reverse();
        let top = items.len() as u32;
        List {
            block: Some(Rc::new(Block {
                items: RefCell::new(items),
                rest: List::new(),
                rest_len: 0,
            })),
            top,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.block.is_none()
    }

    pub fn len(&self) -> usize {
        match &self.block {
            None => 0,
            Some(b) => self.top as usize + b.rest_len as usize,
        }
    }

    /// A new list with `head` in front of `self`; `self` is unchanged.
    pub fn cons(&self, head: Value) -> List {
        if let Some(block) = &self.block {
            let mut items = block.items.borrow_mut();
            if items.len() == self.top as usize && self.top < u32::MAX {
                items.push(head);
                return List {
                    block: Some(block.clone()),
                    top: self.top + 1,
                };
            }
        }
        let rest_len = self.len() as u32;
        List {
            block: Some(Rc::new(Block {
                items: RefCell::new(vec![head]),
                rest: self.clone(),
                rest_len,
            })),
            top: 1,
        }
    }

    pub fn first(&self) -> Option<Value> {
        let block = self.block.as_ref()?;
        let items = block.items.borrow();
        items.get(self.top as usize - 1).cloned()
    }

    /// Everything after the first element; the empty list stays empty.
    pub fn rest(&self) -> List {
        match &self.block {
            None => List::new(),
            Some(b) if self.top > 1 => List {
                block: Some(b.clone()),
                top: self.top - 1,
            },
            Some(b) => b.rest.clone(),
        }
    }

    pub fn get(&self, mut index: usize) -> Option<Value> {
        let mut view = self;
        loop {
            let block = view.block.as_ref()?;
            let top = view.top as usize;
            if index < top {
                return block.items.borrow().get(top - 1 - index).cloned();
            }
            index -= top;
            view = &block.rest;
        }
    }

    /// The list without its first `n` elements, sharing the remainder.
    pub fn drop_front(&self, mut n: usize) -> List {
        let mut view = self.clone();
        while n > 0 {
            let Some(block) = view.block.clone() else {
                break;
            };
            let top = view.top as usize;
            if n < top {
                return List {
                    block: Some(block),
                    top: (top - n) as u32,
                };
            }
            n -= top;
            view = block.rest.clone();
        }
        view
    }

    pub fn iter(&self) -> Iter {
        Iter {
            view: self.clone(),
            pos: self.top as usize,
        }
    }

    pub fn to_vec(&self) -> Vec<Value> {
        let mut out = Vec::with_capacity(self.len());
        out.extend(self.iter());
        out
    }

    /// `self` followed by `tail`, sharing `tail`.
    pub fn append(&self, tail: &List) -> List {
        if tail.is_empty() {
            return self.clone();
        }
        if self.is_empty() {
            return tail.clone();
        }
        let mut items = self.to_vec();
        items.reverse();
        let top = items.len() as u32;
        List {
            block: Some(Rc::new(Block {
                items: RefCell::new(items),
                rest: tail.clone(),
                rest_len: tail.len() as u32,
            })),
            top,
        }
    }

    /// What makes two views the same list: the block and the view's top.
    pub fn identity(&self) -> (usize, u32) {
        match &self.block {
            None => (0, 0),
            Some(b) => (Rc::as_ptr(b) as usize, self.top),
        }
    }

    pub fn ptr_eq(&self, other: &List) -> bool {
        match (&self.block, &other.block) {
            (None, None) => true,
            (Some(a), Some(b)) => Rc::ptr_eq(a, b) && self.top == other.top,
            _ => false,
        }
    }
}

impl FromIterator<Value> for List {
    fn from_iter<I: IntoIterator<Item = Value>>(iter: I) -> List {
        List::from_vec(iter.into_iter().collect())
    }
}

/// Iterates a list front to back, cloning each element.
pub struct Iter {
    view: List,
    pos: usize,
}

impl Iterator for Iter {
    type Item = Value;
    fn next(&mut self) -> Option<Value> {
        loop {
            let block = self.view.block.clone()?;
            if self.pos > 0 {
                self.pos -= 1;
                return block.items.borrow().get(self.pos).cloned();
            }
            self.view = block.rest.clone();
            self.pos = self.view.top as usize;
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let remaining = match &self.view.block {
            None => 0,
            Some(b) => self.pos + b.rest_len as usize,
        };
        (remaining, Some(remaining))
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        // Dropping a long chain of blocks, or lists nested a million deep, must not recurse.
        let mut pending = std::mem::take(self.items.get_mut());
        if let Some(rest) = self.rest.block.take() {
            pending.push(Value::List(0, Some(rest)));
        }
        super::dismantle(pending);
    }
}

impl Block {
    /// Moves out everything this block owns, so dropping it afterwards is shallow.
    pub(super) fn take_contents(&mut self, into: &mut Vec<Value>) {
        into.append(self.items.get_mut());
        if let Some(rest) = self.rest.block.take() {
            into.push(Value::List(0, Some(rest)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(list: &List) -> Vec<i64> {
        list.iter()
            .map(|v| match v {
                Value::Int(i) => i,
                _ => panic!("not an int"),
            })
            .collect()
    }

    #[test]
    fn cons_first_rest() {
        let empty = List::new();
        let a = empty
            .cons(Value::Int(3))
            .cons(Value::Int(2))
            .cons(Value::Int(1));
        assert_eq!(ints(&a), vec![1, 2, 3]);
        assert_eq!(a.len(), 3);
        assert_eq!(ints(&a.rest()), vec![2, 3]);
        assert!(matches!(a.first(), Some(Value::Int(1))));
        assert!(empty.rest().is_empty());
    }

    #[test]
    fn branching_keeps_old_views() {
        let base = List::from_vec(vec![Value::Int(1), Value::Int(2)]);
        let x = base.cons(Value::Int(10));
        let y = base.cons(Value::Int(20));
        assert_eq!(ints(&x), vec![10, 1, 2]);
        assert_eq!(ints(&y), vec![20, 1, 2]);
        assert_eq!(ints(&base), vec![1, 2]);
        let xr = x.rest().cons(Value::Int(30));
        assert_eq!(ints(&xr), vec![30, 1, 2]);
        assert_eq!(ints(&x), vec![10, 1, 2]);
    }

    #[test]
    fn index_append_and_drop_front() {
        let a = List::from_vec((0..5).map(Value::Int).collect());
        let b = a.cons(Value::Int(-1));
        assert!(matches!(b.get(0), Some(Value::Int(-1))));
        assert!(matches!(b.get(5), Some(Value::Int(4))));
        assert!(b.get(6).is_none());
        let c = a.append(&List::from_vec(vec![Value::Int(9)]));
        assert_eq!(ints(&c), vec![0, 1, 2, 3, 4, 9]);
        assert_eq!(ints(&c.drop_front(4)), vec![4, 9]);
        assert_eq!(c.drop_front(99).len(), 0);
    }

    #[test]
    fn a_million_conses_and_a_deep_nest_drop_cleanly() {
        let mut l = List::new();
        for i in 0..1_000_000 {
            l = l.cons(Value::Int(i));
        }
        assert_eq!(l.len(), 1_000_000);
        let mut nested = Value::Nil;
        for _ in 0..1_000_000 {
            nested = Value::from(List::from_vec(vec![nested]));
        }
        drop(nested);
        let mut walk = l.clone();
        let mut n = 0;
        while !walk.is_empty() {
            walk = walk.rest();
            n += 1;
        }
        assert_eq!(n, 1_000_000);
    }
}
