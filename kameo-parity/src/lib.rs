//! Test-only crate: `tests/` compares polywire's Kameo codec with kameo 0.22.2.
