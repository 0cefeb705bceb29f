//! ResourceMetrics of a provider session (seeds' `ResourceMetrics`): turns and context
//! size, with limits. A session starts whenever a provider is installed
//! (`set-provider!`, `with-provider`, the command line).

use crate::error::{Error, Result};
use crate::value::{counted, Entries, Value};
use std::cell::Cell;
use std::rc::Rc;
use std::time::SystemTime;

pub const DEFAULT_MAX_TURNS: u64 = 10_000;
pub const DEFAULT_MAX_CONTEXT: u64 = 128_000;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Metrics {
    pub turns_used: u64,
    pub turns_limit: u64,
    /// Tokens of the latest exchange (request and answer).
    pub context_used: u64,
    pub context_limit: u64,
    pub peak_usage: u64,
    /// When the last turn ended (`turns.lastTurnAt`); `None` before the first.
    pub last_turn_at: Option<SystemTime>,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::with_limits(DEFAULT_MAX_TURNS, DEFAULT_MAX_CONTEXT)
    }
}

/// A `:max-turns` of a task call in progress and the turns taken under it. Clones share
/// the count: a `pmap` item started inside the call counts its turns against it too.
#[derive(Clone, Debug)]
pub struct TurnBudget {
    pub task: String,
    pub limit: u64,
    used: Rc<Cell<u64>>,
}

impl TurnBudget {
    pub fn new(task: &str, limit: u64) -> TurnBudget {
        TurnBudget {
            task: task.to_owned(),
            limit,
            used: Rc::new(Cell::new(0)),
        }
    }

    pub fn used(&self) -> u64 {
        self.used.get()
    }

    pub fn count_turn(&self) {
        self.used.set(self.used.get().saturating_add(1));
    }

    /// Whether `other` is this budget (or a clone of it).
    pub fn same_as(&self, other: &TurnBudget) -> bool {
        Rc::ptr_eq(&self.used, &other.used)
    }
}

impl Metrics {
    pub fn with_limits(turns_limit: u64, context_limit: u64) -> Metrics {
        Metrics {
            turns_used: 0,
            turns_limit,
            context_used: 0,
            context_limit,
            peak_usage: 0,
            last_turn_at: None,
        }
    }

    /// A new session's metrics, with the same limits.
    pub fn fresh(&self) -> Metrics {
        Metrics::with_limits(self.turns_limit, self.context_limit)
    }

    /// Refuses a turn that would pass the session's or a calling task's turn limit, or a
    /// request bigger than the context limit.
    pub fn check_turn(&self, input_tokens: u64, budgets: &[TurnBudget]) -> Result<()> {
        let next = self.turns_used + 1;
        if next > self.turns_limit {
            return Err(Error::resource(
                "turns",
                next,
                self.turns_limit,
                format!(
                    "the provider session allows {}",
                    counted(self.turns_limit, "turn")
                ),
            ));
        }
        for budget in budgets {
            let used = budget.used() + 1;
            if used > budget.limit {
                return Err(Error::resource(
                    "turns",
                    used,
                    budget.limit,
                    format!(
                        "task `{}` allows {} (:max-turns)",
                        budget.task,
                        counted(budget.limit, "turn")
                    ),
                ));
            }
        }
        if input_tokens > self.context_limit {
            return Err(context_error(input_tokens, self.context_limit));
        }
        Ok(())
    }

    /// Counts a finished turn of `tokens` (request and answer).
    pub fn record_turn(&mut self, tokens: u64) -> Result<()> {
        self.turns_used += 1;
        self.last_turn_at = Some(SystemTime::now());
        self.context_used = tokens;
        self.peak_usage = self.peak_usage.max(tokens);
        if tokens > self.context_limit {
            return Err(context_error(tokens, self.context_limit));
        }
        Ok(())
    }

    /// `{"turns" {"used" "limit" "lastTurnAt"} "context" {"used" "limit" "peakUsage"}}`,
    /// `lastTurnAt` an ISO 8601 time or nil.
    pub fn to_value(&self) -> Value {
        let number = |n: u64| Value::Int(i64::try_from(n).unwrap_or(i64::MAX));
        let map = |pairs: Vec<(&str, Value)>| {
            Value::map(
                pairs
                    .into_iter()
                    .map(|(k, v)| (Rc::from(k), v))
                    .collect::<Entries>(),
            )
        };
        let last_turn_at = self.last_turn_at.map_or(Value::Nil, |at| {
            Value::str(humantime::format_rfc3339_millis(at).to_string())
        });
        map(vec![
            (
                "turns",
                map(vec![
                    ("used", number(self.turns_used)),
                    ("limit", number(self.turns_limit)),
                    ("lastTurnAt", last_turn_at),
                ]),
            ),
            (
                "context",
                map(vec![
                    ("used", number(self.context_used)),
                    ("limit", number(self.context_limit)),
                    ("peakUsage", number(self.peak_usage)),
                ]),
            ),
        ])
    }
}

fn context_error(used: u64, limit: u64) -> Error {
    Error::resource(
        "context",
        used,
        limit,
        format!("{used} tokens exceed the context limit of {limit}"),
    )
}

/// Tokens of a text when the provider does not report them: about four characters each.
pub fn estimate_tokens(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turns_are_limited_per_session_and_per_task() {
        let mut m = Metrics::with_limits(2, 100);
        assert!(m.check_turn(10, &[]).is_ok());
        m.record_turn(10).unwrap();
        let budget = [TurnBudget::new("t", 1)];
        assert!(m.check_turn(10, &budget).is_ok());
        m.record_turn(30).unwrap();
        let e = m.check_turn(10, &[]).unwrap_err();
        assert_eq!(e.details()["resource"], "turns");
        assert_eq!((m.context_used, m.peak_usage), (30, 30));
        m.record_turn(5).unwrap();
        assert_eq!((m.context_used, m.peak_usage), (5, 30));
    }

    #[test]
    fn context_is_limited() {
        let m = Metrics::with_limits(10, 100);
        let e = m.check_turn(101, &[]).unwrap_err();
        assert_eq!(e.details()["resource"], "context");
        assert_eq!(e.details()["used"], 101);
        assert_eq!(estimate_tokens("abcdefghi"), 3);
    }

    #[test]
    fn a_task_budget_counts_only_its_own_turns() {
        let mut m = Metrics::with_limits(10, 100);
        m.record_turn(1).unwrap();
        m.record_turn(1).unwrap();
        let budget = [TurnBudget::new("t", 1)];
        assert!(m.check_turn(1, &budget).is_ok());
        budget[0].count_turn();
        let e = m.check_turn(1, &budget).unwrap_err();
        assert_eq!(e.message(), "task `t` allows 1 turn (:max-turns)");
    }
}
