//! cclab-emu: real stacks (the kernel's TCP, any program) through cclab's own network elements,
//! in real time.
//!
//! Contract: every host of a scenario becomes a network namespace attached to this process by a
//! TUN device; the packets the hosts send are read from the TUNs and run through the same
//! queue disciplines, rate models, loss, delay and jitter elements as in simulation (generic
//! over the packet, `cclab_sim::net`), at the times those elements compute, on a monotonic
//! clock. Nothing is named in the root namespace: the namespaces are held by threads of this
//! process and the commands it starts die with it, so a crash or a kill leaves nothing behind.

pub mod capture;
pub mod forward;
pub mod net;
pub mod ns;
pub mod observe;
pub mod packet;
pub mod run;

pub use run::{EmuError, EmuOptions, EmuReport, EmuRun, HostCommand, emulate};
