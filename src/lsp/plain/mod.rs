//! Plain LSP: the editor's prompts for an editor that did not declare the sidecar's own (no
//! plugin: Helix, Zed, Kate, Sublime Text, eglot, lsp-mode, Neovim's `vim.lsp`). Choices are
//! `window/showMessageRequest`; forms, text and drafts are documents the person edits and
//! saves ([`documents`]); results open as documents ([`results`]). Chosen per primitive: an
//! editor that declares a primitive gets it, this is for the ones it does not.

pub mod documents;
pub mod results;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Map, Value, json};
use tokio::sync::oneshot;
use tower_lsp_server::Client;
use tower_lsp_server::gen_lsp_types::{
    ClientCapabilities, MessageActionItem, MessageType, ShowDocumentParams,
};

use crate::contract::{
    DraftKind, EditDraftParams, EditDraftResult, InputBoxParams, InputBoxResult, QuickPickParams,
    QuickPickResult, shown,
};
use crate::ui::{FormAnswer, FormParams};
use documents::{Documents, Kind};

/// The most choices one `window/showMessageRequest` offers; a longer list is a form document.
pub const MAX_ACTIONS: usize = 12;

/// What the editor's `initialize` says it can do, of what plain LSP uses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PlainCapabilities {
    /// `window.showDocument.support`: documents open by themselves; else a message names them.
    pub show_document: bool,
    /// `window.workDoneProgress`: the sidecar may create progress (cancellable).
    pub work_done_progress: bool,
}

impl PlainCapabilities {
    pub fn from_client(capabilities: &ClientCapabilities) -> Self {
        let window = capabilities.window.as_ref();
        Self {
            show_document: window
                .and_then(|w| w.show_document.as_ref())
                .is_some_and(|s| s.support),
            work_done_progress: window.and_then(|w| w.work_done_progress) == Some(true),
        }
    }
}

/// The plain-LSP prompts of one editor.
pub struct Plain {
    client: Client,
    capabilities: PlainCapabilities,
    documents: Arc<Documents>,
    next: AtomicU64,
    /// The sidecar's own progress tokens, and how to cancel what each reports on.
    cancels: parking_lot::Mutex<std::collections::HashMap<String, oneshot::Sender<()>>>,
}

impl Plain {
    pub fn new(client: Client, capabilities: PlainCapabilities) -> Arc<Self> {
        Arc::new(Self {
            documents: Documents::new(client.clone()),
            client,
            capabilities,
            next: AtomicU64::new(1),
            cancels: Default::default(),
        })
    }

    /// A new progress token of the sidecar's, and what fires when the editor cancels it.
    pub fn progress_token(&self) -> (String, oneshot::Receiver<()>) {
        let token = format!("mcp-sidecar/{}", self.next_id());
        let (tx, rx) = oneshot::channel();
        self.cancels.lock().insert(token.clone(), tx);
        (token, rx)
    }

    /// `window/workDoneProgress/cancel` for one of the sidecar's tokens.
    pub fn cancel(&self, token: &str) {
        if let Some(tx) = self.cancels.lock().remove(token) {
            let _ = tx.send(());
        }
    }

    /// The token's progress ended.
    pub fn forget_token(&self, token: &str) {
        self.cancels.lock().remove(token);
    }

    /// Writes a result document and opens it (results of a day before are cleared then).
    pub async fn show_result(&self, text: &str) -> bool {
        let dir = folder();
        let path = dir.join(format!(
            "{}-{}-result.md",
            std::process::id(),
            self.next_id()
        ));
        clear_old_results(&dir);
        let written = crate::store::owned_dir(&dir)
            .and_then(|()| crate::store::write_atomic(&path, text.as_bytes()));
        if let Err(e) = written {
            tracing::warn!("could not write a result document: {e}");
            return false;
        }
        self.show(&path).await
    }

    pub fn capabilities(&self) -> PlainCapabilities {
        self.capabilities
    }

