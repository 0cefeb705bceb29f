//! Attachments: files (images, PDFs, audio) or URLs sent with a user message as the
//! provider's content parts. A file is read once, when the call that sends it starts;
//! what is written anywhere (run log, cache keys, cassettes, what procedure providers
//! see) is its type, SHA-256 and size, never its bytes. Each provider checks the types
//! it takes and its size limits while it builds the request, before anything is sent.

use crate::error::{Error, Reason, Result};
use serde_json::{json, Map, Value as Json};
use std::sync::Arc;

/// A file or URL sent with a message.
#[derive(Clone, Debug, PartialEq)]
pub struct Attachment {
    /// The MIME type: given, or guessed from the name.
    pub mime: String,
    pub origin: Origin,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Origin {
    /// A file read from `path`.
    File {
        path: String,
        bytes: Arc<[u8]>,
        sha256: String,
    },
    /// An `http(s)://` URL, sent as the URL to providers that fetch it.
    Url(String),
}

/// The types tasklisp sends, by file name extension.
const TYPES: &[(&str, &str)] = &[
    ("png", "image/png"),
    ("jpg", "image/jpeg"),
    ("jpeg", "image/jpeg"),
    ("gif", "image/gif"),
    ("webp", "image/webp"),
    ("pdf", "application/pdf"),
    ("wav", "audio/wav"),
    ("mp3", "audio/mpeg"),
];

/// The MIME type a file name's extension (or a URL's, before any `?`) names.
pub fn guess_mime(name: &str) -> Option<&'static str> {
    let name = name.split(['?', '#']).next().unwrap_or(name);
    let extension = name.rsplit_once('.')?.1.to_ascii_lowercase();
    TYPES
        .iter()
        .find(|(ext, _)| *ext == extension)
        .map(|(_, mime)| *mime)
}

/// Whether `text` is a URL rather than a path.
pub fn is_url(text: &str) -> bool {
    text.starts_with("https://") || text.starts_with("http://")
}

impl Attachment {
    /// A file's bytes, already read from `path`.
    pub fn file(path: &str, mime: &str, bytes: Vec<u8>) -> Attachment {
        let sha256 = crate::digest::sha256_hex(&bytes, 32);
        Attachment {
            mime: mime.to_owned(),
            origin: Origin::File {
                path: path.to_owned(),
                bytes: bytes.into(),
                sha256,
            },
        }
    }

    pub fn url(url: &str, mime: &str) -> Attachment {
        Attachment {
            mime: mime.to_owned(),
            origin: Origin::Url(url.to_owned()),
        }
    }

    /// `{"mime" … "sha256" … "size" n "path" …}` for a file, `{"mime" … "url" …}` for a
    /// URL: what the run log, cassettes and procedure providers see.
    pub fn to_json(&self) -> Json {
        match &self.origin {
            Origin::File {
                path,
                bytes,
                sha256,
            } => {
                json!({"mime": self.mime, "sha256": sha256, "size": bytes.len(), "path": path})
            }
            Origin::Url(url) => json!({"mime": self.mime, "url": url}),
        }
    }

    /// The path or URL, for messages.
    fn name(&self) -> &str {
        match &self.origin {
            Origin::File { path, .. } => path,
            Origin::Url(url) => url,
        }
    }

    /// The file name without its directories.
    fn file_name(&self) -> &str {
        self.name().rsplit('/').next().unwrap_or_default()
    }

    fn kind(&self) -> Kind {
        match self.mime.as_str() {
            "image/png" | "image/jpeg" | "image/gif" | "image/webp" => Kind::Image,
            "application/pdf" => Kind::Pdf,
            "audio/wav" | "audio/x-wav" | "audio/mpeg" | "audio/mp3" => Kind::Audio,
            _ => Kind::Other,
        }
    }

    /// The file's bytes in base64, `None` for a URL.
    fn base64(&self) -> Option<String> {
        match &self.origin {
            Origin::File { bytes, .. } => Some(base64(bytes)),
            Origin::Url(_) => None,
        }
    }

