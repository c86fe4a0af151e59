//! `sampling/createMessage` as the spec spells it (2025-11-25 / 2026-07-28 shapes), read from the
//! server's raw JSON so nothing is rounded or dropped: numbers stay f64, unknown fields and
//! block kinds are kept.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageParams {
    pub messages: Vec<SamplingMessage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<ModelPreferences>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_context: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    pub max_tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
    /// Tool definitions (2025-11-25+), kept as the server sent them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<Value>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelPreferences {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hints: Option<Vec<ModelHint>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_priority: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_priority: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intelligence_priority: Option<f64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelHint {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

/// One message; `content` is one block or a list (2025-11-25+). Kept as a list here and written
/// back as a single object when it holds exactly one block, which every revision accepts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplingMessage {
    pub role: Role,
    #[serde(with = "one_or_many")]
    pub content: Vec<Block>,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

/// A content block. Text is what people edit; every other kind (image, audio, `tool_use`,
/// `tool_result`, anything newer) is kept whole as JSON.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    Text {
        text: String,
        /// `annotations`, `_meta`: kept as they were.
        extra: Map<String, Value>,
    },
    Other(Value),
}

impl Block {
    pub fn text(text: impl Into<String>) -> Block {
        Block::Text {
            text: text.into(),
            extra: Map::new(),
        }
    }

    pub fn as_text(&self) -> Option<&str> {
        match self {
            Block::Text { text, .. } => Some(text),
            Block::Other(_) => None,
        }
    }

    pub fn kind(&self) -> &str {
        match self {
            Block::Text { .. } => "text",
            Block::Other(v) => v.get("type").and_then(Value::as_str).unwrap_or("unknown"),
        }
    }
}

impl Serialize for Block {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Block::Text { text, extra } => {
                let mut map = Map::new();
                map.insert("type".into(), Value::String("text".into()));
                map.insert("text".into(), Value::String(text.clone()));
                for (k, v) in extra {
                    map.insert(k.clone(), v.clone());
                }
                map.serialize(s)
            }
            Block::Other(v) => v.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Block {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(d)?;
        if value.get("type").and_then(Value::as_str) == Some("text")
            && let Some(Value::String(text)) = value.get("text")
        {
            let mut extra = value.as_object().cloned().unwrap_or_default();
            let text = text.clone();
            extra.remove("type");
            extra.remove("text");
            return Ok(Block::Text { text, extra });
        }
        if !value.is_object() {
            return Err(serde::de::Error::custom(
                "a content block must be an object",
            ));
        }
        Ok(Block::Other(value))
    }
}

mod one_or_many {
    use super::Block;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(blocks: &[Block], s: S) -> Result<S::Ok, S::Error> {
        match blocks {
            [one] => one.serialize(s),
            many => many.serialize(s),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Block>, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum OneOrMany {
            Many(Vec<Block>),
            One(Block),
        }
        Ok(match OneOrMany::deserialize(d)? {
            OneOrMany::Many(v) => v,
            OneOrMany::One(b) => vec![b],
        })
    }
}

/// `CreateMessageResult`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageResult {
    pub role: Role,
    #[serde(with = "one_or_many")]
    pub content: Vec<Block>,
    pub model: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
}

impl CreateMessageParams {
    /// A rough token count (4 characters a token) of the text sent, for budgets.
    pub fn estimated_tokens(&self) -> u64 {
        let chars: usize = self
            .messages
            .iter()
            .flat_map(|m| &m.content)
            .map(|b| b.as_text().map_or(64, str::len))
            .sum::<usize>()
            + self.system_prompt.as_deref().map_or(0, str::len);
        (chars / 4) as u64
    }
}

impl CreateMessageResult {
    pub fn estimated_tokens(&self) -> u64 {
        let chars: usize = self
            .content
            .iter()
            .map(|b| b.as_text().map_or(64, str::len))
            .sum();
        (chars / 4) as u64
    }
}
