//! Watching and limiting model calls: the run log's rows, cost, the run's usage,
//! budgets and the cache. `session::send` calls [`Observer::before_model`] and
//! [`Observer::after_model`] around every model call; task calls open and close a row
//! that the model calls made inside them point to. See `docs/OBSERVABILITY.md`.

use crate::error::{Error, ErrorKind, Result};
use crate::prices::Prices;
use crate::provider::request_key::{cache_key_from, canonical_request, Target};
use crate::provider::{Message, Request, Response, ToolCall, Usage};
use crate::runlog::{now_ms, CachedAnswer, CallKind, CallRow, RunLog};
use crate::secrets::Secrets;
use serde_json::{json, Value as Json};
use std::cell::{Cell, OnceCell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

/// What a run has spent: model calls that reached a provider, their tokens and cost.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Spent {
    pub calls: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost: f64,
}

impl Spent {
    fn tokens(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }

    fn add(&mut self, usage: Usage, cost: Option<f64>) {
        self.input_tokens = self.input_tokens.saturating_add(usage.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(usage.output_tokens);
        self.cost += cost.unwrap_or(0.0);
    }

    /// `{"calls" n "input_tokens" n "output_tokens" n "cost" usd}`.
    pub fn to_json(self) -> Json {
        json!({
            "calls": self.calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost": self.cost,
        })
    }
}

/// The limits of a `with-budget` (or of `--budget-usd`/`--budget-calls`); any may be
/// absent.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BudgetLimits {
    pub usd: Option<f64>,
    pub tokens: Option<u64>,
    pub calls: Option<u64>,
}

/// A budget in force: its limits and what the calls inside it have spent so far.
/// Shared (`Rc`) by every `pmap` item started inside it.
#[derive(Debug)]
pub struct Budget {
    limits: BudgetLimits,
    spent: Cell<Spent>,
}

impl Budget {
    pub fn new(limits: BudgetLimits) -> Rc<Budget> {
        Rc::new(Budget {
            limits,
            spent: Cell::new(Spent::default()),
        })
    }

    /// Refuses a call that would start past a limit.
    fn check(&self) -> Result<()> {
        let spent = self.spent.get();
        let over = |what: &str, used: Json, limit: Json| {
            Err(Error::new(
                ErrorKind::ResourceExhaustion,
                format!("the budget of {limit} {what} is used up ({used} spent)"),
            )
            .with_details(
                json!({"resource": "budget", "unit": what, "used": used, "limit": limit}),
            ))
        };
        if let Some(limit) = self.limits.calls.filter(|&l| spent.calls >= l) {
            return over("calls", json!(spent.calls), json!(limit));
        }
        if let Some(limit) = self.limits.tokens.filter(|&l| spent.tokens() >= l) {
            return over("tokens", json!(spent.tokens()), json!(limit));
        }
        if let Some(limit) = self.limits.usd.filter(|&l| spent.cost >= l) {
            return over("usd", json!(spent.cost), json!(limit));
        }
        Ok(())
    }

    /// Counts a call as it starts, so `pmap` items starting together cannot all pass.
    fn count_call(&self) {
        let mut spent = self.spent.get();
        spent.calls += 1;
        self.spent.set(spent);
    }

    fn charge(&self, usage: Usage, cost: Option<f64>) {
        let mut spent = self.spent.get();
        spent.add(usage, cost);
        self.spent.set(spent);
    }
}

/// The part of the observer that belongs to one thread of evaluation (the program or a
/// `pmap` item): switched as a unit when `pmap` switches items.
#[derive(Clone, Debug, Default)]
pub struct Scope {
    /// The innermost task call in progress: the parent of the next call's row.
    pub call: Option<u64>,
    /// Budgets in force, outermost first.
    pub budgets: Vec<Rc<Budget>>,
    /// Inside `with-cache`.
    pub cache: bool,
}

impl Scope {
    /// A budget over everything evaluated with this scope (`--budget-usd`,
    /// `--budget-calls` put one around the whole run).
    pub fn add_budget(&mut self, limits: BudgetLimits) {
        self.budgets.insert(0, Budget::new(limits));
    }
}

/// Runs `body` with a budget added inside the ones of `scope`.
pub fn with_budget<T>(scope: &RefCell<Scope>, limits: BudgetLimits, body: impl FnOnce() -> T) -> T {
    scope.borrow_mut().budgets.push(Budget::new(limits));
    let result = body();
    scope.borrow_mut().budgets.pop();
    result
}

