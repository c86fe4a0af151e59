//! Forwards MCP-side events to the editor, in order.

use tower_lsp_server::Client;
use tower_lsp_server::gen_lsp_types::MessageType;

use super::methods::{ResourceUpdated, ServerStatus};
use crate::contract::shown::{self, Shown};
use crate::mcp::{Event, EventReceiver, LogLevel};

fn message_type(level: LogLevel) -> MessageType {
    match level {
        LogLevel::Error => MessageType::Error,
        LogLevel::Warning => MessageType::Warning,
        LogLevel::Info => MessageType::Info,
        LogLevel::Debug => MessageType::Log,
    }
}

pub async fn forward(client: Client, mut events: EventReceiver) {
    while let Some(event) = events.recv().await {
        match event {
            Event::Status(status) => {
                client
                    .send_notification::<ServerStatus>(status.shown())
                    .await;
            }
            Event::Log { level, message } => {
                let message = shown::block(&message, shown::MAX_LOG).into_owned();
                client.log_message(message_type(level), message).await;
            }
            Event::Message { level, message } => {
                let message = shown::block(&message, shown::MAX_MESSAGE).into_owned();
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
