//! The configuration task: reads every source, asks `${input:}` values and trust decisions
//! through the editor (never inside an LSP handler), applies the result, and re-runs when the
//! editor's settings, the folders or any config file change.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::Mutex;
use std::time::{Duration, SystemTime};

use serde_json::Value;
use tokio::sync::mpsc;
use tower_lsp_server::Client;
use tower_lsp_server::gen_lsp_types::MessageType;

use super::editor::Editor;
use crate::config::{self, Context, trust};
use crate::contract::shown;
use crate::contract::{
    InputBoxParams, InputBoxResult, QuickPickItem, QuickPickParams, QuickPickResult,
};
use crate::mcp::{Manager, TrustRequest};
use crate::roots::Folder;
use crate::ui::Prompter as _;

/// How often config files are checked for changes (editors that send
/// `workspace/didChangeWatchedFiles` trigger a re-read at once).
const POLL: Duration = Duration::from_millis(1000);

#[derive(Default)]
pub struct ConfigState {
    pub settings: Mutex<Value>,
    pub folders: Mutex<Vec<Folder>>,
}

impl ConfigState {
    fn folder_paths(&self) -> Vec<PathBuf> {
        self.folders
            .lock()
            .iter()
            .filter_map(|f| f.uri.to_file_path().ok())
            .collect()
    }
}

/// Starts the task; each message on the returned sender asks for a re-read.
pub fn spawn(
    client: Client,
    editor: Editor,
    manager: Arc<Manager>,
    state: Arc<ConfigState>,
) -> mpsc::UnboundedSender<()> {
    let (tx, mut rx) = mpsc::unbounded_channel::<()>();
    let again = tx.clone();
    tokio::spawn(async move {
        let mut task = Task {
            client,
            editor,
            manager,
            state,
            inputs: HashMap::new(),
            asked_inputs: HashSet::new(),
            reported: HashSet::new(),
            asked_trust: HashSet::new(),
            stamps: HashMap::new(),
            env_files: Vec::new(),
        };
        let mut poll = tokio::time::interval(POLL);
        loop {
            tokio::select! {
                msg = rx.recv() => {
                    if msg.is_none() {
                        return;
                    }
                    while rx.try_recv().is_ok() {}
                }
                _ = poll.tick() => {
                    if !task.files_changed() {
                        continue;
                    }
                }
            }
            // Under the panic guard: a bug hit by a workspace's file must not end this task
            // (every later configuration change would be lost without a word).
            match crate::guard::catch(task.run()).await {
                Ok(true) => {
                    let _ = again.send(());
                }
                Ok(false) => {}
                Err(panic) => tracing::error!("applying the configuration failed: {panic}"),
            }
        }
    });
    tx
}

struct Task {
    client: Client,
    editor: Editor,
    manager: Arc<Manager>,
    state: Arc<ConfigState>,
    /// `${input:}` answers (keyed by [`config::input_key`]), in memory for this editor session
    /// only.
    inputs: HashMap<String, String>,
    asked_inputs: HashSet<String>,
    /// Problems already shown (each is reported once).
    reported: HashSet<String>,
    /// Trust questions already asked this session (server + definition).
    asked_trust: HashSet<String>,
    stamps: HashMap<PathBuf, Option<SystemTime>>,
    /// The servers' `envFile`s, watched like the config files.
    env_files: Vec<PathBuf>,
}

impl Task {
    /// Whether any config file appeared, changed or disappeared since the last look.
    fn files_changed(&mut self) -> bool {
        let mut changed = false;
        let mut files = config::workspace::watched_files(&self.state.folder_paths());
        files.extend(self.env_files.iter().cloned());
        for path in files {
            let stamp = std::fs::metadata(&path).and_then(|m| m.modified()).ok();
            match self.stamps.insert(path, stamp) {
                Some(previous) if previous != stamp => changed = true,
                _ => {}
            }
        }
        changed
    }

    /// Reads every source and resolves it on a blocking thread: files may be slow, and the
    /// event loop keeps answering the editor meanwhile.
    async fn resolve(
        &self,
        settings: &Value,
        folders: &[PathBuf],
    ) -> (
        Vec<config::Layer>,
        config::Resolved,
        Vec<config::ConfigError>,
    ) {
        let cx = Context {
            folders: folders.to_vec(),
            inputs: self.inputs.clone(),
            editor_scopes: if self.editor.capabilities().server_scopes {
                config::EditorScopes::Reported
            } else {
                config::EditorScopes::Unreported
            },
        };
        let settings = settings.clone();
        let read = tokio::task::spawn_blocking(move || {
            let (layers, mut errors) = config::layers(&settings, &cx.folders);
            let (resolved, more) = config::resolve(&layers, &cx);
            errors.extend(more);
            (layers, resolved, errors)
        });
        match read.await {
            Ok(done) => done,
            Err(e) => {
                tracing::error!("reading the configuration failed: {e}");
                (Vec::new(), config::Resolved::default(), Vec::new())
            }
        }
    }

