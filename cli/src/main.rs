//! The `polywire` command (`cargo install --path cli`); the Python and Node
//! packages run the same command through their native library.
//!
//! On Unix the program starts at C's `main`, not at Rust's runtime start:
//! that would open /dev/null in place of a closed standard descriptor
//! (`polywire -d <&-`), which the command reports instead, and would ignore
//! SIGPIPE for the whole process (the command sets its own dispositions
//! while it runs).
#![cfg_attr(unix, no_main)]

/// The program's entry point.
///
/// # Safety
///
/// Called by the C runtime only, with `argc` valid NUL-terminated strings
/// in `argv`.
#[cfg(unix)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn main(argc: std::ffi::c_int, argv: *const *const std::ffi::c_char) -> std::ffi::c_int {
    use std::os::unix::ffi::OsStringExt;
    let args = (1..usize::try_from(argc).unwrap_or(0))
        .filter_map(|i| {
            // SAFETY: the C runtime passes `argc` valid, NUL-terminated strings.
            let p = unsafe { *argv.add(i) };
            (!p.is_null()).then(|| std::ffi::OsString::from_vec(unsafe { std::ffi::CStr::from_ptr(p) }.to_bytes().to_vec()))
        })
        .collect();
    polywire_cli::run_process(args, polywire_cli::Host::Process)
}

#[cfg(not(unix))]
fn main() {
    std::process::exit(polywire_cli::run_process(std::env::args_os().skip(1).collect(), polywire_cli::Host::Process));
}
