//! The documents plain LSP asks with: a form or a draft written to a file of the sidecar's, opened
//! in the editor, answered when the person saves it (a form only once it is valid, its problems
//! shown as diagnostics on their lines) or runs one of its code actions; closing it is
//! "cancel" (a draft: "closed"). The file goes when the question ends, however it ends.
//!
//! The editor's text is followed (`didOpen`, incremental `didChange`) only for these documents,
//! so that a code action sends what the person sees, saved or not.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;
use serde_json::Value;
use tokio::sync::oneshot;
use tower_lsp_server::Client;
use tower_lsp_server::gen_lsp_types::{
    Diagnostic, DiagnosticSeverity, Position, Range, TextDocumentContentChangeEvent, Uri,
};

use crate::contract::{DraftProblem, EditDraftResult};
use crate::elicitation::{Form, document};
use crate::ui::FormAnswer;

/// What a document asks.
pub enum Kind {
    Form {
        form: Form,
        schema: Value,
        submit: String,
        decline: bool,
    },
    Draft {
        problems: Vec<DraftProblem>,
    },
}

/// A code action of a document: its title and the action the command carries.
pub struct Action {
    pub title: String,
    pub action: &'static str,
}

/// How a document was answered.
pub enum Answer {
    Form(FormAnswer),
    Draft(Option<EditDraftResult>),
}

impl Answer {
    pub fn form(self) -> FormAnswer {
        match self {
            Answer::Form(answer) => answer,
            Answer::Draft(_) => FormAnswer::Cancel,
        }
    }

    pub fn draft(self) -> Option<EditDraftResult> {
        match self {
            Answer::Draft(answer) => answer,
            Answer::Form(_) => None,
        }
    }
}

struct Entry {
    kind: Kind,
    /// The editor's text, once it opened the document.
    text: Option<String>,
    answer: oneshot::Sender<Answer>,
}

/// The open questions' documents, by path, and the language of every document the editor has
/// open (for the tool actions' setting).
pub struct Documents {
    client: Client,
    dir: PathBuf,
    entries: Mutex<HashMap<PathBuf, Entry>>,
    languages: Mutex<HashMap<Uri, String>>,
}

/// A question's document, waiting for its answer; dropping it ends the question (the entry and
/// the file go, its diagnostics are cleared).
pub struct Open {
    pub path: PathBuf,
    documents: Arc<Documents>,
    answer: oneshot::Receiver<Answer>,
}

impl Open {
    pub async fn answer(mut self) -> Answer {
        (&mut self.answer)
            .await
            .unwrap_or(Answer::Form(FormAnswer::Cancel))
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        self.documents.forget(&self.path);
    }
}

/// The outcome of trying to send a document.
#[derive(Debug, PartialEq, Eq)]
pub enum Sent {
    Answered,
    /// This many problems, shown as diagnostics.
    Problems(usize),
    /// Not one of the sidecar's open questions.
    Unknown,
}

impl Documents {
    pub fn new(client: Client) -> Arc<Self> {
        Arc::new(Self {
            client,
            dir: super::folder(),
            entries: Mutex::default(),
            languages: Mutex::default(),
        })
    }

    /// Writes a question's document (`0600`, in a `0700` folder of the person's own).
    pub fn open(self: &Arc<Self>, name: &str, text: String, kind: Kind) -> Option<Open> {
        let path = self.dir.join(format!("{}-{name}", std::process::id()));
        let written = crate::store::owned_dir(&self.dir)
            .and_then(|()| crate::store::write_atomic(&path, text.as_bytes()));
        if let Err(e) = written {
            tracing::warn!("could not write a question's document: {e}");
            return None;
        }
        let (tx, rx) = oneshot::channel();
        if let Kind::Draft { problems } = &kind {
            self.publish(&path, &text, problems_of(problems));
        }
        self.entries.lock().insert(
            path.clone(),
            Entry {
                kind,
                text: None,
                answer: tx,
            },
        );
        Some(Open {
            path,
            documents: self.clone(),
            answer: rx,
        })
    }

