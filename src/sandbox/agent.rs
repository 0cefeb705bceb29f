//! `code-agent`: the model writes code toward a goal, step by step. Each answer is
//! checked (its problems go back without running it), then run in one child
//! interpreter that keeps its definitions from step to step; what it printed and its
//! value or error go back, until the code calls `final-answer` or the steps run out.

use super::check::check;
use super::child::{Ran, Sandbox, Spec};
use super::grammar::{code_of, READER_GBNF};
use super::FinalAnswer;
use crate::builtins::{split_options, str_arg, type_error, Options};
use crate::error::{Error, Result};
use crate::eval::env::Env;
use crate::eval::Interp;
use crate::provider::{Message, Request};
use crate::task::result::task_result;
use crate::task::{send, Task};
use crate::value::bounds::never_stop;
use crate::value::{from_json, to_json_text, truncate_text, write_string};
use crate::value::{Entries, Value};
use std::rc::Rc;

const OPTIONS: &[&str] = &[
    "tools",
    "max-steps",
    "allow",
    "model",
    "system",
    "fuel",
    "timeout",
    "max-memory",
];

const DEFAULT_MAX_STEPS: i64 = 8;

/// The longest output or value shown to the model, in characters.
const MAX_OBSERVATION: usize = 4_000;

/// What the model is told before the goal.
const INSTRUCTIONS: &str = "You reach the goal you are given by writing tasklisp code: \
S-expressions in a Lisp with `define`, `fn`, `let`, `if`, `cond`, `map`, `filter`, \
`reduce`, maps `{\"key\" value}`, `get`, `str`, `print`. Answer with code only, as bare \
forms. Each answer is checked and run; you are then shown what it printed and its value \
or error. Definitions carry from one answer to the next. When you know the answer, call \
`(final-answer x)` with it. For example, to the goal \"What is 2 plus 3?\" you answer \
(final-answer (+ 2 3))";

/// What one `code-agent` call was asked.
struct Agent {
    goal: String,
    tools: Vec<Rc<Task>>,
    max_steps: i64,
    model: Option<String>,
    system: String,
}

pub fn code_agent(interp: &Interp, args: &[Value], env: &Env) -> Result<Value> {
    let (rest, options) = split_options("code-agent", args, OPTIONS)?;
    let [goal] = rest else {
        return Err(Error::eval("code-agent: expected the goal, then options"));
    };
    let goal = str_arg("code-agent", goal)?.to_owned();
    let agent = read_options(interp, goal, &options)?;
    let spec = Spec::parse("code-agent", interp, &sandbox_options(&options))?;
    let spec = Spec {
        tasks: agent.tools.clone(),
        ..spec
    };
    let sandbox = Sandbox::new(interp, &spec)?;
    let observer = &interp.tasks.observer;
    let scope = &interp.state.task.observe;
    let seq = observer.begin_task(scope, "code-agent");
    let outcome = agent.run(interp, &sandbox, env);
    observer.end_task(scope, seq, &outcome);
    outcome
}

/// `:allow` and the limits, under the names `eval-sandboxed` reads them by.
fn sandbox_options(options: &Options) -> Options {
    let keep = ["allow", "fuel", "timeout", "max-memory"];
    options
        .iter()
        .filter(|(name, _)| keep.contains(name))
        .cloned()
        .collect()
}

fn read_options(interp: &Interp, goal: String, options: &Options) -> Result<Agent> {
    let mut agent = Agent {
        goal,
        tools: Vec::new(),
        max_steps: DEFAULT_MAX_STEPS,
        model: None,
        system: String::new(),
    };
    for (option, value) in options {
        match *option {
            "tools" => agent.tools = super::child::tasks_arg("code-agent", interp, value)?,
            "max-steps" => match value {
                Value::Int(n) if *n > 0 => agent.max_steps = *n,
                other => return Err(type_error("code-agent", "a positive :max-steps", other)),
            },
            "model" => agent.model = Some(str_arg("code-agent", value)?.to_owned()),
            "system" => agent.system = str_arg("code-agent", value)?.to_owned(),
            _ => {}
        }
    }
    Ok(agent)
}

impl Agent {
    /// The system prompt: the instructions, the tools, then the caller's `:system`.
    fn system_prompt(&self) -> String {
        let mut text = INSTRUCTIONS.to_owned();
        if !self.tools.is_empty() {
            text.push_str("\n\nTools you can call as functions (each returns a TaskResult map; its \"content\" is the answer):");
            for tool in &self.tools {
                text.push_str(&format!("\n- {}", tool_line(tool)));
            }
        }
        if !self.system.is_empty() {
            text.push_str("\n\n");
            text.push_str(&self.system);
        }
        text
    }

    fn run(&self, interp: &Interp, sandbox: &Sandbox, env: &Env) -> Result<Value> {
        let system = self.system_prompt();
        let mut messages = vec![Message::system(system.clone()), Message::user(&self.goal)];
        let mut steps = Vec::new();
        for round in 1..=self.max_steps {
            let observer = &interp.tasks.observer;
            let scope = &interp.state.task.observe;
            let seq = observer.begin_task(scope, &format!("code-agent step {round}"));
            let step = self.step(interp, sandbox, env, &system, &messages, round);
            observer.end_task(scope, seq, &step);
            let step = step?;
            messages.push(Message::assistant(step.answer.clone()));
            messages.push(Message::user(step.feedback.clone()));
            steps.push(Value::map(step.entries));
            if let Some(answer) = step.final_answer {
                return Ok(finished(answer, steps));
            }
        }
        Ok(continuation(steps))
    }

