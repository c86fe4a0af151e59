use super::*;
use rmcp::model::RequestId;
use rmcp::model::{CallToolRequestParams, ClientRequest};
use serde_json::{Value, json};

/// Lines written at once (when the pipe takes them) and lines left to their task (the
/// pipe full, or an earlier line still being written) reach the server whole and in order.
#[tokio::test(flavor = "current_thread")]
async fn lines_written_at_once_or_later_arrive_whole_and_in_order() {
    let (_child, mut transport) = over(&mut tokio::process::Command::new("cat"));
    // Over a pipe's 64 KiB for some, so the first write is cut short.
    let sizes = [10, 200_000, 10, 10, 150_000, 10];
    let mut sends = Vec::new();
    for (i, size) in sizes.iter().enumerate() {
        let mut params = CallToolRequestParams::new("x".repeat(*size));
        params.arguments = None;
        let request = ClientRequest::CallToolRequest(rmcp::model::Request::new(params));
        let id = RequestId::Number(i as i64);
        sends.push(transport.send(JsonRpcMessage::request(request, id)));
    }
    // rmcp spawns each send as a task of its own, in order.
    let tasks: Vec<_> = sends.into_iter().map(tokio::spawn).collect();
    let mut seen = Vec::new();
    while seen.len() < sizes.len() {
        let line = transport.reader.next().await.unwrap().unwrap();
        let message: Value = serde_json::from_slice(&line).unwrap();
        let name = message["params"]["name"].as_str().unwrap().len();
        seen.push((message["id"].clone(), name));
    }
    for task in tasks {
        task.await.unwrap().unwrap();
    }
    let expected: Vec<_> = sizes
        .iter()
        .enumerate()
        .map(|(i, size)| (json!(i), *size))
        .collect();
    assert_eq!(seen, expected);
}
