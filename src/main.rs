//! The `benchgate` binary: parses arguments, runs the command, and maps the outcome to an exit
//! code (0 ok, 1 regression found, 2 error). Environment variables and `process::exit` live in
//! the binary; each command is a file under `commands/`.

mod ab;
mod bench_command;
mod commands;
mod environment;
mod github;
mod head_reruns;
mod render;
mod reporting;
mod serve;
mod service_client;
mod side_build;
mod trends;

use std::process::ExitCode;

use clap::Parser;

/// Continuous benchmarking for Rust: store Criterion runs, gate regressions, publish the verdict.
#[derive(Parser)]
#[command(
    name = "benchgate",
    version,
    about,
    propagate_version = true,
    after_help = "Exit codes: 0 ok (a gate that passed, or was inconclusive); 1 a regression or a missed budget (compare, gate, ab); 2 an error, on one line of stderr naming the file, field or flag at fault.\n\nStart with: cargo bench && benchgate ingest && benchgate runs\nEach command's --help has examples. Colour only on a terminal, never with NO_COLOR set."
)]
struct Cli {
    #[command(subcommand)]
    command: commands::Command,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("benchgate: error: cannot start the async runtime: {error}");
            return ExitCode::from(2);
        }
    };
    match runtime.block_on(commands::run(cli.command)) {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            eprintln!("benchgate: error: {}", one_line(&format!("{error:#}")));
            ExitCode::from(2)
        }
    }
}

/// Errors are one line, whatever a lower layer put in them.
fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory as _;

    #[test]
    fn every_subcommand_is_well_formed() {
        // clap's own checks (unique ids and groups, valid defaults) over every subcommand.
        super::Cli::command().debug_assert();
    }
}
