//! The provider session: which provider atomic tasks talk to, and what they have used.

use super::blocking::run_model;
use super::definition::lossy_json;
use super::journal;
use super::metrics::{estimate_tokens, Metrics};
use super::observe::{CacheCandidate, CallNotes};
use super::result::STATUSES;
use super::sink::{StreamTo, TextSink};
use crate::capabilities::Capabilities;
use crate::error::{Error, Reason, Result};
use crate::eval::env::Env;
use crate::eval::fiber::{in_fiber, run_blocking};
use crate::eval::Interp;
use crate::interrupt::Cancel;
use crate::provider::cassette::{response_from_json, response_to_json};
use crate::provider::message::tool_call_from_json;
use crate::provider::rate::RateLimit;
use crate::provider::request_key::{canonical_request, Target};
use crate::provider::{Echo, ModelOptions, Provider, Request, Response, ToolCall, Usage};
use crate::secrets::Secrets;
use crate::value::{from_json, to_json, write_string, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A provider: native (Rust, may run on a worker thread) or a procedure of the program.
#[derive(Clone)]
pub enum ProviderChoice {
    Native(Arc<dyn Provider>),
    Procedure(Value),
    /// `with-fallback`, `--fallback`: each request goes to the first that answers.
    Fallback(Vec<ProviderChoice>),
}

impl ProviderChoice {
    /// Reads a provider the program names: a procedure of one argument (the request), a
    /// provider name (`"echo"`, `:openai`, …) with an optional options map, or one map
    /// naming its provider (`{"provider" "openai" "model" …}`).
    /// A provider chosen by name must be one `capabilities` allows.
    pub fn from_value(value: &Value, capabilities: &Capabilities) -> Result<ProviderChoice> {
        ProviderChoice::from_spec(value, None, capabilities)
    }

    /// How `notes.provider` names it.
    pub fn name(&self) -> String {
        self.identity().provider
    }

    /// Its name, server and default model, as the run log and the cache key record
    /// them; a fallback chain's are its first provider's until another answers.
    fn identity(&self) -> Target {
        match self {
            ProviderChoice::Native(p) => Target {
                provider: p.name().to_owned(),
                base_url: p.base_url().map(str::to_owned),
                model: p.default_model().map(str::to_owned),
            },
            ProviderChoice::Procedure(_) => Target {
                provider: "procedure".to_owned(),
                ..Target::default()
            },
            ProviderChoice::Fallback(chain) => chain.first().map_or(
                Target {
                    provider: "fallback".to_owned(),
                    ..Target::default()
                },
                ProviderChoice::identity,
            ),
        }
    }

    /// The values the run log must never show: every native provider's keys (all of a
    /// fallback chain's, as any of them may answer).
    fn secrets(&self) -> Secrets {
        match self {
            ProviderChoice::Native(p) => p.secrets(),
            ProviderChoice::Procedure(_) => Secrets::default(),
            ProviderChoice::Fallback(chain) => chain
                .iter()
                .fold(Secrets::default(), |all, p| all.with(&p.secrets())),
        }
    }

    pub fn from_spec(
        value: &Value,
        options: Option<&Value>,
        capabilities: &Capabilities,
    ) -> Result<ProviderChoice> {
        let name = match value {
            v if v.is_procedure() => return Ok(ProviderChoice::Procedure(v.clone())),
            Value::Map(m) if options.is_none() => match m.get("provider") {
                Some(Value::Str(name)) => {
                    capabilities.check_provider(name)?;
                    let mut options = to_json(value)?;
                    if let Some(map) = options.as_object_mut() {
                        map.remove("provider");
                    }
                    return ProviderChoice::native(name, &options, capabilities);
                }
                _ => return Err(Error::eval("a provider map needs a \"provider\" name")),
            },
            other => match other.name_text() {
                Some(name) => name.to_owned(),
                None => {
                    return Err(Error::eval(format!(
                        "a provider is a procedure (fn (request) …) or a provider name, not {}",
                        write_string(other)
                    )))
                }
            },
        };
        capabilities.check_provider(&name)?;
        if name == "echo" && options.is_none() {
            return Ok(ProviderChoice::Native(Arc::new(Echo)));
        }
        let options = match options {
            Some(o @ Value::Map(_)) => to_json(o)?,
            Some(Value::Nil) | None => serde_json::json!({}),
            Some(other) => {
                return Err(Error::eval(format!(
                    "provider options are a map, not {}",
                    write_string(other)
                )))
            }
        };
        ProviderChoice::native(&name, &options, capabilities)
    }

    /// `options` go to the provider as they are: for `record` its `"provider"` names
    /// the provider recorded. What it reaches (a server, a key, a cassette) must be
    /// what `capabilities` allows.
    fn native(
        name: &str,
        options: &serde_json::Value,
        capabilities: &Capabilities,
    ) -> Result<ProviderChoice> {
        crate::provider::from_language(name, options, capabilities).map(ProviderChoice::Native)
    }
}

pub struct Session {
    pub provider: ProviderChoice,
    pub metrics: Metrics,
    /// Options given with the provider (`set-provider! p :temperature 0`).
    pub provider_options: ModelOptions,
    /// Options of the enclosing `with-provider` blocks, the innermost winning.
    pub scope_options: ModelOptions,
    /// The base system prompt (`set-provider! p :system "…"`) put before each task's.
    pub base_system: Option<String>,
    /// `:rate-limit`: shared by every call through this session, `pmap` items included.
    pub rate: Option<Arc<RateLimit>>,
}

impl Session {
    pub fn new(provider: ProviderChoice, metrics: Metrics) -> Session {
        Session {
            provider,
            metrics,
            provider_options: ModelOptions::default(),
            scope_options: ModelOptions::default(),
            base_system: None,
            rate: None,
        }
    }
}

impl Default for Session {
    fn default() -> Self {
        Session::new(ProviderChoice::Native(Arc::new(Echo)), Metrics::default())
    }
}

/// A model's answer and what the call cost.
pub struct Sent {
    pub response: Response,
    pub notes: CallNotes,
    /// The model the request went to, as far as tasklisp knows it.
    pub model: Option<String>,
    /// The answer, for the cache once it passes the caller's checks (see
    /// `Observer::passed`).
    pub candidate: Option<CacheCandidate>,
}

/// Sends one request to the current provider, within the session's limits and the
/// budgets, or answers it from the cache (`cache`: the task asks for it). `env` is where
/// a procedure provider is called from. `deadline` (from the task's `:timeout`) bounds a
/// native provider's call.
pub fn send(
    interp: &Interp,
    request: &Request,
    env: &Env,
    deadline: Option<Instant>,
    cache: bool,
) -> Result<Sent> {
    let request_tokens = request_tokens(request);
    let (provider, session_options, rate) = interp.check_turn(request_tokens)?;
    let request = Request {
        options: request.options.over(&session_options),
        ..request.clone()
    };
    let mut target = provider.identity();
    target.model = request
        .model
        .clone()
        .or(target.model)
        .or_else(|| interp.flag_model());
    let secrets = provider.secrets();
    let observer = &interp.tasks.observer;
    // Made once: the journal and the cache key both start from it.
    let canonical = journal::active(interp).then(|| canonical_request(&request));
    let (step, step_request, replayed) = journal_step(interp, canonical.clone(), &secrets)?;
    let (mut pending, cached) = observer.before_model(
        interp.state.task.observe.borrow().clone(),
        (&request, canonical),
        &target,
        secrets,
        (cache, replayed.is_some()),
    )?;
    let was_cached = cached.is_some() || replayed.is_some();
    let resumable = pending.caching();
    let streaming = streams_here(interp);
    let known = replayed.or_else(|| cached.map(cached_response));
    let (outcome, latency) = match known {
        Some(response) => {
            show_whole(streaming, &response);
            (Ok(response), Duration::ZERO)
        }
        None => {
            let call = Call {
                env,
                deadline,
                rate,
                tokens: request_tokens,
                resumable,
                streaming,
            };
            let started = Instant::now();
            let outcome = ask(interp, &provider, request.clone(), &call);
            (outcome, started.elapsed())
        }
    };
    note_answer(interp, (step, &step_request), &outcome, &mut pending);
    let outcome = outcome.map(|response| {
        let usage = response.usage.unwrap_or(Usage::new(
            request_tokens,
            estimate_tokens(&response.content),
        ));
        (response, usage)
    });
    let (notes, candidate) = observer.after_model(pending, &request, &outcome, latency, was_cached);
    let (response, usage) = outcome.map_err(|e| naming_the_target(e, &target))?;
    if !was_cached {
        interp.record_turn(usage.input_tokens.saturating_add(usage.output_tokens))?;
    }
    interp.check_interrupt()?;
    Ok(Sent {
        response,
        notes,
        model: target.model,
        candidate,
    })
}

/// A live answer goes in the journal; under a fallback chain, the provider that
/// answered is the one logged.
fn note_answer(
    interp: &Interp,
    (step, step_request): (journal::Step, &serde_json::Value),
    outcome: &Result<Response>,
    pending: &mut super::observe::PendingCall,
) {
    if let (journal::Step::Live(id), Ok(response)) = (step, outcome) {
        let answer = response_to_json(response);
        journal::record(interp, id, "model", step_request, &answer);
    }
    if let Ok(Response {
        fallback: Some((answered, _)),
        ..
    }) = outcome
    {
        pending.answered_by(answered);
    }
}

/// A model call as the journal compares it: the canonical request, its messages (when
/// more than the system and prompt) as their count, a digest and the last one, so a long
/// conversation's journal grows with its turns, not with their square.
fn journal_request(mut step: serde_json::Value) -> serde_json::Value {
    if let Some(serde_json::Value::Array(messages)) = step.get("messages") {
        let text = serde_json::to_string(messages).unwrap_or_default();
        let digest = crate::digest::sha256_hex(text.as_bytes(), 16);
        let last = messages
            .last()
            .map(|m| crate::value::truncate_text(&m.get("content").unwrap_or(m).to_string(), 200));
        let summary = serde_json::json!({"count": messages.len(), "digest": digest, "last": last});
        if let Some(fields) = step.as_object_mut() {
            fields.insert("messages".into(), summary);
        }
    }
    step
}

/// The model call as a step of the journal (what it asks, when anything is journaled or
/// replayed), and the answer the journal has for it on a resume. The request is compared without the provider and model a flag chose, so a
/// resume may send the rest of the run elsewhere (a model the request names is part of
/// it).
fn journal_step(
    interp: &Interp,
    canonical: Option<serde_json::Value>,
    secrets: &Secrets,
) -> Result<(journal::Step, serde_json::Value, Option<Response>)> {
    if let Some(log) = interp.tasks.observer.log() {
        // Before the journal or the run's row is written, so both are scrubbed of them.
        log.learn_secrets(secrets);
    }
    let step_request = canonical.map_or(serde_json::Value::Null, journal_request);
    let step = journal::begin(interp, "model", &step_request)?;
    let replayed = match &step {
        journal::Step::Replayed(answer) => Some(
            response_from_json(answer)
                .map_err(|e| Error::eval(format!("a journaled answer does not read: {e}")))?,
        ),
        journal::Step::Live(_) => None,
    };
    Ok((step, step_request, replayed))
}

/// A model's failure says which provider and model it came from (`details.provider`,
/// `details.model`) unless a provider said so itself (a fallback chain names each).
fn naming_the_target(error: Error, target: &Target) -> Error {
    if error.reason() != Some("llm_error") {
        return error;
    }
    let mut error = error;
    if !error.details().contains_key("provider") {
        error = error.with_detail("provider", serde_json::json!(target.provider));
    }
    match (&target.model, error.details().contains_key("model")) {
        (Some(model), false) => error.with_detail("model", serde_json::json!(model)),
        _ => error,
    }
}

/// The estimated tokens of a request's messages.
fn request_tokens(request: &Request) -> u64 {
    request
        .messages
        .iter()
        .map(|m| estimate_tokens(&m.content))
        .sum()
}

/// A response made of an answer from the cache.
fn cached_response(answer: crate::runlog::CachedAnswer) -> Response {
    Response {
        content: answer.content,
        usage: answer
            .input_tokens
            .zip(answer.output_tokens)
            .map(|(input, output)| Usage::new(input, output)),
        finish_reason: answer.finish_reason,
        ..Response::default()
    }
}

/// How one request is sent, whichever provider it goes to.
struct Call<'e> {
    env: &'e Env,
    deadline: Option<Instant>,
    rate: Option<Arc<RateLimit>>,
    /// The request's estimated size, for a tokens-per-minute limit.
    tokens: u64,
    /// The cache is on for this call, so a batch job it waits in may be one an earlier
    /// run submitted.
    resumable: bool,
    /// Where to show the answer as it arrives.
    streaming: Option<StreamTo>,
}

