//! Lossless conversion between values and JSON (serde_json).

use super::{Entries, List, Value};
use crate::bounds::Budget;
use crate::error::{Error, Result};
use serde_json::{Map as JsonMap, Number, Value as Json};
use std::rc::Rc;

/// Nodes one conversion to JSON may make: a JSON tree takes several times the memory
/// of the values it is made from.
const MAX_JSON_NODES: u64 = 1 << 22;

/// JSON nested deeper than this is refused rather than recursed into.
const MAX_JSON_DEPTH: usize = 10_000;

pub fn from_json(json: &Json) -> Value {
    match json {
        Json::Null => Value::Nil,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => match n.as_i64() {
            Some(i) => Value::Int(i),
            None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Json::String(s) => Value::str(s.as_str()),
        Json::Array(items) => Value::from(items.iter().map(from_json).collect::<List>()),
        Json::Object(map) => {
            let entries: Entries = map
                .iter()
                .map(|(k, v)| (Rc::from(k.as_str()), from_json(v)))
                .collect();
            Value::map(entries)
        }
    }
}

/// Data to JSON. Symbols and keywords become their names; procedures have no JSON form.
/// JSON has no sharing, so data that shares structure is refused past a node budget.
pub fn to_json(value: &Value) -> Result<Json> {
    convert(
        value,
        0,
        &mut Budget::for_value("JSON", MAX_JSON_NODES, value),
    )
}

fn convert(value: &Value, depth: usize, budget: &mut Budget) -> Result<Json> {
    budget.visit()?;
    if depth > MAX_JSON_DEPTH {
        return Err(Error::resource(
            "depth",
            depth as u64,
            MAX_JSON_DEPTH as u64,
            "data nested too deeply to convert to JSON",
        ));
    }
    Ok(match value {
        Value::Nil => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(i) => Json::Number((*i).into()),
        Value::Float(f) => Json::Number(
            Number::from_f64(*f)
                .ok_or_else(|| Error::eval(format!("cannot represent {f} in JSON")))?,
        ),
        Value::Str(s) => Json::String(s.to_string()),
        Value::Symbol(_) | Value::Keyword(_) | Value::DataSymbol(_) | Value::DataKeyword(_) => {
            Json::String(
                value
                    .symbol_or_keyword_name()
                    .unwrap_or_default()
                    .to_owned(),
            )
        }
        Value::List(..) => {
            let list = value.as_list().unwrap_or_default();
            let mut items = Vec::with_capacity(list.len());
            for item in list.iter() {
                items.push(convert(&item, depth + 1, budget)?);
            }
            Json::Array(items)
        }
        Value::Map(map) => {
            let mut out = JsonMap::new();
            for (k, v) in &map.entries {
                out.insert(k.to_string(), convert(v, depth + 1, budget)?);
            }
            Json::Object(out)
        }
        Value::Task(task) => task.describe_json(),
        other => {
            return Err(Error::eval(format!(
                "cannot convert a {} to JSON",
                other.type_name()
            )))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_keeps_order_and_types() {
        let text = r#"{"z":1,"a":[1,2.5,null,true,"x"],"m":{}}"#;
        let json: Json = serde_json::from_str(text).expect("valid");
        let value = from_json(&json);
        let back = to_json(&value).expect("convertible");
        assert_eq!(back.to_string(), text);
    }

    #[test]
    fn nan_is_refused() {
        assert!(to_json(&Value::Float(f64::NAN)).is_err());
    }
}
