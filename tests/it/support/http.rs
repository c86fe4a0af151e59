//! One small HTTP/1.1 server for the tests that need a fake HTTP peer (an MCP server with odd
//! habits, an OpenAI-compatible endpoint, an attacker's host): a free loopback port, one request
//! a connection. Every connection and request is recorded; what to answer (or not) is the
//! test's handler, which gets the request and the connection.

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One request as received.
#[derive(Debug, Clone)]
pub struct Request {
    /// `POST /v1/chat/completions HTTP/1.1`
    pub request_line: String,
    pub headers: Vec<(String, String)>,
    /// The body as JSON, or as a JSON string when it is not JSON (`Null` when empty).
    pub body: Value,
}

impl Request {
    pub fn method(&self) -> &str {
        self.request_line.split(' ').next().unwrap_or_default()
    }

    /// The first header of that name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

pub struct HttpServer {
    pub port: u16,
    requests: Arc<Mutex<Vec<Request>>>,
    connections: Arc<AtomicUsize>,
}

impl HttpServer {
    /// Listens on 127.0.0.1 (a free port) until the test ends; each connection's request goes
    /// to `handler`, which writes the answer (or keeps silent, or drops the connection).
    pub async fn start<H, F>(handler: H) -> HttpServer
    where
        H: Fn(Request, TcpStream) -> F + Send + Sync + 'static,
        F: Future<Output = ()> + Send + 'static,
    {
        let handler = Arc::new(handler);
        HttpServer::start_connections(move |log, mut conn| {
            let handler = handler.clone();
            async move {
                let Some(request) = read_request(&mut conn).await else {
                    return;
                };
                log.lock().unwrap().push(request.clone());
                handler(request, conn).await;
            }
        })
        .await
    }

    /// The accept loop: counts each connection and hands it, with the request log, to `serve`.
    async fn start_connections<S, F>(serve: S) -> HttpServer
    where
        S: Fn(Arc<Mutex<Vec<Request>>>, TcpStream) -> F + Send + Sync + 'static,
        F: Future<Output = ()> + Send + 'static,
    {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests: Arc<Mutex<Vec<Request>>> = Arc::default();
        let connections: Arc<AtomicUsize> = Arc::default();
        let (log, count) = (requests.clone(), connections.clone());
        tokio::spawn(async move {
            while let Ok((conn, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(serve(log.clone(), conn));
            }
        });
        HttpServer {
            port,
            requests,
            connections,
        }
    }

    /// Like [`HttpServer::start`], but the connection stays open after each answer (as HTTP/1.1
    /// clients expect) and serves the next request on it: `reply` gives each request's whole
    /// response, written with [`kept_response`].
    pub async fn keep_alive<R>(reply: R) -> HttpServer
    where
        R: Fn(&Request) -> String + Send + Sync + 'static,
    {
        let reply = Arc::new(reply);
        HttpServer::start_connections(move |log, mut conn| {
            let reply = reply.clone();
            async move {
                while let Some(request) = read_request(&mut conn).await {
                    log.lock().unwrap().push(request.clone());
                    if conn.write_all(reply(&request).as_bytes()).await.is_err() {
                        return;
                    }
                }
            }
        })
        .await
    }

    /// `http://127.0.0.1:PORT`
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The requests received so far, in order.
    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }

    /// How many connections were accepted (a request read or not).
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

/// Reads one HTTP/1.1 request with a `Content-Length` body (or none). A client that does not
/// speak HTTP (a TLS handshake) gets a plain-text 400 at once.
pub async fn read_request(conn: &mut TcpStream) -> Option<Request> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        let n = conn.read(&mut chunk).await.ok().filter(|n| *n > 0)?;
        buf.extend_from_slice(&chunk[..n]);
        if !buf[0].is_ascii_uppercase() {
            let _ = conn
                .write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
                .await;
            return None;
        }
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let request_line = lines.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < length {
        let n = conn.read(&mut chunk).await.ok().filter(|n| *n > 0)?;
        body.extend_from_slice(&chunk[..n]);
    }
    body.truncate(length);
    let body = if body.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&body)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned()))
    };
    Some(Request {
        request_line,
        headers,
        body,
    })
}

/// A whole response that closes the connection: status line, `Content-Type`, `Content-Length`,
/// any `extra` header lines (each ending in `\r\n`), the body.
pub fn response(status: u16, content_type: &str, extra: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n{extra}\r\n{body}",
        reason(status),
        body.len()
    )
}

/// A whole JSON response that leaves the connection open (for [`HttpServer::keep_alive`]).
pub fn kept_response(status: u16, body: &Value) -> String {
    let body = body.to_string();
    format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        reason(status),
        body.len()
    )
}

/// [`response`] with a JSON body.
pub fn json_response(status: u16, body: &Value, extra: &str) -> String {
    response(status, "application/json", extra, &body.to_string())
}

/// Writes `text` and closes the connection.
pub async fn answer(mut conn: TcpStream, text: &str) {
    let _ = conn.write_all(text.as_bytes()).await;
    let _ = conn.shutdown().await;
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        202 => "Accepted",
        301 => "Moved Permanently",
        302 => "Found",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        405 => "Method Not Allowed",
        500 => "Internal Server Error",
        _ => "Whatever",
    }
}

/// A port nothing listens on (bound, then released).
pub fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}
