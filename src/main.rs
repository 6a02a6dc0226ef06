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
            eprintln!("benchgate: error: {}", one_line(&chain(&error)));
            ExitCode::from(2)
        }
    }
}

/// The error and its causes, `outer: cause: cause`, each cause left out when the text before
/// already says it: an error that prints its source (`{path}: cannot read: {source}`) and
/// also names it as its source would otherwise say the OS error twice.
fn chain(error: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in error.chain() {
        let said = cause.to_string();
        if text.is_empty() {
            text = said;
        } else if !text.contains(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
    }
    text
}

/// Errors are one line, whatever a lower layer put in them.
fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests fail loudly
mod tests {
    use clap::CommandFactory as _;

    #[test]
    fn an_error_says_each_cause_once() {
        let missing = std::fs::read("/no/such/file").unwrap_err();
        let shown = missing.to_string();
        let error = anyhow::Error::new(benchgate_collector::Error::ReadFile {
            path: "/no/such/file".into(),
            source: missing,
        })
        .context("--base");
        assert_eq!(
            super::chain(&error),
            format!("--base: /no/such/file: cannot read: {shown}")
        );
        let plain = anyhow::anyhow!("inner").context("middle").context("outer");
        assert_eq!(super::chain(&plain), "outer: middle: inner");
    }

    #[test]
    fn every_subcommand_is_well_formed() {
        // clap's own checks (unique ids and groups, valid defaults) over every subcommand.
        super::Cli::command().debug_assert();
    }
}
