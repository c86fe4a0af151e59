//! A [`Provider`] for any OpenAI-compatible chat-completions endpoint: OpenAI, Ollama, llama.cpp's
//! server, vLLM, LM Studio, anything that answers `POST {baseUrl}/chat/completions`.
//!
//! The translation is kept in pure functions so it is tested without a network:
//! [`build_request`] (in `request`) turns a `sampling/createMessage` request into a
//! chat-completions body, [`parse_completion`] (in `reply`) reads a whole (non-streamed) reply,
//! and `stream` reads a server-sent-event stream (framed by `sse-stream`). [`OpenAi`] (in
//! `client`) adds HTTP, timeouts and the wording of errors, which always name the endpoint and
//! never contain the API key. `settings` is what the configuration says.
//!
//! [`Provider`]: crate::sampling::provider::Provider

mod client;
mod reply;
mod request;
mod settings;
mod stream;
#[cfg(test)]
mod tests;

pub use client::OpenAi;
pub use reply::parse_completion;
pub use request::build_request;
pub use settings::{DEFAULT_TIMEOUT, OpenAiConfig};

/// How much of an unexpected body is quoted in an error.
const SNIPPET_CHARS: usize = 200;

fn snippet(text: &str) -> String {
    crate::net::snippet(text, SNIPPET_CHARS)
}
