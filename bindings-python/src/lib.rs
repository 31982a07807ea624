//! `polywire._polywire`: the PyO3 shim over the `polywire` core crate.
//!
//! Thin by design: each format module converts Python values to and from the
//! core's types, maps `polywire::Error` to the format's exception class and
//! wraps the core's stateful types. The public API (enums, constants,
//! docstrings) lives in the `polywire` Python package.

mod axon;
mod axon_peer;
mod buffer;
mod cli;
mod completions;
mod errors;
mod kado;
mod kameo;
mod kameo_peer;
mod llm;
mod pydict;
mod pyjson;
mod pystr;
mod tether;
mod toon;

use pyo3::prelude::*;

#[pymodule]
fn _polywire(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // Whether the x86_64 SIMD paths are compiled in (scripts/test-portable.sh
    // checks that its build has them off, here and in the core).
    m.add("_simd", polywire::SIMD && cfg!(all(target_arch = "x86_64", not(any(polywire_portable, feature = "portable")))))?;
    pydict::init(m.py())?;
    errors::register(m)?;
    errors::register_type_error(m)?;
    kado::register(m)?;
    toon::register(m)?;
    tether::register(m)?;
    axon::register(m)?;
    axon_peer::register(m)?;
    kameo::register(m)?;
    kameo_peer::register(m)?;
    llm::register(m)?;
    cli::register(m)?;
    Ok(())
}

/// Create a submodule `name` of `_polywire` (reached as an attribute, e.g.
/// `_polywire.kado`).
pub(crate) fn submodule<'py>(
    parent: &Bound<'py, PyModule>,
    name: &str,
    fill: impl FnOnce(&Bound<'py, PyModule>) -> PyResult<()>,
) -> PyResult<()> {
    let m = PyModule::new(parent.py(), name)?;
    fill(&m)?;
    parent.add_submodule(&m)
}
