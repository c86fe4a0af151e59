use super::*;
use crate::mcp::wire::direct;
use rmcp::model::CallToolRequestParams;
use rmcp::model::RequestId;
use serde_json::Value;

/// A server that answers four calls made past rmcp in every shape (the usual one, one
/// only rmcp's parse reads, one that cannot be read), with a notification and an answer
/// to one of rmcp's requests between them; then takes a cancellation and exits.
const SERVER: &str = r#"
IFS= read -r a; printf '%s\n' "$a" > "$0/a"
echo '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}'
echo '{"jsonrpc":"2.0","id":4294967296,"result":{"content":[{"type":"text","text":"ok"}]}}'
echo '{"jsonrpc":"2.0","id":3,"result":{}}'
IFS= read -r b
echo '{"jsonrpc":"2.0","id":4294967297,"result":{"content":[]},"x-extra":1}'
IFS= read -r c
printf '{"jsonrpc":"2.0","id":4294967298,"result":{"a":"\377"}}\n'
IFS= read -r d
IFS= read -r cancel; printf '%s\n' "$cancel" > "$0/cancel"
IFS= read -r e
"#;

/// A guard against a hang (an answer that never comes fails the test instead).
trait Within: Future + Sized {
    async fn within(self) -> Self::Output {
        tokio::time::timeout(std::time::Duration::from_secs(20), self)
            .await
            .expect("no answer within 20 s")
    }
}
impl<F: Future> Within for F {}

#[tokio::test(flavor = "current_thread")]
async fn calls_past_rmcp_are_answered_from_the_transport_and_fail_when_it_ends() {
    let dir = tempfile::tempdir().unwrap();
    let mut sh = tokio::process::Command::new("sh");
    let (_child, mut transport) = over(sh.arg("-c").arg(SERVER).arg(dir.path()));
    let direct = transport.direct();
    let (to_rmcp, mut rmcp) = tokio::sync::mpsc::unbounded_channel();
    let reader = tokio::spawn(async move {
        while let Some(message) = transport.receive().await {
            to_rmcp.send(message).unwrap();
        }
    });
    let call = |name: &str| {
        let id = direct.next_id();
        let params = CallToolRequestParams::new(name.to_string());
        let answer = direct.send(&id, "tools/call", &params).unwrap();
        (id, answer)
    };

    let (id, answer) = call("first");
    assert_eq!(id, RequestId::Number(direct::FIRST_ID));
    let answer = answer.within().await.unwrap().unwrap();
    assert_eq!(
        &answer[..],
        br#"{"content":[{"type":"text","text":"ok"}]}"#,
        "the result as sent"
    );
    let written = std::fs::read_to_string(dir.path().join("a")).unwrap();
    assert_eq!(
        written.trim_end(),
        r#"{"jsonrpc":"2.0","id":4294967296,"method":"tools/call","params":{"name":"first"}}"#
    );
    // What was not an answer to a call made here went to rmcp, in order.
    let first = rmcp.recv().within().await.unwrap();
    assert!(
        matches!(first, JsonRpcMessage::Notification(_)),
        "{first:?}"
    );
    let second = rmcp.recv().within().await.unwrap();
    assert!(
        matches!(&second, JsonRpcMessage::Response(r) if r.id == RequestId::Number(3)),
        "{second:?}"
    );
    assert!(!direct.is_pending(&id) && !direct.waiting());

    // An answer in a shape only rmcp's parse reads still reaches its call.
    let delivered = call("second").1.within().await.unwrap();
    let answer: Value = serde_json::from_slice(&delivered.unwrap()).unwrap();
    assert_eq!(answer, serde_json::json!({"content": []}));
    // One that cannot be read becomes an error for its call, not a lost answer.
    let error = call("third").1.within().await.unwrap().unwrap_err();
    assert_eq!(error.code.0, -32603, "{error:?}");

    // A call given up is forgotten and the server told.
    let (id, answer) = call("fourth");
    direct.cancel(&id, "cancelled by the editor");
    assert!(!direct.is_pending(&id));
    assert!(
        answer.within().await.is_err(),
        "nobody answers a cancelled call"
    );
    // The last call waits until the server exits, and then fails at once.
    let (_, last) = call("fifth");
    assert!(last.within().await.is_err());
    let cancelled = std::fs::read_to_string(dir.path().join("cancel")).unwrap();
    let cancelled: Value = serde_json::from_str(&cancelled).unwrap();
    assert_eq!(cancelled["method"], "notifications/cancelled");
    assert_eq!(cancelled["params"]["requestId"], 4294967299_i64);
    reader.await.unwrap();
    assert!(rmcp.recv().await.is_none(), "nothing more went to rmcp");
    let id = direct.next_id();
    let params = CallToolRequestParams::new("late".to_string());
    assert!(
        direct.send(&id, "tools/call", &params).is_none(),
        "refused once closed"
    );
}
