//! `_polywire.cli.main(argv)`: the `polywire` command (the crate
//! `polywire-cli`), which the console script and `python -m polywire` run.
//! It reads fd 0 and writes fd 1 and 2 itself, with the GIL released.

use std::ffi::OsString;

use pyo3::prelude::*;

pub fn register(parent: &Bound<'_, PyModule>) -> PyResult<()> {
    crate::submodule(parent, "cli", |m| m.add_function(wrap_pyfunction!(main, m)?))
}

/// Run the command with ``argv`` (the arguments after the program name);
/// returns the exit status.
#[pyfunction]
fn main(py: Python<'_>, argv: Vec<OsString>) -> i32 {
    py.detach(move || polywire_cli::run_process(argv, polywire_cli::Host::Process))
}
