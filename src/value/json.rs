//! Lossless conversion between values and JSON (serde_json).

use super::{Entries, List, Value};
use crate::error::{Error, Result};
use crate::value::bounds::{check_string_length, never_stop, Budget, Poll, POLL_EVERY};
use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map as JsonMap, Number, Value as Json};
use std::cell::{Cell, RefCell};
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
    to_json_polled(value, &never_stop)
}

/// [`to_json`] that calls `poll` (the interpreter's limits) every [`POLL_EVERY`] nodes.
pub fn to_json_polled(value: &Value, poll: Poll) -> Result<Json> {
    let mut budget = Budget::for_value("JSON", MAX_JSON_NODES, value);
    convert(value, 0, &mut budget, poll)
}

fn convert(value: &Value, depth: usize, budget: &mut Budget, poll: Poll) -> Result<Json> {
    budget.visit()?;
    if budget.visited().is_multiple_of(POLL_EVERY) {
        poll()?;
    }
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
                items.push(convert(&item, depth + 1, budget, poll)?);
            }
            Json::Array(items)
        }
        Value::Map(map) => {
            let mut out = JsonMap::new();
            for (k, v) in &map.entries {
                out.insert(k.to_string(), convert(v, depth + 1, budget, poll)?);
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

/// Bytes of JSON text written between two polls.
const POLL_BYTES: usize = 1 << 16;

/// The JSON text of `value`, compact or indented, for the builtin `who`: refused past the
/// string limit as it is written, and `poll` is called while converting and writing.
pub fn to_json_text(who: &str, value: &Value, pretty: bool, poll: Poll) -> Result<String> {
    let json = to_json_polled(value, poll)?;
    let mut text = PolledText {
        who,
        bytes: Vec::new(),
        polled_at: 0,
        poll,
        stopped: None,
    };
    let written = if pretty {
        serde_json::to_writer_pretty(&mut text, &json)
    } else {
        serde_json::to_writer(&mut text, &json)
    };
    if let Some(stopped) = text.stopped {
        return Err(stopped);
    }
    written.map_err(|e| Error::eval(format!("{who}: {e}")))?;
    String::from_utf8(text.bytes).map_err(|e| Error::eval(format!("{who}: {e}")))
}

/// Collects JSON text; stops with the error kept in `stopped` once the text passes the
/// string limit or `poll` fails (checked every [`POLL_BYTES`]).
struct PolledText<'a> {
    who: &'a str,
    bytes: Vec<u8>,
    polled_at: usize,
    poll: Poll<'a>,
    stopped: Option<Error>,
}

impl std::io::Write for PolledText<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let len = self.bytes.len().saturating_add(buf.len());
        let mut check = check_string_length(self.who, len);
        if check.is_ok() && len - self.polled_at >= POLL_BYTES {
            self.polled_at = len;
            check = (self.poll)();
        }
        if let Err(e) = check {
            self.stopped = Some(e);
            return Err(std::io::Error::other("stopped"));
        }
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// JSON text to data, as [`from_json`] makes it but without a JSON tree in between,
/// calling `poll` every [`POLL_EVERY`] values: a long parse meets the limits.
pub fn parse_json(who: &str, text: &str, poll: Poll) -> Result<Value> {
    let builder = Builder {
        poll,
        values: Cell::new(0),
        stopped: RefCell::new(None),
    };
    let mut parser = serde_json::Deserializer::from_str(text);
    let parsed = (&builder)
        .deserialize(&mut parser)
        .and_then(|value| parser.end().map(|()| value));
    parsed.map_err(|e| {
        builder
            .stopped
            .take()
            .unwrap_or_else(|| Error::eval(format!("{who}: {e}")))
    })
}

/// Builds values as the parser reads them; keeps the error that stopped it.
struct Builder<'a> {
    poll: Poll<'a>,
    values: Cell<u64>,
    stopped: RefCell<Option<Error>>,
}

impl<'de> DeserializeSeed<'de> for &Builder<'_> {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(
        self,
        parser: D,
    ) -> std::result::Result<Value, D::Error> {
        let values = self.values.get() + 1;
        self.values.set(values);
        if values.is_multiple_of(POLL_EVERY) {
            if let Err(e) = (self.poll)() {
                *self.stopped.borrow_mut() = Some(e);
                return Err(serde::de::Error::custom("stopped"));
            }
        }
        parser.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for &Builder<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("JSON")
    }

    fn visit_unit<E>(self) -> std::result::Result<Value, E> {
        Ok(Value::Nil)
    }

    fn visit_bool<E>(self, b: bool) -> std::result::Result<Value, E> {
        Ok(Value::Bool(b))
    }

    fn visit_i64<E>(self, i: i64) -> std::result::Result<Value, E> {
        Ok(Value::Int(i))
    }

    /// Integers beyond i64 become floats, as in [`from_json`].
    fn visit_u64<E>(self, u: u64) -> std::result::Result<Value, E> {
        Ok(i64::try_from(u).map_or(Value::Float(u as f64), Value::Int))
    }

    fn visit_f64<E>(self, f: f64) -> std::result::Result<Value, E> {
        Ok(Value::Float(f))
    }

    fn visit_str<E>(self, s: &str) -> std::result::Result<Value, E> {
        Ok(Value::str(s))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(self)? {
            items.push(item);
        }
        Ok(Value::list(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Value, A::Error> {
        let mut entries = Entries::new();
        while let Some(key) = map.next_key::<std::borrow::Cow<str>>()? {
            let value = map.next_value_seed(self)?;
            entries.insert(Rc::from(key.as_ref()), value);
        }
        Ok(Value::map(entries))
    }
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
