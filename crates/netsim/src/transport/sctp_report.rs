//! How an SCTP association appears in results: one place for the kinds, entities, metrics and
//! units of its scalars and time series, shared by the simulator's socket
//! ([`crate::transport::sctp`]) and real mode (`crates/sctp-udp`), so the same summaries,
//! files and analyses read both.
//!
//! Entities: the association is `<name>` (kind `sctp`), its paths `<name>/path<i>` (kind
//! `sctp_path`, `i` the stable path id).

use sctp::{Association, PathId, PathStats};

use crate::recorder::{Scalars, TimeSeries};
use crate::time::Instant;

/// Unit of the path state code.
const STATE_UNIT: &str = "0=active,1=pf,2=inactive";

/// What the caller knows of an association beyond the engine's state.
pub struct AssocFacts<'a> {
    /// Entity name of the association.
    pub name: &'a str,
    /// The side that sends data: also reports its retransmission counters.
    pub sender: bool,
    /// Path state changes seen.
    pub path_changes: u64,
    /// The association has closed.
    pub closed: bool,
}

/// When the route of an association's primary path broke, and when each step of the
/// failover that followed came (the opening side's bookkeeping).
#[derive(Clone, Debug, Default)]
pub struct FailoverTimes {
    /// The break of the primary's route.
    pub break_at: Option<Instant>,
    /// The primary became potentially failed (RFC 7829).
    pub pf_at: Option<Instant>,
    /// The primary became inactive.
    pub inactive_at: Option<Instant>,
    /// The first retransmission to another destination.
    pub alt_rtx_at: Option<Instant>,
    /// New data moved to another destination.
    pub moved_at: Option<Instant>,
    /// New data came back to the primary.
    pub back_at: Option<Instant>,
}

/// The failover scalars of association `name` at the end of the run, `now`: when the
/// primary's route broke (`primary_break_at`) and how long after that each step came. A
/// break due after the end did not happen: nothing is reported.
pub fn failover_scalars(now: Instant, name: &str, t: &FailoverTimes, out: &mut Scalars) {
    let Some(b) = t.break_at.filter(|&b| b <= now) else { return };
    out.push("sctp", name, "primary_break_at", b.as_secs_f64(), "s");
    for (metric, at) in [
        ("failover_time", t.inactive_at),
        ("pf_time", t.pf_at),
        ("first_alternate_rtx_time", t.alt_rtx_at),
        ("data_moved_time", t.moved_at),
        ("switch_back_time", t.back_at),
    ] {
        if let Some(at) = at {
            out.push("sctp", name, metric, at.saturating_since(b).as_secs_f64(), "s");
        }
    }
}

/// The entity name of path `i` of association `name`.
pub fn path_entity(name: &str, i: PathId) -> String {
    format!("{name}/path{i}")
}