    /// One pass; true when a trust decision calls for another.
    async fn run(&mut self) -> bool {
        let settings = self.state.settings.lock().clone();
        let folders = self.state.folder_paths();
        self.files_changed();
        let (layers, mut resolved, mut errors) = self.resolve(&settings, &folders).await;
        // `${input:}` questions only for servers about to start: the person's own, or trusted.
        let mut answered = false;
        for spec in resolved.servers.iter().flatten() {
            let may_start = match &spec.trust {
                None => true,
                Some(info) => {
                    !resolved.restricted && trust::decision(&spec.name, info) == Some(true)
                }
            };
            if !may_start || spec.disabled {
                continue;
            }
            for id in &spec.missing_inputs {
                let key = config::input_key(&spec.source, id);
                if self.inputs.contains_key(&key) || !self.asked_inputs.insert(key.clone()) {
                    continue;
                }
                let def = config::input_def(&layers, &spec.source, id);
                if let Some(value) = self.ask_input(&def, spec).await {
                    self.inputs.insert(key, value);
                    answered = true;
                }
            }
        }
        if answered {
            (_, resolved, errors) = self.resolve(&settings, &folders).await;
        }
        self.env_files = resolved
            .servers
            .iter()
            .flatten()
            .filter_map(|s| s.env_file.clone())
            .collect();
        self.files_changed();
        let warnings = std::mem::take(&mut resolved.warnings);
        for (error, level) in errors
            .into_iter()
            .map(|e| (e, MessageType::Error))
            .chain(warnings.into_iter().map(|w| (w, MessageType::Warning)))
        {
            let message = error.to_string();
            let first = self.reported.insert(message.clone());
            // Ignored keys are logged once; errors at every pass.
            if first || level == MessageType::Error {
                tracing::warn!("{message}");
            }
            if first {
                let message =
                    crate::contract::shown::block(&message, crate::contract::shown::MAX_MESSAGE);
                self.client.show_message(level, message.into_owned()).await;
            }
        }
        let asks = self.manager.apply(resolved).await;
        // One question per file: a repository's servers are decided together (or one by one,
        // if the person chooses), in the order the files came.
        let mut files: Vec<Vec<(TrustRequest, config::TrustInfo)>> = Vec::new();
        for ask in asks {
            let Some(info) = self.manager.trust_info(&ask.server) else {
                continue;
            };
            let subject = format!(
                "{}\0{}\0{}\0{}",
                ask.server, info.workspace, info.definition, info.resolved
            );
            if !self.asked_trust.insert(subject) {
                continue;
            }
            match files.iter_mut().find(|f| f[0].0.origin == ask.origin) {
                Some(file) => file.push((ask, info)),
                None => files.push(vec![(ask, info)]),
            }
        }
        let mut decided = false;
        for file in files {
            let asks: Vec<&TrustRequest> = file.iter().map(|(ask, _)| ask).collect();
            let answers = if let [ask] = asks[..] {
                vec![self.ask_trust(ask).await]
            } else {
                self.ask_trust_file(&asks).await
            };
            for ((ask, info), trusted) in file.iter().zip(answers) {
                if let Some(trusted) = trusted {
                    trust::record(&ask.server, info, trusted);
                    decided = true;
                }
            }
        }
        decided
    }

    async fn ask_input(
        &self,
        input: &config::InputDef,
        spec: &config::ServerSpec,
    ) -> Option<String> {
        let answer = self
            .editor
            .try_input_box(InputBoxParams {
                server: Some(spec.name.clone()),
                title: format!(
                    "MCP configuration: {}",
                    input.description.as_deref().unwrap_or(&input.id)
                ),
                prompt: Some(format!(
                    "Value for ${{input:{}}} of the server \"{}\" from {} (kept in memory for this session only)",
                    input.id, spec.name, spec.source
                )),
                value: input.default.clone(),
                password: input.password,
                ..Default::default()
            })
            .await
            .ok()
            .flatten();
        match answer {
            Some(InputBoxResult::Value { value }) => Some(value),
            _ => None,
        }
    }

