//! The integration tests, one binary (the crate links once): each module is one suite, named
//! by its file (`cargo test --test it -- interop::` runs the interop suite). `support` is the
//! scripted editor and the other helpers every suite shares.

mod support;

mod apps;
mod blackbox;
mod contract_docs;
mod editor_check;
mod elicitation;
mod execute_command;
mod faults;
mod floods;
mod gateway;
mod gateway_apps;
mod gateway_clients;
mod gateway_tasks;
mod hostile;
mod http;
mod interop;
mod keyring;
mod layering;
mod load;
mod local_user;
mod lsp_core;
mod oauth;
mod openai_provider;
mod panics;
mod plain;
mod properties;
mod readme_tiers;
mod resources;
mod sampling;
mod skills;
mod tasks;
mod workspace_config;
