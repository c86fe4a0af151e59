//! `slow_task`: works in steps and asks one question halfway.
//!
//! When the request declared the Tasks extension (`io.modelcontextprotocol/tasks`: 2026-07-28 in
//! its `_meta` capabilities, legacy in `initialize`), the call answers at once with a task handle
//! (`resultType: "task"`) and the work goes on in the background under rmcp's [`TaskManager`]:
//! `tasks/get` shows `working` with "step 2 of 4", then `input_required` with the question in
//! `inputRequests`, which the client answers with `tasks/update`; `tasks/cancel` ends it
//! `cancelled`. Otherwise it runs inline as an ordinary tool, reporting progress and asking the
//! way every demo tool asks ([`Call::ask`]).

use std::time::Duration;

use rmcp::{
    ErrorData,
    model::{
        CallToolResponse, CallToolResult, ContentBlock, CreateTaskResult, ElicitRequest,
        ElicitRequestParams, InputRequest,
    },
    task_manager::{TaskContext, TaskExit, TaskManager, TaskOptions},
};
use serde::Deserialize;
use serde_json::{Value, json};

use super::ask::{self, Call, Stop};

/// The tool's name.
pub(super) const NAME: &str = "slow_task";

/// What a task handle suggests between two `tasks/get`.
const POLL_INTERVAL_MS: u64 = 250;

/// The question's key in `inputRequests` / `inputResponses`.
const KEY: &str = "keep";

#[derive(Clone, Copy, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Plan {
    #[serde(default = "default_steps")]
    steps: u32,
    #[serde(default = "default_step_ms", alias = "step_ms")]
    step_ms: u64,
    /// Never finish (and never ask): something to cancel.
    #[serde(default)]
    forever: bool,
}

fn default_steps() -> u32 {
    4
}

fn default_step_ms() -> u64 {
    500
}

impl Plan {
    /// The step after which the question comes.
    fn halfway(self) -> u32 {
        self.steps.div_ceil(2)
    }

    fn status(self, step: u32) -> String {
        if self.forever {
            format!("step {step}, until cancelled")
        } else {
            format!("step {step} of {}", self.steps)
        }
    }
}

/// Runs a `slow_task` call: a task when the request declared the extension, inline otherwise.
pub(super) async fn call(
    call: &Call<'_>,
    tasks: &TaskManager,
) -> Result<CallToolResponse, ErrorData> {
    let plan = match plan(call) {
        Ok(plan) => plan,
        Err(stop) => return ask::respond(Err(stop)),
    };
    if !call.declares_tasks() {
        return ask::respond(work(Runner::Inline(call), plan).await.map_err(Halt::stop));
    }
    let options = TaskOptions::new()
        .with_poll_interval_ms(POLL_INTERVAL_MS)
        .with_status_message(plan.status(1));
    let task = tasks.spawn(options, move |context| {
        Box::pin(async move {
            match work(Runner::Task(context), plan).await {
                Ok(result) => Ok(result),
                Err(Halt::Cancelled) => Err(TaskExit::Cancelled),
                Err(Halt::Stop(Stop::ToolError(message))) => {
                    Ok(CallToolResult::error(vec![ContentBlock::text(message)]))
                }
                Err(Halt::Stop(Stop::Error(error))) => Err(TaskExit::Error(error)),
                Err(Halt::Stop(Stop::InputRequired(_))) => Err(TaskExit::Error(
                    ErrorData::internal_error("a task asks through tasks/get", None),
                )),
            }
        })
    });
    tracing::info!(task = task.task_id, ?plan.steps, plan.forever, "slow_task: started a task");
    Ok(CallToolResponse::Task(CreateTaskResult::new(task)))
}

/// The arguments, checked, and whether the client may be asked the question at all.
fn plan(call: &Call<'_>) -> Result<Plan, Stop> {
    let plan: Plan = call.arguments()?;
    if !(1..=100).contains(&plan.steps) || plan.step_ms > 10_000 {
        return Err(Stop::ToolError(
            "steps must be 1..=100 and stepMs at most 10000".into(),
        ));
    }
    if !plan.forever {
        call.may_ask(&question())?;
    }
    Ok(plan)
}

/// Why the work stopped early.
enum Halt {
    /// The client cancelled (`tasks/cancel`, or `notifications/cancelled` for an inline call).
    Cancelled,
    Stop(Stop),
}

impl Halt {
    /// An inline call's outcome: its request was cancelled, so nobody reads this result.
    fn stop(self) -> Stop {
        match self {
            Halt::Cancelled => Stop::ToolError(format!("{NAME} was cancelled")),
            Halt::Stop(stop) => stop,
        }
    }
}