    /// Asks whether to trust one server. "Show the whole definition" opens its file (or, for
    /// the editor's settings, shows the whole command line) and asks again.
    async fn ask_trust(&self, ask: &TrustRequest) -> Option<bool> {
        let command = ask.description.as_str();
        let mut trust = QuickPickItem::new("Trust").with_description(cap(command, shown::MAX_LINE));
        trust.detail =
            (!ask.asks_for.is_empty()).then(|| format!("asks for: {}", ask.asks_for.join("; ")));
        let params = QuickPickParams {
            title: format!(
                "From {}: Trust the MCP server {}?",
                shown::line(&ask.origin, shown::MAX_LINE),
                quoted_name(&ask.server)
            ),
            placeholder: Some(format!("It will run: {}", cap(command, shown::MAX_LINE))),
            items: vec![
                trust,
                QuickPickItem::new("Don't trust"),
                self.show_item(ask.file.as_deref(), command),
            ],
            ..Default::default()
        };
        match self
            .pick_showing(params, ask.file.as_deref(), command)
            .await
        {
            Some(0) => Some(true),
            Some(1) => Some(false),
            _ => None,
        }
    }

    /// Asks once about the servers one file defines: all, none, or one by one.
    async fn ask_trust_file(&self, asks: &[&TrustRequest]) -> Vec<Option<bool>> {
        let first = asks[0];
        let n = asks.len();
        let names = asks
            .iter()
            .map(|a| quoted_name(&a.server))
            .collect::<Vec<_>>()
            .join(", ");
        let lines = asks
            .iter()
            .map(|a| format!("{}: {}", quoted_name(&a.server), a.description))
            .collect::<Vec<_>>()
            .join("; ");
        let asks_for: Vec<String> = asks
            .iter()
            .flat_map(|a| {
                a.asks_for
                    .iter()
                    .map(|what| format!("{} {what}", quoted_name(&a.server)))
            })
            .collect();
        let mut all = QuickPickItem::new(format!("Trust all {n}"))
            .with_description(cap(&names, shown::MAX_LINE));
        all.detail = (!asks_for.is_empty())
            .then(|| cap(&format!("asks for: {}", asks_for.join("; ")), WHOLE));
        let params = QuickPickParams {
            title: format!(
                "From {}: Trust the {n} MCP servers it defines?",
                shown::line(&first.origin, shown::MAX_LINE),
            ),
            placeholder: Some(format!("They will run: {}", cap(&lines, shown::MAX_LINE))),
            items: vec![
                all,
                QuickPickItem::new("Don't trust any"),
                QuickPickItem::new("Choose one by one")
                    .with_description(format!("a question for each of the {n}")),
                self.show_item(first.file.as_deref(), &lines),
            ],
            ..Default::default()
        };
        match self
            .pick_showing(params, first.file.as_deref(), &lines)
            .await
        {
            Some(0) => vec![Some(true); n],
            Some(1) => vec![Some(false); n],
            Some(2) => {
                let mut answers = Vec::with_capacity(n);
                for ask in asks {
                    answers.push(self.ask_trust(ask).await);
                }
                answers
            }
            _ => vec![None; n],
        }
    }

    /// The last item of a trust question: the definition whole, in its file where there is
    /// one (no cap, every character as the file has it), else the command line in a message.
    fn show_item(&self, file: Option<&std::path::Path>, command: &str) -> QuickPickItem {
        let item = QuickPickItem::new("Show the whole definition");
        match file {
            Some(path) => item.with_description(format!(
                "opens {}",
                shown::line(&path.display().to_string(), shown::MAX_LINE)
            )),
            None => QuickPickItem {
                detail: Some(cap(command, WHOLE)),
                ..item
            },
        }
    }

    /// Asks `params`; its last item shows the definition and asks again.
    async fn pick_showing(
        &self,
        params: QuickPickParams,
        file: Option<&std::path::Path>,
        command: &str,
    ) -> Option<usize> {
        let show = params.items.len() - 1;
        for _ in 0..SHOW_ROUNDS {
            let picked = self
                .editor
                .try_quick_pick(params.clone())
                .await
                .ok()
                .flatten();
            match picked.as_ref().and_then(QuickPickResult::first) {
                Some(i) if i == show => match file {
                    Some(path) => {
                        self.editor.show_file(path.to_path_buf()).await;
                    }
                    None => self
                        .editor
                        .show_message(crate::ui::Level::Info, cap(command, WHOLE)),
                },
                other => return other,
            }
        }
        None
    }
}

/// The longest command line (or list of them) shown whole where a file cannot be opened.
const WHOLE: usize = 4000;
/// How many times one question shows the definition before it counts as dismissed.
const SHOW_ROUNDS: usize = 10;

/// A server name in a question: cleaned, capped, in double quotes (a quote in it escaped).
fn quoted_name(name: &str) -> String {
    format!(
        "\"{}\"",
        shown::line(name, shown::MAX_NAME).replace('"', "\\\"")
    )
}

/// `text` (already free of controls) cut at `max` characters, marked as cut.
fn cap(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((end, _)) => format!("{}{}", &text[..end], shown::CUT),
    }
}