/// Where this call's answer is shown as it arrives: when streaming is on, for an atomic
/// task called at the top level (not inside another task, not in a `pmap` item).
fn streams_here(interp: &Interp) -> Option<StreamTo> {
    interp
        .tasks
        .streaming()
        .filter(|_| interp.state.task.depth.get() <= 1 && !in_fiber(interp))
}

/// Shows an answer that did not stream (a procedure's, the cache's) whole.
fn show_whole(streaming: Option<StreamTo>, response: &Response) {
    if let Some(to) = streaming.filter(|to| to.shows_whole_answers()) {
        let mut sink = TextSink::new(to);
        sink.write(&response.content);
        sink.end();
    }
}

fn ask(
    interp: &Interp,
    provider: &ProviderChoice,
    mut request: Request,
    call: &Call,
) -> Result<Response> {
    let cancel = Cancel {
        flag: interp.interrupt_flag(),
        deadline: call.deadline,
    };
    match provider {
        ProviderChoice::Native(provider) => {
            if let Some(rate) = call.rate.clone() {
                let (tokens, cancel) = (call.tokens, cancel.clone());
                run_blocking(interp, move || rate.acquire(tokens, &cancel))?;
            }
            interp.flush();
            let to = call
                .streaming
                .filter(|to| to.shows_whole_answers() || provider.streams());
            match to {
                Some(to) => {
                    let mut sink = TextSink::new(to);
                    let streamed =
                        provider.stream(&request, &cancel, &mut |piece| sink.write(piece));
                    sink.end();
                    streamed
                }
                None => run_model(interp, provider.clone(), request, cancel, call.resumable),
            }
        }
        ProviderChoice::Procedure(f) => {
            if let Some(rate) = &call.rate {
                rate.acquire(call.tokens, &cancel)?;
            }
            // A native provider applies `--model` itself; a procedure is told it.
            request.model = request.model.or_else(|| interp.flag_model());
            let answer = interp.apply(f, &[from_json(&request.to_json())], call.env)?;
            response_from_value(&answer).inspect(|response| show_whole(call.streaming, response))
        }
        ProviderChoice::Fallback(chain) => ask_in_turn(interp, chain, request, call),
    }
}

