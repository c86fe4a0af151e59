//! The loopback page: views in the browser, for editors that do not host them. One HTTP/1
//! listener on 127.0.0.1 serves the host pages (`/view/<token>…`); one listener per server
//! serves that server's apps (`/app/<token>`), so each server's apps have an origin of their
//! own, never the page's. Every path holds a view's token; anything else is `404`. `Host` must
//! be this listener's loopback address, and an `Origin`, when sent, must be the page's own (the
//! app listener: its own).

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::Apps;
use crate::apps::View;
use crate::apps::request::MAX_MESSAGE;

const PAGE: &str = include_str!("../apps/assets/page.html");
const HOST_JS: &str = include_str!("../apps/assets/host.js");
/// How long `/events` waits for the view to close.
const EVENTS_WAIT: Duration = Duration::from_secs(25);
/// Connections open at once, at most (anyone on the machine may open them).
const MAX_CONNECTIONS: usize = 128;

type Body = Full<Bytes>;

/// Which listener a request came in on.
#[derive(Clone)]
enum Listener {
    Page,
    App(String),
}

pub struct Page {
    pub port: u16,
    apps: Weak<Apps>,
    app_ports: Mutex<HashMap<String, u16>>,
    connections: Arc<AtomicUsize>,
    cancel: CancellationToken,
}

impl Drop for Page {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

fn bind() -> std::io::Result<TcpListener> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
    listener.set_nonblocking(true)?;
    TcpListener::from_std(listener)
}

impl Page {
    pub fn start(apps: Weak<Apps>) -> std::io::Result<Arc<Page>> {
        let listener = bind()?;
        let page = Arc::new(Page {
            port: listener.local_addr()?.port(),
            apps,
            app_ports: Mutex::default(),
            connections: Arc::default(),
            cancel: CancellationToken::new(),
        });
        page.serve(listener, Listener::Page);
        Ok(page)
    }

    /// The port of `server`'s app listener (started the first time).
    pub fn app_port(self: &Arc<Self>, server: &str) -> std::io::Result<u16> {
        let mut ports = self.app_ports.lock();
        if let Some(port) = ports.get(server) {
            return Ok(*port);
        }
        let listener = bind()?;
        let port = listener.local_addr()?.port();
        ports.insert(server.to_string(), port);
        drop(ports);
        self.serve(listener, Listener::App(server.to_string()));
        Ok(port)
    }

