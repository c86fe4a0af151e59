//! The contract's part for the Tasks and Skills extensions: the task list and its updates, the
//! skills listing and a skill's verified files.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `mcp-sidecar/taskStatus`: a task changed (also one row of `mcp-sidecar.listTasks`).
pub const TASK_STATUS: &str = "mcp-sidecar/taskStatus";
pub const CMD_LIST_TASKS: &str = "mcp-sidecar.listTasks";
pub const CMD_CANCEL_TASK: &str = "mcp-sidecar.cancelTask";
pub const CMD_LIST_SKILLS: &str = "mcp-sidecar.listSkills";
pub const CMD_READ_SKILL: &str = "mcp-sidecar.readSkill";

/// Where a task is, as the spec names its statuses; `lost` when the server no longer knows it
/// (it answered `-32602`, or its `ttlMs` passed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TaskState {
    Working,
    InputRequired,
    Completed,
    Failed,
    Cancelled,
    Lost,
}

impl TaskState {
    /// Whether the task is over (nothing polls it any more).
    pub fn is_terminal(self) -> bool {
        !matches!(self, TaskState::Working | TaskState::InputRequired)
    }
}

/// One task a tool call became: `mcp-sidecar/taskStatus` params, a row of `listTasks`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskInfo {
    pub server: String,
    /// The server's task id.
    pub task_id: String,
    pub tool: String,
    pub status: TaskState,
    /// The server's latest `statusMessage`, cleaned to one line.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub status_message: Option<String>,
    /// When the call was made (RFC 3339).
    pub started_at: String,
    /// When the sidecar last saw the task change (RFC 3339).
    pub updated_at: String,
    /// The `CallToolResult` of a completed task.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub result: Option<Value>,
    /// Why a task failed or was lost.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<String>,
}

/// `mcp-sidecar.cancelTask` argument.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskArgs {
    pub server: String,
    pub task_id: String,
}

/// `mcp-sidecar.listSkills` argument.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ListSkillsArgs {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
}

/// One file of a skill's manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SkillFile {
    pub uri: String,
    /// `sha256:<64 lowercase hex>`.
    pub digest: String,
    pub size: u64,
}

/// One row of `mcp-sidecar.listSkills`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SkillSummary {
    pub server: String,
    /// The skill's `SKILL.md` URI: with `server`, what names the skill.
    pub uri: String,
    /// `frontmatter.name`, cleaned to one line.
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub description: Option<String>,
    /// The manifest; `None` for a `"dynamic"` skill (its files cannot be verified).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub files: Option<Vec<SkillFile>>,
    /// Other skills (of this or another server) with the same name: shown, never shadowed.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub same_name: Vec<SkillRef>,
    /// Why the skill cannot be loaded (its manifest is not valid), when it cannot.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub problem: Option<String>,
}

/// A skill named by its server and `SKILL.md` URI.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SkillRef {
    pub server: String,
    pub uri: String,
}

/// `mcp-sidecar.readSkill` argument: the skill, and the file of its manifest to read (its
/// `SKILL.md` when left out).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ReadSkillArgs {
    pub server: String,
    pub uri: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

/// `mcp-sidecar.readSkill` result: one file, its bytes verified against the manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SkillFileContents {
    pub server: String,
    /// The skill's `SKILL.md` URI.
    pub skill: String,
    /// The file's URI.
    pub uri: String,
    /// The text (UTF-8); `None` for bytes that are not.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub text: Option<String>,
    /// The bytes in base64, when they are not UTF-8.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub blob: Option<String>,
    pub size: u64,
    /// The digest the bytes were checked against; `None` for a `"dynamic"` skill.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub digest: Option<String>,
    /// Whether size and digest (and for `SKILL.md`, the frontmatter) matched the manifest.
    pub verified: bool,
}