    /// Asks for code, checks it, runs it if it has no problems.
    fn step(
        &self,
        interp: &Interp,
        sandbox: &Sandbox,
        env: &Env,
        system: &str,
        messages: &[Message],
        round: i64,
    ) -> Result<Step> {
        let request = Request {
            task: "code-agent".into(),
            system: Some(system.to_owned()),
            prompt: messages
                .last()
                .map(|m| m.content.clone())
                .unwrap_or_default(),
            model: self.model.clone(),
            round: round as u32,
            messages: messages.to_vec(),
            grammar: Some(READER_GBNF.to_owned()),
            grammar_optional: true,
            ..Request::default()
        };
        let answered = send(interp, &request, env, None, false)?;
        let observer = &interp.tasks.observer;
        observer.passed(&interp.state.task.observe, answered.candidate);
        let answer = answered.response.content;
        let code = code_of(&answer);
        let mut entries = Entries::new();
        entries.insert(Rc::from("step"), Value::Int(round));
        entries.insert(Rc::from("code"), Value::str(&code));
        let problems = check(&sandbox.interp, &code);
        entries.insert(Rc::from("problems"), Value::list(problems.clone()));
        if !problems.is_empty() {
            return Ok(Step {
                feedback: problems_text(&problems),
                answer,
                entries,
                final_answer: None,
            });
        }
        let ran = sandbox.run(interp, &code)?;
        let feedback = observation(&ran);
        entries.insert(Rc::from("output"), Value::str(&ran.output));
        match ran.value {
            Ok(value) => entries.insert(Rc::from("value"), value),
            Err(error) => entries.insert(Rc::from("error"), from_json(&error.to_json())),
        };
        let final_answer = FinalAnswer::take(&sandbox.interp)
            .map(|x| super::copy_out(&x))
            .transpose()?;
        Ok(Step {
            answer,
            feedback,
            entries,
            final_answer,
        })
    }
}

/// One step: the model's answer, what goes back to it, the step's entry in
/// `notes.steps`, and the final answer if its code gave one.
struct Step {
    answer: String,
    feedback: String,
    entries: Entries,
    final_answer: Option<Value>,
}

/// How a tool is shown to the model: `(name param optional?)` and its description.
fn tool_line(tool: &Task) -> String {
    let params: Vec<String> = tool
        .params
        .iter()
        .map(|p| match p.default {
            Some(_) => format!(" {}?", p.name.name()),
            None => format!(" {}", p.name.name()),
        })
        .collect();
    let description = tool.description.as_deref().unwrap_or("");
    format!("({}{}): {description}", tool.name, params.concat())
}

/// The problems `check-code` found, as the model is told them.
fn problems_text(problems: &[Value]) -> String {
    let mut text = "Your code was not run; it has problems:".to_owned();
    for problem in problems {
        let field = |key: &str| {
            problem
                .as_map()
                .and_then(|m| m.get(key))
                .map(crate::value::display_string)
                .unwrap_or_default()
        };
        text.push_str(&format!(
            "\n- line {}, column {}: {}",
            field("line"),
            field("column"),
            field("message")
        ));
    }
    text.push_str("\nAnswer with the corrected code.");
    text
}

/// What a run printed and its value or error, as the model is told them.
fn observation(ran: &Ran) -> String {
    let mut text = String::new();
    if !ran.output.is_empty() {
        text.push_str("Output:\n");
        text.push_str(&truncate_text(&ran.output, MAX_OBSERVATION));
        text.push('\n');
    }
    match &ran.value {
        Ok(value) => {
            text.push_str("Value: ");
            text.push_str(&truncate_text(&write_string(value), MAX_OBSERVATION));
        }
        Err(error) => {
            text.push_str("Error: ");
            text.push_str(&truncate_text(&error.to_string(), MAX_OBSERVATION));
        }
    }
    text
}

/// The TaskResult of a run that reached `(final-answer x)`.
fn finished(answer: Value, steps: Vec<Value>) -> Value {
    let (content, parsed) = match &answer {
        Value::Str(text) => (text.to_string(), Value::Nil),
        data => (
            to_json_text("code-agent", data, false, &never_stop)
                .unwrap_or_else(|_| write_string(data)),
            answer.clone(),
        ),
    };
    task_result("code-agent", content, parsed, notes(steps))
}

/// The TaskResult of a run whose steps ran out: the last step's, marked
/// `CONTINUATION`.
fn continuation(steps: Vec<Value>) -> Value {
    let last = steps.last().and_then(Value::as_map).map(|step| {
        step.get("value")
            .or_else(|| step.get("error"))
            .or_else(|| step.get("problems"))
            .map(write_string)
            .unwrap_or_default()
    });
    let result = task_result(
        "code-agent",
        last.unwrap_or_default(),
        Value::Nil,
        notes(steps),
    );
    crate::task::result::with_entry(&result, "status", Value::from("CONTINUATION"))
}

fn notes(steps: Vec<Value>) -> Entries {
    let mut notes = Entries::new();
    notes.insert(Rc::from("iterations"), Value::Int(steps.len() as i64));
    notes.insert(Rc::from("steps"), Value::list(steps));
    notes
}
