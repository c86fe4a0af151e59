//! 2026-07-28 subscriptions: such a server has no `resources/subscribe` and sends no change
//! notifications of its own accord; a client opts in with a `subscriptions/listen` request whose
//! response is a stream of them. The sidecar keeps one stream per server open, asking for every
//! list change the server offers (tools, prompts, resources) and for updates of the resources
//! the editor subscribed to; a change of that set opens a new stream (then ends the old one).
//! What arrives does what the legacy notifications do (the handler's caches, `resourceUpdated`).

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{ServerNotification, SubscriptionFilter};
use rmcp::service::{Peer, RoleClient, ServiceError, Subscription, SubscriptionEnd};
use serde_json::Value;

use crate::mcp::session::handler::Handler;

/// How long a server may take to acknowledge a stream.
const ACK_TIMEOUT: Duration = Duration::from_secs(10);

pub struct Listener {
    server: Arc<str>,
    peer: Peer<RoleClient>,
    handler: Arc<Handler>,
    /// The list changes the server offers to send.
    lists: SubscriptionFilter,
    /// Whether it offers resource updates (`resources.subscribe`).
    pub updates: bool,
    state: tokio::sync::Mutex<State>,
}

#[derive(Default)]
struct State {
    uris: BTreeSet<String>,
    pump: Option<tokio::task::JoinHandle<()>>,
}

impl Listener {
    /// `None` when the server offers nothing to listen to.
    pub fn new(
        server: Arc<str>,
        peer: Peer<RoleClient>,
        handler: Arc<Handler>,
        capabilities: Option<&Value>,
    ) -> Option<Listener> {
        let flag = |name: &str, key: &str| {
            capabilities
                .and_then(|c| c.get(name))
                .and_then(|c| c.get(key))
                .and_then(Value::as_bool)
                == Some(true)
        };
        let mut lists = SubscriptionFilter::builder();
        if flag("tools", "listChanged") {
            lists = lists.tools_list_changed();
        }
        if flag("prompts", "listChanged") {
            lists = lists.prompts_list_changed();
        }
        if flag("resources", "listChanged") {
            lists = lists.resources_list_changed();
        }
        let lists = lists.build();
        let updates = flag("resources", "subscribe");
        if lists == SubscriptionFilter::new() && !updates {
            return None;
        }
        Some(Listener {
            server,
            peer,
            handler,
            lists,
            updates,
            state: Default::default(),
        })
    }

    /// Opens the first stream (list changes only).
    pub async fn start(&self) -> Result<(), String> {
        let mut state = self.state.lock().await;
        self.relisten(&mut state, BTreeSet::new()).await
    }

    /// Adds (`on`) or removes a resource from the stream's filter; returns once the server has
    /// acknowledged the new stream.
    pub async fn subscribe(&self, uri: &str, on: bool) -> Result<(), String> {
        let mut state = self.state.lock().await;
        let mut uris = state.uris.clone();
        let changed = if on {
            uris.insert(uri.to_owned())
        } else {
            uris.remove(uri)
        };
        if !changed && state.pump.as_ref().is_some_and(|p| !p.is_finished()) {
            return Ok(());
        }
        self.relisten(&mut state, uris).await
    }

    async fn relisten(&self, state: &mut State, uris: BTreeSet<String>) -> Result<(), String> {
        let mut filter = self.lists.clone();
        if !uris.is_empty() {
            filter.resource_subscriptions = Some(uris.iter().cloned().collect());
        }
        let subscription = tokio::time::timeout(ACK_TIMEOUT, self.peer.listen(filter))
            .await
            .map_err(|_| {
                format!(
                    "did not acknowledge subscriptions/listen within {} s",
                    ACK_TIMEOUT.as_secs()
                )
            })?
            .map_err(|e| format!("refused subscriptions/listen: {e}"))?;
        tracing::debug!(server = %self.server, acknowledged = ?subscription.acknowledged(), "following subscriptions/listen");
        // The new stream is open before the old one ends: nothing is missed in between.
        if let Some(old) = state.pump.replace(tokio::spawn(pump(
            self.server.clone(),
            self.peer.clone(),
            self.handler.clone(),
            subscription,
        ))) {
            old.abort();
        }
        state.uris = uris;
        Ok(())
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        if let Some(pump) = self.state.get_mut().pump.take() {
            pump.abort();
        }
    }
}

/// Hands each notification of one stream to the handler until the stream ends (dropping the
/// subscription, when the task is aborted, cancels the request).
async fn pump(
    server: Arc<str>,
    peer: Peer<RoleClient>,
    handler: Arc<Handler>,
    mut subscription: Subscription,
) {
    loop {
        match subscription.next().await {
            Ok(Some(notification)) => match notification {
                ServerNotification::ToolListChangedNotification(_) => {
                    handler.tools_changed(peer.clone())
                }
                ServerNotification::PromptListChangedNotification(_) => handler.prompts_changed(),
                ServerNotification::ResourceListChangedNotification(_) => {
                    handler.resources_changed()
                }
                ServerNotification::ResourceUpdatedNotification(update) => {
                    handler.resource_updated(update.params.uri)
                }
                _ => {}
            },
            Ok(None) => {
                let end = subscription.end().cloned();
                // The lists may have changed unseen: fetch them afresh next time.
                handler.resources_changed();
                handler.prompts_changed();
                match end {
                    Some(SubscriptionEnd::Graceful(_)) | Some(SubscriptionEnd::Cancelled) => {
                        tracing::info!(%server, "the server ended its subscriptions/listen stream; changes are no longer followed")
                    }
                    other => {
                        tracing::warn!(%server, ?other, "the subscriptions/listen stream ended; changes are no longer followed")
                    }
                }
                return;
            }
            Err(e) => {
                log_failure(&server, &e);
                return;
            }
        }
    }
}

fn log_failure(server: &str, error: &ServiceError) {
    tracing::warn!(
        server,
        "the subscriptions/listen stream failed ({error}); changes are no longer followed"
    );
}
