//! The editor's UI primitives as the sidecar uses them: each prompt gets a correlation id, a
//! primitive the editor did not declare is treated as dismissed (never a hang), and a prompt
//! whose waiter goes away (cancelled request, server gave up) is closed in the editor with
//! `mcp-sidecar/cancelPrompt`. An editor without the plugin gets every prompt through standard
//! LSP instead ([`super::plain`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures::future::BoxFuture;
use tower_lsp_server::Client;
use tower_lsp_server::gen_lsp_types::{MessageType, Request, ShowDocumentParams};

use super::methods::{
    CancelPrompt, Clipboard, CloseApp, EditDraft, InputBox, LanguageModel, OpenApp, QuickPick,
};
use super::plain::{Plain, PlainCapabilities};
use crate::contract::CallError;
use crate::contract::shown::{self, Shown};
use crate::contract::{
    CancelPromptParams, ClipboardParams, EditDraftParams, EditDraftResult, EditorCapabilities,
    InputBoxParams, InputBoxResult, QuickPickParams, QuickPickResult,
};
use crate::ui::{FormAnswer, FormParams, Level, Prompter};

#[derive(Clone)]
pub struct Editor {
    client: Client,
    capabilities: EditorCapabilities,
    next_id: Arc<AtomicU64>,
    /// Standard LSP's prompts, for an editor without the plugin (no `experimental.mcpSidecar`
    /// at all). An editor with the plugin gets "dismissed" for what it did not declare.
    plain: Option<Arc<Plain>>,
}

impl Editor {
    /// An editor with the plugin (it declared `experimental.mcpSidecar`).
    pub fn new(client: Client, capabilities: EditorCapabilities) -> Self {
        Self {
            plain: None,
            client,
            capabilities,
            next_id: Arc::new(AtomicU64::new(1)),
        }
    }

    /// An editor without the plugin: every prompt through standard LSP ([`Plain`]).
    pub fn plain_lsp(client: Client, capabilities: PlainCapabilities) -> Self {
        Self {
            plain: Some(Plain::new(client.clone(), capabilities)),
            client,
            capabilities: EditorCapabilities::default(),
            next_id: Arc::new(AtomicU64::new(1)),
        }
    }

    /// Plain LSP's prompts and documents, for an editor without the plugin.
    pub fn plain(&self) -> Option<&Arc<Plain>> {
        self.plain.as_ref()
    }

    pub fn next_prompt_id(&self) -> String {
        format!("p{}", self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// A quick pick; unlike [`Prompter::quick_pick`], a failure to show it is an error.
    pub async fn try_quick_pick(
        &self,
        mut params: QuickPickParams,
    ) -> Result<Option<QuickPickResult>, CallError> {
        if let Some(plain) = &self.plain {
            return Ok(plain.quick_pick(params).await);
        }
        if !self.capabilities.quick_pick {
            tracing::info!(title = %params.title, "the editor has no quickPick; treating the prompt as dismissed");
            return Ok(None);
        }
        if params.id.is_empty() {
            params.id = self.next_prompt_id();
        }
        let id = params.id.clone();
        self.ask::<QuickPick>(id, params.shown()).await
    }

    /// An input box; unlike [`Prompter::input_box`], a failure to show it is an error.
    pub async fn try_input_box(
        &self,
        mut params: InputBoxParams,
    ) -> Result<Option<InputBoxResult>, CallError> {
        if let Some(plain) = &self.plain {
            return Ok(plain.input_box(params).await);
        }
        if !self.capabilities.input_box {
            tracing::info!(title = %params.title, "the editor has no inputBox; treating the prompt as dismissed");
            return Ok(None);
        }
        if params.id.is_empty() {
            params.id = self.next_prompt_id();
        }
        let id = params.id.clone();
        self.ask::<InputBox>(id, params.shown()).await
    }

    async fn ask<R: Request>(&self, id: String, params: R::Params) -> Result<R::Result, CallError> {
        let mut guard = PromptGuard {
            client: self.client.clone(),
            id: Some(id),
        };
        let result = self.client.send_request::<R>(params).await;
        guard.id = None;
        result.map_err(|e| {
            CallError::Refused(format!(
                "the editor failed to show the prompt: {}",
                e.message
            ))
        })
    }
}

/// Closes the prompt in the editor if the waiter stops waiting before the answer.
struct PromptGuard {
    client: Client,
    id: Option<String>,
}

impl Drop for PromptGuard {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            let client = self.client.clone();
            tokio::spawn(async move {
                client
                    .send_notification::<CancelPrompt>(CancelPromptParams { id })
                    .await;
            });
        }
    }
}

