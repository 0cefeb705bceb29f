//! The arguments of a tool call, any text (JSON or not), checked against the parameter
//! schemas of two tools: a message of at most 1 KiB, or arguments that are an object of
//! the tool's parameters, each of its declared type, the required ones present.
#![no_main]
use libfuzzer_sys::fuzz_target;
use serde_json::Value as Json;
use std::rc::Rc;
use tasklisp::internals::task::tools::{
    check_arguments, parameters_schema, MAX_ARGUMENT_ERROR_BYTES,
};
use tasklisp::internals::task::Task;
use tasklisp::{Interp, Limits, Value};

const TOOLS: &str = r#"
    (deftask typed (s i n b a o (opt 1))
      :param-types {"i" "integer" "n" "number" "b" "boolean" "a" "array" "o" "object"}
      (list s i n b a o opt))
    (deftask plain (x) x)
    [typed plain]"#;

thread_local! {
    static TASKS: Vec<Rc<Task>> = Interp::new(Limits::default())
        .and_then(|interp| interp.run_source("tools", TOOLS))
        .ok()
        .and_then(|tools| tools.as_list().map(|list| list.iter().collect::<Vec<_>>()))
        .unwrap_or_default()
        .into_iter()
        .filter_map(|tool| match tool {
            Value::Task(task) => Some(task),
            _ => None,
        })
        .collect();
}

/// Whether `value` is of the JSON Schema type `kind` (an integer may be written 1.0).
fn of_type(value: &Json, kind: &str) -> bool {
    match kind {
        "string" => value.is_string(),
        "integer" => {
            value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        _ => false,
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // What the providers make of arguments that are not JSON: the raw text.
    let arguments = serde_json::from_str(text).unwrap_or_else(|_| Json::String(text.to_owned()));
    TASKS.with(|tasks| {
        assert_eq!(tasks.len(), 2, "the tools are defined");
        for tool in tasks {
            match check_arguments(&parameters_schema(tool), &arguments) {
                Err(message) => assert!(
                    message.len() <= MAX_ARGUMENT_ERROR_BYTES,
                    "{} bytes",
                    message.len()
                ),
                Ok(()) => {
                    let given = arguments
                        .as_object()
                        .expect("accepted arguments are an object");
                    for param in &tool.params {
                        let name = param.name.name();
                        let kind = tool.param_types.get(name).map_or("string", String::as_str);
                        match given.get(name) {
                            Some(value) => assert!(of_type(value, kind), "{name}: {value}"),
                            None => assert!(param.default.is_some(), "{name} is required"),
                        }
                    }
                    let known = |key: &String| tool.params.iter().any(|p| p.name.name() == key);
                    assert!(given.keys().all(known), "only parameters: {given:?}");
                }
            }
        }
    });
});