/// End-of-run scalars of `a`: the sender's retransmission counters and time blocked by the
/// peer's window, TSNs received out of order, heartbeats, path state changes, whether it
/// closed, the RFC 9260 Appendix A ECN counters where ECN is configured, then one row set
/// per path. `path_extra(i, entity, out)` adds the caller's own rows to path `i`'s set,
/// before its packet count and state.
pub fn association_scalars(
    now: Instant,
    a: &Association,
    facts: &AssocFacts<'_>,
    out: &mut Scalars,
    mut path_extra: impl FnMut(PathId, &str, &mut Scalars),
) {
    let name = facts.name;
    let sum = |f: fn(&PathStats) -> u64| a.paths().values().map(|p| f(&p.stats)).sum::<u64>() as f64;
    if facts.sender {
        out.push("sctp", name, "sent_bytes", sum(|s| s.bytes_sent), "bytes");
        out.push("sctp", name, "fast_retransmissions", sum(|s| s.fast_retransmissions), "chunks");
        out.push("sctp", name, "timeout_retransmissions", sum(|s| s.timeout_retransmissions), "chunks");
        out.push("sctp", name, "retransmitted_bytes", sum(|s| s.bytes_retransmitted), "bytes");
        out.push("sctp", name, "t3_timeouts", sum(|s| s.t3_timeouts), "events");
        out.push("sctp", name, "rwnd_blocked_time", a.rwnd_blocked_time(now).as_secs_f64(), "s");
    }
    out.push("sctp", name, "reordered_tsns", a.reordered_tsns() as f64, "chunks");
    out.push("sctp", name, "heartbeats_sent", sum(|s| s.heartbeats_sent), "chunks");
    out.push("sctp", name, "path_state_changes", facts.path_changes as f64, "events");
    out.push("sctp", name, "closed", f64::from(u8::from(facts.closed)), "bool");
    let ecn = a.config().ecn;
    if ecn {
        let st = a.stats();
        out.push("sctp", name, "ecn_negotiated", f64::from(u8::from(a.ecn_negotiated())), "bool");
        out.push("sctp", name, "ecn_ce_received", st.ce_received as f64, "packets");
        out.push("sctp", name, "ecn_ecne_sent", st.ecne_sent as f64, "chunks");
        out.push("sctp", name, "ecn_cwr_sent", st.cwr_sent as f64, "chunks");
        out.push("sctp", name, "ecn_reductions", sum(|s| s.ecn_reductions), "events");
    }
    let new_total = sum(|s| s.bytes_sent);
    for (i, p) in a.paths() {
        let entity = path_entity(name, i);
        out.push("sctp_path", &entity, "bytes_sent", p.stats.bytes_sent as f64, "bytes");
        if new_total > 0.0 {
            out.push("sctp_path", &entity, "new_data_share", p.stats.bytes_sent as f64 / new_total, "fraction");
        }
        out.push("sctp_path", &entity, "bytes_retransmitted", p.stats.bytes_retransmitted as f64, "bytes");
        out.push("sctp_path", &entity, "bytes_acked", p.stats.bytes_acked as f64, "bytes");
        out.push("sctp_path", &entity, "fast_retransmissions", p.stats.fast_retransmissions as f64, "chunks");
        out.push("sctp_path", &entity, "t3_timeouts", p.stats.t3_timeouts as f64, "events");
        out.push("sctp_path", &entity, "pf_episodes", p.stats.pf_episodes as f64, "events");
        if ecn {
            out.push("sctp_path", &entity, "ecn_reductions", p.stats.ecn_reductions as f64, "events");
        }
        path_extra(i, &entity, out);
        out.push("sctp_path", &entity, "packets_sent", p.stats.packets_sent as f64, "packets");
        out.push("sctp_path", &entity, "state", f64::from(p.state.code()), STATE_UNIT);
    }
}

/// One sample of `a` at `now`: per path window, slow-start threshold, flight size, RTO, SRTT
/// and state (path entities from `entity_of`), then the association's advertised and peer
/// windows.
pub fn association_sample<'e>(
    now: Instant,
    a: &Association,
    name: &str,
    mut entity_of: impl FnMut(PathId) -> std::borrow::Cow<'e, str>,
    out: &mut TimeSeries,
) {
    for (i, p) in a.paths() {
        let entity = entity_of(i);
        out.push(now, "sctp_path", &entity, "cwnd", "bytes", f64::from(p.cc.cwnd));
        out.push(now, "sctp_path", &entity, "ssthresh", "bytes", f64::from(p.cc.ssthresh));
        out.push(now, "sctp_path", &entity, "flight_size", "bytes", f64::from(p.flight_size));
        out.push(now, "sctp_path", &entity, "rto", "s", p.rto.rto.as_secs_f64());
        if let Some(srtt) = p.rto.srtt {
            out.push(now, "sctp_path", &entity, "srtt", "s", srtt.as_secs_f64());
        }
        out.push(now, "sctp_path", &entity, "state", STATE_UNIT, f64::from(p.state.code()));
    }
    out.push(now, "sctp", name, "a_rwnd", "bytes", f64::from(a.a_rwnd()));
    out.push(now, "sctp", name, "peer_rwnd", "bytes", f64::from(a.peer_rwnd()));
}
