//! Coercion of a parsed answer toward a JSON-Schema map: conversions that lose nothing
//! (a numeric string to a number, `"true"`/`"false"` to a boolean, one value to a
//! one-element array, an enum member written in another case or with spaces around it
//! to the member). Each is recorded as `coerced /pointer: from → to`.

use serde_json::Value as Json;

/// Schemas nested deeper than this are not walked (a schema is written by the program,
/// so this only guards against a pathological one).
const MAX_DEPTH: usize = 64;

/// Converts the parts of `value` that `schema` types differently, where no information
/// is lost; returns what was converted.
pub fn coerce(value: &mut Json, schema: &Json) -> Vec<String> {
    let mut repairs = Vec::new();
    walk(value, schema, &mut String::new(), &mut repairs, 0);
    repairs
}

fn walk(
    value: &mut Json,
    schema: &Json,
    pointer: &mut String,
    repairs: &mut Vec<String>,
    depth: usize,
) {
    if depth > MAX_DEPTH {
        return;
    }
    let types = allowed_types(schema);
    if !types.is_empty() && !types.iter().any(|t| has_type(value, t)) {
        if let Some((converted, to)) = types
            .iter()
            .find_map(|t| convert(value, t).map(|c| (c, *t)))
        {
            repairs.push(format!("coerced {pointer}: {} → {to}", type_name(value)));
            *value = converted;
        }
    }
    if let Some(Json::Array(members)) = schema.get("enum") {
        if let Some(member) = enum_member(value, members) {
            repairs.push(format!("coerced {pointer}: {value} → {member}"));
            *value = member;
        }
    }
    match value {
        Json::Object(fields) => {
            let Some(Json::Object(properties)) = schema.get("properties") else {
                return;
            };
            for (key, property) in properties {
                if let Some(field) = fields.get_mut(key) {
                    let len = pointer.len();
                    pointer.push('/');
                    pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
                    walk(field, property, pointer, repairs, depth + 1);
                    pointer.truncate(len);
                }
            }
        }
        Json::Array(items) => {
            let Some(item_schema) = schema.get("items").filter(|s| s.is_object()) else {
                return;
            };
            for (index, item) in items.iter_mut().enumerate() {
                let len = pointer.len();
                pointer.push_str(&format!("/{index}"));
                walk(item, item_schema, pointer, repairs, depth + 1);
                pointer.truncate(len);
            }
        }
        _ => {}
    }
}

/// The schema's `type`: one name or a list of them.
fn allowed_types(schema: &Json) -> Vec<&str> {
    match schema.get("type") {
        Some(Json::String(name)) => vec![name.as_str()],
        Some(Json::Array(names)) => names.iter().filter_map(Json::as_str).collect(),
        _ => Vec::new(),
    }
}

fn has_type(value: &Json, name: &str) -> bool {
    match name {
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        other => type_name(value) == other,
    }
}

fn type_name(value: &Json) -> &'static str {
    super::schema::json_type(value)
}

/// `value` as a value of type `to`, when that loses nothing.
fn convert(value: &Json, to: &str) -> Option<Json> {
    match (value, to) {
        (Json::String(text), "integer") => text.trim().parse::<i64>().ok().map(Json::from),
        (Json::String(text), "number") => number(text.trim()),
        (Json::String(text), "boolean") => match text.trim() {
            "true" => Some(Json::Bool(true)),
            "false" => Some(Json::Bool(false)),
            _ => None,
        },
        (Json::Array(_), "array") => None,
        (single, "array") => Some(Json::Array(vec![single.clone()])),
        _ => None,
    }
}

fn number(text: &str) -> Option<Json> {
    if let Ok(integer) = text.parse::<i64>() {
        return Some(Json::from(integer));
    }
    let float = text.parse::<f64>().ok().filter(|f| f.is_finite())?;
    serde_json::Number::from_f64(float).map(Json::Number)
}

/// The enum member a string answer means when it differs only in case or in spaces
/// around it; `None` when it is already a member or matches none (or several).
fn enum_member(value: &Json, members: &[Json]) -> Option<Json> {
    let text = value.as_str()?;
    if members.iter().any(|m| m == value) {
        return None;
    }
    let wanted = text.trim().to_lowercase();
    let mut matching = members
        .iter()
        .filter(|m| m.as_str().is_some_and(|m| m.to_lowercase() == wanted));
    let member = matching.next()?;
    matching.next().is_none().then(|| member.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lossless_conversions_are_made_and_named() {
        let schema = json!({
            "type": "object",
            "properties": {
                "age": {"type": "integer"},
                "score": {"type": "number"},
                "ok": {"type": "boolean"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "label": {"enum": ["bug", "feature"]}
            }
        });
        let mut value =
            json!({"age": "42", "score": " 2.5", "ok": "true", "tags": "x", "label": " Bug "});
        let repairs = coerce(&mut value, &schema);
        assert_eq!(
            value,
            json!({"age": 42, "score": 2.5, "ok": true, "tags": ["x"], "label": "bug"})
        );
        assert_eq!(
            repairs,
            vec![
                "coerced /age: string → integer",
                "coerced /score: string → number",
                "coerced /ok: string → boolean",
                "coerced /tags: string → array",
                "coerced /label: \" Bug \" → \"bug\"",
            ]
        );
    }

    #[test]
    fn lossy_conversions_are_not_made() {
        let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}, "b": {"type": "boolean"}}});
        let mut value = json!({"n": "4.5", "b": "yes"});
        assert!(coerce(&mut value, &schema).is_empty());
        assert_eq!(value, json!({"n": "4.5", "b": "yes"}));
    }

    #[test]
    fn array_items_are_walked_with_their_index() {
        let schema = json!({"type": "array", "items": {"type": "number"}});
        let mut value = json!([1, "2"]);
        assert_eq!(
            coerce(&mut value, &schema),
            vec!["coerced /1: string → number"]
        );
        assert_eq!(value, json!([1, 2]));
    }
}
