//! The gateway (layer 5, the agents' face beside `lsp`): serves the workspace's MCP servers to
//! agents (the agent is the MCP client) over the same [`Manager`] the editor's face drives: the
//! same running servers, roots and flows, so a question a server asks during an agent's call is
//! answered in the editor. See `docs/gateway.md`.
//!
//! - `server.rs`: the MCP server (rmcp's server side; both protocol eras), one handler per agent
//!   session over shared routes;
//! - `names.rs`: the `<server>__<tool>` naming scheme;
//! - `http.rs`: the loopback endpoint (secret, `Host`/`Origin` checks) and the stdio tunnel;
//! - `tasks.rs`: the tasks agents started (Tasks extension), by the ids they see;
//! - `pass.rs`: big results passed through to agents as the bytes the server sent (the
//!   session's service around `server.rs`, and the splice in both ways' writers);
//! - `discovery.rs`: the environment and the per-workspace discovery files;
//! - `bridge.rs`: `mcp-sidecar gateway`, the stdio server agents launch.
//!
//! Knows `mcp`, `config` (its setting) and `contract`; must not know `lsp`.

mod agent;
pub mod bridge;
pub mod discovery;
mod http;
mod names;
mod pass;
mod routes;
mod server;
mod shared;
mod tasks;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use crate::contract::{CallError, GatewayInfo};
use crate::mcp::{LogLevel, Manager};

pub use agent::set_keep_alive_interval;
pub use names::exposed as exposed_name;
pub use pass::passed_total;

/// How long changes are gathered before agents are told the tool list changed.
const SETTLE: Duration = Duration::from_millis(100);

/// The gateway of one sidecar: started when `gateway.enabled` (once the first configuration is
/// applied), stopped when it is turned off or the editor goes.
pub struct Gateway {
    shared: Arc<shared::Shared>,
    folders: Mutex<Vec<PathBuf>>,
    running: Mutex<Option<Running>>,
    stopped: tokio_util::sync::CancellationToken,
    manager: Arc<Manager>,
    /// The setting last followed: each change is told in the editor's log once.
    followed: Mutex<Option<bool>>,
}

struct Running {
    endpoint: http::Endpoint,
    secret: String,
    files: Vec<PathBuf>,
}

impl Drop for Running {
    fn drop(&mut self) {
        discovery::remove(&self.files);
    }
}

impl Gateway {
    /// Follows the manager's settings from now on; `folders` key the discovery files.
    pub fn spawn(
        manager: Arc<Manager>,
        apps: Arc<crate::views::Apps>,
        folders: Vec<PathBuf>,
    ) -> Arc<Gateway> {
        let gateway = Arc::new(Gateway {
            shared: shared::Shared::new(manager.clone(), apps),
            folders: Mutex::new(folders),
            running: Mutex::new(None),
            stopped: tokio_util::sync::CancellationToken::new(),
            manager: manager.clone(),
            followed: Mutex::new(None),
        });
        let this = gateway.clone();
        tokio::spawn(async move {
            let mut changes = manager.changes();
            let mut listed = None;
            loop {
                if let Some(settings) = manager.gateway_settings() {
                    this.follow(settings.enabled).await;
                }
                if this.running.lock().is_some() {
                    let now = this.shared.fingerprint().await;
                    if let Some((tools, running)) = listed {
                        if tools != now.0 {
                            this.shared.notify(shared::List::Tools, None).await;
                        }
                        // Servers that start or stop change the prompts and resources too.
                        if running != now.1 {
                            this.shared.notify(shared::List::Prompts, None).await;
                            this.shared.notify(shared::List::Resources, None).await;
                        }
                    }
                    listed = Some(now);
                }
                tokio::select! {
                    changed = changes.changed() => if changed.is_err() { break },
                    _ = this.stopped.cancelled() => break,
                }
                tokio::time::sleep(SETTLE).await;
            }
            this.running.lock().take();
        });
        gateway
    }

    /// Starts or stops the endpoint to match the setting.
    async fn follow(&self, enabled: bool) {
        let changed = self.followed.lock().replace(enabled) != Some(enabled);
        if changed && !enabled {
            self.manager.log(
                LogLevel::Info,
                "gateway: off (gateway.enabled is false)".into(),
            );
        }
        if enabled == self.running.lock().is_some() || self.stopped.is_cancelled() {
            return;
        }
        if !enabled {
            self.running.lock().take();
            tracing::info!("gateway: stopped (gateway.enabled is false)");
            return;
        }
        let secret = match crate::net::secret() {
            Ok(s) => s,
            Err(e) => {
                tracing::error!("gateway: no random secret to be had ({e}); not started");
                return;
            }
        };
        match http::start(self.shared.clone(), secret.clone()).await {
            Ok(endpoint) => {
                let files =
                    discovery::write(&self.folders.lock(), &self::target(endpoint.port, &secret));
                tracing::info!(url = %url_of(endpoint.port), "gateway: serving agents");
                let url = url_of(endpoint.port);
                *self.running.lock() = Some(Running {
                    endpoint,
                    secret,
                    files,
                });
                // After `running` is set: whoever sees this line gets `gatewayInfo`.
                self.manager
                    .log(LogLevel::Info, format!("gateway: serving agents at {url}"));
            }
            Err(e) => tracing::error!("gateway: cannot listen on 127.0.0.1: {e}"),
        }
    }

    /// `mcp-sidecar.gatewayInfo`.
    pub fn info(&self) -> Result<GatewayInfo, CallError> {
        let running = self.running.lock();
        let Some(running) = running.as_ref() else {
            return Err(CallError::Refused(
                "the gateway is not running: it is off (gateway.enabled is false) or still starting"
                    .into(),
            ));
        };
        let url = url_of(running.endpoint.port);
        Ok(GatewayInfo {
            headers: BTreeMap::from([(
                "Authorization".to_string(),
                format!("Bearer {}", running.secret),
            )]),
            env: BTreeMap::from([
                (discovery::ENV_URL.to_string(), url.clone()),
                (discovery::ENV_TOKEN.to_string(), running.secret.clone()),
            ]),
            url,
        })
    }

    /// The editor's workspace folders changed: the discovery files follow.
    pub fn set_folders(&self, folders: Vec<PathBuf>) {
        if let Some(running) = self.running.lock().as_mut() {
            discovery::remove(&running.files);
            running.files = discovery::write(
                &folders,
                &self::target(running.endpoint.port, &running.secret),
            );
        }
        *self.folders.lock() = folders;
    }

    /// Stops the endpoint for good (the editor went away).
    pub fn stop(&self) {
        self.stopped.cancel();
        self.running.lock().take();
    }
}

/// What the discovery files of this sidecar say.
fn target(port: u16, secret: &str) -> discovery::Target {
    discovery::Target {
        url: url_of(port),
        token: secret.to_string(),
        pid: std::process::id(),
        started: discovery::start_time(std::process::id()).unwrap_or(0),
        folder: String::new(),
    }
}

fn url_of(port: u16) -> String {
    format!("http://127.0.0.1:{port}/mcp")
}
