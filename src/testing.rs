//! Test doubles shared by the unit tests.

use parking_lot::Mutex;
use std::collections::VecDeque;

use futures::future::BoxFuture;
use serde_json::{Value, json};

use crate::contract::{
    EditDraftParams, EditDraftResult, EditorCapabilities, InputBoxParams, InputBoxResult,
    QuickPickParams, QuickPickResult,
};
use crate::ui::{Level, Prompter};

/// A fake editor: answers prompts in order from a script and records what it was shown.
#[derive(Default)]
pub struct Script {
    pub answers: Mutex<VecDeque<Value>>,
    pub shown: Mutex<Vec<Value>>,
    pub opened: Mutex<Vec<String>>,
    pub clipboard: Mutex<Vec<String>>,
    pub messages: Mutex<Vec<String>>,
    pub caps: EditorCapabilities,
}

impl Script {
    pub fn new(answers: Vec<Value>) -> Self {
        Script {
            answers: Mutex::new(answers.into()),
            caps: EditorCapabilities {
                input_box: true,
                quick_pick: true,
                edit_draft: true,
                clipboard: true,
                language_model: false,
                server_scopes: false,
                open_app: false,
            },
            ..Default::default()
        }
    }
    /// An answer that never comes: the prompt stays open until its waiter drops it.
    pub fn never() -> Value {
        json!({"script": "never answers"})
    }
    fn next<T: serde::de::DeserializeOwned + Send + 'static>(
        &self,
        kind: &str,
        shown: Value,
    ) -> BoxFuture<'static, Option<T>> {
        self.shown
            .lock()
            .push(json!({"kind": kind, "params": shown}));
        let answer = self.answers.lock().pop_front().expect("the script ran out");
        if answer == Self::never() {
            return Box::pin(futures::future::pending());
        }
        let answer = serde_json::from_value(answer).unwrap();
        Box::pin(async move { answer })
    }
    pub fn shown(&self) -> Vec<Value> {
        self.shown.lock().clone()
    }
}

impl Prompter for Script {
    fn capabilities(&self) -> EditorCapabilities {
        self.caps
    }
    fn input_box(&self, p: InputBoxParams) -> BoxFuture<'_, Option<InputBoxResult>> {
        self.next("input", serde_json::to_value(p).unwrap())
    }
    fn quick_pick(&self, p: QuickPickParams) -> BoxFuture<'_, Option<QuickPickResult>> {
        self.next("pick", serde_json::to_value(p).unwrap())
    }
    fn edit_draft(&self, p: EditDraftParams) -> BoxFuture<'_, Option<EditDraftResult>> {
        self.next("draft", serde_json::to_value(p).unwrap())
    }
    fn open_external(&self, url: String) -> BoxFuture<'_, bool> {
        self.opened.lock().push(url);
        Box::pin(async { true })
    }
    fn clipboard(&self, text: String) {
        self.clipboard.lock().push(text);
    }
    fn language_model(&self, _params: Value) -> BoxFuture<'_, Result<Value, String>> {
        Box::pin(async { Err("no model".to_string()) })
    }
    fn show_file(&self, _path: std::path::PathBuf) -> BoxFuture<'_, bool> {
        Box::pin(async { false })
    }
    fn show_message(&self, _level: Level, message: String) {
        self.messages.lock().push(message);
    }
}
