//! Controller selection by name: the one place that knows every controller.
//!
//! Contract: [`CcSpec`] is a plain description of a controller and its parameters (what a scenario
//! file names); [`CcSpec::build`] makes a fresh boxed instance. [`CONTROLLERS`] lists the names the
//! scenario layer accepts, so error messages can list valid choices.

use crate::CongestionControl;

/// Names accepted for `controller` in scenario files.
pub const CONTROLLERS: &[&str] = &["reno", "newreno", "cubic"];

/// Names accepted for `slow_start` in scenario files.
pub const SLOW_STARTS: &[&str] = &["standard", "hystart", "hystart++"];

/// Slow-start variant pluggable into the loss-based controllers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SlowStartKind {
    /// RFC 5681 slow start; leaves on loss or at ssthresh.
    Standard,
    /// Linux CUBIC HyStart (ACK train + delay), `tcp_cubic.c`.
    HyStart,
    /// HyStart++, RFC 9406.
    HyStartPlusPlus,
}

impl SlowStartKind {
    /// Parse a scenario-file name.
    #[must_use]
    pub fn from_name(s: &str) -> Option<Self> {
        match s {
            "standard" => Some(Self::Standard),
            "hystart" => Some(Self::HyStart),
            "hystart++" | "hystartpp" => Some(Self::HyStartPlusPlus),
            _ => None,
        }
    }
    /// The scenario-file name.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Standard => "standard",
            Self::HyStart => "hystart",
            Self::HyStartPlusPlus => "hystart++",
        }
    }
}

/// A controller and its parameters.
#[derive(Clone, Debug, PartialEq)]
pub enum CcSpec {
    /// Reno: RFC 5681, recovery ends on the first partial ACK.
    Reno {
        /// Slow-start variant.
        slow_start: SlowStartKind,
    },
    /// NewReno: RFC 5681 + RFC 6582, recovery ends at the recovery point.
    NewReno {
        /// Slow-start variant.
        slow_start: SlowStartKind,
    },
    /// CUBIC, RFC 9438 with Linux `tcp_cubic.c` specifics.
    Cubic {
        /// Slow-start variant (Linux default: HyStart).
        slow_start: SlowStartKind,
        /// Fast convergence (RFC 9438 §4.7; Linux `fast_convergence` = 1).
        fast_convergence: bool,
        /// Reno-friendly region (RFC 9438 §4.3; Linux `tcp_friendliness` = 1).
        tcp_friendliness: bool,
    },
}

impl CcSpec {
    /// The default parameters of the controller called `name`, if it exists.
    #[must_use]
    pub fn default_for(name: &str) -> Option<CcSpec> {
        match name {
            "reno" => Some(CcSpec::Reno { slow_start: SlowStartKind::Standard }),
            "newreno" => Some(CcSpec::NewReno { slow_start: SlowStartKind::Standard }),
            "cubic" => Some(CcSpec::Cubic {
                slow_start: SlowStartKind::HyStart,
                fast_convergence: true,
                tcp_friendliness: true,
            }),
            _ => None,
        }
    }

    /// The controller's name as listed in [`CONTROLLERS`].
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            CcSpec::Reno { .. } => "reno",
            CcSpec::NewReno { .. } => "newreno",
            CcSpec::Cubic { .. } => "cubic",
        }
    }

    /// Build a fresh controller instance.
    #[must_use]
    pub fn build(&self) -> Box<dyn CongestionControl> {
        todo!("controllers are added by the cc module work")
    }
}
