//! Attachments in the language: the `attachment` builtin, and a task's `:attachments`
//! read into the files and URLs its user message carries.
//!
//! An attachment value is a map marked by `"type" "attachment"`:
//! `{"type" "attachment" "path" "cat.png" "mime" "image/png"}` (or `"url"` instead of
//! `"path"`). It names the file; the file is read when a call sends it, so the value
//! prints, compares and travels as any map does.

use crate::builtins::{builtin_table, split_options, str_arg, type_error};
use crate::capabilities::Access;
use crate::error::{Error, Reason, Result};
use crate::eval::env::Env;
use crate::eval::Interp;
use crate::provider::attachment::{guess_mime, is_url, Attachment};
use crate::value::bounds::read_file_bytes;
use crate::value::{Entries, Value};
use serde_json::json;
use std::path::Path;
use std::rc::Rc;

builtin_table! {
    /// `(attachment path-or-url :mime type)`: a file or URL for a task's `:attachments`, its MIME type guessed from the name when not given (png, jpeg, gif, webp, pdf, wav, mp3); a map marked `"type" "attachment"`. The file is read when a call sends it. `(attachment "cat.png")` ⇒ `{"type" "attachment" "path" "cat.png" "mime" "image/png"}`
    "attachment", 1, Some(3) => attachment;
}

/// The key and value that mark a map as an attachment.
const MARK: (&str, &str) = ("type", "attachment");

fn attachment(_interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let who = "attachment";
    let (args, options) = split_options(who, args, &["mime"])?;
    let [target] = args else {
        return Err(Error::eval(
            "attachment: expected (attachment path-or-url :mime type)",
        ));
    };
    let target = str_arg(who, target)?;
    let mime = match options.first() {
        Some((_, mime)) => str_arg(who, mime)?.to_owned(),
        None => guessed(target)?.to_owned(),
    };
    Ok(marked(target, &mime))
}

/// The attachment map of `target` (a path or URL) of type `mime`.
fn marked(target: &str, mime: &str) -> Value {
    let place = if is_url(target) { "url" } else { "path" };
    let mut entries = Entries::new();
    entries.insert(Rc::from(MARK.0), Value::from(MARK.1));
    entries.insert(Rc::from(place), Value::from(target));
    entries.insert(Rc::from("mime"), Value::from(mime));
    Value::map(entries)
}

/// The type `target`'s name says, or the failure asking for `:mime`.
fn guessed(target: &str) -> Result<&'static str> {
    guess_mime(target).ok_or_else(|| {
        failure(
            target,
            "the type cannot be told from the name: give :mime (png, jpeg, gif, webp, pdf, wav \
             and mp3 are known by their extension)",
        )
    })
}

fn failure(target: &str, why: impl std::fmt::Display) -> Error {
    Error::task_failure(
        Reason::InputValidationFailure,
        format!("attachment {target}: {why}"),
    )
    .with_details(json!({"attachment": target}))
}

/// A task's `:attachments` value (a list of paths, URLs and attachment values) as the
/// attachments of its user message: each file read now, if the capabilities allow it
/// and it is within `--max-file-size`.
pub fn read(interp: &Interp, value: &Value) -> Result<Vec<Attachment>> {
    let who = ":attachments";
    let items = crate::builtins::list_arg(who, value)?;
    let mut attachments = Vec::new();
    for item in items.iter() {
        let (target, mime) = match &item {
            Value::Map(map) if map.get(MARK.0).and_then(Value::as_str) == Some(MARK.1) => {
                let target = map.get("path").or_else(|| map.get("url"));
                let target = target.and_then(Value::as_str).unwrap_or_default();
                let mime = match map.get("mime").and_then(Value::as_str) {
                    Some(mime) => mime.to_owned(),
                    None => guessed(target)?.to_owned(),
                };
                (target.to_owned(), mime)
            }
            other => {
                let target = other.as_str().ok_or_else(|| {
                    type_error(who, "a list of paths, URLs or attachments", other)
                })?;
                (target.to_owned(), guessed(target)?.to_owned())
            }
        };
        attachments.push(load(interp, &target, &mime)?);
    }
    Ok(attachments)
}

/// A URL as it is; a file read, with reading allowed by `--sandbox`'s `--allow-read`.
fn load(interp: &Interp, target: &str, mime: &str) -> Result<Attachment> {
    if is_url(target) {
        return Ok(Attachment::url(target, mime));
    }
    let path = Path::new(target);
    interp.limits.capabilities.check_path(path, Access::Read)?;
    let bytes = read_file_bytes(path, interp.limits.max_file_bytes).map_err(|e| {
        let mut error = failure(target, e.message());
        if let Some(limit) = e.details().get("limit") {
            error = error.with_details(json!({"attachment": target, "limit": limit}));
        }
        error
    })?;
    Ok(Attachment::file(target, mime, bytes))
}
