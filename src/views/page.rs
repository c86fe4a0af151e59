//! The loopback page: views in the browser, for editors that do not host them. Each view's host
//! page (`/view/<token>…`) has an HTTP/1 listener on 127.0.0.1 of its own, so the connections a
//! page holds (its `/events` wait, an app's long call) count against no other view's (a browser
//! opens at most six to one host and port); one listener per server serves that server's apps
//! (`/app/<token>`), so each server's apps have an origin of their own, never a page's. Every path holds a view's token; anything else is `404`. `Host` must
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
    /// One view's page: the view's id.
    Page(String),
    App(String),
}

pub struct Page {
    apps: Weak<Apps>,
    /// Each open view's page listener: its port, and what stops it.
    page_ports: Mutex<HashMap<String, (u16, CancellationToken)>>,
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
    pub fn new(apps: Weak<Apps>) -> Arc<Page> {
        Arc::new(Page {
            apps,
            page_ports: Mutex::default(),
            app_ports: Mutex::default(),
            connections: Arc::default(),
            cancel: CancellationToken::new(),
        })
    }

    /// The port of `view`'s page listener (started the first time).
    pub fn page_port(self: &Arc<Self>, view: &str) -> std::io::Result<u16> {
        let mut ports = self.page_ports.lock();
        if let Some((port, _)) = ports.get(view) {
            return Ok(*port);
        }
        let listener = bind()?;
        let port = listener.local_addr()?.port();
        let stop = self.cancel.child_token();
        ports.insert(view.to_string(), (port, stop.clone()));
        drop(ports);
        self.serve(listener, Listener::Page(view.to_string()), stop);
        Ok(port)
    }

    /// Stops a closed view's page listener.
    pub fn forget(&self, view: &str) {
        if let Some((_, stop)) = self.page_ports.lock().remove(view) {
            stop.cancel();
        }
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
        self.serve(
            listener,
            Listener::App(server.to_string()),
            self.cancel.clone(),
        );
        Ok(port)
    }

    fn serve(self: &Arc<Self>, listener: TcpListener, which: Listener, cancel: CancellationToken) {
        let page = Arc::downgrade(self);
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
                    tokio::pin!(connection);
                    tokio::select! {
                        _ = connection.as_mut() => {}
                        // The view closed: what is being answered is (its `/close`, its
                        // `/events` teardown), then the connection ends.
                        _ = cancel.cancelled() => {
                            connection.as_mut().graceful_shutdown();
                            let _ = tokio::time::timeout(Duration::from_secs(5), connection).await;
                        }
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
            Listener::Page(id) => self.page_route(&apps, id, &path, request).await,
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
        id: &str,
        path: &str,
        request: Request<Incoming>,
    ) -> Response<Body> {
        let Some(rest) = path.strip_prefix("/view/") else {
            return status(StatusCode::NOT_FOUND);
        };
        let (token, what) = rest.split_once('/').unwrap_or((rest, ""));
        let Some(view) = apps.views.by_token(token).filter(|v| v.id == id) else {
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