    fn serve(self: &Arc<Self>, listener: TcpListener, which: Listener) {
        let page = Arc::downgrade(self);
        let cancel = self.cancel.clone();
        let connections = self.connections.clone();
        let port = listener.local_addr().map(|a| a.port()).unwrap_or_default();
        tokio::spawn(async move {
            loop {
                let stream = tokio::select! {
                    accepted = listener.accept() => match accepted {
                        Ok((stream, _)) => stream,
                        Err(e) => {
                            tracing::debug!("views' page: accept failed: {e}");
                            tokio::time::sleep(Duration::from_millis(100)).await;
                            continue;
                        }
                    },
                    _ = cancel.cancelled() => break,
                };
                if connections.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
                    connections.fetch_sub(1, Ordering::SeqCst);
                    continue;
                }
                let _ = stream.set_nodelay(true);
                let (page, which, cancel, connections) = (
                    page.clone(),
                    which.clone(),
                    cancel.clone(),
                    connections.clone(),
                );
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request| {
                        let (page, which) = (page.clone(), which.clone());
                        async move {
                            let response = match page.upgrade() {
                                Some(page) => page.handle(&which, port, request).await,
                                None => status(StatusCode::NOT_FOUND),
                            };
                            Ok::<_, Infallible>(response)
                        }
                    });
                    let connection = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service);
                    tokio::select! {
                        _ = connection => {}
                        _ = cancel.cancelled() => {}
                    }
                    connections.fetch_sub(1, Ordering::SeqCst);
                });
            }
        });
    }

    async fn handle(
        self: &Arc<Self>,
        which: &Listener,
        port: u16,
        request: Request<Incoming>,
    ) -> Response<Body> {
        if !own_host(request.headers(), port) {
            return status(StatusCode::FORBIDDEN);
        }
        if let Some(origin) = request.headers().get(header::ORIGIN) {
            let own = origin.to_str().is_ok_and(|o| {
                o == format!("http://127.0.0.1:{port}") || o == format!("http://localhost:{port}")
            });
            if !own {
                return status(StatusCode::FORBIDDEN);
            }
        }
        let Some(apps) = self.apps.upgrade() else {
            return status(StatusCode::NOT_FOUND);
        };
        let path = request.uri().path().to_string();
        match which {
            Listener::Page => self.page_route(&apps, &path, request).await,
            Listener::App(server) => {
                let Some(token) = path.strip_prefix("/app/") else {
                    return status(StatusCode::NOT_FOUND);
                };
                match apps.views.by_token(token) {
                    Some(view) if view.server() == server && request.method() == Method::GET => {
                        app_document(&apps, &view).await
                    }
                    _ => status(StatusCode::NOT_FOUND),
                }
            }
        }
    }

    async fn page_route(
        self: &Arc<Self>,
        apps: &Arc<Apps>,
        path: &str,
        request: Request<Incoming>,
    ) -> Response<Body> {
        let Some(rest) = path.strip_prefix("/view/") else {
            return status(StatusCode::NOT_FOUND);
        };
        let (token, what) = rest.split_once('/').unwrap_or((rest, ""));
        let Some(view) = apps.views.by_token(token) else {
            return status(StatusCode::NOT_FOUND);
        };
        let method = request.method().clone();
        match (method, what) {
            (Method::GET, "") => {
                let page = PAGE.replace("{{TOKEN}}", &view.token);
                respond(
                    "text/html; charset=utf-8",
                    page,
                    Some(&self.page_csp(&view)),
                )
            }
            (Method::GET, "host.js") => {
                respond("text/javascript; charset=utf-8", HOST_JS.to_string(), None)
            }
            (Method::GET, "data") => match self.app_port(view.server()) {
                Ok(app_port) => {
                    let o = &view.opening;
                    let data = json!({
                        "server": o.server,
                        "tool": o.tool,
                        "title": o.title,
                        "appUrl": format!("http://127.0.0.1:{app_port}/app/{}", view.token),
                        "arguments": o.arguments,
                        "result": o.result,
                        "hostContext": super::host_context(),
                    });
                    respond("application/json", data.to_string(), None)
                }
                Err(e) => {
                    tracing::warn!("views' page: the app listener did not start: {e}");
                    status(StatusCode::SERVICE_UNAVAILABLE)
                }
            },
            (Method::POST, "rpc") => {
                let body = match Limited::new(request.into_body(), MAX_MESSAGE)
                    .collect()
                    .await
                {
                    Ok(body) => body.to_bytes(),
                    Err(_) => return status(StatusCode::PAYLOAD_TOO_LARGE),
                };
                let Ok(message) = serde_json::from_slice::<Value>(&body) else {
                    return status(StatusCode::BAD_REQUEST);
                };
                match apps.answer_view(&view, &message).await {
                    Some(answer) => respond("application/json", answer.to_string(), None),
                    None => status(StatusCode::NO_CONTENT),
                }
            }
            (Method::GET, "events") => {
                let mut closed = view.closed();
                let reason =
                    tokio::time::timeout(EVENTS_WAIT, closed.wait_for(Option::is_some)).await;
                match reason {
                    Ok(Ok(reason)) => {
                        let body = json!({"teardown": reason.clone().unwrap_or_default()});
                        respond("application/json", body.to_string(), None)
                    }
                    _ => status(StatusCode::NO_CONTENT),
                }
            }
            (Method::POST, "close") => {
                apps.close(&view.id, "its page was closed");
                status(StatusCode::NO_CONTENT)
            }
            _ => status(StatusCode::NOT_FOUND),
        }
    }

    /// The host page's own policy: its script, its styles, its calls back here, and the app's
    /// frame from its server's listener.
    fn page_csp(self: &Arc<Self>, view: &View) -> String {
        let frame = self
            .app_port(view.server())
            .map(|p| format!("http://127.0.0.1:{p}"))
            .unwrap_or_else(|_| "'none'".into());
        format!(
            "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; \
             connect-src 'self'; frame-src {frame}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        )
    }
}

/// The app's document, under the view's CSP: the HTML read when the view opened (served once),
/// or read again from the server.
async fn app_document(apps: &Apps, view: &View) -> Response<Body> {
    let html = match view.take_html() {
        Some(html) => html,
        None => match apps
            .read_html(view.server(), &view.opening.resource_uri)
            .await
        {
            Ok((html, _)) => html,
            Err(why) => {
                tracing::warn!(server = view.server(), "the view's HTML: {why}");
                return status(StatusCode::BAD_GATEWAY);
            }
        },
    };
    respond("text/html; charset=utf-8", html, Some(&view.opening.csp))
}

/// Whether `Host` is this listener's own loopback address.
fn own_host(headers: &http::HeaderMap, port: u16) -> bool {
    headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .is_some_and(|h| h == format!("127.0.0.1:{port}") || h == format!("localhost:{port}"))
}

fn status(code: StatusCode) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::new()));
    *response.status_mut() = code;
    response
}

fn respond(content_type: &'static str, body: String, csp: Option<&str>) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    let headers = response.headers_mut();
    let fixed = [
        (header::CONTENT_TYPE, content_type),
        (header::CACHE_CONTROL, "no-store"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        // The token is in the URL: no page of the app's tells another site where it came from.
        (header::REFERRER_POLICY, "no-referrer"),
    ];
    for (name, value) in fixed {
        headers.insert(name, header::HeaderValue::from_static(value));
    }
    if let Some(csp) = csp.and_then(|c| header::HeaderValue::from_str(c).ok()) {
        headers.insert(header::CONTENT_SECURITY_POLICY, csp);
    }
    response
}
