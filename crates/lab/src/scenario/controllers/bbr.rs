//! BBRv1, BBRv3 and their variants: 2BRobust (on any of them) and BBR-TAS (on BBRv3).

use cclab_cc::{Bbr1Config, Bbr3Config, CcSpec, EcnResponse, Robust, Tas};

use super::{Conflict, Controller, Kind, Param, Resolved};

/// `robust` with the default `default`.
const fn robust(default: &'static str) -> Param {
    Param {
        name: "robust",
        kind: Kind::Bool,
        unit: "",
        default,
        doc: "2BRobust: pace at the Startup gain while in flight < robust_alpha·BDP in ProbeBW",
        source: "2BRobust (r = 2, α = 0.84 published for BBRv3)",
    }
}

const ROBUST_ROUNDS: Param = Param {
    name: "robust_rounds",
    kind: Kind::Int { min: 0, max: 1000 },
    unit: "round trips",
    default: "2",
    doc: "2BRobust: round trips after ProbeRTT before the boost may act (r)",
    source: "2BRobust, published r = 2",
};

const ROBUST_ALPHA: Param = Param {
    name: "robust_alpha",
    kind: Kind::Float {
        min: 0.0,
        min_open: true,
        max: 4.0,
        max_open: false,
    },
    unit: "× BDP",
    default: "0.84",
    doc: "2BRobust: boost while in flight < robust_alpha·BDP (rounded to 1/256)",
    source: "2BRobust, published α = 0.84",
};

/// The TSQ pacing shift of BBR-TAS in `phase`.
const fn shift(name: &'static str, doc: &'static str) -> Param {
    Param {
        name,
        kind: Kind::Int {
            min: *Tas::RANGE.start() as i64,
            max: *Tas::RANGE.end() as i64,
        },
        unit: "(2^-shift s of data)",
        default: "8",
        doc,
        source: "BBR-TAS, best reported pair 8/8; Linux `sk_pacing_shift` = 10",
    }
}

/// BBRv3's answer to CE marks on an L4S connection.
const ECN_RESPONSE: Param = Param {
    name: "ecn_response",
    kind: Kind::Choice(EcnResponse::NAMES),
    unit: "",
    default: "google",
    doc: "BBRv3 ECN response: google (CE ratio > 50 %, min_rtt ≤ 5 ms) or per_mark (any CE \
          in a round, no RTT gate, inflight_lo cut by α; the ns-3 BBRv3 port's rule)",
    source: "google/bbr v3 tcp_bbr.c; ns-3 port tcp-bbr3.cc (ns-3-dev-git-rp)",
};

const BBR_PARAMS: &[Param] = &[robust("false"), ROBUST_ROUNDS, ROBUST_ALPHA];
const ROBUST_PARAMS: &[Param] = &[robust("true"), ROBUST_ROUNDS, ROBUST_ALPHA];
const BBR3_PARAMS: &[Param] = &[robust("false"), ROBUST_ROUNDS, ROBUST_ALPHA, ECN_RESPONSE];
const ROBUST3_PARAMS: &[Param] = &[robust("true"), ROBUST_ROUNDS, ROBUST_ALPHA, ECN_RESPONSE];
const TAS_PARAMS: &[Param] = &[
    shift(
        "startup_shift",
        "BBR-TAS: TSQ pacing shift in Startup and Drain",
    ),
    shift(
        "steady_shift",
        "BBR-TAS: TSQ pacing shift in ProbeBW and ProbeRTT",
    ),
    robust("false"),
    ROBUST_ROUNDS,
    ROBUST_ALPHA,
    ECN_RESPONSE,
];

/// BBRv1.
pub(super) const BBR1: Controller = Controller {
    name: "bbr1",
    doc: "BBRv1 as in Linux mainline",
    source: "Linux tcp_bbr.c",
    params: BBR_PARAMS,
    build: |v| {
        Ok(CcSpec::Bbr1(Bbr1Config {
            robust: robust_of(v, None)?,
        }))
    },
};

