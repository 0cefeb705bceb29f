//! Output schemas: a JSON type name (`"object"`, `"array"`…) or a JSON-Schema map.

use super::definition::lossy_json;
use crate::error::{Error, Reason, Result};
use crate::value::{from_json, Value};
use jsonschema::error::{TypeKind, ValidationErrorKind};
use serde_json::{json, Value as Json};

const TYPE_NAMES: &[&str] = &[
    "object", "array", "string", "number", "integer", "boolean", "null",
];

pub enum Schema {
    /// One of [`TYPE_NAMES`].
    Type(String),
    /// A JSON Schema, compiled once when the task is defined.
    Json {
        schema: Json,
        validator: Box<jsonschema::Validator>,
    },
}

impl Schema {
    /// Reads `:schema`: a type name or a map; anything else is a `VALIDATION_ERROR`.
    pub fn from_value(value: &Value) -> Result<Schema> {
        match value {
            Value::Str(name) if TYPE_NAMES.contains(&name.as_str()) => {
                Ok(Schema::Type(name.to_string()))
            }
            Value::Map(_) => {
                let schema = lossy_json(value);
                let validator = jsonschema::validator_for(&schema)
                    .map_err(|e| Error::validation(format!("invalid JSON Schema: {e}")))?;
                Ok(Schema::Json {
                    schema,
                    validator: Box::new(validator),
                })
            }
            other => Err(Error::validation(format!(
                ":schema must be one of {} or a JSON-Schema map, not {}",
                TYPE_NAMES.join(", "),
                crate::value::write_string(other)
            ))),
        }
    }

    pub fn as_value(&self) -> Value {
        match self {
            Schema::Type(name) => Value::from(name.as_str()),
            Schema::Json { schema, .. } => from_json(schema),
        }
    }

    /// Checks parsed output; a mismatch is `TASK_FAILURE` / `output_format_failure` with
    /// details `{expectedType, actualType, location, errors}`: `location` is the JSON
    /// pointer of the first problem, `errors` every problem as `{pointer, message}`.
    pub fn check(&self, output: &Json) -> Result<()> {
        match self {
            Schema::Type(expected) => {
                if type_matches(expected, output) {
                    Ok(())
                } else {
                    Err(mismatch(expected, output, ""))
                }
            }
            Schema::Json { validator, .. } => {
                let mut problems = validator.iter_errors(output);
                let Some(error) = problems.next() else {
                    return Ok(());
                };
                let location = error.instance_path().as_str().to_owned();
                let actual = output.pointer(&location).unwrap_or(output);
                let errors: Vec<Json> = std::iter::once(error_entry(&error))
                    .chain(problems.take(MAX_ERRORS - 1).map(|e| error_entry(&e)))
                    .collect();
                let failure = if let ValidationErrorKind::Type {
                    kind: TypeKind::Single(expected),
                } = error.kind()
                {
                    mismatch(&expected.to_string(), actual, &location)
                } else {
                    let place = if location.is_empty() {
                        String::new()
                    } else {
                        format!(" at \"{location}\"")
                    };
                    Error::task_failure(
                        Reason::OutputFormatFailure,
                        format!("Output does not match the schema{place}: {error}"),
                    )
                    .with_details(json!({
                        "expectedType": Json::Null,
                        "actualType": json_type(actual),
                        "location": location,
                    }))
                };
                Err(failure.with_detail("errors", Json::Array(errors)))
            }
        }
    }

    /// Checks parsed output, first converting what converts without loss (a JSON-Schema
    /// map only); returns the conversions made, as `notes.repairs` names them.
    pub fn conform(&self, output: &mut Json) -> Result<Vec<String>> {
        let Err(mismatch) = self.check(output) else {
            return Ok(Vec::new());
        };
        let Schema::Json { schema, .. } = self else {
            return Err(mismatch);
        };
        let mut coerced = output.clone();
        let repairs = super::coerce::coerce(&mut coerced, schema);
        if repairs.is_empty() {
            return Err(mismatch);
        }
        self.check(&coerced)?;
        *output = coerced;
        Ok(repairs)
    }

    /// The type the schema asks for at the top, for the details of a failure.
    pub fn expected_type(&self) -> Json {
        match self {
            Schema::Type(name) => Json::from(name.as_str()),
            Schema::Json { schema, .. } => schema.get("type").cloned().unwrap_or(Json::Null),
        }
    }
}

/// At most this many validation errors are listed in a failure's `errors`.
const MAX_ERRORS: usize = 50;

fn error_entry(error: &jsonschema::ValidationError<'_>) -> Json {
    json!({"pointer": error.instance_path().as_str(), "message": error.to_string()})
}

fn mismatch(expected: &str, actual: &Json, location: &str) -> Error {
    let actual_type = json_type(actual);
    let mut message = format!("Expected output of type \"{expected}\" but got \"{actual_type}\"");
    if !location.is_empty() {
        message.push_str(&format!(" at \"{location}\""));
    }
    Error::task_failure(Reason::OutputFormatFailure, message.clone()).with_details(json!({
        "expectedType": expected,
        "actualType": actual_type,
        "location": location,
        "errors": [{"pointer": location, "message": message}],
    }))
}

fn type_matches(expected: &str, value: &Json) -> bool {
    match expected {
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        other => json_type(value) == other,
    }
}

/// The JSON type name of a value, as JSON Schema spells it.
pub fn json_type(value: &Json) -> &'static str {
    match value {
        Json::Null => "null",
        Json::Bool(_) => "boolean",
        Json::Number(_) => "number",
        Json::String(_) => "string",
        Json::Array(_) => "array",
        Json::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_names_check_the_top_level() {
        let schema = Schema::from_value(&Value::from("array")).unwrap();
        assert!(schema.check(&json!([1])).is_ok());
        let e = schema.check(&json!({"a": 1})).unwrap_err();
        assert_eq!(
            e.message(),
            "Expected output of type \"array\" but got \"object\""
        );
        assert_eq!(e.reason(), Some("output_format_failure"));
        assert_eq!(e.details()["actualType"], "object");
        let integer = Schema::from_value(&Value::from("integer")).unwrap();
        assert!(integer.check(&json!(3)).is_ok());
        assert!(integer.check(&json!(3.5)).is_err());
    }

    #[test]
    fn json_schema_maps_point_at_the_failing_value() {
        let schema_value = from_json(&json!({
            "type": "object",
            "properties": {"tags": {"type": "array"}},
            "required": ["tags"]
        }));
        let schema = Schema::from_value(&schema_value).unwrap();
        assert!(schema.check(&json!({"tags": []})).is_ok());
        let e = schema.check(&json!({"tags": "x"})).unwrap_err();
        assert_eq!(e.details()["location"], "/tags");
        assert_eq!(e.details()["expectedType"], "array");
        assert_eq!(e.details()["actualType"], "string");
        let missing = schema.check(&json!({})).unwrap_err();
        assert_eq!(missing.reason(), Some("output_format_failure"));
    }

    #[test]
    fn unknown_type_names_are_refused() {
        assert!(Schema::from_value(&Value::from("list")).is_err());
        assert!(Schema::from_value(&Value::Int(1)).is_err());
    }
}
