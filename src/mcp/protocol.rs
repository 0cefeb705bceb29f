//! The Model Context Protocol's wire: JSON-RPC 2.0 messages, one per line on stdio or one
//! per POST over streamable HTTP, and the protocol versions tasklisp speaks.

use serde_json::{json, Value as Json};

/// The versions reached through the `initialize` handshake, newest first. A client
/// offers the first; a server answers the version asked for when it is one of these,
/// else the first.
pub const HANDSHAKE_VERSIONS: [&str; 2] = ["2025-11-25", "2025-06-18"];

/// The stateless revision: no handshake, a client asks `server/discover` which versions
/// the server speaks and sends every request on its own. Served, not used as a client.
pub const STATELESS_VERSION: &str = "2026-07-28";

/// The largest message read from a server or a client: a longer one is refused whole.
pub const MAX_MESSAGE_BYTES: usize = 8 << 20;

/// JSON-RPC error codes.
pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;

/// What tasklisp calls itself in `clientInfo` and `serverInfo`.
pub fn implementation() -> Json {
    json!({"name": "tasklisp", "version": env!("CARGO_PKG_VERSION")})
}

/// A request expecting an answer with the same id.
pub fn request(id: u64, method: &str, params: Json) -> Json {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A message expecting no answer.
pub fn notification(method: &str, params: Json) -> Json {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

/// The answer to the request `id`.
pub fn result(id: &Json, result: Json) -> Json {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// The failure of the request `id` (`null` when the request could not be read).
pub fn error(id: &Json, code: i64, message: &str) -> Json {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// A message read off the wire.
#[derive(Debug, PartialEq)]
pub enum Message<'a> {
    Request {
        id: &'a Json,
        method: &'a str,
        params: &'a Json,
    },
    Notification {
        method: &'a str,
    },
    /// An answer: the result, or the error's code and message.
    Response {
        id: &'a Json,
        outcome: Result<&'a Json, (i64, String)>,
    },
    /// Valid JSON that is no JSON-RPC message.
    Invalid,
}

static NULL: Json = Json::Null;

/// What a JSON value is as a JSON-RPC message.
pub fn classify(message: &Json) -> Message<'_> {
    let Some(object) = message.as_object() else {
        return Message::Invalid;
    };
    let id = object.get("id");
    match (object.get("method").and_then(Json::as_str), id) {
        // JSON-RPC 2.0: a request's id is a string or a number.
        (Some(_), Some(id)) if !(id.is_string() || id.is_number()) => Message::Invalid,
        (Some(method), Some(id)) => Message::Request {
            id,
            method,
            params: object.get("params").unwrap_or(&NULL),
        },
        (Some(method), None) => Message::Notification { method },
        (None, Some(id)) => match (object.get("result"), object.get("error")) {
            (Some(result), None) => Message::Response {
                id,
                outcome: Ok(result),
            },
            (None, Some(error)) => Message::Response {
                id,
                outcome: Err(error_parts(error)),
            },
            _ => Message::Invalid,
        },
        (None, None) => Message::Invalid,
    }
}

fn error_parts(error: &Json) -> (i64, String) {
    let code = error.get("code").and_then(Json::as_i64).unwrap_or(0);
    let message = match error.get("message").and_then(Json::as_str) {
        Some(text) => text.to_owned(),
        None => error.to_string(),
    };
    (code, message)
}

/// The version a server answers a client that asked for `asked`.
pub fn negotiate(asked: Option<&str>) -> &'static str {
    HANDSHAKE_VERSIONS
        .iter()
        .find(|v| Some(**v) == asked)
        .copied()
        .unwrap_or(HANDSHAKE_VERSIONS[0])
}

/// Whether a request is sent under the stateless revision: it names the version in its
/// `_meta` instead of relying on a handshake.
pub fn is_stateless(params: &Json) -> bool {
    let key = "/_meta/io.modelcontextprotocol~1protocolVersion";
    params.pointer(key).and_then(Json::as_str) == Some(STATELESS_VERSION)
}

/// A result as the stateless revision wants it: marked complete, and listings (which a
/// client may cache) marked not to be cached.
pub fn stateless_result(method: &str, mut result: Json) -> Json {
    if let Some(object) = result.as_object_mut() {
        object.insert("resultType".into(), json!("complete"));
        if method == "server/discover" || method.ends_with("/list") {
            object.insert("ttlMs".into(), json!(0));
            object.insert("cacheScope".into(), json!("private"));
        }
    }
    result
}

/// The text parts of a tool result's or prompt message's `content`, joined by newlines.
pub fn joined_text(content: &Json) -> String {
    let parts = match content {
        Json::Array(parts) => parts.as_slice(),
        single => std::slice::from_ref(single),
    };
    parts
        .iter()
        .filter(|part| part.get("type").and_then(Json::as_str) == Some("text"))
        .filter_map(|part| part.get("text").and_then(Json::as_str))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_told_apart() {
        let asked = request(3, "tools/list", json!({}));
        assert!(matches!(
            classify(&asked),
            Message::Request {
                method: "tools/list",
                ..
            }
        ));
        let told = notification("notifications/initialized", json!({}));
        assert_eq!(
            classify(&told),
            Message::Notification {
                method: "notifications/initialized"
            }
        );
        let failed = error(&json!(3), METHOD_NOT_FOUND, "no");
        assert_eq!(
            classify(&failed),
            Message::Response {
                id: &json!(3),
                outcome: Err((METHOD_NOT_FOUND, "no".into()))
            }
        );
        assert_eq!(classify(&json!([1])), Message::Invalid);
        assert_eq!(classify(&json!({"id": 1})), Message::Invalid);
    }

    #[test]
    fn versions_are_negotiated_among_those_spoken() {
        assert_eq!(negotiate(Some("2025-06-18")), "2025-06-18");
        assert_eq!(negotiate(Some("2025-11-25")), "2025-11-25");
        assert_eq!(negotiate(Some("2024-11-05")), "2025-11-25");
        assert_eq!(negotiate(None), "2025-11-25");
    }

    #[test]
    fn only_text_parts_are_joined() {
        let content = json!([
            {"type": "text", "text": "a"},
            {"type": "image", "data": "…"},
            {"type": "text", "text": "b"}
        ]);
        assert_eq!(joined_text(&content), "a\nb");
    }
}