    fn forget(&self, path: &Path) {
        if self.entries.lock().remove(path).is_some() || path.exists() {
            let _ = std::fs::remove_file(path);
            self.publish(path, "", Vec::new());
        }
    }

    /// The language id the editor gave `uri`, if it has it open.
    pub fn language(&self, uri: &Uri) -> Option<String> {
        self.languages.lock().get(uri).cloned()
    }

    /// Whether `uri` is one of the open questions' documents.
    pub fn is_question(&self, uri: &Uri) -> bool {
        path_of(uri).is_some_and(|p| self.entries.lock().contains_key(&p))
    }

    pub fn did_open(&self, uri: Uri, language: String, text: String) {
        if let Some(path) = path_of(&uri)
            && let Some(entry) = self.entries.lock().get_mut(&path)
        {
            if let Kind::Draft { problems } = &entry.kind {
                self.publish(&path, &text, problems_of(problems));
            }
            entry.text = Some(text);
        }
        self.languages.lock().insert(uri, language);
    }

    pub fn did_change(&self, uri: &Uri, changes: Vec<TextDocumentContentChangeEvent>) {
        let Some(path) = path_of(uri) else { return };
        let mut entries = self.entries.lock();
        let Some(text) = entries.get_mut(&path).and_then(|e| e.text.as_mut()) else {
            return;
        };
        for change in changes {
            match change {
                TextDocumentContentChangeEvent::TextDocumentContentChangePartial(part) => {
                    apply(text, part.range, &part.text);
                }
                TextDocumentContentChangeEvent::TextDocumentContentChangeWholeDocument(whole) => {
                    *text = whole.text;
                }
            }
        }
    }

    /// A save sends the document (a form only when valid).
    pub fn did_save(&self, uri: &Uri, text: Option<String>) -> Sent {
        let Some(path) = path_of(uri) else {
            return Sent::Unknown;
        };
        if let Some(text) = text
            && let Some(entry) = self.entries.lock().get_mut(&path)
        {
            entry.text = Some(text);
        }
        self.act(&path, "send")
    }

    /// Closing a question's document: a form is cancelled, a draft closed.
    pub fn did_close(&self, uri: &Uri) {
        self.languages.lock().remove(uri);
        if let Some(path) = path_of(uri) {
            self.act(&path, "cancel");
        }
    }

    /// The code actions of a question's document (none for another document).
    pub fn actions(&self, uri: &Uri) -> Vec<Action> {
        let Some(path) = path_of(uri) else {
            return Vec::new();
        };
        let entries = self.entries.lock();
        let Some(entry) = entries.get(&path) else {
            return Vec::new();
        };
        let action = |title: &str, action| Action {
            title: title.to_string(),
            action,
        };
        match &entry.kind {
            Kind::Form {
                submit, decline, ..
            } => {
                let mut actions = vec![action(submit, "send")];
                if *decline {
                    actions.push(action("Decline", "decline"));
                }
                actions.push(action("Cancel", "cancel"));
                actions
            }
            Kind::Draft { .. } => vec![action("Send", "send"), action("Reject", "reject")],
        }
    }

    /// Runs a document's action: `send` (a form once it is valid), `decline`, `reject`, `cancel`.
    pub fn act_on(&self, uri: &Uri, action: &str) -> Sent {
        match path_of(uri) {
            Some(path) => self.act(&path, action),
            None => Sent::Unknown,
        }
    }