/// Runs `body` with the cache on in `scope`.
pub fn with_cache<T>(scope: &RefCell<Scope>, body: impl FnOnce() -> T) -> T {
    let outer = std::mem::replace(&mut scope.borrow_mut().cache, true);
    let result = body();
    scope.borrow_mut().cache = outer;
    result
}

/// A task call in progress, kept until it ends; it gets a row only if a model call was
/// made inside it, so the log holds model calls and the task calls around them.
struct OpenTask {
    kind: CallKind,
    parent: Option<u64>,
    task: String,
    started_ms: i64,
    started: std::time::Instant,
    has_model_calls: bool,
    /// Answers made inside it that passed their checks so far: offered to the cache
    /// when the call ends well.
    passed: Vec<CacheCandidate>,
}

/// A provider's answer in the log that the cache does not offer yet: only an answer
/// that passed parsing, the schema and the audits is offered ([`Observer::accept`]).
#[derive(Debug)]
pub struct CacheCandidate {
    seq: u64,
    key: String,
    answer: CachedAnswer,
}

/// A model call about to be made, from `before_model` to `after_model`.
pub struct PendingCall {
    seq: u64,
    parent: Option<u64>,
    provider: String,
    model: Option<String>,
    cache_key: Option<String>,
    started_ms: i64,
    budgets: Vec<Rc<Budget>>,
    /// The provider's key and credentials, kept out of the call's row.
    secrets: Secrets,
    /// The cache is on for this call (so is resuming a batch job it waits in).
    caching: bool,
}

impl PendingCall {
    pub fn caching(&self) -> bool {
        self.caching
    }
}

impl PendingCall {
    /// Under a fallback chain, the provider that answered is the one logged.
    pub fn answered_by(&mut self, provider: &str) {
        provider.clone_into(&mut self.provider);
    }
}

/// The outcome of a model call as the result's notes report it.
#[derive(Clone, Copy, Debug, Default)]
pub struct CallNotes {
    /// USD; `None` when the model's price is unknown (or the answer was replayed).
    pub cost: Option<f64>,
    pub cached: bool,
}

#[derive(Default)]
pub struct Observer {
    log: RefCell<Option<Rc<RunLog>>>,
    prices: OnceCell<Prices>,
    spent: Cell<Spent>,
    open_tasks: RefCell<HashMap<u64, OpenTask>>,
    /// `--cache` or `TASKLISP_CACHE=on`: every call may be answered from the log.
    cache_everything: Cell<bool>,
    /// The last answers of the model calls, once `keep_answers` asked for them
    /// (`tasklisp test` shows them beside a failure).
    answers: RefCell<Option<std::collections::VecDeque<String>>>,
}

/// How many answers `keep_answers` keeps (the last ones), and how many characters of each.
const KEPT_ANSWERS: usize = 8;
const KEPT_ANSWER_CHARS: usize = 4000;

impl Observer {
    pub fn set_log(&self, log: Option<Rc<RunLog>>) {
        *self.log.borrow_mut() = log;
    }

    pub fn log(&self) -> Option<Rc<RunLog>> {
        self.log.borrow().clone()
    }

    pub fn set_cache_everything(&self, on: bool) {
        self.cache_everything.set(on);
    }

    /// Takes `parent`'s setting of `--cache` (a child evaluation's observer).
    pub fn inherit_cache_setting(&self, parent: &Observer) {
        self.cache_everything.set(parent.cache_everything.get());
    }

    /// Moves what a child evaluation's observer spent into this run's spending.
    pub fn absorb(&self, child: &Observer) {
        let (mut spent, theirs) = (self.spent.get(), child.spent.get());
        spent.calls = spent.calls.saturating_add(theirs.calls);
        spent.input_tokens = spent.input_tokens.saturating_add(theirs.input_tokens);
        spent.output_tokens = spent.output_tokens.saturating_add(theirs.output_tokens);
        spent.cost += theirs.cost;
        self.spent.set(spent);
        child.spent.set(Spent::default());
    }

    /// From now on, keeps the last answers of the model calls for [`Observer::answers`].
    pub fn keep_answers(&self) {
        *self.answers.borrow_mut() = Some(std::collections::VecDeque::new());
    }

    /// The answers kept, oldest first (each cut to its first 4,000 characters).
    pub fn answers(&self) -> Vec<String> {
        self.answers.borrow().iter().flatten().cloned().collect()
    }

    fn keep_answer(&self, content: &str) {
        if let Some(answers) = self.answers.borrow_mut().as_mut() {
            if answers.len() == KEPT_ANSWERS {
                answers.pop_front();
            }
            answers.push_back(crate::value::truncate_text(content, KEPT_ANSWER_CHARS));
        }
    }

