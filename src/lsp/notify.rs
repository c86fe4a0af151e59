//! Forwards MCP-side events to the editor, in order; a server's state changes are coalesced
//! (see [`Statuses`]).

use std::collections::HashMap;
use std::time::Duration;

use tokio::time::Instant;
use tower_lsp_server::Client;
use tower_lsp_server::gen_lsp_types::MessageType;

use super::methods::{ResourceUpdated, ServerStatus};
use crate::contract::ServerStatusParams;
use crate::mcp::{Event, EventReceiver, LogLevel};

/// At most one `mcp-sidecar/serverStatus` per server in this long; changes within it are
/// held and the latest is sent when it ends.
const STATUS_WINDOW: Duration = Duration::from_millis(100);

fn message_type(level: LogLevel) -> MessageType {
    match level {
        LogLevel::Error => MessageType::Error,
        LogLevel::Warning => MessageType::Warning,
        LogLevel::Info => MessageType::Info,
        LogLevel::Debug => MessageType::Log,
    }
}

/// The servers' state changes on their way to the editor: a server's first change goes at
/// once; further ones within [`STATUS_WINDOW`] of it are held, only the latest kept, and sent
/// when the window ends. A server changing state in a loop (or thousands of servers appearing
/// at once, each changing twice) costs the editor one notification per server per window.
#[derive(Default)]
struct Statuses {
    /// When each server's last notification went out (pruned once older than the window).
    sent: HashMap<String, Instant>,
    /// The latest held change of each server, in the order they were first held, and where
    /// each server's is.
    held: Vec<ServerStatusParams>,
    held_at: HashMap<String, usize>,
    /// When the held changes go out.
    flush_at: Option<Instant>,
}

impl Statuses {
    /// The change to send now, if it is not held.
    fn admit(&mut self, status: ServerStatusParams, now: Instant) -> Option<ServerStatusParams> {
        if let Some(&i) = self.held_at.get(&status.name) {
            self.held[i] = status;
            return None;
        }
        match self.sent.get(&status.name) {
            Some(at) if now < *at + STATUS_WINDOW => {
                let end = *at + STATUS_WINDOW;
                self.flush_at = Some(self.flush_at.map_or(end, |f| f.max(end)));
                self.held_at.insert(status.name.clone(), self.held.len());
                self.held.push(status);
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

    /// The held changes, now due.
    fn flush(&mut self, now: Instant) -> Vec<ServerStatusParams> {
        self.flush_at = None;
        self.sent.retain(|_, at| now < *at + STATUS_WINDOW);
        self.held_at.clear();
        let held = std::mem::take(&mut self.held);
        for status in &held {
            self.sent.insert(status.name.clone(), now);
        }
        held
    }
}

pub async fn forward(client: Client, mut events: EventReceiver) {
    let mut statuses = Statuses::default();
    loop {
        let flush_at = statuses.flush_at;
        let event = tokio::select! {
            event = events.recv() => event,
            _ = tokio::time::sleep_until(flush_at.unwrap_or_else(Instant::now)), if flush_at.is_some() => {
                for status in statuses.flush(Instant::now()) {
                    client.send_notification::<ServerStatus>(status).await;
                }
                continue;
            }
        };
        let Some(event) = event else {
            for status in statuses.flush(Instant::now()) {
                client.send_notification::<ServerStatus>(status).await;
            }
            return;
        };
        match event {
            Event::Status(status) => {
                if let Some(status) = statuses.admit(status, Instant::now()) {
                    client.send_notification::<ServerStatus>(status).await;
                }
            }
            Event::Log { level, message } => client.log_message(message_type(level), message).await,
            Event::Message { level, message } => {
                client.show_message(message_type(level), message).await;
            }
            Event::ResourceUpdated { server, uri } => {
                client
                    .send_notification::<ResourceUpdated>(crate::contract::ResourceArgs {
                        server,
                        uri,
                    })
                    .await;
            }
            Event::ToolsChanged { server } => {
                client
                    .log_message(MessageType::Log, format!("[{server}] tool list changed"))
                    .await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::ServerState;

    fn status(name: &str, state: ServerState) -> ServerStatusParams {
        ServerStatusParams {
            name: name.into(),
            state,
            protocol_version: None,
            source: None,
            message: None,
        }
    }

    #[test]
    fn a_servers_changes_within_the_window_are_one_notification_with_the_latest() {
        let mut s = Statuses::default();
        let t0 = Instant::now();
        assert!(s.admit(status("a", ServerState::Starting), t0).is_some());
        assert!(s.admit(status("b", ServerState::Starting), t0).is_some());
        for i in 0..1000 {
            let state = if i % 2 == 0 {
                ServerState::Failed
            } else {
                ServerState::Starting
            };
            assert!(
                s.admit(status("a", state), t0 + Duration::from_millis(1))
                    .is_none()
            );
        }
        assert!(
            s.admit(
                status("a", ServerState::Running),
                t0 + Duration::from_millis(2)
            )
            .is_none()
        );
        assert_eq!(s.flush_at, Some(t0 + STATUS_WINDOW));
        let out = s.flush(t0 + STATUS_WINDOW);
        assert_eq!(out.len(), 1);
        assert_eq!(
            (out[0].name.as_str(), out[0].state),
            ("a", ServerState::Running)
        );
        // A change right after the flush waits for the next window; a quiet server's goes at once.
        assert!(
            s.admit(status("a", ServerState::Failed), t0 + STATUS_WINDOW)
                .is_none()
        );
        assert!(
            s.admit(status("b", ServerState::Running), t0 + STATUS_WINDOW)
                .is_some()
        );
        assert!(s.flush_at.is_some());
    }
}
