//! TOON decoder.
