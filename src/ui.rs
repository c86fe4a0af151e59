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
    /// Hosts a server's view in the editor (`mcp-sidecar/openApp`, when the editor announced
    /// `openApp`); whether it did.
    fn open_app(&self, _params: crate::contract::OpenAppParams) -> BoxFuture<'_, bool> {
        Box::pin(async { false })
    }
    /// Tells the editor the sidecar closed a view (`mcp-sidecar/closeApp`).
    fn close_app(&self, _params: crate::contract::CloseAppParams) {}
    /// A whole form at once (plain LSP's form document), or `None` when the editor shows
    /// forms field by field through [`Prompter::input_box`] and [`Prompter::quick_pick`].
    fn form(&self, _params: FormParams) -> Option<BoxFuture<'_, FormAnswer>> {
        None
    }
    /// Who the question is asked for, when not the editor itself: the agent whose call (through
    /// the gateway) made the server ask. Every prompt's title says it ([`who`], [`title`]).
    fn requester(&self) -> Option<&str> {
        None
    }
    /// What the question is for, when it is not the call the person just made: "for the task
    /// started 10:30 UTC" (a task's question comes later, maybe after a restart). Every
    /// prompt's title says it ([`who`], [`title`]).
    fn purpose(&self) -> Option<&str> {
        None
    }
}

/// A whole form: what [`Prompter::form`] shows.
#[derive(Debug, Clone, PartialEq)]
pub struct FormParams {
    pub server: Option<String>,
    pub title: String,
    /// The fields' JSON Schema (an elicitation's `requestedSchema`, a tool's `inputSchema`).
    pub schema: serde_json::Value,
    /// Prefilled answers, by field name.
    pub values: serde_json::Map<String, serde_json::Value>,
    /// The go-ahead: "Submit", or for the person's own call "Call ‹tool›".
    pub submit: String,
    /// Whether Decline (the server is told no) is offered: not for the person's own call.
    pub decline: bool,
}

/// The person's answer to a whole form.
#[derive(Debug, Clone, PartialEq)]
pub enum FormAnswer {
    Submit(serde_json::Map<String, serde_json::Value>),
    Decline,
    Cancel,
}

/// Who asks, as prompts name it: the server, or "<agent> via the gateway → <server>".
pub fn who(ui: &dyn Prompter, server: &str) -> String {
    let who = match ui.requester() {
        Some(agent) => format!("{agent} via the gateway → {server}"),
        None => server.to_string(),
    };
    match ui.purpose() {
        Some(purpose) => format!("{who}, {purpose},"),
        None => who,
    }
}

/// A prompt's title: "<server>: <text>", or "<agent> via the gateway → <server> asks: <text>".
pub fn title(ui: &dyn Prompter, server: &str, text: &str) -> String {
    match (ui.requester(), ui.purpose()) {
        (None, None) => format!("{server}: {text}"),
        _ => format!("{} asks: {text}", who(ui, server)),
    }
}

/// The editor's UI, asking on behalf of an agent when `agent` is set (see
/// [`Prompter::requester`]).
pub struct Via<'a> {
    pub inner: &'a dyn Prompter,
    pub agent: Option<&'a str>,
    pub purpose: Option<&'a str>,
}

impl Prompter for Via<'_> {
    pass_on!(
        capabilities,
        input_box,
        quick_pick,
        edit_draft,
        open_external,
        clipboard,
        language_model,
        show_file,
        show_message,
        open_app,
        close_app,
        form,
    );
    fn requester(&self) -> Option<&str> {
        self.agent.or_else(|| self.inner.requester())
    }
    fn purpose(&self) -> Option<&str> {
        self.purpose.or_else(|| self.inner.purpose())
    }
}

/// The [`Prompter`] methods a wrapper (a struct with `inner: &dyn Prompter`) passes on to its
/// `inner` unchanged, by name.
macro_rules! pass_on {
    (@capabilities) => {
        fn capabilities(&self) -> $crate::contract::EditorCapabilities {
            self.inner.capabilities()
        }
    };
    (@input_box) => {
        fn input_box(
            &self,
            params: $crate::contract::InputBoxParams,
        ) -> futures::future::BoxFuture<'_, Option<$crate::contract::InputBoxResult>> {
            self.inner.input_box(params)
        }
    };
    (@quick_pick) => {
        fn quick_pick(
            &self,
            params: $crate::contract::QuickPickParams,
        ) -> futures::future::BoxFuture<'_, Option<$crate::contract::QuickPickResult>> {
            self.inner.quick_pick(params)
        }
    };
    (@edit_draft) => {
        fn edit_draft(
            &self,
            params: $crate::contract::EditDraftParams,
        ) -> futures::future::BoxFuture<'_, Option<$crate::contract::EditDraftResult>> {
            self.inner.edit_draft(params)
        }
    };
    (@open_external) => {
        fn open_external(&self, url: String) -> futures::future::BoxFuture<'_, bool> {
            self.inner.open_external(url)
        }
    };
    (@clipboard) => {
        fn clipboard(&self, text: String) {
            self.inner.clipboard(text);
        }
    };
    (@language_model) => {
        fn language_model(
            &self,
            params: serde_json::Value,
        ) -> futures::future::BoxFuture<'_, Result<serde_json::Value, String>> {
            self.inner.language_model(params)
        }
    };
    (@show_file) => {
        fn show_file(&self, path: std::path::PathBuf) -> futures::future::BoxFuture<'_, bool> {
            self.inner.show_file(path)
        }
    };
    (@show_message) => {
        fn show_message(&self, level: $crate::ui::Level, message: String) {
            self.inner.show_message(level, message);
        }
    };
    (@open_app) => {
        fn open_app(
            &self,
            params: $crate::contract::OpenAppParams,
        ) -> futures::future::BoxFuture<'_, bool> {
            self.inner.open_app(params)
        }
    };
    (@close_app) => {
        fn close_app(&self, params: $crate::contract::CloseAppParams) {
            self.inner.close_app(params);
        }
    };
    (@form) => {
        fn form(
            &self,
            params: $crate::ui::FormParams,
        ) -> Option<futures::future::BoxFuture<'_, $crate::ui::FormAnswer>> {
            self.inner.form(params)
        }
    };
    (@requester) => {
        fn requester(&self) -> Option<&str> {
            self.inner.requester()
        }
        fn purpose(&self) -> Option<&str> {
            self.inner.purpose()
        }
    };
    ($($method:ident),* $(,)?) => {
        $($crate::ui::pass_on!(@$method);)*
    };
}
pub(crate) use pass_on;

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
