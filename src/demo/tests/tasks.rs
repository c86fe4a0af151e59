//! `slow_task`: a task (the Tasks extension) for a client that declared it, inline otherwise.

use std::time::Duration;

use rmcp::model::{
    CancelTaskParams, CreateTaskResult, DetailedTask, GetTaskParams, TaskPayload, TaskStatus,
    UpdateTaskParams,
};

use super::*;

const TASKS: &str = "io.modelcontextprotocol/tasks";

/// A client that declared the Tasks extension and form elicitation, answering `keep`.
fn tasks_client(side: &Side, keep: bool) -> TestClient {
    let capabilities = json!({"elicitation": {"form": {}}, "extensions": {TASKS: {}}});
    TestClient::with_capabilities(side.version(), capabilities)
        .answering_forms_with(json!({"keep": keep}))
}

async fn start_task(client: &Client, arguments: Value) -> CreateTaskResult {
    match client.call_tool_once(call("slow_task", arguments)).await {
        Ok(CallToolResponse::Task(handle)) => handle,
        other => panic!("expected a task handle, got {other:?}"),
    }
}

async fn get(client: &Client, task_id: &str) -> DetailedTask {
    let params = GetTaskParams::new(task_id.to_owned());
    client.get_task(params).await.expect("tasks/get").task
}

