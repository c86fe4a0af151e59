//! The endpoint: HTTP/1.1 on 127.0.0.1 at a random port (hyper's server), in front of rmcp's
//! Streamable HTTP service. Every request is checked before anything else sees it, in this order:
//! `Host` must name a loopback host (DNS rebinding), an `Origin`, when sent, must be a loopback
//! origin (403 otherwise), and `Authorization: Bearer <secret>` must carry this session's secret
//! (401 without it, 403 with another; compared in constant time).
//!
//! Paths: `/mcp` (every server's tools, prefixed), `/mcp/<server>` (one server, unprefixed), and
//! `/stdio`, `/stdio/<server>`: an `Upgrade: mcp-stdio` tunnel after which the connection carries
//! newline-delimited JSON-RPC, as stdio does (what `mcp-sidecar gateway` bridges to).
//!
//! Connections are rationed ([`Gate`]), since anyone on the machine may open them: at most a
//! quarter of the files the process may open (16 to 512), so the servers keep the descriptors
//! they need; past that, or past 64 that have not sent a request with the secret yet, the one
//! that has waited longest for its request gives way to the new one (after a second); one that
//! has sent none within 10 s is closed. A flood (connections closed or refused for it, `accept`
//! failing) is logged at most once a minute.

use std::collections::{BTreeMap, HashMap};
use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{HeaderMap, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use parking_lot::Mutex;
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::pass;
use super::server::GatewayServer;
use super::shared::{Scope, Shared};
use crate::net;

/// The `Upgrade` protocol of the stdio tunnel.
pub const TUNNEL_PROTOCOL: &str = "mcp-stdio";

type Body = BoxBody<Bytes, Infallible>;
type Service = StreamableHttpService<GatewayServer, LocalSessionManager>;

struct State {
    shared: Arc<Shared>,
    secret: String,
    cancel: CancellationToken,
    services: Mutex<HashMap<Scope, Service>>,
    gate: Arc<Gate>,
}

/// Connections that have not sent a request with the secret yet, at most (fewer when the
/// process may open few files).
const WAITING: usize = 64;
/// How long a connection has to send its first request with the secret.
const FIRST_REQUEST: Duration = Duration::from_secs(10);
/// How long a waiting connection is let be before it gives way to a new one: an agent's
/// request follows its connection at once, but a burst of them (a hundred calls at once) may be
/// accepted before the first request is read.
const GRACE: Duration = Duration::from_secs(1);
/// A flood is logged at most once in this long.
const FLOOD_LOG: Duration = Duration::from_secs(60);

/// Who may hold a connection open: every connection has a [`Ticket`] for as long as it is open
/// (a tunnel's too); those that have not sent a request with the secret yet wait in line.
struct Gate {
    /// Connections open at once, at most.
    most: usize,
    /// Connections waiting for their first request with the secret, at most.
    waiting_most: usize,
    open: AtomicUsize,
    /// The waiting connections by ticket, oldest first, with when they came: closing one
    /// cancels its token.
    waiting: Mutex<BTreeMap<u64, (tokio::time::Instant, CancellationToken)>>,
    next: AtomicU64,
    flood: Mutex<Flood>,
}

#[derive(Default)]
struct Flood {
    logged: Option<Instant>,
    unlogged: u64,
}

/// How many files this process may open (1024 when that cannot be read).
fn open_files_limit() -> usize {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes only the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return 1024;
    }
    usize::try_from(limit.rlim_cur).unwrap_or(usize::MAX)
}

impl Gate {
    fn new(open_files: usize) -> Gate {
        let most = (open_files / 4).clamp(16, 512);
        Gate {
            most,
            waiting_most: WAITING.min(most / 2),
            open: AtomicUsize::new(0),
            waiting: Mutex::default(),
            next: AtomicU64::new(0),
            flood: Mutex::default(),
        }
    }