    /// What the run has spent so far (`(run-usage)`).
    pub fn spent(&self) -> Spent {
        self.spent.get()
    }

    /// A task call starts in the evaluation whose scope is `scope`: the calls made until
    /// `end_task` are its children.
    pub fn begin_task(&self, scope: &RefCell<Scope>, task: &str) -> Option<u64> {
        self.begin(scope, task, CallKind::Task)
    }

    /// A test of `tasklisp test` starts: the calls its file and body make until
    /// `end_task` are its children.
    pub fn begin_test(&self, scope: &RefCell<Scope>, name: &str) -> Option<u64> {
        self.begin(scope, name, CallKind::Test)
    }

    fn begin(&self, scope: &RefCell<Scope>, task: &str, kind: CallKind) -> Option<u64> {
        self.log.borrow().as_ref()?;
        let seq = self.next_seq();
        let parent = scope.borrow_mut().call.replace(seq);
        self.open_tasks.borrow_mut().insert(
            seq,
            OpenTask {
                kind,
                parent,
                task: task.to_owned(),
                started_ms: now_ms(),
                started: std::time::Instant::now(),
                has_model_calls: false,
                passed: Vec::new(),
            },
        );
        Some(seq)
    }

    /// The task call `seq` ended with `outcome`; its row is written if it made model
    /// calls.
    pub fn end_task<T>(&self, scope: &RefCell<Scope>, seq: Option<u64>, outcome: &Result<T>) {
        let Some(seq) = seq else { return };
        let Some(open) = self.open_tasks.borrow_mut().remove(&seq) else {
            return;
        };
        scope.borrow_mut().call = open.parent;
        if outcome.is_ok() {
            for candidate in open.passed {
                self.accept(candidate);
            }
        }
        if !open.has_model_calls {
            return;
        }
        let (run_id, log) = match self.log.borrow().as_ref() {
            Some(log) => (log.run_id().to_owned(), log.clone()),
            None => return,
        };
        log.record(CallRow {
            run_id,
            seq,
            parent: open.parent,
            kind: open.kind,
            task: open.task,
            provider: None,
            model: None,
            options: None,
            messages: None,
            answer: None,
            tool_calls: None,
            input_tokens: None,
            output_tokens: None,
            cached_input_tokens: None,
            cache_write_tokens: None,
            latency_ms: Some(open.started.elapsed().as_secs_f64() * 1000.0),
            cost: None,
            status: status(outcome).to_owned(),
            error: outcome.as_ref().err().map(Error::to_json),
            cache_hit: false,
            cache_key: None,
            started_ms: open.started_ms,
            finish_reason: None,
            reasoning: None,
        });
    }

    /// An answer passed the checks of the task call that asked for it (parsing, the
    /// schema): it is offered to the cache if the call ends well and its audits pass. An
    /// answer asked for outside a task call is offered at once.
    pub fn passed(&self, scope: &RefCell<Scope>, candidate: Option<CacheCandidate>) {
        let Some(candidate) = candidate else { return };
        let call = scope.borrow().call;
        let mut open = self.open_tasks.borrow_mut();
        if let Some(task) = call.and_then(|seq| open.get_mut(&seq)) {
            task.passed.push(candidate);
            return;
        }
        drop(open);
        self.accept(candidate);
    }

    /// The current task call's answers so far failed its audits: none is offered.
    pub fn reject_passed(&self, scope: &RefCell<Scope>) {
        let Some(seq) = scope.borrow().call else {
            return;
        };
        if let Some(task) = self.open_tasks.borrow_mut().get_mut(&seq) {
            task.passed.clear();
        }
    }

    /// Offers an answer to the cache: later calls with its key may be answered by it.
    pub fn accept(&self, candidate: CacheCandidate) {
        if let Some(log) = self.log() {
            log.accept(candidate.seq, candidate.key, candidate.answer);
        }
    }

