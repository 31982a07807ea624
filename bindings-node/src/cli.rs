//! `cliMain(argv)`: the `polywire` command (the crate `polywire-cli`),
//! which the package's `bin` (cli.js) runs. It reads fd 0 and writes fd 1
//! and 2 itself; the launcher leaves `process.stdin`/`process.stdout` alone.

use napi_derive::napi;

/// Run the command with `argv` (the arguments after the script); returns
/// the exit status.
#[napi(js_name = "cliMain")]
pub fn cli_main(argv: Vec<String>) -> i32 {
    polywire_cli::run_process(argv.into_iter().map(Into::into).collect(), polywire_cli::Host::Node)
}
