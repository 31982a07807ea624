//! Kameo remote-actor protocol codec (kameo 0.22.2).