    /// Refuses a type `provider` does not take, a file over its limit for the type, and
    /// a URL where `provider` takes only data.
    fn check(&self, provider: &str, limits: &[(Kind, u64)], url_kinds: &[Kind]) -> Result<Kind> {
        let kind = self.kind();
        let Some(&(_, limit)) = limits.iter().find(|(k, _)| *k == kind) else {
            let taken: Vec<&str> = limits.iter().map(|(k, _)| k.names()).collect();
            return Err(refused(
                self,
                format!(
                    "{provider} does not take {} attachments (it takes {})",
                    self.mime,
                    taken.join(", ")
                ),
                json!({"mime": self.mime, "provider": provider}),
            ));
        };
        match &self.origin {
            Origin::File { bytes, .. } if bytes.len() as u64 > limit => Err(refused(
                self,
                format!(
                    "{} bytes, over {provider}'s limit of {limit} bytes for {}",
                    bytes.len(),
                    kind.names()
                ),
                json!({"size": bytes.len(), "limit": limit, "provider": provider}),
            )),
            Origin::Url(_) if !url_kinds.contains(&kind) => Err(refused(
                self,
                format!("{provider} takes {} as data, not as a URL", kind.names()),
                json!({"mime": self.mime, "provider": provider}),
            )),
            _ => Ok(kind),
        }
    }
}

/// What an attachment is to a provider: the types go in different content parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Image,
    Pdf,
    Audio,
    Other,
}

impl Kind {
    fn names(self) -> &'static str {
        match self {
            Kind::Image => "images (png, jpeg, gif, webp)",
            Kind::Pdf => "PDF documents",
            Kind::Audio => "audio (wav, mp3)",
            Kind::Other => "other files",
        }
    }
}

const MB: u64 = 1 << 20;

/// OpenAI's documented limits: 20 MB an image, 32 MB a PDF, 20 MB of audio.
const OPENAI_LIMITS: &[(Kind, u64)] = &[
    (Kind::Image, 20 * MB),
    (Kind::Pdf, 32 * MB),
    (Kind::Audio, 20 * MB),
];

/// Anthropic's documented limits: 5 MB an image, 32 MB a PDF (the request's limit); no
/// audio.
const ANTHROPIC_LIMITS: &[(Kind, u64)] = &[(Kind::Image, 5 * MB), (Kind::Pdf, 32 * MB)];

/// `TASK_FAILURE` / `input_validation_failure` naming the attachment.
fn refused(attachment: &Attachment, why: String, mut details: Json) -> Error {
    if let Some(map) = details.as_object_mut() {
        map.insert("attachment".into(), json!(attachment.name()));
    }
    Error::task_failure(
        Reason::InputValidationFailure,
        format!("attachment {}: {why}", attachment.name()),
    )
    .with_details(details)
}

/// A user message's content for chat completions: the text, then each attachment as
/// an `image_url` (a data URL or the URL), a `file` (PDFs, as a data URL), or an
/// `input_audio` part (`wav` or `mp3`, base64).
pub fn openai_content(provider: &str, text: &str, attachments: &[Attachment]) -> Result<Json> {
    let mut parts = vec![json!({"type": "text", "text": text})];
    for attachment in attachments {
        let kind = attachment.check(provider, OPENAI_LIMITS, &[Kind::Image])?;
        let data = attachment.base64();
        let data_url = |data: &str| format!("data:{};base64,{data}", attachment.mime);
        parts.push(match (kind, &attachment.origin, data) {
            (Kind::Image, Origin::Url(url), _) => {
                json!({"type": "image_url", "image_url": {"url": url}})
            }
            (Kind::Image, _, Some(data)) => {
                json!({"type": "image_url", "image_url": {"url": data_url(&data)}})
            }
            (Kind::Pdf, _, Some(data)) => json!({"type": "file", "file": {
                "filename": attachment.file_name(), "file_data": data_url(&data)}}),
            (_, _, data) => {
                let format = if attachment.mime.contains("wav") {
                    "wav"
                } else {
                    "mp3"
                };
                json!({"type": "input_audio", "input_audio": {"data": data, "format": format}})
            }
        });
    }
    Ok(Json::Array(parts))
}

