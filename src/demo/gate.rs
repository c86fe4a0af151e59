//! Era gating at the transport, so a refused lifecycle request never ends the connection.
//!
//! rmcp treats a failed `initialize` as fatal to the whole connection, and it checks the requested
//! protocol version of `server/discover` before any handler runs. Answering these two requests
//! here keeps the server alive for the client's fallback (e.g. discover → initialize) and gives
//! exactly the errors a single-era server would:
//! - [`Era::Legacy`]: `server/discover` → -32601 method not found;
//! - [`Era::Modern`]: `initialize` → -32022 unsupported protocol version (`supported: [2026-07-28]`).
//!
//! On the way out it also writes questions built from JSON exactly ([`super::ask::Exact`]).

use rmcp::{
    ErrorData, RoleServer,
    model::{
        ClientJsonRpcMessage, ClientRequest, ConstString, DiscoverRequestMethod, ErrorCode,
        ServerJsonRpcMessage,
    },
    transport::Transport,
};

use super::Era;

/// Wraps the real transport and answers the requests `era` refuses.
pub(super) struct EraGate<T> {
    inner: T,
    era: Era,
}

impl<T> EraGate<T> {
    pub(super) fn new(inner: T, era: Era) -> Self {
        Self { inner, era }
    }
}

/// The error `era` answers `request` with, if it refuses it.
fn refusal(era: Era, request: &ClientRequest) -> Option<ErrorData> {
    match (era, request) {
        (Era::Legacy, ClientRequest::DiscoverRequest(_)) => Some(ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!(
                "Method not found: {} (legacy-only server)",
                DiscoverRequestMethod::VALUE
            ),
            None,
        )),
        (Era::Modern, ClientRequest::InitializeRequest(initialize)) => {
            Some(ErrorData::unsupported_protocol_version(
                initialize.params.protocol_version.clone(),
                era.supported_versions(),
            ))
        }
        _ => None,
    }
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for EraGate<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(super::ask::exact_results(item))
    }

    // rmcp polls `receive` inside `select!`, so it must stay cancel-safe: the refusal is sent from
    // a spawned task instead of being awaited here.
    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            let message = self.inner.receive().await?;
            let ClientJsonRpcMessage::Request(request) = &message else {
                return Some(message);
            };
            let Some(error) = refusal(self.era, &request.request) else {
                return Some(message);
            };
            tracing::info!(era = %self.era, code = error.code.0, %error.message, "refusing a lifecycle request");
            let reply = self
                .inner
                .send(ServerJsonRpcMessage::error(error, Some(request.id.clone())));
            tokio::spawn(async move {
                if let Err(error) = reply.await {
                    tracing::warn!(%error, "could not send a refusal");
                }
            });
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