/// BBRv1 with 2BRobust on.
pub(super) const BBR1_2BROBUST: Controller = Controller {
    name: "bbr1_2brobust",
    doc: "BBRv1 with 2BRobust (boost gain = v1's high gain 2.885)",
    source: "Linux tcp_bbr.c; 2BRobust",
    params: ROBUST_PARAMS,
    build: |v| {
        Ok(CcSpec::Bbr1(Bbr1Config {
            robust: robust_of(v, Some(Robust::DEFAULT))?,
        }))
    },
};

/// BBRv3.
pub(super) const BBR3: Controller = Controller {
    name: "bbr3",
    doc: "BBRv3 (ECN response on L4S connections)",
    source: "google/bbr v3 tcp_bbr.c; draft-ietf-ccwg-bbr",
    params: BBR3_PARAMS,
    build: |v| {
        Ok(CcSpec::Bbr3(Bbr3Config {
            robust: robust_of(v, None)?,
            ecn_response: ecn_response_of(v),
            ..Bbr3Config::default()
        }))
    },
};

/// BBRv3 with 2BRobust on.
pub(super) const BBR3_2BROBUST: Controller = Controller {
    name: "bbr3_2brobust",
    doc: "BBRv3 with 2BRobust (boost gain = v3's Startup gain 2.77)",
    source: "google/bbr v3 tcp_bbr.c; 2BRobust",
    params: ROBUST3_PARAMS,
    build: |v| {
        Ok(CcSpec::Bbr3(Bbr3Config {
            robust: robust_of(v, Some(Robust::DEFAULT))?,
            ecn_response: ecn_response_of(v),
            ..Bbr3Config::default()
        }))
    },
};

/// BBRv3 with BBR-TAS.
pub(super) const BBR_TAS: Controller = Controller {
    name: "bbr_tas",
    doc: "BBRv3 with BBR-TAS: the TSQ pacing shift chosen per state",
    source: "google/bbr v3 tcp_bbr.c; BBR-TAS",
    params: TAS_PARAMS,
    build: |v| {
        let shift = |name: &str, default: u8| {
            v.int(name)
                .and_then(|s| u8::try_from(s).ok())
                .unwrap_or(default)
        };
        Ok(CcSpec::Bbr3(Bbr3Config {
            tas: Some(Tas {
                startup_shift: shift("startup_shift", Tas::DEFAULT.startup_shift),
                steady_shift: shift("steady_shift", Tas::DEFAULT.steady_shift),
            }),
            robust: robust_of(v, None)?,
            ecn_response: ecn_response_of(v),
            ..Bbr3Config::default()
        }))
    },
};

/// `ecn_response` (checked against [`EcnResponse::NAMES`] by the generic checks).
fn ecn_response_of(v: &Resolved) -> EcnResponse {
    v.choice("ecn_response")
        .and_then(EcnResponse::from_name)
        .unwrap_or_default()
}

/// 2BRobust as set by `robust`, `robust_rounds` and `robust_alpha` on top of `default`.
fn robust_of(v: &Resolved, default: Option<Robust>) -> Result<Option<Robust>, Conflict> {
    let mut robust = match v.bool("robust") {
        Some(on) => on.then_some(default.unwrap_or(Robust::DEFAULT)),
        None => default,
    };
    let Some(r) = robust.as_mut() else {
        if let Some(key) = ["robust_rounds", "robust_alpha"]
            .into_iter()
            .find(|k| v.has(k))
        {
            return Err((
                key,
                "2BRobust is off for this flow: use controller `bbr1_2brobust` or \
                 `bbr3_2brobust`, or set `robust = true`"
                    .to_owned(),
            ));
        }
        return Ok(None);
    };
    if let Some(rounds) = v.u32("robust_rounds") {
        r.rounds = rounds;
    }
    if let Some(alpha) = v.float("robust_alpha") {
        r.alpha = alpha;
    }
    Ok(robust)
}
