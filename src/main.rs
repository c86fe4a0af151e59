use std::process::ExitCode;
use std::time::Duration;

use mcp_sidecar::cli::{self, Command};

fn main() -> ExitCode {
    let args = match cli::parse(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(e) => {
            eprintln!("mcp-sidecar: {e}\n\n{}", cli::USAGE);
            return ExitCode::from(2);
        }
    };
    if !matches!(args.command, Command::Gateway { .. }) {
        forget_gateway_variables();
    }
    match args.command {
        Command::Version => {
            println!("{}", mcp_sidecar::doctor::version_text());
            return ExitCode::SUCCESS;
        }
        Command::Doctor { folders } => {
            let report = mcp_sidecar::doctor::run(&folders);
            print!("{}", report.text);
            return if report.problems == 0 {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            };
        }
        Command::Help => {
            println!("{}", cli::USAGE);
            return ExitCode::SUCCESS;
        }
        _ => {}
    }
    if let Err(e) = mcp_sidecar::logging::init(args.log_level.as_deref(), args.log_file.as_deref())
    {
        eprintln!("mcp-sidecar: {e}");
        return ExitCode::from(2);
    }
    return_big_blocks();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("mcp-sidecar: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    // The work runs as a spawned task, not as the `block_on` future itself: a task waking the
    // `block_on` future makes tokio's current-thread scheduler poll the event loop once more
    // (an `epoll_wait` with no timeout) before it polls that future again, while tasks waking
    // each other only queue. Every message crosses between tasks (the transports' tasks and
    // the serve loop), so that was two or three extra system calls per round trip.
    let outcome =
        runtime.block_on(async {
            let spawned =
                |work: std::pin::Pin<Box<dyn Future<Output = anyhow::Result<()>> + Send>>| async {
                    tokio::spawn(work)
                        .await
                        .unwrap_or_else(|e| Err(anyhow::anyhow!("{e}")))
                };
            match args.command {
                Command::DemoServer { era } => mcp_sidecar::demo::run_stdio(era).await,
                Command::Gateway { server } => mcp_sidecar::gateway::bridge::run(server)
                    .await
                    .map_err(anyhow::Error::msg),
                Command::Conformance { url } => {
                    let run =
                        mcp_sidecar::conformance::Run::from_env(url).map_err(anyhow::Error::msg)?;
                    mcp_sidecar::conformance::run(run)
                        .await
                        .map_err(anyhow::Error::msg)
                }
                _ => {
                    spawned(Box::pin(async {
                        mcp_sidecar::lsp::serve_stdio().await;
                        Ok(())
                    }))
                    .await
                }
            }
        });
    // Blocking stdin readers never finish on their own; servers' processes are killed on drop.
    runtime.shutdown_timeout(Duration::from_secs(1));
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp-sidecar: {e}");
            ExitCode::FAILURE
        }
    }
}

/// A gateway's address and secret in the environment the sidecar was started with (an editor
/// that passes its own environment on, run from another sidecar's terminal) are the other
/// sidecar's: they leave this process's environment before anything starts, so no process it
/// starts (its MCP servers, `secret-tool`) inherits them. Only `mcp-sidecar gateway` reads them.
fn forget_gateway_variables() {
    use mcp_sidecar::gateway::discovery::{ENV_TOKEN, ENV_URL};
    for name in [ENV_URL, ENV_TOKEN] {
        // SAFETY: called first thing in `main`, before any other thread starts.
        unsafe { std::env::remove_var(name) };
    }
}

/// glibc serves big blocks (a large message's buffer) with `mmap`, but after the first one is
/// freed it raises that threshold to the block's size (up to 32 MiB), so later big blocks come
/// from the heap and stay resident after they are freed (about 80 MiB after one 10 MiB result).
/// Fixed thresholds turn that adjustment off: blocks of 256 KiB and more are mapped and returned
/// to the system when freed, and more than 1 MiB free at the heap's top is trimmed
/// (docs/performance.md).
fn return_big_blocks() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets allocator parameters; called before any other thread starts.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 256 * 1024);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 1024 * 1024);
    }
}