/// Tries each provider of a fallback chain until one answers. A transient failure
/// (see `falls_back`) moves on to the next; any other failure is the answer.
fn ask_in_turn(
    interp: &Interp,
    chain: &[ProviderChoice],
    request: Request,
    call: &Call,
) -> Result<Response> {
    let mut failed = Vec::new();
    let mut error = Error::eval("with-fallback: no providers");
    for (index, provider) in chain.iter().enumerate() {
        match ask(interp, provider, request.clone(), call) {
            Ok(response) => {
                return Ok(Response {
                    fallback: Some((provider.name(), failed)),
                    ..response
                })
            }
            Err(e) if index + 1 < chain.len() && falls_back(&e) => {
                interp.check_interrupt()?;
                failed.push(serde_json::json!({"provider": provider.name(), "error": e.message()}));
                error = e;
            }
            Err(e) => return Err(e),
        }
    }
    Err(error)
}

/// A failure another provider might not have: no answer at all (connection, timeout,
/// a program that failed), a 5xx, a 429 or a 408 left after the provider's own retries.
/// Any other 4xx is the request's fault and would fail anywhere.
fn falls_back(error: &Error) -> bool {
    if error.reason() != Some("llm_error") {
        return false;
    }
    match error
        .details()
        .get("status")
        .and_then(serde_json::Value::as_u64)
    {
        None => true,
        Some(status) => status >= 500 || status == 429 || status == 408,
    }
}

