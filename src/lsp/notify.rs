//! Forwards MCP-side events to the editor, in order; a server's state changes are coalesced
//! (see [`Statuses`]).

use std::collections::HashMap;
use std::time::Duration;

use tokio::time::Instant;
use tower_lsp_server::Client;
use tower_lsp_server::gen_lsp_types::MessageType;

use super::methods::{ResourceUpdated, ServerStatus, TaskStatus};
use crate::contract::ServerStatusParams;
use crate::contract::shown::{self, Shown};
use crate::mcp::{Event, EventReceiver, LogLevel};

/// A server's notifications are sent at most once per this long: its changes within it are
/// held and go out together when it ends.
const STATUS_WINDOW: Duration = Duration::from_millis(100);
/// The most changes of one server held in one window; past it the last one is replaced.
const HELD_PER_SERVER: usize = 8;

fn message_type(level: LogLevel) -> MessageType {
    match level {
        LogLevel::Error => MessageType::Error,
        LogLevel::Warning => MessageType::Warning,
        LogLevel::Info => MessageType::Info,
        LogLevel::Debug => MessageType::Log,
    }
}

/// The servers' state changes on their way to the editor: a server's first change goes at
/// once; its further ones within [`STATUS_WINDOW`] are held and sent together when the window
/// ends. Held changes that keep the state (a new message) replace each other, so only the
/// latest of a run goes out; every change of state goes out, in order (at most
/// [`HELD_PER_SERVER`] a window). A server reporting in a loop costs the editor one batch per
/// window, not one notification per report.
#[derive(Default)]
struct Statuses {
    /// When each server's last notification went out (pruned once older than the window).
    sent: HashMap<String, Instant>,
    /// Each server's held changes, servers in the order they were first held.
    held: Vec<Vec<ServerStatusParams>>,
    held_at: HashMap<String, usize>,
    /// When the held changes go out.
    flush_at: Option<Instant>,
}

impl Statuses {
    /// The change to send now, if it is not held.
    fn admit(&mut self, status: ServerStatusParams, now: Instant) -> Option<ServerStatusParams> {
        if let Some(&i) = self.held_at.get(&status.name) {
            let changes = &mut self.held[i];
            let full = changes.len() >= HELD_PER_SERVER;
            match changes.last_mut() {
                Some(last) if full || last.state == status.state => *last = status,
                _ => changes.push(status),
            }
            return None;
        }
        match self.sent.get(&status.name) {
            Some(at) if now < *at + STATUS_WINDOW => {
                let end = *at + STATUS_WINDOW;
                self.flush_at = Some(self.flush_at.map_or(end, |f| f.max(end)));
                self.held_at.insert(status.name.clone(), self.held.len());
                self.held.push(vec![status]);
                None
            }
            _ => {
                if self.sent.len() >= 1024 {
                    self.sent.retain(|_, at| now < *at + STATUS_WINDOW);
                }
                self.sent.insert(status.name.clone(), now);
                Some(status)
            }
        }
    }

    /// The held changes, now due, in order.
    fn flush(&mut self, now: Instant) -> Vec<ServerStatusParams> {
        self.flush_at = None;
        self.sent.retain(|_, at| now < *at + STATUS_WINDOW);
        self.held_at.clear();
        let held: Vec<ServerStatusParams> = std::mem::take(&mut self.held)
            .into_iter()
            .flatten()
            .collect();
        for status in &held {
            self.sent.insert(status.name.clone(), now);
        }
        held
    }
}

