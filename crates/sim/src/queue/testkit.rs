//! Test helpers for queue disciplines.