/// What a procedure provider returns: the content string, or
/// `{"content" … "usage" {"input_tokens" n "output_tokens" n} "finish_reason" …
/// "reasoning" …}`.
fn response_from_value(answer: &Value) -> Result<Response> {
    let bad = || {
        Error::task_failure(
            Reason::LlmError,
            format!(
                "the provider returned {}: expected a string or {{\"content\" …}}",
                crate::value::write_prefix(answer, 80)
            ),
        )
    };
    match answer {
        Value::Str(s) => Ok(Response {
            content: s.to_string(),
            ..Response::default()
        }),
        Value::Map(map) => {
            let tool_calls = match map.get("tool_calls") {
                None | Some(Value::Nil) => Vec::new(),
                Some(calls) => tool_calls_from_value(calls)?,
            };
            let content = match map.get("content") {
                None | Some(Value::Nil) if !tool_calls.is_empty() => "",
                other => other.and_then(Value::as_str).ok_or_else(bad)?,
            };
            let usage = match map.get("usage") {
                Some(Value::Map(usage)) => {
                    let tokens = |key: &str| match usage.get(key) {
                        Some(Value::Int(n)) => u64::try_from(*n).map_err(|_| bad()),
                        None | Some(Value::Nil) => Ok(0),
                        Some(_) => Err(bad()),
                    };
                    Some(Usage {
                        input_tokens: tokens("input_tokens")?,
                        output_tokens: tokens("output_tokens")?,
                        cached_input_tokens: tokens("cached_input_tokens")?,
                        cache_write_tokens: tokens("cache_write_tokens")?,
                    })
                }
                None | Some(Value::Nil) => None,
                Some(_) => return Err(bad()),
            };
            let status = match map.get("status") {
                Some(Value::Str(s)) if STATUSES.contains(&s.as_str()) => Some(s.to_string()),
                None | Some(Value::Nil) => None,
                Some(_) => return Err(bad()),
            };
            let text = |key: &str| match map.get(key) {
                Some(Value::Str(text)) => Ok(Some(text.to_string())),
                None | Some(Value::Nil) => Ok(None),
                Some(_) => Err(bad()),
            };
            Ok(Response {
                content: content.to_owned(),
                usage,
                status,
                criteria: map.get("criteria").map(lossy_json),
                tool_calls,
                finish_reason: text("finish_reason")?,
                reasoning: text("reasoning")?,
                ..Response::default()
            })
        }
        _ => Err(bad()),
    }
}

