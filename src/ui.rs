//! The editor's UI as the flows use it. The LSP layer implements [`Prompter`] over the editor
//! contract; tests implement it with scripted answers. A prompt the editor cannot show, or that
//! fails, reads as dismissed (`None`), which flows treat as "cancel".

use futures::future::BoxFuture;

use crate::contract::{
    EditDraftParams, EditDraftResult, EditorCapabilities, InputBoxParams, InputBoxResult,
    QuickPickParams, QuickPickResult,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Error,
    Warning,
    Info,
}

pub trait Prompter: Send + Sync {
    fn capabilities(&self) -> EditorCapabilities;
    fn input_box(&self, params: InputBoxParams) -> BoxFuture<'_, Option<InputBoxResult>>;
    fn quick_pick(&self, params: QuickPickParams) -> BoxFuture<'_, Option<QuickPickResult>>;
    fn edit_draft(&self, params: EditDraftParams) -> BoxFuture<'_, Option<EditDraftResult>>;
    /// Opens a URL in the system browser (`window/showDocument`, `external: true`); whether the
    /// editor says it did.
    fn open_external(&self, url: String) -> BoxFuture<'_, bool>;
    fn clipboard(&self, text: String);
    /// The editor's own model (`mcp-sidecar/languageModel`): `params` is a
    /// `sampling/createMessage` params object plus `model`; the answer a `CreateMessageResult`.
    fn language_model(
        &self,
        params: serde_json::Value,
    ) -> BoxFuture<'_, Result<serde_json::Value, String>>;
    /// Opens a local file in the editor (`window/showDocument`, not external).
    fn show_file(&self, path: std::path::PathBuf) -> BoxFuture<'_, bool>;
    fn show_message(&self, level: Level, message: String);
}

/// No editor at all (the headless conformance client): nothing can be shown, every prompt reads
/// as dismissed, messages go to the log. Policies that answer without asking still work.
pub struct Headless;

impl Prompter for Headless {
    fn capabilities(&self) -> EditorCapabilities {
        EditorCapabilities::default()
    }
    fn input_box(&self, _: InputBoxParams) -> BoxFuture<'_, Option<InputBoxResult>> {
        Box::pin(async { None })
    }
    fn quick_pick(&self, _: QuickPickParams) -> BoxFuture<'_, Option<QuickPickResult>> {
        Box::pin(async { None })
    }
    fn edit_draft(&self, _: EditDraftParams) -> BoxFuture<'_, Option<EditDraftResult>> {
        Box::pin(async { None })
    }
    fn open_external(&self, _: String) -> BoxFuture<'_, bool> {
        Box::pin(async { false })
    }
    fn clipboard(&self, _: String) {}
    fn language_model(
        &self,
        _: serde_json::Value,
    ) -> BoxFuture<'_, Result<serde_json::Value, String>> {
        Box::pin(async { Err("no editor model: running headless".to_string()) })
    }
    fn show_file(&self, _: std::path::PathBuf) -> BoxFuture<'_, bool> {
        Box::pin(async { false })
    }
    fn show_message(&self, level: Level, message: String) {
        match level {
            Level::Error => tracing::error!("{message}"),
            Level::Warning => tracing::warn!("{message}"),
            Level::Info => tracing::info!("{message}"),
        }
    }
}
