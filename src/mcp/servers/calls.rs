//! A tool call that may become a task (Tasks extension), and the tasks themselves: the call
//! waits for its task's end while `follow` polls it (or hands the handle to a caller that polls
//! the sidecar itself); the faces list and cancel tasks; a new sidecar follows the running
//! tasks of its workspace again.

use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::contract::{CallError, TaskInfo, TaskState};
use crate::mcp::host::{ProgressFn, ProgressUpdate};
use crate::mcp::reply::{Caller, Reply, Tasks};
use crate::mcp::servers::follow::{self, Connect};
use crate::mcp::servers::manager::Manager;
use crate::mcp::tasks::{TaskBook, read_poll};

impl Manager {
    /// Runs a tool to completion and returns the MCP `CallToolResult` as JSON. A call the
    /// server turns into a task waits for the task's end (its status as progress; the caller
    /// going away cancels the task), or, for a caller that takes handles, returns the handle.
    pub async fn call_tool(
        &self,
        server: &str,
        tool: &str,
        arguments: Option<crate::mcp::session::exchange::ToolArguments>,
        caller: Caller,
    ) -> Result<Reply, CallError> {
        let connection = self.running(server)?;
        let (mode, progress, agent) = (caller.tasks, caller.progress.clone(), caller.agent.clone());
        let reply = connection.call_tool(tool, arguments, caller).await?;
        let Reply::Task(handle) = reply else {
            return Ok(reply);
        };
        let poll = read_poll(&handle.created).map_err(|e| CallError::Protocol {
            server: server.to_string(),
            message: e,
        })?;
        let book = self.book();
        book.start(server, tool, &handle.task_id, &poll, handle.legacy);
        self.follow(server.to_string(), handle.task_id.clone(), agent);
        if mode == Tasks::Handle {
            return Ok(Reply::Task(handle));
        }
        let info = wait(&book, server, &handle.task_id, progress).await?;
        crate::mcp::tasks::outcome(&info).map(Reply::Json)
    }

    /// The tasks of this workspace: running ones first.
    pub fn list_tasks(&self) -> Vec<TaskInfo> {
        self.book().list()
    }

    /// One task.
    pub fn task(&self, server: &str, task_id: &str) -> Option<TaskInfo> {
        self.book().get(server, task_id)
    }

    /// Asks for `tasks/cancel` of a running task; the task as it is now.
    pub fn cancel_task(&self, server: &str, task_id: &str) -> Result<TaskInfo, CallError> {
        self.book()
            .cancel(server, task_id)
            .ok_or_else(|| CallError::Refused(format!("\"{server}\" has no task {task_id} here")))
    }

    /// Waits for a task's end (for a caller that took its handle): its state then.
    pub async fn wait_task(&self, server: &str, task_id: &str) -> Result<TaskInfo, CallError> {
        wait(&self.book(), server, task_id, None).await
    }

    /// Follows again the tasks a sidecar of this workspace left running (once the editor's
    /// folders are known); finished ones are listed as they were.
    pub fn resume_tasks(&self) {
        let book = self.book();
        for (server, task_id) in book.running() {
            tracing::info!(server, "following a task started before this sidecar");
            self.follow(server, task_id, None);
        }
    }

    fn follow(&self, server: String, task_id: String, agent: Option<crate::mcp::requester::Agent>) {
        let me = self.me.clone();
        let connect: Connect = Arc::new(move |server| me.upgrade()?.running(server).ok());
        tokio::spawn(follow::follow(
            self.book(),
            connect,
            self.host.changes(),
            server,
            task_id,
            agent,
        ));
    }

    /// The task book of this workspace (the first folder's; "none" without one).
    fn book(&self) -> Arc<TaskBook> {
        self.tasks
            .get_or_init(|| {
                let folders = self.folders();
                let workspace = match folders.first() {
                    Some(folder) => {
                        let digest = Sha256::digest(folder.uri.as_str().as_bytes());
                        digest[..8].iter().map(|b| format!("{b:02x}")).collect()
                    }
                    None => "none".to_string(),
                };
                TaskBook::load(self.host.clone(), &workspace)
            })
            .clone()
    }
}

/// Waits for the task's end, its status reported to `progress`; a caller that goes away first
/// cancels the task (unless the sidecar is stopping: then the task outlives it).
async fn wait(
    book: &Arc<TaskBook>,
    server: &str,
    task_id: &str,
    progress: Option<ProgressFn>,
) -> Result<TaskInfo, CallError> {
    let mut changes = book
        .watch(server, task_id)
        .ok_or_else(|| CallError::Refused(format!("\"{server}\" has no task {task_id} here")))?;
    let mut guard = CancelOnDrop {
        book: book.clone(),
        server: server.to_string(),
        task_id: Some(task_id.to_string()),
    };
    loop {
        let info = changes.borrow_and_update().clone();
        if info.status.is_terminal() {
            guard.task_id = None;
            return Ok(info);
        }
        if let Some(progress) = &progress {
            progress(ProgressUpdate {
                progress: f64::NAN,
                total: None,
                message: Some(status_line(&info)),
            });
        }
        if changes.changed().await.is_err() {
            guard.task_id = None;
            return book
                .get(server, task_id)
                .filter(|i| i.status.is_terminal())
                .ok_or_else(|| {
                    CallError::Refused(format!("the task {task_id} of \"{server}\" was forgotten"))
                });
        }
    }
}

/// What a running task's progress says.
fn status_line(info: &TaskInfo) -> String {
    let status = match info.status {
        TaskState::InputRequired => "waiting for an answer",
        _ => "working",
    };
    match &info.status_message {
        Some(message) => format!("task {status}: {message}"),
        None => format!("task {status}"),
    }
}

/// Cancels the task of a call that stopped waiting for it.
struct CancelOnDrop {
    book: Arc<TaskBook>,
    server: String,
    task_id: Option<String>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(task_id) = self.task_id.take()
            && !self.book.stopping()
        {
            self.book.cancel(&self.server, &task_id);
        }
    }
}