/// `{"tool_calls" [{"id" … "name" … "arguments" {…}}]}` from a procedure provider.
fn tool_calls_from_value(calls: &Value) -> Result<Vec<ToolCall>> {
    let bad = |why: String| {
        Error::task_failure(
            Reason::LlmError,
            format!("the provider's \"tool_calls\" are not usable: {why}"),
        )
    };
    match to_json(calls)? {
        serde_json::Value::Array(calls) => calls
            .iter()
            .map(|call| tool_call_from_json(call).map_err(bad))
            .collect(),
        _ => Err(bad("expected a list".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Entries;
    use std::rc::Rc;

    #[test]
    fn procedure_answers_are_strings_or_content_maps() {
        assert_eq!(
            response_from_value(&Value::from("hi")).unwrap().content,
            "hi"
        );
        let mut usage = Entries::new();
        usage.insert(Rc::from("input_tokens"), Value::Int(3));
        usage.insert(Rc::from("output_tokens"), Value::Int(4));
        let mut answer = Entries::new();
        answer.insert(Rc::from("content"), Value::from("ok"));
        answer.insert(Rc::from("usage"), Value::map(usage));
        let response = response_from_value(&Value::map(answer)).unwrap();
        assert_eq!(
            response.usage.map(|u| u.input_tokens + u.output_tokens),
            Some(7)
        );
        let e = response_from_value(&Value::Int(1)).unwrap_err();
        assert_eq!(e.reason(), Some("llm_error"));
    }
}
