//! Errors of operations on servers, phrased for the person reading them in the editor.

use serde_json::json;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CallError {
    #[error("no server named \"{0}\" is configured")]
    UnknownServer(String),
    #[error("server \"{server}\" is not running ({state}){}", detail.as_ref().map(|d| format!(": {d}")).unwrap_or_default())]
    NotRunning {
        server: String,
        state: String,
        detail: Option<String>,
    },
    #[error("server \"{server}\" stopped during the request: {reason}")]
    ServerGone { server: String, reason: String },
    #[error("server \"{server}\" did not answer within {seconds} s")]
    Timeout { server: String, seconds: f64 },
    #[error("server \"{server}\" answered with error {code}: {message}")]
    Server {
        server: String,
        code: i32,
        message: String,
        data: Option<serde_json::Value>,
    },
    #[error("server \"{server}\": {message}")]
    Protocol { server: String, message: String },
    #[error("{0}")]
    Refused(String),
    #[error(
        "too many operations are waiting on people or servers ({0} at once); try again when one finishes"
    )]
    Busy(usize),
    #[error("cancelled")]
    Cancelled,
}

impl CallError {
    /// A stable machine-readable kind for the editor (`error.data.kind`).
    pub fn kind(&self) -> &'static str {
        match self {
            CallError::UnknownServer(_) => "unknownServer",
            CallError::NotRunning { .. } => "notRunning",
            CallError::ServerGone { .. } => "serverGone",
            CallError::Timeout { .. } => "timeout",
            CallError::Server { .. } => "serverError",
            CallError::Protocol { .. } => "protocol",
            CallError::Refused(_) => "refused",
            CallError::Busy(_) => "busy",
            CallError::Cancelled => "cancelled",
        }
    }

    /// `error.data` for the LSP response.
    pub fn data(&self) -> serde_json::Value {
        match self {
            CallError::Server { code, data, .. } => {
                json!({"kind": self.kind(), "mcpCode": code, "mcpData": data})
            }
            _ => json!({"kind": self.kind()}),
        }
    }
}
