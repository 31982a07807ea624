//! AXON v2 message types: agent-to-agent JSON envelopes.