    /// A ticket for a new connection. Past either cap, the connection that has waited longest
    /// for its first request with the secret gives way (is closed) when it has had [`GRACE`];
    /// past the waiting cap only, the new one comes in anyway. `None` (refused, closed at once):
    /// as many connections are open as may be and none can give way.
    fn admit(self: &Arc<Self>) -> Option<Arc<Ticket>> {
        let open = self.open.fetch_add(1, Ordering::SeqCst) + 1;
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let closed = CancellationToken::new();
        let now = tokio::time::Instant::now();
        let mut waiting = self.waiting.lock();
        let full = open > self.most || waiting.len() >= self.waiting_most;
        let oldest = match waiting.first_key_value() {
            Some((_, (since, _))) if full && now.duration_since(*since) >= GRACE => {
                waiting.pop_first()
            }
            _ => None,
        };
        let admitted = open <= self.most || oldest.is_some();
        if admitted {
            waiting.insert(id, (now, closed.clone()));
        }
        let count = waiting.len();
        drop(waiting);
        if let Some((_, (_, oldest))) = oldest {
            oldest.cancel();
            self.flood(format_args!(
                "{count} connections wait for a request with the secret; the oldest gives way \
                 to each new one"
            ));
        }
        if !admitted {
            self.open.fetch_sub(1, Ordering::SeqCst);
            self.flood(format_args!(
                "{} connections are open, the most there may be; new ones are closed at once",
                self.most
            ));
            return None;
        }
        Some(Arc::new(Ticket {
            gate: self.clone(),
            id,
            closed,
            shown: CancellationToken::new(),
        }))
    }

    /// Closes the connection that has waited longest for its first request with the secret.
    fn close_oldest(&self) {
        if let Some((_, (_, oldest))) = self.waiting.lock().pop_first() {
            oldest.cancel();
        }
    }

    /// One line for a flood, then at most one a minute, with the count since the last.
    fn flood(&self, what: std::fmt::Arguments<'_>) {
        let mut flood = self.flood.lock();
        flood.unlogged += 1;
        if flood.logged.is_some_and(|at| at.elapsed() < FLOOD_LOG) {
            return;
        }
        tracing::warn!(
            "gateway: flood: {what} ({} since the last such line; logged at most once a minute)",
            flood.unlogged
        );
        flood.logged = Some(Instant::now());
        flood.unlogged = 0;
    }
}

/// One open connection's place at the [`Gate`].
struct Ticket {
    gate: Arc<Gate>,
    id: u64,
    /// Cancelled when the gate closes the connection (it waited longest).
    closed: CancellationToken,
    /// Cancelled once the connection has sent a request with the secret.
    shown: CancellationToken,
}

impl Ticket {
    /// The connection sent a request with the secret: it stays, however many others come.
    fn shown(&self) {
        if !self.shown.is_cancelled() {
            self.gate.waiting.lock().remove(&self.id);
            self.shown.cancel();
        }
    }

