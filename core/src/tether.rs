//! Tether: Caffeine's 32-bit big-endian tagged object encoding.