    /// Before a model call: answers it from the cache when the cache is on and has it,
    /// else checks the budgets (counting the call against them). `secrets` are the
    /// provider's, never written to the log. A call the journal answers (`replayed`)
    /// is neither looked up nor counted. `canonical` is the request's canonical form
    /// when the caller has made it.
    pub fn before_model(
        &self,
        scope: Scope,
        (request, canonical): (&Request, Option<serde_json::Value>),
        target: &Target,
        secrets: Secrets,
        (task_cache, replayed): (bool, bool),
    ) -> Result<(PendingCall, Option<CachedAnswer>)> {
        // An answer may be a tool call, which the cache does not keep: a request that
        // offers tools is always sent.
        let caching =
            request.tools.is_empty() && (task_cache || scope.cache || self.cache_everything.get());
        let log = self.log();
        // A replayed call's answer is already in the cache under the run that made it.
        let cache_key = log.as_ref().filter(|_| !replayed).map(|_| {
            let canonical = canonical.unwrap_or_else(|| canonical_request(request));
            cache_key_from(canonical, request, target)
        });
        let pending = PendingCall {
            seq: self.next_seq(),
            parent: scope.call,
            provider: target.provider.clone(),
            model: target.model.clone(),
            cache_key,
            started_ms: now_ms(),
            budgets: scope.budgets,
            secrets,
            caching,
        };
        let cached = match (&log, &pending.cache_key) {
            (Some(log), Some(key)) if caching && !replayed => log.cached(key),
            _ => None,
        };
        if cached.is_none() && !replayed {
            // Every budget is checked before any counts the call: a call refused by an
            // inner budget is not counted by the outer ones.
            for budget in &pending.budgets {
                budget.check()?;
            }
            for budget in &pending.budgets {
                budget.count_call();
            }
        }
        Ok((pending, cached))
    }

    /// After a model call (made, or answered from the cache): counts it and logs it.
    /// A new answer that the cache could keep comes back as a candidate for it.
    pub fn after_model(
        &self,
        pending: PendingCall,
        request: &Request,
        outcome: &Result<(Response, Usage)>,
        latency: std::time::Duration,
        cached: bool,
    ) -> (CallNotes, Option<CacheCandidate>) {
        let usage = outcome.as_ref().ok().map(|(_, usage)| *usage);
        if let Ok((response, _)) = outcome {
            self.keep_answer(&response.content);
        }
        let cost = match (usage, &pending.model) {
            (Some(usage), Some(model)) if !cached && pending.provider != "replay" => {
                self.prices().get(model).map(|price| {
                    price.cost(
                        usage.input_tokens,
                        usage.output_tokens,
                        usage.cached_input_tokens,
                        usage.cache_write_tokens,
                    )
                })
            }
            _ => None,
        };
        if !cached {
            let mut spent = self.spent.get();
            spent.calls += 1;
            spent.add(usage.unwrap_or_default(), cost);
            self.spent.set(spent);
            for budget in &pending.budgets {
                budget.charge(usage.unwrap_or_default(), cost);
            }
        }
        let candidate = self.log_model_call(pending, request, outcome, latency, cost, cached);
        (CallNotes { cost, cached }, candidate)
    }

    /// Logs the call; the row gets its cache key only when the answer is accepted.
    fn log_model_call(
        &self,
        pending: PendingCall,
        request: &Request,
        outcome: &Result<(Response, Usage)>,
        latency: std::time::Duration,
        cost: Option<f64>,
        cached: bool,
    ) -> Option<CacheCandidate> {
        let log = self.log()?;
        self.mark_ancestors(pending.parent);
        log.learn_secrets(&pending.secrets);
        let (answer, usage) = match outcome {
            Ok((response, usage)) => (Some(response.content.clone()), Some(*usage)),
            Err(_) => (None, None),
        };
        let candidate = match (outcome, &answer, &pending.cache_key) {
            (Ok((response, _)), Some(answer), Some(key))
                if !cached && cacheable(request, response) =>
            {
                Some(CacheCandidate {
                    seq: pending.seq,
                    key: key.clone(),
                    answer: CachedAnswer {
                        content: answer.clone(),
                        input_tokens: usage.map(|u| u.input_tokens),
                        output_tokens: usage.map(|u| u.output_tokens),
                        finish_reason: response.finish_reason.clone(),
                    },
                })
            }
            _ => None,
        };
        log.record(CallRow {
            run_id: log.run_id().to_owned(),
            seq: pending.seq,
            parent: pending.parent,
            kind: CallKind::Model,
            task: request.task.clone(),
            provider: Some(pending.provider),
            model: pending.model,
            options: Some(logged_options(request)),
            messages: Some(logged_messages(request)),
            answer,
            tool_calls: logged_tool_calls(outcome),
            input_tokens: usage.map(|u| u.input_tokens),
            output_tokens: usage.map(|u| u.output_tokens),
            cached_input_tokens: usage.map(|u| u.cached_input_tokens),
            cache_write_tokens: usage.map(|u| u.cache_write_tokens),
            latency_ms: Some(latency.as_secs_f64() * 1000.0),
            cost,
            status: status(outcome).to_owned(),
            error: outcome.as_ref().err().map(Error::to_json),
            cache_hit: cached,
            cache_key: None,
            started_ms: pending.started_ms,
            finish_reason: outcome
                .as_ref()
                .ok()
                .and_then(|(response, _)| response.finish_reason.clone()),
            reasoning: outcome
                .as_ref()
                .ok()
                .and_then(|(response, _)| response.reasoning.clone()),
        });
        candidate
    }