    /// Ends when the connection is to be closed: the gate closed it, or it sent no request with
    /// the secret in time.
    async fn closing(&self) {
        tokio::select! {
            _ = self.closed.cancelled() => {}
            _ = tokio::time::sleep(FIRST_REQUEST), if !self.shown.is_cancelled() => {
                if self.shown.is_cancelled() {
                    std::future::pending::<()>().await;
                }
            }
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.gate.waiting.lock().remove(&self.id);
        self.gate.open.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The running endpoint; dropping it stops it (open sessions end).
pub struct Endpoint {
    pub port: u16,
    cancel: CancellationToken,
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

/// Binds 127.0.0.1 at a random port and serves until the [`Endpoint`] is dropped.
pub async fn start(shared: Arc<Shared>, secret: String) -> std::io::Result<Endpoint> {
    let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
    let port = listener.local_addr()?.port();
    let cancel = CancellationToken::new();
    let state = Arc::new(State {
        shared,
        secret,
        cancel: cancel.clone(),
        services: Mutex::default(),
        gate: Arc::new(Gate::new(open_files_limit())),
    });
    tokio::spawn(async move {
        loop {
            let accepted = tokio::select! {
                accepted = listener.accept() => accepted,
                _ = state.cancel.cancelled() => break,
            };
            let stream = match accepted {
                Ok((stream, _)) => {
                    // Small SSE frames and responses go out at once: without this, Nagle's
                    // algorithm and the client's delayed ACK add about 40 ms to a call.
                    let _ = stream.set_nodelay(true);
                    stream
                }
                Err(e) => {
                    // Out of descriptors: a waiting connection gives its descriptor back. On
                    // any failure the loop waits a moment.
                    if matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE)) {
                        state.gate.close_oldest();
                    }
                    state.gate.flood(format_args!("accept failed: {e}"));
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            };
            // Refused: closed before anything is read.
            let Some(ticket) = state.gate.admit() else {
                continue;
            };
            let state = state.clone();
            tokio::spawn(async move {
                let cancel = state.cancel.clone();
                let served = ticket.clone();
                let service = hyper::service::service_fn(move |request| {
                    let state = state.clone();
                    let ticket = served.clone();
                    async move { Ok::<_, Infallible>(state.handle(request, ticket).await) }
                });
                let connection = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .with_upgrades();
                tokio::pin!(connection);
                tokio::select! {
                    outcome = connection.as_mut() => {
                        if let Err(e) = outcome {
                            tracing::debug!("gateway: connection ended: {e}");
                        }
                    }
                    _ = ticket.closing() => {}
                    _ = cancel.cancelled() => {}
                }
            });
            // The new connection's task gets to read its request before the next one is
            // accepted.
            tokio::task::yield_now().await;
        }
    });
    Ok(Endpoint { port, cancel })
}

fn plain(status: StatusCode, text: &str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(format!("{text}\n"))).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// The checks every request passes first: `Err` is the refusal's status and text.
pub fn check(headers: &HeaderMap, secret: &str) -> Result<(), (StatusCode, &'static str)> {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .ok_or((StatusCode::BAD_REQUEST, "Bad Request: no Host header"))?;
    if !net::loopback_name(net::host_of(host)) {
        return Err((
            StatusCode::FORBIDDEN,
            "Forbidden: the gateway answers only requests for a loopback host",
        ));
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let allowed = origin
            .to_str()
            .ok()
            .and_then(|o| url::Url::parse(o).ok())
            .is_some_and(|url| {
                matches!(url.scheme(), "http" | "https")
                    && url.host_str().is_some_and(net::loopback_name)
            });
        if !allowed {
            return Err((
                StatusCode::FORBIDDEN,
                "Forbidden: requests from web pages of other origins are refused",
            ));
        }
    }
    let Some(authorization) = headers.get(header::AUTHORIZATION) else {
        return Err((
            StatusCode::UNAUTHORIZED,
            "Unauthorized: send the secret of mcp-sidecar.gatewayInfo as Authorization: Bearer <secret>",
        ));
    };
    let given = authorization
        .as_bytes()
        .strip_prefix(b"Bearer ")
        .unwrap_or_default();
    if !net::same_secret(given, secret.as_bytes()) {
        return Err((
            StatusCode::FORBIDDEN,
            "Forbidden: not this gateway's secret (it changes each time the editor starts the sidecar)",
        ));
    }
    Ok(())
}

/// A refusal of [`check`] as the response.
fn refusal(status: StatusCode, text: &str) -> Response<Body> {
    let mut response = plain(status, text);
    if status == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            header::HeaderValue::from_static("Bearer realm=\"mcp-sidecar gateway\""),
        );
    }
    response
}

/// Decodes `%XX` escapes of one path segment.
fn decode(segment: &str) -> Option<String> {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// `(tunnel, scope)` of a path, `None` for any other path.
fn route(path: &str) -> Option<(bool, Scope)> {
    let path = path.trim_end_matches('/');
    let (tunnel, rest) = if let Some(rest) = path.strip_prefix("/mcp") {
        (false, rest)
    } else if let Some(rest) = path.strip_prefix("/stdio") {
        (true, rest)
    } else {
        return None;
    };
    match rest.strip_prefix('/') {
        None if rest.is_empty() => Some((tunnel, Scope::All)),
        Some(name) if !name.is_empty() && !name.contains('/') => {
            Some((tunnel, Scope::One(decode(name)?)))
        }
        _ => None,
    }
}

impl State {
    async fn handle(
        self: Arc<Self>,
        mut request: Request<Incoming>,
        ticket: Arc<Ticket>,
    ) -> Response<Body> {
        if let Err((status, text)) = check(request.headers(), &self.secret) {
            return refusal(status, text);
        }
        ticket.shown();
        let Some((tunnel, scope)) = route(request.uri().path()) else {
            return plain(
                StatusCode::NOT_FOUND,
                "Not Found: the gateway serves /mcp and /mcp/<server>",
            );
        };
        if !tunnel {
            let service = self.service(&scope);
            return pass::body(service.handle(request).await, self.shared.passing.clone());
        }
        let upgrade = request
            .headers()
            .get(header::UPGRADE)
            .and_then(|u| u.to_str().ok())
            .is_some_and(|u| u.eq_ignore_ascii_case(TUNNEL_PROTOCOL));
        if !upgrade {
            return plain(
                StatusCode::BAD_REQUEST,
                "Bad Request: /stdio needs Upgrade: mcp-stdio (it is what `mcp-sidecar gateway` uses)",
            );
        }
        let shared = self.shared.clone();
        let cancel = self.cancel.clone();
        let upgraded = hyper::upgrade::on(&mut request);
        tokio::spawn(async move {
            let io = match upgraded.await {
                Ok(io) => TokioIo::new(io),
                Err(e) => {
                    tracing::debug!("gateway: the tunnel did not open: {e}");
                    return;
                }
            };
            // The tunnel keeps its connection's place at the gate while it is open.
            let _ticket = ticket;
            let (read, write) = tokio::io::split(io);
            tokio::select! {
                _ = super::server::serve_stream(shared, scope, read, write) => {}
                _ = cancel.cancelled() => {}
            }
        });
        let mut response = Response::new(Full::new(Bytes::new()).boxed());
        *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
        response.headers_mut().insert(
            header::CONNECTION,
            header::HeaderValue::from_static("upgrade"),
        );
        response.headers_mut().insert(
            header::UPGRADE,
            header::HeaderValue::from_static(TUNNEL_PROTOCOL),
        );
        response
    }

    /// The Streamable HTTP service of a scope (made on first use; each has its own sessions).
    fn service(&self, scope: &Scope) -> Service {
        let mut services = self.services.lock();
        services
            .entry(scope.clone())
            .or_insert_with(|| {
                let shared = self.shared.clone();
                let scope = scope.clone();
                // Host and Origin are checked above, for every path.
                let config = StreamableHttpServerConfig::default()
                    .disable_allowed_hosts()
                    .with_cancellation_token(self.cancel.child_token());
                StreamableHttpService::new(
                    move || Ok(GatewayServer::new(shared.clone(), scope.clone())),
                    Arc::new(LocalSessionManager::default()),
                    config,
                )
            })
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, value.parse().unwrap());
        }
        map
    }

