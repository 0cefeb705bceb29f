//! The provider session: which provider atomic tasks talk to, and what they have used.

use super::blocking::{in_fiber, run_model};
use super::definition::lossy_json;
use super::metrics::{estimate_tokens, Metrics};
use super::observe::CallNotes;
use super::result::STATUSES;
use super::sink::{StreamTo, TextSink};
use crate::capabilities::Capabilities;
use crate::env::Env;
use crate::error::{Error, Reason, Result};
use crate::eval::Interp;
use crate::provider::{Cancel, Echo, Provider, Request, Response, Usage};
use crate::secrets::Secrets;
use crate::value::{from_json, to_json, write_string, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A provider: native (Rust, may run on a worker thread) or a procedure of the program.
#[derive(Clone)]
pub enum ProviderChoice {
    Native(Arc<dyn Provider>),
    Procedure(Value),
}

impl ProviderChoice {
    /// Reads a provider the program names: a procedure of one argument (the request), a
    /// provider name (`"echo"`, `:openai`, …) with an optional options map, or one map
    /// naming its provider (`{"provider" "openai" "model" …}`).
    /// A provider chosen by name must be one `capabilities` allows.
    pub fn from_value(value: &Value, capabilities: &Capabilities) -> Result<ProviderChoice> {
        ProviderChoice::from_spec(value, None, capabilities)
    }

    pub fn from_spec(
        value: &Value,
        options: Option<&Value>,
        capabilities: &Capabilities,
    ) -> Result<ProviderChoice> {
        let name = match value {
            v if v.is_procedure() => return Ok(ProviderChoice::Procedure(v.clone())),
            Value::Str(name) => name.to_string(),
            Value::Keyword(k) | Value::Symbol(k) => k.name().to_owned(),
            Value::Map(m) if options.is_none() => match m.get("provider") {
                Some(Value::Str(name)) => {
                    capabilities.check_provider(name)?;
                    return ProviderChoice::native(name, &to_json(value)?);
                }
                _ => return Err(Error::eval("a provider map needs a \"provider\" name")),
            },
            other => {
                return Err(Error::eval(format!(
                    "a provider is a procedure (fn (request) …) or a provider name, not {}",
                    write_string(other)
                )))
            }
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
        ProviderChoice::native(&name, &options)
    }

    /// The provider's name: a native provider's own, `procedure` for one of the program.
    pub fn name(&self) -> String {
        match self {
            ProviderChoice::Native(provider) => provider.name().to_owned(),
            ProviderChoice::Procedure(_) => "procedure".to_owned(),
        }
    }

    fn native(name: &str, options: &serde_json::Value) -> Result<ProviderChoice> {
        let mut options = options.clone();
        if let Some(map) = options.as_object_mut() {
            map.remove("provider");
        }
        crate::provider::from_language(name, &options).map(ProviderChoice::Native)
    }
}

pub struct Session {
    pub provider: ProviderChoice,
    pub metrics: Metrics,
}

impl Session {
    pub fn new(provider: ProviderChoice, metrics: Metrics) -> Session {
        Session { provider, metrics }
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
    let request_tokens =
        estimate_tokens(request.system.as_deref().unwrap_or("")) + estimate_tokens(&request.prompt);
    let provider = interp.check_turn(request_tokens)?;
    let (name, model, secrets) = match &provider {
        ProviderChoice::Native(p) => (p.name(), p.default_model(), p.secrets()),
        ProviderChoice::Procedure(_) => ("procedure", None, Secrets::default()),
    };
    let model = request.model.as_deref().or(model);
    let observer = &interp.tasks.observer;
    let (pending, cached) = observer.before_model(
        interp.state.observe.borrow().clone(),
        request,
        name,
        secrets,
        model,
        cache,
    )?;
    let was_cached = cached.is_some();
    let resumable = pending.caching();
    let streaming = streams_here(interp);
    let (outcome, latency) = match cached {
        Some(answer) => (
            Ok(Response {
                content: answer.content,
                usage: answer.input_tokens.zip(answer.output_tokens).map(
                    |(input_tokens, output_tokens)| Usage {
                        input_tokens,
                        output_tokens,
                    },
                ),
                ..Response::default()
            })
            .inspect(|response| show_whole(streaming, response)),
            Duration::ZERO,
        ),
        None => ask(
            interp, &provider, request, env, deadline, resumable, streaming,
        ),
    };
    let outcome = outcome.map(|response| {
        let usage = response.usage.unwrap_or(Usage {
            input_tokens: request_tokens,
            output_tokens: estimate_tokens(&response.content),
        });
        (response, usage)
    });
    let notes = observer.after_model(pending, request, &outcome, latency, was_cached);
    let (response, usage) = outcome?;
    if !was_cached {
        interp.record_turn(usage.input_tokens.saturating_add(usage.output_tokens))?;
    }
    interp.check_interrupt()?;
    Ok(Sent { response, notes })
}

/// Where this call's answer is shown as it arrives: when streaming is on, for an atomic
/// task called at the top level (not inside another task, not in a `pmap` item).
fn streams_here(interp: &Interp) -> Option<StreamTo> {
    interp
        .tasks
        .streaming()
        .filter(|_| interp.state.task_depth.get() <= 1 && !in_fiber(interp))
}

/// Shows an answer that did not stream (a procedure's, the cache's) whole.
fn show_whole(streaming: Option<StreamTo>, response: &Response) {
    if let Some(to) = streaming {
        let mut sink = TextSink::new(to);
        sink.write(&response.content);
        sink.end();
    }
}

/// Asks the provider; returns its answer and how long it took. `resumable`: the cache
/// is on for this call, so a batch job it waits in may be one an earlier run submitted;
/// `streaming`: where to show the answer as it arrives.
fn ask(
    interp: &Interp,
    provider: &ProviderChoice,
    request: &Request,
    env: &Env,
    deadline: Option<Instant>,
    resumable: bool,
    streaming: Option<StreamTo>,
) -> (Result<Response>, Duration) {
    match provider {
        ProviderChoice::Native(provider) => {
            let cancel = Cancel {
                flag: interp.interrupt_flag(),
                deadline,
            };
            interp.flush();
            let started = Instant::now();
            let outcome = match streaming {
                Some(to) => {
                    let mut sink = TextSink::new(to);
                    let streamed =
                        provider.stream(request, &cancel, &mut |piece| sink.write(piece));
                    sink.end();
                    streamed
                }
                None => run_model(interp, provider.clone(), request.clone(), cancel, resumable),
            };
            (outcome, started.elapsed())
        }
        ProviderChoice::Procedure(f) => {
            let started = Instant::now();
            let outcome = interp
                .apply(f, &[from_json(&request.to_json())], env)
                .and_then(|answer| response_from_value(&answer))
                .inspect(|response| show_whole(streaming, response));
            (outcome, started.elapsed())
        }
    }
}

/// What a procedure provider returns: the content string, or
/// `{"content" … "usage" {"input_tokens" n "output_tokens" n}}`.
fn response_from_value(answer: &Value) -> Result<Response> {
    let bad = || {
        Error::task_failure(
            Reason::LlmError,
            format!(
                "the provider returned {}: expected a string or {{\"content\" …}}",
                crate::eval::truncate_text(&write_string(answer), 80)
            ),
        )
    };
    match answer {
        Value::Str(s) => Ok(Response {
            content: s.to_string(),
            usage: None,
            ..Default::default()
        }),
        Value::Map(map) => {
            let content = map.get("content").and_then(Value::as_str).ok_or_else(bad)?;
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
            Ok(Response {
                content: content.to_owned(),
                usage,
                status,
                criteria: map.get("criteria").map(lossy_json),
            })
        }
        _ => Err(bad()),
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
