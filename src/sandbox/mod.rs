//! The QuickJS sandbox (being written).