/// A user message's content for the Messages API: each attachment as an `image` or
/// `document` block (base64 data or a URL), then the text, as Anthropic advises.
pub fn anthropic_content(text: &str, attachments: &[Attachment]) -> Result<Json> {
    let mut blocks = Vec::with_capacity(attachments.len() + 1);
    for attachment in attachments {
        let kind = attachment.check("anthropic", ANTHROPIC_LIMITS, &[Kind::Image, Kind::Pdf])?;
        let mut source = Map::new();
        match (&attachment.origin, attachment.base64()) {
            (Origin::Url(url), _) => {
                source.insert("type".into(), json!("url"));
                source.insert("url".into(), json!(url));
            }
            (_, data) => {
                source.insert("type".into(), json!("base64"));
                source.insert("media_type".into(), json!(attachment.mime));
                source.insert("data".into(), json!(data));
            }
        }
        let block = if kind == Kind::Image {
            "image"
        } else {
            "document"
        };
        blocks.push(json!({"type": block, "source": source}));
    }
    blocks.push(json!({"type": "text", "text": text}));
    Ok(Json::Array(blocks))
}

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk.first().copied().unwrap_or(0),
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                let index = (n >> (18 - 6 * i)) & 63;
                let digit = ALPHABET.get(index as usize).copied().unwrap_or(b'=');
                out.push(char::from(digit));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_standard_vectors() {
        let cases = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, encoded) in cases {
            assert_eq!(base64(plain.as_bytes()), encoded);
        }
        assert_eq!(base64(&[0xff, 0xfe, 0xfd]), "//79");
    }

    #[test]
    fn types_are_guessed_from_the_extension() {
        assert_eq!(guess_mime("a/cat.PNG"), Some("image/png"));
        assert_eq!(
            guess_mime("https://x.io/doc.pdf?dl=1"),
            Some("application/pdf")
        );
        assert_eq!(guess_mime("song.mp3"), Some("audio/mpeg"));
        assert_eq!(guess_mime("notes.txt"), None);
        assert_eq!(guess_mime("README"), None);
    }

    #[test]
    fn the_json_form_holds_the_digest_and_size_not_the_bytes() {
        let file = Attachment::file("x/a.png", "image/png", b"abc".to_vec());
        assert_eq!(
            file.to_json(),
            json!({"mime": "image/png", "size": 3, "path": "x/a.png",
                   "sha256": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"})
        );
    }

    #[test]
    fn each_provider_refuses_what_it_does_not_take() {
        let audio = Attachment::file("a.wav", "audio/wav", vec![0; 4]);
        let error = anthropic_content("hi", std::slice::from_ref(&audio)).unwrap_err();
        assert_eq!(error.reason(), Some("input_validation_failure"));
        assert!(
            error.message().contains("does not take audio/wav"),
            "{}",
            error.message()
        );
        let parts = openai_content("openai", "hi", &[audio]).unwrap();
        assert_eq!(
            parts[1],
            json!({"type": "input_audio", "input_audio": {"data": "AAAAAA==", "format": "wav"}})
        );
        let text = Attachment::file("a.txt", "text/plain", vec![0; 4]);
        assert!(openai_content("openai", "hi", &[text]).is_err());
        let pdf_url = Attachment::url("https://x.io/a.pdf", "application/pdf");
        let error = openai_content("openai", "hi", std::slice::from_ref(&pdf_url)).unwrap_err();
        assert!(error.message().contains("as data, not as a URL"));
        assert_eq!(
            anthropic_content("hi", &[pdf_url]).unwrap()[0],
            json!({"type": "document", "source": {"type": "url", "url": "https://x.io/a.pdf"}})
        );
    }

    #[test]
    fn a_file_over_the_limit_names_its_size_and_the_limit() {
        let big = Attachment::file("big.png", "image/png", vec![0; (5 * MB + 1) as usize]);
        let error = anthropic_content("hi", &[big]).unwrap_err();
        assert_eq!(error.details()["limit"], 5 * MB);
        assert_eq!(error.details()["size"], 5 * MB + 1);
        assert!(error
            .message()
            .contains("over anthropic's limit of 5242880 bytes"));
    }
}
