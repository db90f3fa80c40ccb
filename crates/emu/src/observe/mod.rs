//! Observation of real stacks: parsers for `ss -tin` and `ping -D` output.

pub mod ping;
pub mod ss;