    fn status(pairs: &[(&'static str, &str)]) -> u16 {
        match check(&headers(pairs), "s3cret") {
            Ok(()) => 200,
            Err((status, _)) => status.as_u16(),
        }
    }

    #[test]
    fn refuses_what_it_must() {
        let ok = [
            ("host", "127.0.0.1:4000"),
            ("authorization", "Bearer s3cret"),
        ];
        assert_eq!(status(&ok), 200);
        assert_eq!(status(&[("host", "127.0.0.1:4000")]), 401);
        assert_eq!(
            status(&[("host", "localhost:1"), ("authorization", "Bearer s3creT")]),
            403
        );
        assert_eq!(
            status(&[("host", "[::1]:1"), ("authorization", "s3cret")]),
            403
        );
        assert_eq!(
            status(&[
                ("host", "evil.example:4000"),
                ("authorization", "Bearer s3cret")
            ]),
            403
        );
        assert_eq!(
            status(&[
                ("host", "127.0.0.1:4000"),
                ("origin", "https://evil.example"),
                ("authorization", "Bearer s3cret")
            ]),
            403
        );
        assert_eq!(
            status(&[
                ("host", "127.0.0.1:4000"),
                ("origin", "http://localhost:5173"),
                ("authorization", "Bearer s3cret")
            ]),
            200
        );
        assert_eq!(
            status(&[
                ("host", "127.0.0.1"),
                ("origin", "null"),
                ("authorization", "Bearer s3cret")
            ]),
            403
        );
        assert_eq!(status(&[("authorization", "Bearer s3cret")]), 400);
    }

    #[tokio::test(start_paused = true)]
    async fn the_gate_closes_the_oldest_waiting_connection_and_the_silent_ones() {
        let gate = Arc::new(Gate::new(64));
        assert_eq!((gate.most, gate.waiting_most), (16, 8));
        let open = || gate.open.load(Ordering::SeqCst);
        let closed = |tickets: &[Arc<Ticket>]| -> Vec<bool> {
            tickets.iter().map(|t| t.closed.is_cancelled()).collect()
        };
        // A burst: past the waiting cap, new connections come in as well while the waiting
        // ones are new, up to the cap on all; then new ones are refused.
        let burst: Vec<_> = (0..16).map(|_| gate.admit().unwrap()).collect();
        assert!(gate.admit().is_none());
        assert_eq!(open(), 16);
        assert_eq!(closed(&burst), [false; 16]);
        // Once they have had their grace, the oldest still waiting gives way to each new one.
        burst[0].shown();
        tokio::time::advance(GRACE).await;
        let next: Vec<_> = (0..2).map(|_| gate.admit().unwrap()).collect();
        let mut want = [false; 16];
        want[1] = true;
        want[2] = true;
        assert_eq!(closed(&burst), want);
        assert_eq!(closed(&next), [false, false]);
        drop(burst);
        drop(next);
        assert_eq!(open(), 0);
        // Connections that sent the secret never give way: with all of them open, a new one
        // is refused.
        let shown: Vec<_> = (0..16)
            .map(|_| {
                let ticket = gate.admit().unwrap();
                ticket.shown();
                ticket
            })
            .collect();
        tokio::time::advance(GRACE).await;
        assert!(gate.admit().is_none());
        assert_eq!(open(), 16);
        // A connection that sends no request with the secret is closed in time; one that did
        // stays.
        let mut shown = shown;
        shown.pop();
        let silent = gate.admit().unwrap();
        let started = tokio::time::Instant::now();
        silent.closing().await;
        assert_eq!(started.elapsed(), FIRST_REQUEST);
        let stays = tokio::time::timeout(FIRST_REQUEST * 3, shown[0].closing()).await;
        assert!(
            stays.is_err(),
            "a connection that sent the secret was closed"
        );
    }

    #[test]
    fn routes_paths() {
        assert_eq!(route("/mcp"), Some((false, Scope::All)));
        assert_eq!(route("/mcp/"), Some((false, Scope::All)));
        assert_eq!(
            route("/mcp/my%20db"),
            Some((false, Scope::One("my db".into())))
        );
        assert_eq!(
            route("/stdio/demo"),
            Some((true, Scope::One("demo".into())))
        );
        assert_eq!(route("/stdio"), Some((true, Scope::All)));
        assert_eq!(route("/mcpx"), None);
        assert_eq!(route("/mcp/a/b"), None);
        assert_eq!(route("/"), None);
    }
}