    /// The task call in progress reached outside the program (an MCP server's tool): it
    /// and the calls around it get rows when they end, as around a model call.
    pub fn mark_external_call(&self, scope: &RefCell<Scope>) {
        self.mark_ancestors(scope.borrow().call);
    }

    /// The task calls around a model call get rows when they end.
    fn mark_ancestors(&self, mut parent: Option<u64>) {
        let mut open = self.open_tasks.borrow_mut();
        while let Some(task) = parent.and_then(|seq| open.get_mut(&seq)) {
            if task.has_model_calls {
                break;
            }
            task.has_model_calls = true;
            parent = task.parent;
        }
    }

    /// The next call's number: the log's, which every thread of a run shares (without
    /// a log, numbers are never seen).
    fn next_seq(&self) -> u64 {
        self.log.borrow().as_ref().map_or(0, |log| log.next_seq())
    }

    fn prices(&self) -> &Prices {
        self.prices.get_or_init(|| {
            Prices::load(&|name| std::env::var(name).ok().filter(|v| !v.is_empty()))
        })
    }
}

fn status<T>(outcome: &Result<T>) -> &'static str {
    match outcome {
        Ok(_) => "ok",
        Err(e) if e.reason() == Some("execution_halted") => "interrupted",
        Err(_) => "error",
    }
}

/// The messages as sent, in the form a procedure provider sees them.
fn logged_messages(request: &Request) -> Json {
    Json::Array(request.messages.iter().map(Message::to_json).collect())
}

/// The model options in force, with the JSON mode and the round.
fn logged_options(request: &Request) -> Json {
    let mut options = request.options.to_map();
    options.insert("json_mode".into(), json!(request.json_mode));
    options.insert("round".into(), json!(request.round));
    Json::Object(options)
}

/// The tools the model asked for, when it asked for any.
fn logged_tool_calls(outcome: &Result<(Response, Usage)>) -> Option<Json> {
    let (response, _) = outcome.as_ref().ok()?;
    (!response.tool_calls.is_empty())
        .then(|| Json::Array(response.tool_calls.iter().map(ToolCall::to_json).collect()))
}

/// Whether the cache may keep an answer: not a tool call, to a request that offered no
/// tools. (A cut-off answer is kept with its stop reason, so it comes back marked.)
fn cacheable(request: &Request, response: &Response) -> bool {
    request.tools.is_empty() && response.tool_calls.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_refuses_the_call_after_its_last() {
        let budget = Budget::new(BudgetLimits {
            calls: Some(2),
            ..BudgetLimits::default()
        });
        for _ in 0..2 {
            budget.check().unwrap();
            budget.count_call();
        }
        let e = budget.check().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ResourceExhaustion);
        assert_eq!(e.details()["resource"], "budget");
        assert_eq!(
            (e.details()["used"].clone(), e.details()["limit"].clone()),
            (json!(2), json!(2))
        );
    }

    #[test]
    fn a_budget_in_usd_or_tokens_stops_once_spent() {
        let budget = Budget::new(BudgetLimits {
            usd: Some(0.01),
            tokens: Some(100),
            calls: None,
        });
        budget.check().unwrap();
        budget.charge(Usage::new(10, 10), Some(0.02));
        assert_eq!(budget.check().unwrap_err().details()["unit"], "usd");
        let tokens = Budget::new(BudgetLimits {
            tokens: Some(100),
            ..BudgetLimits::default()
        });
        tokens.charge(Usage::new(60, 40), None);
        assert_eq!(tokens.check().unwrap_err().details()["unit"], "tokens");
    }

    #[test]
    fn answers_are_kept_only_when_asked_the_last_ones_cut_short() {
        let observer = Observer::default();
        observer.keep_answer("unseen");
        assert!(observer.answers().is_empty());
        observer.keep_answers();
        for n in 0..10 {
            observer.keep_answer(&format!("answer {n}"));
        }
        observer.keep_answer(&"x".repeat(KEPT_ANSWER_CHARS + 10));
        let kept = observer.answers();
        assert_eq!(kept.len(), KEPT_ANSWERS);
        assert_eq!(kept[0], "answer 3");
        assert_eq!(
            kept[7].chars().count(),
            KEPT_ANSWER_CHARS + 1,
            "cut, with an ellipsis"
        );
    }
}