impl Prompter for Editor {
    /// What the editor can show: without the plugin, plain LSP shows questions and drafts.
    fn capabilities(&self) -> EditorCapabilities {
        match self.plain {
            Some(_) => EditorCapabilities {
                input_box: true,
                quick_pick: true,
                edit_draft: true,
                ..self.capabilities
            },
            None => self.capabilities,
        }
    }

    fn input_box(&self, params: InputBoxParams) -> BoxFuture<'_, Option<InputBoxResult>> {
        Box::pin(async move { dismissed_on_error(self.try_input_box(params).await) })
    }

    fn quick_pick(&self, params: QuickPickParams) -> BoxFuture<'_, Option<QuickPickResult>> {
        Box::pin(async move { dismissed_on_error(self.try_quick_pick(params).await) })
    }

    fn edit_draft(&self, mut params: EditDraftParams) -> BoxFuture<'_, Option<EditDraftResult>> {
        Box::pin(async move {
            if let Some(plain) = &self.plain {
                return plain.edit_draft(params).await;
            }
            if !self.capabilities.edit_draft {
                tracing::info!(title = %params.title, "the editor has no editDraft; treating the draft as closed");
                return None;
            }
            if params.id.is_empty() {
                params.id = self.next_prompt_id();
            }
            let id = params.id.clone();
            dismissed_on_error(self.ask::<EditDraft>(id, params.shown()).await)
        })
    }

    fn open_external(&self, url: String) -> BoxFuture<'_, bool> {
        Box::pin(async move {
            // The flows asked already; this is the last check before the editor opens it.
            let uri = match crate::elicitation::url::check(&url) {
                Ok(uri) => uri,
                Err(why) => {
                    tracing::warn!("not asking the editor to open a URL: {why}");
                    return false;
                }
            };
            let host = crate::elicitation::url::host(&uri);
            let params = ShowDocumentParams {
                uri,
                external: Some(true),
                take_focus: Some(true),
                selection: None,
            };
            match self.client.show_document(params).await {
                Ok(shown) => shown,
                Err(e) => {
                    tracing::warn!("the editor could not open a page at {host}: {}", e.message);
                    false
                }
            }
        })
    }

    fn clipboard(&self, text: String) {
        if !self.capabilities.clipboard {
            tracing::info!("the editor has no clipboard primitive; not copying");
            return;
        }
        let client = self.client.clone();
        tokio::spawn(async move {
            client
                .send_notification::<Clipboard>(ClipboardParams { text })
                .await;
        });
    }

    fn language_model(
        &self,
        params: serde_json::Value,
    ) -> BoxFuture<'_, Result<serde_json::Value, String>> {
        Box::pin(async move {
            if !self.capabilities.language_model {
                return Err("the editor offers no language model".into());
            }
            self.client
                .send_request::<LanguageModel>(params)
                .await
                .map_err(|e| format!("the editor's model failed: {}", e.message))
        })
    }

    fn show_file(&self, path: std::path::PathBuf) -> BoxFuture<'_, bool> {
        Box::pin(async move {
            let Ok(uri) = url::Url::from_file_path(&path) else {
                return false;
            };
            let params = ShowDocumentParams {
                uri,
                external: Some(false),
                take_focus: Some(true),
                selection: None,
            };
            self.client.show_document(params).await.unwrap_or(false)
        })
    }

    fn open_app(&self, params: crate::contract::OpenAppParams) -> BoxFuture<'_, bool> {
        Box::pin(async move {
            if !self.capabilities.open_app {
                return false;
            }
            match self.client.send_request::<OpenApp>(params).await {
                Ok(result) => result.is_some_and(|r| r.opened),
                Err(e) => {
                    tracing::warn!("the editor could not open a view: {}", e.message);
                    false
                }
            }
        })
    }

    fn close_app(&self, params: crate::contract::CloseAppParams) {
        // Only a plugin knows the notification.
        if self.plain.is_some() {
            return;
        }
        let client = self.client.clone();
        tokio::spawn(async move { client.send_notification::<CloseApp>(params).await });
    }

    fn form(&self, params: FormParams) -> Option<BoxFuture<'_, FormAnswer>> {
        let plain = self.plain.as_ref()?;
        Some(Box::pin(plain.form(params)))
    }

    fn show_message(&self, level: Level, message: String) {
        let client = self.client.clone();
        let kind = match level {
            Level::Error => MessageType::Error,
            Level::Warning => MessageType::Warning,
            Level::Info => MessageType::Info,
        };
        let message = shown::block(&message, shown::MAX_MESSAGE).into_owned();
        tokio::spawn(async move { client.show_message(kind, message).await });
    }
}

fn dismissed_on_error<T>(answer: Result<Option<T>, CallError>) -> Option<T> {
    answer.unwrap_or_else(|e| {
        tracing::warn!("{e}; treating the prompt as dismissed");
        None
    })
}
