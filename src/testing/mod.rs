//! Prompt tests: `deftest`, the `expect…` forms and the `tasklisp test` runner.
//! `docs/TESTING.md` is the guide.
//!
//! An interpreter keeps the tests its program defined and, while one of them runs, the
//! checks it records. Outside a running test (a `tasklisp run` script, the REPL) a
//! `deftest` only defines its test and a failing `expect` raises an error instead.

mod check;
mod command;
mod compare;
pub(crate) mod discover;
mod forms;
mod html;
mod json;
mod judge;
mod junit;
mod report;
mod runner;

pub use check::Check;
pub use command::{run_command, Context, TestArgs};
pub use compare::ModelChoice;
pub use forms::LAYER;
pub use runner::{FAILED, PASSED};

use crate::error::{Error, Result};
use crate::value::Value;
use std::cell::RefCell;

/// A test as `deftest` defined it: its name and its body as a procedure of no arguments.
#[derive(Clone)]
pub struct TestDef {
    pub name: String,
    pub body: Value,
}

/// The tests of one interpreter and the checks of the test running in it: the testing
/// layer's state in the interpreter ([`Tests::of`]).
#[derive(Default)]
pub struct Tests {
    defined: RefCell<Vec<TestDef>>,
    /// `Some` while a test runs: its checks, in order.
    running: RefCell<Option<Vec<Check>>>,
    /// The model `expect-judge` asks (`--judge-model`); the provider's own when `None`.
    judge_model: RefCell<Option<String>>,
}

impl Tests {
    /// The tests of `interp`.
    pub fn of(interp: &crate::eval::Interp) -> std::rc::Rc<Tests> {
        interp.layer_state::<Tests>()
    }

    /// Defines a test; a name defined twice is an error (the second would hide the first).
    pub fn define(&self, test: TestDef) -> Result<()> {
        let mut defined = self.defined.borrow_mut();
        if defined.iter().any(|t| t.name == test.name) {
            return Err(Error::eval(format!(
                "deftest: the test `{}` is defined twice",
                test.name
            )));
        }
        defined.push(test);
        Ok(())
    }

    pub fn get(&self, name: &str) -> Option<TestDef> {
        self.defined
            .borrow()
            .iter()
            .find(|t| t.name == name)
            .cloned()
    }

    pub fn set_judge_model(&self, model: Option<String>) {
        *self.judge_model.borrow_mut() = model;
    }

    pub fn judge_model(&self) -> Option<String> {
        self.judge_model.borrow().clone()
    }

    /// Starts recording checks (a test begins).
    fn start(&self) {
        *self.running.borrow_mut() = Some(Vec::new());
    }

    /// Stops recording and returns the checks recorded (the test ended).
    fn finish(&self) -> Vec<Check> {
        self.running.borrow_mut().take().unwrap_or_default()
    }

    /// Records a check inside a running test; outside one, a failed check is an error.
    fn record(&self, check: Check) -> Result<Value> {
        let passed = check.passed;
        match self.running.borrow_mut().as_mut() {
            Some(checks) => checks.push(check),
            None if !passed => return Err(check.to_error()),
            None => {}
        }
        Ok(Value::Bool(passed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Span;

    fn check(passed: bool) -> Check {
        Check {
            form: "expect",
            span: Span::generated(),
            expression: "(expect x)".into(),
            passed,
            expected: "a true value".into(),
            actual: "false".into(),
            judge: None,
        }
    }

    #[test]
    fn checks_are_recorded_while_a_test_runs_and_raised_outside_one() {
        let tests = Tests::default();
        assert!(matches!(tests.record(check(true)), Ok(Value::Bool(true))));
        let error = tests.record(check(false)).unwrap_err();
        assert_eq!(error.reason(), Some("expectation_failed"));
        tests.start();
        assert!(matches!(tests.record(check(false)), Ok(Value::Bool(false))));
        assert!(matches!(tests.record(check(true)), Ok(Value::Bool(true))));
        let recorded: Vec<bool> = tests.finish().iter().map(|c| c.passed).collect();
        assert_eq!(recorded, [false, true]);
        assert!(tests.finish().is_empty());
    }

    #[test]
    fn a_test_name_is_defined_once() {
        let tests = Tests::default();
        let test = || TestDef {
            name: "t".into(),
            body: Value::Nil,
        };
        tests.define(test()).unwrap();
        assert!(tests.define(test()).is_err());
        assert!(tests.get("t").is_some());
    }
}
