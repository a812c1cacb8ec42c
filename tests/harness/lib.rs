//! Test harness (filled in by the real-browser issue).
