//! The wire: how the sidecar talks to one server's process or URL. The child process and what
//! its stderr says, the stdin writer, stdout split into checked lines, each line read (raw JSON
//! kept where rmcp's types would change it), calls made past rmcp's peer and answered from the
//! reader, and the Streamable HTTP transport.

pub mod direct;
pub mod http;
pub mod lines;
pub mod process;
pub mod raw;
pub mod scan;
pub mod transport;
pub mod write;
