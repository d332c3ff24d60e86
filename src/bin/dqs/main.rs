//! `dqs`: create, fill, drain and watch Data::Queue::Shared queue files
//! from the shell. Every subcommand but `create` attaches to an existing
//! file and reads its variant (Int, Int32, Int16, Str) from the header.
//!
//! Exit codes: 0 done; 1 the queue was empty or full, or a wait timed out;
//! 2 a usage error or a file that is missing or not a valid queue (always
//! with a one-line message on stderr). A SIGINT, SIGTERM or SIGHUP ends the
//! command cleanly (a blocked wait takes itself out of the waiter count)
//! and then kills it with the same signal, so the shell sees 128 + N.

/// The distribution's version, as the Perl module spells it (`$VERSION` of
/// lib/Data/Queue/Shared.pm, read by build.rs, which also checks that
/// Cargo.toml's version is the same number).
pub(crate) const VERSION: &str = env!("DQS_VERSION");

mod cli;
mod commands;
mod signals;

use std::process::ExitCode;

use clap::Parser;

use cli::{normalize_args, subcommand_in_args, usage_error_line, Cli, Cmd};
use commands::{clear, create, dead, kick, leases, peek, pop, push, stats, unlink, watch};
use signals::{die_of, install_signal_handlers, Fail};

fn main() -> ExitCode {
    let cli = match Cli::try_parse_from(normalize_args(std::env::args_os())) {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            match e.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => e.exit(),
                _ => {
                    eprintln!("{}", usage_error_line(&e, &subcommand_in_args()));
                    return ExitCode::from(2);
                }
            }
        }
    };
    install_signal_handlers();
    let name = cli.cmd.name();
    let r = match cli.cmd {
        Cmd::Create(a) => create(a),
        Cmd::Push(a) => push(a),
        Cmd::Pop(a) => pop(a),
        Cmd::Peek(a) => peek(a),
        Cmd::Stats(a) => stats(a),
        Cmd::Watch(a) => watch(a),
        Cmd::Leases(a) => leases(a),
        Cmd::Dead(a) => dead(a),
        Cmd::Kick(a) => kick(a),
        Cmd::Clear(a) => clear(a),
        Cmd::Unlink(a) => unlink(a),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(Fail::Soft(m)) => {
            eprintln!("dqs {name}: {m}");
            ExitCode::from(1)
        }
        Err(Fail::Hard(m)) => {
            eprintln!("dqs {name}: {m}");
            ExitCode::from(2)
        }
        Err(Fail::Signal(s)) => die_of(s),
    }
}
