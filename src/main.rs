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
    let outcome = runtime.block_on(async {
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
                mcp_sidecar::lsp::serve_stdio().await;
                Ok(())
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