/// Forwards the servers' events to the editor; the contract's own notifications
/// (`serverStatus`, `resourceUpdated`) only to an editor with the plugin (`plugin`): another
/// editor would only report them as unknown.
pub async fn forward(
    client: Client,
    mut events: EventReceiver,
    apps: std::sync::Arc<crate::views::Apps>,
    plugin: bool,
) {
    let status = |status: ServerStatusParams| {
        let client = client.clone();
        async move {
            if plugin {
                client.send_notification::<ServerStatus>(status).await;
            }
        }
    };
    let mut statuses = Statuses::default();
    loop {
        let flush_at = statuses.flush_at;
        let event = tokio::select! {
            event = events.recv() => event,
            _ = tokio::time::sleep_until(flush_at.unwrap_or_else(Instant::now)), if flush_at.is_some() => {
                for held in statuses.flush(Instant::now()) {
                    status(held).await;
                }
                continue;
            }
        };
        let Some(event) = event else {
            for held in statuses.flush(Instant::now()) {
                status(held).await;
            }
            return;
        };
        match event {
            Event::Status(changed) => {
                // A view lives as long as its server's session.
                if changed.state != crate::contract::ServerState::Running {
                    apps.close_server(&changed.name, "its server stopped");
                }
                if let Some(admitted) = statuses.admit(changed.shown(), Instant::now()) {
                    status(admitted).await;
                }
            }
            Event::Log { level, message } => {
                let message = shown::block(&message, shown::MAX_LOG).into_owned();
                client.log_message(message_type(level), message).await;
            }
            Event::Message { level, message } => {
                let message = shown::block(&message, shown::MAX_MESSAGE).into_owned();
                client.show_message(message_type(level), message).await;
            }
            Event::ResourceUpdated { server, uri } if plugin => {
                client
                    .send_notification::<ResourceUpdated>(crate::contract::ResourceArgs {
                        server,
                        uri,
                    })
                    .await;
            }
            Event::ResourceUpdated { .. } => {}
            Event::Task(info) if plugin => {
                client.send_notification::<TaskStatus>(info).await;
            }
            Event::Task(_) => {}
            Event::ToolsChanged { server } => {
                client
                    .log_message(
                        MessageType::Log,
                        format!(
                            "[{}] tool list changed",
                            shown::line(&server, shown::MAX_NAME)
                        ),
                    )
                    .await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::ServerState;

    fn status(name: &str, state: ServerState, message: &str) -> ServerStatusParams {
        ServerStatusParams {
            name: name.into(),
            label: None,
            state,
            protocol_version: None,
            source: None,
            message: Some(message.into()),
        }
    }

    #[test]
    fn a_servers_reports_within_the_window_go_together_keeping_each_change_of_state() {
        let mut s = Statuses::default();
        let t0 = Instant::now();
        let ms = |n| t0 + Duration::from_millis(n);
        assert!(
            s.admit(status("a", ServerState::Starting, "0"), t0)
                .is_some()
        );
        assert!(
            s.admit(status("b", ServerState::Starting, "0"), t0)
                .is_some()
        );
        // A thousand reports of one state within the window: the latest only.
        for i in 0..1000 {
            let report = status("a", ServerState::Starting, &i.to_string());
            assert!(s.admit(report, ms(1)).is_none());
        }
        assert!(
            s.admit(status("a", ServerState::Running, "r"), ms(2))
                .is_none()
        );
        assert!(
            s.admit(status("a", ServerState::Failed, "f"), ms(3))
                .is_none()
        );
        assert_eq!(s.flush_at, Some(t0 + STATUS_WINDOW));
        let out: Vec<(ServerState, String)> = s
            .flush(t0 + STATUS_WINDOW)
            .into_iter()
            .map(|st| (st.state, st.message.unwrap()))
            .collect();
        assert_eq!(
            out,
            [
                (ServerState::Starting, "999".to_string()),
                (ServerState::Running, "r".into()),
                (ServerState::Failed, "f".into())
            ]
        );
        // A change right after the flush waits for the next window; a quiet server's goes at once.
        assert!(
            s.admit(status("a", ServerState::Starting, "x"), t0 + STATUS_WINDOW)
                .is_none()
        );
        assert!(
            s.admit(status("b", ServerState::Running, "x"), t0 + STATUS_WINDOW)
                .is_some()
        );
        // A server flapping between states holds at most HELD_PER_SERVER changes a window.
        for i in 0..1000 {
            let state = if i % 2 == 0 {
                ServerState::Failed
            } else {
                ServerState::Starting
            };
            s.admit(status("a", state, "flap"), t0 + STATUS_WINDOW);
        }
        assert_eq!(s.flush(t0 + STATUS_WINDOW * 2).len(), HELD_PER_SERVER);
    }
}