/// Polls `tasks/get` until `done` holds; fails after 10 s.
async fn poll_until(
    client: &Client,
    task_id: &str,
    done: impl Fn(&DetailedTask) -> bool,
) -> DetailedTask {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let task = get(client, task_id).await;
        if done(&task) {
            return task;
        }
        assert!(tokio::time::Instant::now() < deadline, "still {task:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn status_is(status: TaskStatus) -> impl Fn(&DetailedTask) -> bool {
    move |task| task.status() == status
}

async fn answer(client: &Client, task_id: &str, key: &str, answer: Value) {
    let responses = [(key.to_owned(), answer)].into();
    let params = UpdateTaskParams::new(task_id.to_owned(), responses);
    client.update_task(params).await.expect("tasks/update");
}

fn completed_result(task: &DetailedTask) -> CallToolResult {
    let TaskPayload::Completed { result } = &task.payload else {
        panic!("expected completed, got {task:?}");
    };
    serde_json::from_value(Value::Object(result.clone())).expect("a CallToolResult")
}

#[tokio::test]
async fn a_task_asks_through_tasks_get_and_completes_with_the_answer() {
    for side in [LEGACY, MODERN] {
        for_each_era!(side, |era| {
            let test_client = tasks_client(&side, true);
            let client = connect(era, &side, test_client.clone()).await;
            let handle = start_task(&client, json!({"steps": 2, "stepMs": 0})).await;
            let seed = &handle.task;
            assert_eq!(seed.status, TaskStatus::Working);
            assert_eq!(seed.status_message.as_deref(), Some("step 1 of 2"));
            assert_eq!(seed.poll_interval_ms, Some(250));

            let id = &seed.task_id;
            let asking = poll_until(&client, id, status_is(TaskStatus::InputRequired)).await;
            let TaskPayload::InputRequired { input_requests } = &asking.payload else {
                unreachable!()
            };
            let asked = serde_json::to_value(input_requests).unwrap();
            assert_eq!(asked["keep"]["method"], "elicitation/create", "{asked}");
            assert_eq!(asked["keep"]["params"]["message"], "Keep the details?");
            let schema = &asked["keep"]["params"]["requestedSchema"];
            assert_eq!(schema["properties"]["keep"]["type"], "boolean", "{schema}");
            assert_eq!(
                asking.task.status_message.as_deref(),
                Some("waiting for your answer")
            );

            let accepted = json!({"action": "accept", "content": {"keep": false}});
            answer(&client, id, "keep", accepted).await;
            let done = poll_until(&client, id, status_is(TaskStatus::Completed)).await;
            let result = completed_result(&done);
            assert_eq!(
                text_of(&result),
                "Done after 2 steps: you chose to drop the details."
            );
            assert_eq!(
                structured(&result),
                &json!({"steps": 2, "action": "accept", "keep": false})
            );
            assert_eq!(done.task.status_message.as_deref(), Some("done"));
            assert!(
                test_client.requests().is_empty(),
                "{side:?}/{era:?}: asked only through tasks/get"
            );
        });
    }
}

#[tokio::test]
async fn status_messages_count_the_steps_and_cancel_ends_the_task() {
    for side in [LEGACY, MODERN] {
        let client = connect(Era::Both, &side, tasks_client(&side, true)).await;
        let handle = start_task(&client, json!({"forever": true, "stepMs": 1})).await;
        let id = &handle.task.task_id;
        // The step counts up: "step 1, until cancelled", "step 2, …".
        let at_step_3 = |task: &DetailedTask| {
            let message = task.task.status_message.as_deref().unwrap_or_default();
            let step = message.strip_prefix("step ").and_then(|rest| {
                let (step, tail) = rest.split_once(',')?;
                (tail == " until cancelled").then(|| step.parse::<u32>().ok())?
            });
            step.is_some_and(|step| step >= 3)
        };
        let working = poll_until(&client, id, at_step_3).await;
        assert_eq!(working.status(), TaskStatus::Working);

        client
            .cancel_task(CancelTaskParams::new(id.clone()))
            .await
            .unwrap();
        let cancelled = poll_until(&client, id, status_is(TaskStatus::Cancelled)).await;
        assert_eq!(cancelled.payload, TaskPayload::Cancelled);
        assert_eq!(cancelled.task.status_message.as_deref(), Some("cancelled"));
    }
}

#[tokio::test]
async fn cancel_while_asking_withdraws_the_question() {
    let client = connect(Era::Both, &MODERN, tasks_client(&MODERN, true)).await;
    let handle = start_task(&client, json!({"steps": 1, "stepMs": 0})).await;
    let id = &handle.task.task_id;
    poll_until(&client, id, status_is(TaskStatus::InputRequired)).await;
    client
        .cancel_task(CancelTaskParams::new(id.clone()))
        .await
        .unwrap();
    poll_until(&client, id, status_is(TaskStatus::Cancelled)).await;
    // A late answer changes nothing.
    let late = json!({"action": "accept", "content": {"keep": true}});
    answer(&client, id, "keep", late).await;
    assert_eq!(get(&client, id).await.status(), TaskStatus::Cancelled);
}

#[tokio::test]
async fn unknown_tasks_are_invalid_params() {
    let client = connect(Era::Both, &MODERN, tasks_client(&MODERN, true)).await;
    let get = client.get_task(GetTaskParams::new("nope")).await;
    let cancel = client.cancel_task(CancelTaskParams::new("nope")).await;
    let update = UpdateTaskParams::new("nope", [("keep".to_owned(), json!({}))].into());
    let update = client.update_task(update).await;
    for error in [get.unwrap_err(), cancel.unwrap_err(), update.unwrap_err()] {
        assert_eq!(error_code(&error), ErrorCode::INVALID_PARAMS.0);
    }
}

#[tokio::test]
async fn without_the_extension_it_runs_inline_and_asks_the_usual_way() {
    for side in [LEGACY, MODERN] {
        for_each_era!(side, |era| {
            let test_client = side.client().answering_forms_with(json!({"keep": true}));
            let client = connect(era, &side, test_client.clone()).await;
            let result = call_tool(&client, "slow_task", json!({"steps": 3, "stepMs": 0})).await;
            assert_eq!(
                text_of(&result),
                "Done after 3 steps: you chose to keep the details."
            );
            assert_eq!(
                structured(&result),
                &json!({"steps": 3, "action": "accept", "keep": true})
            );
            let requests = test_client.requests();
            assert_eq!(requests.len(), 1, "{side:?}/{era:?}");
            assert_eq!(requests[0]["message"], "Keep the details?");
        });
    }
}

#[tokio::test]
async fn declined_and_bad_arguments() {
    let side = LEGACY;
    let test_client = tasks_client(&side, true).answering(ElicitationAction::Decline);
    let client = connect(Era::Both, &side, test_client).await;
    let handle = start_task(&client, json!({"steps": 1, "stepMs": 0})).await;
    let id = &handle.task.task_id;
    poll_until(&client, id, status_is(TaskStatus::InputRequired)).await;
    answer(&client, id, "keep", json!({"action": "decline"})).await;
    let done = poll_until(&client, id, status_is(TaskStatus::Completed)).await;
    let result = completed_result(&done);
    assert_eq!(
        structured(&result),
        &json!({"steps": 1, "action": "decline"})
    );
    assert!(
        text_of(&result).contains("declined"),
        "{}",
        text_of(&result)
    );

    let result = call_tool(&client, "slow_task", json!({"steps": 0})).await;
    assert_eq!(result.is_error, Some(true));
}

#[tokio::test]
async fn a_client_that_cannot_answer_forms_gets_no_task() {
    let capabilities = json!({"extensions": {TASKS: {}}});
    let modern = TestClient::with_capabilities(MODERN.version(), capabilities.clone());
    let client = connect(Era::Both, &MODERN, modern).await;
    let error = client
        .call_tool_once(call("slow_task", json!({})))
        .await
        .unwrap_err();
    assert_eq!(
        error_code(&error),
        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY.0
    );
    // `forever` never asks, so it needs nothing but the extension.
    let client_forever = client
        .call_tool_once(call("slow_task", json!({"forever": true})))
        .await;
    assert!(matches!(client_forever, Ok(CallToolResponse::Task(_))));

    let legacy = TestClient::with_capabilities(LEGACY.version(), capabilities);
    let client = connect(Era::Both, &LEGACY, legacy).await;
    let result = call_tool(&client, "slow_task", json!({})).await;
    assert_eq!(result.is_error, Some(true));
    assert!(text_of(&result).contains("did not declare"));
}

/// The wire: a task handle and `tasks/get` in each state, as a 2026-07-28 client sees them.
#[tokio::test]
async fn tasks_on_the_wire() {
    let mut raw = RawClient::start(Era::Modern);
    let capabilities = json!({"elicitation": {"form": {}}, "extensions": {TASKS: {}}});
    let mut request = tools_call(1, "slow_task", capabilities.clone());
    request["params"]["arguments"] = json!({"steps": 2, "stepMs": 0});
    let handle = raw.request(request).await["result"].clone();
    let id = handle["taskId"].as_str().expect("taskId").to_owned();
    let stamps = |task: &Value| {
        for key in ["createdAt", "lastUpdatedAt"] {
            let stamp = task[key].as_str().unwrap_or_default();
            assert!(chrono_like(stamp), "{key}: {task}");
        }
    };
    stamps(&handle);
    let mut expected = json!({"resultType": "task", "taskId": id, "status": "working",
        "statusMessage": "step 1 of 2", "ttlMs": 300000, "pollIntervalMs": 250});
    expected["createdAt"] = handle["createdAt"].clone();
    expected["lastUpdatedAt"] = handle["lastUpdatedAt"].clone();
    assert_eq!(handle, expected);

    let asking = raw.poll_task(&id, "input_required").await;
    stamps(&asking);
    assert_eq!(asking["resultType"], "complete");
    assert_eq!(asking["statusMessage"], "waiting for your answer");
    assert_eq!(
        asking["inputRequests"],
        json!({"keep": {"method": "elicitation/create", "params": {
            "mode": "form",
            "message": "Keep the details?",
            "requestedSchema": {"type": "object", "properties": {"keep": {"type": "boolean",
                "title": "Keep the details", "description": "Keep every step in the report",
                "default": true}}, "required": ["keep"]}
        }}})
    );

    let update = json!({"taskId": id, "inputResponses": {"keep": {"action": "accept",
        "content": {"keep": true}}}});
    let ack = raw.task_request("tasks/update", update).await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    let done = raw.poll_task(&id, "completed").await;
    assert_eq!(done["statusMessage"], "done");
    assert_eq!(
        done["result"],
        json!({"content": [{"type": "text",
            "text": "Done after 2 steps: you chose to keep the details."}],
            "structuredContent": {"steps": 2, "action": "accept", "keep": true},
            "isError": false, "resultType": "complete"})
    );
    let ack = raw
        .task_request("tasks/cancel", json!({"taskId": id}))
        .await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
}

impl RawClient {
    /// A `tasks/*` request from a 2026-07-28 client that declared the extension and forms.
    async fn task_request(&mut self, method: &str, mut params: Value) -> Value {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities":
                {"elicitation": {"form": {}}, "extensions": {TASKS: {}}},
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"}
        });
        let id = next_id();
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.request(request).await
    }

    /// `tasks/get` until the task is in `status` (passing only through `working`); its result.
    async fn poll_task(&mut self, task_id: &str, status: &str) -> Value {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let reply = (self.task_request("tasks/get", json!({"taskId": task_id}))).await;
            let result = &reply["result"];
            if result["status"] == status {
                return result.clone();
            }
            assert_eq!(result["status"], "working", "{reply}");
            assert!(tokio::time::Instant::now() < deadline, "{reply}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// A fresh JSON-RPC id for [`RawClient::task_request`].
fn next_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(100);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// An RFC 3339 time as rmcp writes it (`2026-05-01T12:00:00.123456789+00:00`).
fn chrono_like(stamp: &str) -> bool {
    stamp.len() >= 20 && stamp.as_bytes()[4] == b'-' && stamp.as_bytes()[10] == b'T'
}
