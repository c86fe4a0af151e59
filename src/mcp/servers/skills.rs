//! Skills (SEP-2640) across the servers: each running server's listing, and one file of a skill
//! read and verified (size, digest, frontmatter), refreshed with `skills/get` once when it does
//! not match.

use crate::contract::{CallError, SkillFileContents, SkillSummary};
use crate::mcp::servers::manager::Manager;
use crate::skills::{self, Skill};

impl Manager {
    /// The skills of `server`, or of every running server that declares the extension; skills
    /// of the same name are marked on each row.
    pub async fn list_skills(&self, server: Option<&str>) -> Result<Vec<SkillSummary>, CallError> {
        let one = server.is_some();
        let mut rows = self
            .across(server, "skills", async move |name, connection| {
                if connection.offers_skills() {
                    Ok(connection
                        .list_skills()
                        .await?
                        .iter()
                        .map(|s| s.summary(name))
                        .collect())
                } else if one {
                    Err(CallError::Refused(format!(
                        "\"{name}\" does not offer skills"
                    )))
                } else {
                    Ok(Vec::new())
                }
            })
            .await?;
        skills::mark_clashes(&mut rows);
        Ok(rows)
    }

    /// The skills `server` lists, each entry as the server sent it (for the gateway, whose
    /// agents verify them themselves); empty for a server without the extension.
    pub async fn skill_entries(&self, server: &str) -> Result<Vec<serde_json::Value>, CallError> {
        let connection = self.running(server)?;
        if !connection.offers_skills() {
            return Ok(Vec::new());
        }
        Ok(connection
            .list_skills()
            .await?
            .into_iter()
            .map(|s| s.entry)
            .collect())
    }

    /// `skills/get` at `server`: its entry for the skill now, as it sent it.
    pub async fn skill_entry(
        &self,
        server: &str,
        uri: &str,
    ) -> Result<serde_json::Value, CallError> {
        let connection = self.running(server)?;
        Ok(connection.get_skill(uri).await?.entry)
    }

    /// Whether `server` runs and declares the Skills extension.
    pub fn offers_skills(&self, server: &str) -> bool {
        self.running(server).is_ok_and(|c| c.offers_skills())
    }

    /// One file of the skill `uri` of `server` (its `SKILL.md` when `file` is `None`), verified
    /// against the skill's manifest; a file the manifest does not list is refused here.
    pub async fn read_skill(
        &self,
        server: &str,
        uri: &str,
        file: Option<&str>,
    ) -> Result<SkillFileContents, CallError> {
        let connection = self.running(server)?;
        if !connection.offers_skills() {
            return Err(CallError::Refused(format!(
                "\"{server}\" does not offer skills"
            )));
        }
        let listed = connection.list_skills().await?;
        let skill = match listed.into_iter().find(|s| s.uri == uri) {
            Some(skill) => skill,
            // An empty or partial listing proves nothing: the skill is asked for by its URI.
            None => connection.get_skill(uri).await?,
        };
        let file_uri = file.unwrap_or(uri).to_string();
        let refused = |why: String| {
            CallError::Refused(format!(
                "{} of the skill {} of \"{server}\" cannot be used: {why}",
                crate::contract::shown::line(&file_uri, crate::contract::shown::MAX_TEXT),
                crate::contract::shown::line(uri, crate::contract::shown::MAX_TEXT),
            ))
        };
        let first = verified(&connection, &skill, &file_uri).await?;
        let (skill, bytes) = match first {
            Ok(bytes) => (skill, bytes),
            Err(why) => {
                tracing::info!(
                    server,
                    "a skill file did not match its manifest ({why}); asking skills/get"
                );
                let fresh = connection.get_skill(uri).await?;
                match verified(&connection, &fresh, &file_uri).await? {
                    Ok(bytes) => (fresh, bytes),
                    Err(why) => return Err(refused(why)),
                }
            }
        };
        let entry = skill.file(&file_uri).map_err(&refused)?.cloned();
        let size = bytes.len() as u64;
        let (text, blob) = match String::from_utf8(bytes) {
            Ok(text) => (Some(text), None),
            Err(e) => {
                use base64::Engine as _;
                (
                    None,
                    Some(base64::engine::general_purpose::STANDARD.encode(e.as_bytes())),
                )
            }
        };
        Ok(SkillFileContents {
            server: server.to_string(),
            skill: uri.to_string(),
            size,
            uri: file_uri,
            text,
            blob,
            verified: entry.is_some(),
            digest: entry.map(|f| f.digest),
        })
    }
}

/// The file's bytes when they match `skill`'s manifest; the outer error is the server's, the
/// inner one what did not match (an unlisted file is refused before any read).
async fn verified(
    connection: &crate::mcp::session::connection::Connection,
    skill: &Skill,
    file_uri: &str,
) -> Result<Result<Vec<u8>, String>, CallError> {
    let entry = skill.file(file_uri).map_err(CallError::Refused)?;
    let bytes = connection.skill_bytes(file_uri).await?;
    Ok(skill.verify(entry, file_uri, &bytes).map(|()| bytes))
}