impl From<Stop> for Halt {
    fn from(stop: Stop) -> Self {
        Halt::Stop(stop)
    }
}

/// Where the work reports, waits and asks.
enum Runner<'a> {
    Task(TaskContext),
    Inline(&'a Call<'a>),
}

impl Runner<'_> {
    /// Shows that `step` begins.
    async fn step(&self, plan: Plan, step: u32) {
        match self {
            Runner::Task(context) => context.set_status_message(plan.status(step)),
            Runner::Inline(call) => {
                let total = (!plan.forever).then_some(f64::from(plan.steps));
                (call.progress(f64::from(step - 1), total, plan.status(step))).await;
            }
        }
    }

    /// Waits one step, unless the client cancels first.
    async fn pause(&self, plan: Plan) -> Result<(), Halt> {
        let sleep = tokio::time::sleep(Duration::from_millis(plan.step_ms));
        tokio::select! {
            () = sleep => Ok(()),
            () = self.cancelled() => Err(Halt::Cancelled),
        }
    }

    async fn cancelled(&self) {
        match self {
            Runner::Task(context) => context.cancelled().await,
            Runner::Inline(call) => call.cancelled().await,
        }
    }

    async fn ask(&self) -> Result<Value, Halt> {
        match self {
            Runner::Task(context) => {
                context.set_status_message("waiting for your answer");
                // The request is dropped when the task is cancelled.
                (context.request_input(KEY, question()).await).map_err(|exit| match exit {
                    TaskExit::Cancelled => Halt::Cancelled,
                    TaskExit::Error(error) => Halt::Stop(Stop::Error(error)),
                })
            }
            Runner::Inline(call) => Ok(call.ask(KEY, question()).await?),
        }
    }

    fn finish(&self, message: &str) {
        if let Runner::Task(context) = self {
            context.set_status_message(message);
        }
    }

    /// A 2026-07-28 inline retry carries the answer: the first half is done already.
    fn resumed(&self) -> bool {
        matches!(self, Runner::Inline(call) if call.is_retry())
    }
}

async fn work(runner: Runner<'_>, plan: Plan) -> Result<CallToolResult, Halt> {
    let outcome = steps(&runner, plan).await;
    runner.finish(match &outcome {
        Ok(_) => "done",
        Err(Halt::Cancelled) => "cancelled",
        Err(Halt::Stop(_)) => "stopped",
    });
    outcome
}

async fn steps(runner: &Runner<'_>, plan: Plan) -> Result<CallToolResult, Halt> {
    if plan.forever {
        for step in 1.. {
            runner.step(plan, step).await;
            runner.pause(plan).await?;
        }
    }
    let first = if runner.resumed() {
        plan.halfway() + 1
    } else {
        1
    };
    for step in first..=plan.halfway() {
        runner.step(plan, step).await;
        runner.pause(plan).await?;
    }
    let answer = runner.ask().await?;
    let (summary, structured) = outcome(plan, &answer)?;
    for step in plan.halfway() + 1..=plan.steps {
        runner.step(plan, step).await;
        runner.pause(plan).await?;
    }
    let mut result = CallToolResult::success(vec![ContentBlock::text(summary)]);
    result.structured_content = Some(structured);
    Ok(result)
}

/// The form asked halfway.
fn question() -> InputRequest {
    let schema = json!({
        "type": "object",
        "properties": {
            "keep": {"type": "boolean", "title": "Keep the details",
                     "description": "Keep every step in the report", "default": true}
        },
        "required": ["keep"]
    });
    let params = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: "Keep the details?".to_owned(),
        requested_schema: serde_json::from_value(schema).expect("a valid elicitation schema"),
    };
    InputRequest::Elicitation(ElicitRequest::new(params))
}

/// The result's text and structured content for the answer to [`question`].
fn outcome(plan: Plan, answer: &Value) -> Result<(String, Value), Stop> {
    let steps = plan.steps;
    let action = answer.get("action").and_then(Value::as_str);
    let keep = answer.pointer("/content/keep").and_then(Value::as_bool);
    let said = match (action, keep) {
        (Some("accept"), Some(true)) => "you chose to keep the details",
        (Some("accept"), Some(false)) => "you chose to drop the details",
        (Some("decline"), _) => "you declined the question, so the details were dropped",
        (Some("cancel"), _) => "you dismissed the question, so the details were dropped",
        _ => {
            return Err(Stop::ToolError(format!(
                "the answer to \"Keep the details?\" is not one: {answer}"
            )));
        }
    };
    let mut structured = json!({"steps": steps, "action": action});
    if let Some(keep) = keep.filter(|_| action == Some("accept")) {
        structured["keep"] = json!(keep);
    }
    Ok((format!("Done after {steps} steps: {said}."), structured))
}