    pub fn documents(&self) -> &Arc<Documents> {
        &self.documents
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    fn next_id(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// One choice among a few as `window/showMessageRequest`; a longer list, or several to
    /// pick, as a form document with one field.
    pub async fn quick_pick(&self, params: QuickPickParams) -> Option<QuickPickResult> {
        if params.can_pick_many || params.items.len() > MAX_ACTIONS {
            return self.pick_in_document(params).await;
        }
        let mut message = shown::line(&params.title, shown::MAX_MESSAGE).into_owned();
        if let (Some(step), Some(total)) = (params.step, params.total_steps) {
            message.push_str(&format!(" (step {step} of {total})"));
        }
        if let Some(placeholder) = &params.placeholder {
            message.push_str(&format!("\n{}", shown::line(placeholder, shown::MAX_TEXT)));
        }
        for item in &params.items {
            if let Some(description) = &item.description {
                message.push_str(&format!(
                    "\n• {} — {}",
                    shown::line(&item.label, shown::MAX_LINE),
                    shown::line(description, shown::MAX_TEXT)
                ));
            }
        }
        let mut titles = unique_titles(params.items.iter().map(|i| i.label.as_str()));
        let back = params
            .can_go_back
            .then(|| unique_extra(&mut titles, "← Back"));
        let actions = titles
            .iter()
            .map(|title| MessageActionItem {
                title: title.clone(),
                properties: Default::default(),
            })
            .collect();
        let picked = self
            .client
            .show_message_request(MessageType::Info, message, Some(actions))
            .await
            .map_err(|e| tracing::warn!("the editor failed to show a choice: {}", e.message))
            .ok()??;
        if back.as_deref() == Some(picked.title.as_str()) {
            return Some(QuickPickResult::Back { back: true });
        }
        let index = titles.iter().position(|t| *t == picked.title)?;
        (index < params.items.len()).then_some(QuickPickResult::Selected {
            selected: vec![index],
        })
    }

    /// A pick as a form document: one choice field (several for a multi-select).
    async fn pick_in_document(&self, params: QuickPickParams) -> Option<QuickPickResult> {
        let titles = unique_titles(params.items.iter().map(|i| i.label.as_str()));
        let options: Vec<Value> = titles
            .iter()
            .zip(&params.items)
            .map(|(title, item)| {
                let mut option = json!({"const": title, "title": title});
                if let Some(d) = &item.description {
                    option["description"] = d.clone().into();
                }
                option
            })
            .collect();
        let description = params.placeholder.clone().unwrap_or_default();
        let field = if params.can_pick_many {
            json!({"type": "array", "title": "Choose", "description": description,
                "items": {"anyOf": options}})
        } else {
            json!({"type": "string", "title": "Choose", "description": description,
                "oneOf": options})
        };
        let mut values = Map::new();
        let picked: Vec<Value> = params
            .items
            .iter()
            .zip(&titles)
            .filter(|(item, _)| item.picked)
            .map(|(_, t)| Value::String(t.clone()))
            .collect();
        if params.can_pick_many && !picked.is_empty() {
            values.insert("choice".into(), Value::Array(picked));
        }
        let required = !(params.can_pick_many && params.can_skip);
        let schema = json!({"type": "object", "properties": {"choice": field},
            "required": if required { vec!["choice"] } else { vec![] }});
        let form = FormParams {
            server: params.server.clone(),
            title: params.title.clone(),
            schema,
            values,
            submit: "Choose".into(),
            decline: false,
        };
        let FormAnswer::Submit(answer) = self.form(form).await else {
            return None;
        };
        let chosen: Vec<&str> = match answer.get("choice") {
            Some(Value::String(one)) => vec![one.as_str()],
            Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if chosen.is_empty() && params.can_skip {
            return Some(QuickPickResult::Skip { skip: true });
        }
        let selected = chosen
            .iter()
            .filter_map(|c| titles.iter().position(|t| t == c))
            .collect();
        Some(QuickPickResult::Selected { selected })
    }

    /// One line of text as a form document with one field. A secret is not asked this way: a
    /// saved file (and the editor's backups of it) would keep it.
    pub async fn input_box(&self, params: InputBoxParams) -> Option<InputBoxResult> {
        if params.password {
            self.say(
                MessageType::Warning,
                format!(
                    "{}: this asks for a secret, which the sidecar does not ask for in a file. \
                     Use an editor plugin of mcp-sidecar, or give it in the environment.",
                    shown::line(&params.title, shown::MAX_LINE)
                ),
            );
            return None;
        }
        let mut description = params.prompt.clone().unwrap_or_default();
        if let Some(problem) = &params.validation_message {
            description.push_str(&format!(" ({problem})"));
        }
        let schema = json!({"type": "object", "properties": {"value": {"type": "string",
            "title": "Value", "description": description}},
            "required": if params.can_skip { vec![] } else { vec!["value"] }});
        let mut values = Map::new();
        if let Some(v) = &params.value {
            values.insert("value".into(), v.clone().into());
        }
        let form = FormParams {
            server: params.server.clone(),
            title: params.title.clone(),
            schema,
            values,
            submit: "Submit".into(),
            decline: false,
        };
        match self.form(form).await {
            FormAnswer::Submit(answer) => Some(InputBoxResult::Value {
                value: answer
                    .get("value")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
            }),
            _ => None,
        }
    }

    /// A whole form as a document: answered when the person saves it valid, or picks Submit,
    /// Decline or Cancel among its code actions; closing it cancels.
    pub async fn form(&self, params: FormParams) -> FormAnswer {
        let Ok(form) = crate::elicitation::Form::parse(&params.schema) else {
            return FormAnswer::Cancel;
        };
        let who = params
            .server
            .clone()
            .unwrap_or_else(|| "mcp-sidecar".into());
        let mut intro = vec![
            params.title.clone(),
            String::new(),
            "Fill in each value after its colon and save: it is sent when every value is valid."
                .into(),
        ];
        intro.push(if params.decline {
            format!(
                "Code actions: {}, Decline (tell {who} no), Cancel. Closing this file cancels.",
                params.submit
            )
        } else {
            format!(
                "Code actions: {}, Cancel. Closing this file cancels.",
                params.submit
            )
        });
        intro.push("Lines that start with # are notes; they are not sent.".into());
        let text = crate::elicitation::document::render(&form, &intro, &params.values);
        let name = format!("{}-{}.mcpform", self.next_id(), file_word(&who));
        let kind = Kind::Form {
            form,
            schema: params.schema,
            submit: params.submit,
            decline: params.decline,
        };
        let Some(open) = self.documents.open(&name, text, kind) else {
            return FormAnswer::Cancel;
        };
        self.show(&open.path).await;
        open.answer().await.form()
    }

    /// A draft (a sampling request or the model's answer, arguments as JSON) as a document:
    /// saving it, or its Send code action, sends it; Reject refuses; closing it is "closed".
    pub async fn edit_draft(&self, params: EditDraftParams) -> Option<EditDraftResult> {
        let who = params
            .server
            .clone()
            .unwrap_or_else(|| "mcp-sidecar".into());
        let what = match params.kind {
            DraftKind::SamplingRequest => "request",
            DraftKind::SamplingResponse => "answer",
            DraftKind::Form | DraftKind::ToolArguments => "arguments",
        };
        let extension = match params.language.as_str() {
            "json" => "json",
            "markdown" => "md",
            _ => "txt",
        };
        let name = format!("{}-{}-{what}.{extension}", self.next_id(), file_word(&who));
        let kind = Kind::Draft {
            problems: params.problems.clone(),
        };
        let open = self.documents.open(&name, params.text.clone(), kind)?;
        self.say(
            MessageType::Info,
            format!(
                "{} — edit the draft and save it to send it; code action Reject refuses it, \
                 closing it leaves it unsent.",
                shown::line(&params.title, shown::MAX_LINE)
            ),
        );
        self.show(&open.path).await;
        open.answer().await.draft()
    }

    /// Opens a file of the sidecar's in the editor, or names it where the editor cannot.
    pub async fn show(&self, path: &std::path::Path) -> bool {
        if self.capabilities.show_document
            && let Ok(uri) = url::Url::from_file_path(path)
        {
            let params = ShowDocumentParams {
                uri,
                external: Some(false),
                take_focus: Some(true),
                selection: None,
            };
            match self.client.show_document(params).await {
                Ok(true) => return true,
                Ok(false) => tracing::info!("the editor did not open {}", path.display()),
                Err(e) => tracing::warn!("the editor could not open a document: {}", e.message),
            }
        }
        self.say(MessageType::Info, format!("Open {}", path.display()));
        false
    }

    /// A message to the person (`window/showMessage`).
    pub fn say(&self, kind: MessageType, text: String) {
        let client = self.client.clone();
        tokio::spawn(async move { client.show_message(kind, text).await });
    }
}

/// Where the documents live: `<state>/documents`, or a temporary folder without a state folder.
pub fn folder() -> PathBuf {
    crate::paths::state_dir()
        .unwrap_or_else(|| std::env::temp_dir().join("mcp-sidecar"))
        .join("documents")
}

/// Removes result documents older than a day.
fn clear_old_results(dir: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let day = std::time::Duration::from_secs(24 * 3600);
    for entry in entries.flatten() {
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > day);
        if old && entry.file_name().to_string_lossy().ends_with("-result.md") {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// A word of a file name from a server's name: letters, digits, `-` and `_`, at most 40.
fn file_word(name: &str) -> String {
    let word: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    if word.is_empty() { "mcp".into() } else { word }
}

/// The items' labels as action titles, cleaned for the screen, a duplicate made unique with
/// " (2)", " (3)": the editor answers with a title.
fn unique_titles<'a>(labels: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut titles: Vec<String> = Vec::new();
    for label in labels {
        let base = shown::line(label, shown::MAX_LINE).into_owned();
        let mut title = base.clone();
        let mut n = 2;
        while titles.contains(&title) {
            title = format!("{base} ({n})");
            n += 1;
        }
        titles.push(title);
    }
    titles
}

/// Adds an extra action (Back) after the items, unique among them.
fn unique_extra(titles: &mut Vec<String>, label: &str) -> String {
    let mut title = label.to_string();
    while titles.contains(&title) {
        title.push('…');
    }
    titles.push(title.clone());
    title
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server's name from a workspace file never leaves the documents folder or hides as a
    /// dot file; duplicate choices stay apart.
    #[test]
    fn names_and_titles_from_servers_stay_what_they_look_like() {
        assert_eq!(file_word("../../.ssh/x"), "_______ssh_x");
        assert_eq!(file_word(".hidden"), "_hidden");
        assert_eq!(file_word(""), "mcp");
        assert_eq!(file_word(&"a".repeat(100)).len(), 40);
        assert_eq!(
            unique_titles(["Trust", "Trust", "Trust\u{202e}"].into_iter()),
            ["Trust", "Trust (2)", "Trust⟨U+202E⟩"]
        );
    }
}
