//! The configured servers: one supervised task per server (start, watch, restart with backoff)
//! and the manager that applies configuration and routes the faces' operations.

pub mod calls;
pub mod follow;
pub mod manager;
pub mod skills;
pub mod supervisor;
