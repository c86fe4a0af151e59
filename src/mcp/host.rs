//! What the MCP side shares with every connection and reports to the editor: the current roots,
//! progress routing, and the event stream the LSP layer turns into notifications.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

use tokio::sync::mpsc;

use crate::lsp::ext::ServerStatusParams;
use crate::roots::Root;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogLevel {
    Error,
    Warning,
    Info,
    Debug,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ProgressUpdate {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

/// Everything the MCP side tells the editor, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// `mcp-sidecar/serverStatus`.
    Status(ServerStatusParams),
    /// `window/logMessage`: a server's own log messages and notable sidecar events.
    Log { level: LogLevel, message: String },
    /// `window/showMessage`: something the person should act on.
    Message { level: LogLevel, message: String },
    /// A server's tool list changed.
    ToolsChanged { server: String },
}

pub type EventReceiver = mpsc::UnboundedReceiver<Event>;
pub type ProgressFn = Arc<dyn Fn(ProgressUpdate) + Send + Sync>;

pub struct Host {
    events: mpsc::UnboundedSender<Event>,
    roots: RwLock<Vec<Root>>,
    progress: Mutex<HashMap<String, ProgressFn>>,
}

impl Host {
    pub fn new() -> (Arc<Host>, EventReceiver) {
        let (tx, rx) = mpsc::unbounded_channel();
        let host = Host {
            events: tx,
            roots: RwLock::new(Vec::new()),
            progress: Mutex::new(HashMap::new()),
        };
        (Arc::new(host), rx)
    }

    pub fn emit(&self, event: Event) {
        // The receiver is gone only while the sidecar shuts down.
        let _ = self.events.send(event);
    }

    pub fn roots(&self) -> Vec<Root> {
        self.roots.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub fn set_roots(&self, roots: Vec<Root>) {
        *self.roots.write().unwrap_or_else(|e| e.into_inner()) = roots;
    }

    pub fn register_progress(&self, token: String, sink: ProgressFn) {
        self.progress
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(token, sink);
    }

    pub fn unregister_progress(&self, token: &str) {
        self.progress
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(token);
    }

    pub fn progress(&self, token: &str, update: ProgressUpdate) {
        let sink = self
            .progress
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(token)
            .cloned();
        if let Some(sink) = sink {
            sink(update);
        }
    }
}
