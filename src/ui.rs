//! The editor's UI as the flows use it. The LSP layer implements [`Prompter`] over the editor
//! contract; tests implement it with scripted answers. A prompt the editor cannot show, or that
//! fails, reads as dismissed (`None`), which flows treat as "cancel".

use futures::future::BoxFuture;

use crate::lsp::ext::{
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
