//! TOON encoder.