    fn act(&self, path: &Path, action: &str) -> Sent {
        let mut entries = self.entries.lock();
        let Some(entry) = entries.get(path) else {
            return Sent::Unknown;
        };
        let answer = match (&entry.kind, action) {
            (Kind::Form { .. }, "cancel") => Answer::Form(FormAnswer::Cancel),
            (Kind::Form { decline: true, .. }, "decline") => Answer::Form(FormAnswer::Decline),
            (Kind::Draft { .. }, "cancel") => Answer::Draft(None),
            (Kind::Draft { .. }, "reject") => Answer::Draft(Some(EditDraftResult::Reject)),
            (kind, "send") => {
                let text = entry
                    .text
                    .clone()
                    .or_else(|| std::fs::read_to_string(path).ok())
                    .unwrap_or_default();
                match kind {
                    Kind::Form { form, schema, .. } => match check(form, schema, &text) {
                        Ok(content) => Answer::Form(FormAnswer::Submit(content)),
                        Err(problems) => {
                            let n = problems.len();
                            drop(entries);
                            self.publish(path, &text, problems);
                            return Sent::Problems(n);
                        }
                    },
                    Kind::Draft { .. } => Answer::Draft(Some(EditDraftResult::Accept { text })),
                }
            }
            _ => return Sent::Unknown,
        };
        if let Some(entry) = entries.remove(path) {
            let _ = entry.answer.send(answer);
        }
        Sent::Answered
    }

    fn publish(&self, path: &Path, text: &str, problems: Vec<document::Problem>) {
        let Ok(uri) = url::Url::from_file_path(path) else {
            return;
        };
        let lines: Vec<&str> = text.lines().collect();
        let diagnostics = problems
            .into_iter()
            .map(|p| {
                let width = lines
                    .get(p.line as usize)
                    .map_or(0, |l| l.encode_utf16().count() as u32);
                Diagnostic {
                    range: Range::new(Position::new(p.line, 0), Position::new(p.line, width)),
                    severity: Some(DiagnosticSeverity::Error),
                    source: Some("mcp-sidecar".into()),
                    message: p.message.into(),
                    ..Default::default()
                }
            })
            .collect();
        let client = self.client.clone();
        tokio::spawn(async move { client.publish_diagnostics(uri, diagnostics, None).await });
    }
}

/// A form's text read and checked: field by field, then against the whole schema.
fn check(
    form: &Form,
    schema: &Value,
    text: &str,
) -> Result<serde_json::Map<String, Value>, Vec<document::Problem>> {
    let content = document::read(form, text)?;
    crate::elicitation::validate(schema, &content)
        .map_err(|message| vec![document::Problem { line: 0, message }])?;
    Ok(content)
}

fn problems_of(problems: &[DraftProblem]) -> Vec<document::Problem> {
    problems
        .iter()
        .map(|p| document::Problem {
            line: p.line,
            message: p.message.clone(),
        })
        .collect()
}

fn path_of(uri: &Uri) -> Option<PathBuf> {
    uri.to_file_path().ok()
}

/// Applies one incremental change (LSP positions: lines, UTF-16 code units).
fn apply(text: &mut String, range: Range, new: &str) {
    let start = offset(text, range.start);
    let end = offset(text, range.end).max(start);
    text.replace_range(start..end, new);
}

/// The byte offset of an LSP position; past a line's end is its end, past the text its end.
fn offset(text: &str, position: Position) -> usize {
    let mut line_start = 0;
    for _ in 0..position.line {
        match text[line_start..].find('\n') {
            Some(i) => line_start += i + 1,
            None => return text.len(),
        }
    }
    let line = &text[line_start..];
    let line = &line[..line.find('\n').unwrap_or(line.len())];
    let mut units = 0;
    for (i, c) in line.char_indices() {
        if units >= position.character {
            return line_start + i;
        }
        units += c.len_utf16() as u32;
    }
    line_start + line.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn incremental_changes_count_utf16_units_and_stay_inside_the_text() {
        let mut text = "a: é𝄞x\nb: 2\n".to_string();
        // After "a: é𝄞" (3 + 1 + 2 units), before "x".
        apply(
            &mut text,
            Range::new(Position::new(0, 6), Position::new(0, 7)),
            "y",
        );
        assert_eq!(text, "a: é𝄞y\nb: 2\n");
        apply(
            &mut text,
            Range::new(Position::new(1, 3), Position::new(1, 99)),
            "3",
        );
        assert_eq!(text, "a: é𝄞y\nb: 3\n");
        apply(
            &mut text,
            Range::new(Position::new(9, 0), Position::new(2, 0)),
            "c:\n",
        );
        assert_eq!(text, "a: é𝄞y\nb: 3\nc:\n");
    }
}
