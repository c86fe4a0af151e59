//! The provider's settings: what `sampling.openai` says, parsed and checked by `config` when the
//! configuration is read.

pub use crate::config::sampling::{DEFAULT_OPENAI_TIMEOUT as DEFAULT_TIMEOUT, OpenAiConfig};
