//! The Skills extension (SEP-2640) on one session: `skills/list` (paged, bounded), `skills/get`,
//! and a file's bytes through `resources/read`. Checking them is `crate::skills`'.

use rmcp::model::{
    ClientRequest, GetSkillRequest, GetSkillRequestParams, ListSkillsRequest,
    PaginatedRequestParams,
};
use serde_json::Value;

use super::connection::Connection;
use crate::contract::CallError;
use crate::mcp::reply::Caller;
use crate::skills::{MAX_SKILLS, Skill};

/// The extension's id, in the server's `capabilities.extensions`.
pub const EXTENSION: &str = "io.modelcontextprotocol/skills";
/// At most this many pages of `skills/list`.
const MAX_PAGES: usize = 100;

impl Connection {
    /// Whether the server declared the Skills extension.
    pub fn offers_skills(&self) -> bool {
        self.capabilities
            .as_ref()
            .and_then(|c| c.get("extensions"))
            .and_then(|e| e.get(EXTENSION))
            .is_some()
    }

    /// Every skill the server lists (each page once, within bounds); an entry that cannot be
    /// read at all is left out with a log line.
    pub async fn list_skills(&self) -> Result<Vec<Skill>, CallError> {
        let mut skills = Vec::new();
        let mut cursor: Option<String> = None;
        let mut seen = std::collections::HashSet::new();
        for _ in 0..MAX_PAGES {
            let params = PaginatedRequestParams::default().with_cursor(cursor.take());
            let request = ClientRequest::ListSkillsRequest(ListSkillsRequest::with_param(params));
            let page = serde_json::to_value(self.send(request, None).await?).unwrap_or_default();
            let entries = page
                .get("skills")
                .and_then(Value::as_array)
                .ok_or_else(|| {
                    self.protocol("answered skills/list without a skills list".into())
                })?;
            for entry in entries {
                if skills.len() == MAX_SKILLS {
                    return Err(self.protocol(format!("listed more than {MAX_SKILLS} skills")));
                }
                match Skill::read(entry) {
                    Ok(skill) => skills.push(skill),
                    Err(e) => tracing::info!(server = %self.server, "a skill was left out: {e}"),
                }
            }
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(next) if seen.insert(next.to_string()) => cursor = Some(next.to_string()),
                Some(_) => return Err(self.protocol("sent a skills/list cursor twice".into())),
                None => return Ok(skills),
            }
        }
        Err(self.protocol(format!("listed skills over more than {MAX_PAGES} pages")))
    }

    /// `skills/get`: the server's entry for the skill now.
    pub async fn get_skill(&self, uri: &str) -> Result<Skill, CallError> {
        let request =
            ClientRequest::GetSkillRequest(GetSkillRequest::new(GetSkillRequestParams::new(uri)));
        let answer = serde_json::to_value(self.send(request, None).await?).unwrap_or_default();
        let entry = answer
            .get("skill")
            .ok_or_else(|| self.protocol("answered skills/get without a skill".into()))?;
        Skill::read(entry).map_err(|e| self.protocol(format!("answered skills/get with {e}")))
    }

    /// A file's bytes, read with `resources/read`: its first content's text, or its blob.
    pub async fn skill_bytes(&self, uri: &str) -> Result<Vec<u8>, CallError> {
        let shown = crate::contract::shown::line(uri, crate::contract::shown::MAX_TEXT);
        let reply = self.read_resource(uri, Caller::default()).await?;
        let value = reply.into_value().unwrap_or_default();
        let content = value
            .get("contents")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
            .ok_or_else(|| self.protocol(format!("read {shown} without contents")))?;
        if let Some(text) = content.get("text").and_then(Value::as_str) {
            return Ok(text.as_bytes().to_vec());
        }
        let blob = content
            .get("blob")
            .and_then(Value::as_str)
            .ok_or_else(|| self.protocol(format!("read {shown} with neither text nor blob")))?;
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD
            .decode(blob)
            .map_err(|e| self.protocol(format!("read {shown} with a blob that is not base64: {e}")))
    }
}
