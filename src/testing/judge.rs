//! `expect-judge`: asks a model whether a value meets a rubric. The request goes to the
//! current provider (so a cassette replays it, and a procedure provider can stand in
//! for the judge) with the judge model, and must be answered by a JSON verdict
//! `{"pass": bool, "reason": "…"}`.

use crate::env::Env;
use crate::error::{Error, Result};
use crate::eval::Interp;
use crate::provider::message::single_turn;
use crate::provider::Request;
use crate::task::lossy_json;
use crate::value::Value;
use serde_json::{json, Value as Json};

/// The task name judge requests carry, so a cassette or a provider can tell them apart.
pub const JUDGE_TASK: &str = "expect-judge";

const JUDGE_SYSTEM: &str = "You are a strict test judge. You are given a rubric and an \
output. Decide whether the output meets the rubric. Answer with only a JSON object: \
{\"pass\": true or false, \"reason\": \"one sentence\"}.";

pub struct Answer {
    pub pass: bool,
    pub reason: String,
}

pub fn ask(interp: &Interp, env: &Env, value: &Value, rubric: &str) -> Result<Answer> {
    let output = match value {
        Value::Str(s) => s.to_string(),
        other => lossy_json(other).to_string(),
    };
    let mut params = serde_json::Map::new();
    params.insert("rubric".into(), json!(rubric));
    params.insert("output".into(), json!(output));
    let prompt = format!("Rubric:\n{rubric}\n\nOutput:\n{output}");
    let request = Request {
        task: JUDGE_TASK.to_owned(),
        system: Some(JUDGE_SYSTEM.to_owned()),
        messages: single_turn(Some(JUDGE_SYSTEM), &prompt),
        prompt,
        model: super::Tests::of(interp).judge_model(),
        params,
        round: 1,
        json_mode: true,
        ..Request::default()
    };
    let sent = crate::task::send(interp, &request, env, None, false)?;
    let verdict = parse_verdict(&sent.response.content)?;
    interp
        .tasks
        .observer
        .passed(&interp.state.task.observe, sent.candidate);
    Ok(verdict)
}

/// Reads `{"pass": bool, "reason": …}`, with the repairs a task's JSON answer gets (a
/// code fence, text around it, trailing commas…); anything else is an `INVALID_OUTPUT`
/// quoting the answer.
fn parse_verdict(answer: &str) -> Result<Answer> {
    let verdict = crate::task::lenient::parse(answer, false)
        .ok()
        .map(|p| p.value);
    let pass = verdict.as_ref().and_then(|v| v.get("pass")?.as_bool());
    match (pass, verdict) {
        (Some(pass), Some(verdict)) => Ok(Answer {
            pass,
            reason: match verdict.get("reason") {
                Some(Json::String(reason)) => reason.clone(),
                Some(Json::Null) | None => String::new(),
                Some(other) => other.to_string(),
            },
        }),
        _ => Err(Error::new(
            crate::error::ErrorKind::InvalidOutput,
            format!(
                "the judge answered {:?}, not {{\"pass\": true|false, \"reason\": …}}",
                crate::value::truncate_text(answer, 200)
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verdict_is_read_with_the_repairs_task_answers_get() {
        let a = parse_verdict(r#"{"pass": true, "reason": "short"}"#).unwrap();
        assert!(a.pass);
        assert_eq!(a.reason, "short");
        let b = parse_verdict("```json\n{\"pass\": false}\n```").unwrap();
        assert!(!b.pass);
        assert_eq!(b.reason, "");
        let c = parse_verdict("Verdict: {'pass': true, 'reason': 'ok',}").unwrap();
        assert!(c.pass);
        assert_eq!(c.reason, "ok");
    }

    #[test]
    fn an_answer_that_is_no_verdict_is_invalid_output_quoting_it() {
        for answer in ["yes", r#"{"pass": "yes"}"#, "[true]", ""] {
            let e = parse_verdict(answer).err().unwrap();
            assert_eq!(e.kind().code(), "INVALID_OUTPUT", "{answer}");
            assert!(e.message().contains("the judge answered"), "{answer}");
        }
    }
}
