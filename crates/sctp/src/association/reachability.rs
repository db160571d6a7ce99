//! Reachability of destinations: error counters, the active / potentially-failed /
//! inactive states (RFC 9260 §8.2, RFC 7829 §4–§5), heartbeats (§8.3), path confirmation
//! (§5.4), failover and switch-back of the primary (§6.4).

use std::net::{IpAddr, Ipv6Addr};

use simtime::{Duration, Instant};

use crate::wire::Chunk;

use super::{Association, CloseReason, Event, PathId, PathState, Timer};

/// HEARTBEAT information we send (opaque to the peer): the destination address, the path's
/// nonce and the send time.
const HB_INFO_LEN: usize = 32;

fn encode_hb_info(remote: IpAddr, nonce: u64, sent: Instant) -> Vec<u8> {
    let v6 = match remote {
        IpAddr::V4(v4) => v4.to_ipv6_mapped(),
        IpAddr::V6(v6) => v6,
    };
    let mut info = Vec::with_capacity(HB_INFO_LEN);
    info.extend_from_slice(&v6.octets());
    info.extend_from_slice(&nonce.to_be_bytes());
    info.extend_from_slice(&sent.as_nanos().to_be_bytes());
    info
}

fn decode_hb_info(info: &[u8]) -> Option<(IpAddr, u64, Instant)> {
    let info: &[u8; HB_INFO_LEN] = info.try_into().ok()?;
    let (addr, rest) = info.split_at(16);
    let v6 = Ipv6Addr::from(<[u8; 16]>::try_from(addr).ok()?);
    let remote = v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4);
    let nonce = u64::from_be_bytes(rest[..8].try_into().ok()?);
    let sent = Instant::from_nanos(u64::from_be_bytes(rest[8..].try_into().ok()?));
    Some((remote, nonce, sent))
}

impl Association {
    /// One more consecutive error on destination `p` (a T3-rtx or heartbeat timeout): the
    /// path and association counters grow (§8.1, §8.2), and the path may become PF or
    /// inactive, or the association fail.
    pub(super) fn path_error(&mut self, now: Instant, p: PathId) {
        self.error_count += 1;
        let path = &mut self.paths[p];
        path.error_count += 1;
        let errors = path.error_count;
        if self.error_count > self.config.assoc_max_retrans {
            self.abort_with(now, CloseReason::AssociationFailure, Vec::new());
            return;
        }
        if errors > self.config.path_max_retrans {
            self.set_path_state(now, p, PathState::Inactive);
        } else if self.config.pf_max_retrans.is_some_and(|pf| errors > pf) {
            self.set_path_state(now, p, PathState::PotentiallyFailed);
        }
        // RFC 7829 §5: Primary Path Switchover.
        if p == self.primary && self.config.primary_switchover_max_retrans.is_some_and(|m| errors > m) {
            let alt = self.alternate(p);
            if alt != p {
                self.set_primary(alt);
            }
        }
    }

    /// Changes a destination's state and reports it. A primary that becomes inactive is
    /// replaced for good when switch-back is off.
    pub(super) fn set_path_state(&mut self, now: Instant, p: PathId, to: PathState) {
        let from = self.paths[p].state;
        if from == to {
            return;
        }
        // Only worse states replace better ones on errors, except recovery to Active.
        if to != PathState::Active && from == PathState::Inactive {
            return;
        }
        self.paths[p].state = to;
        self.events.push_back(Event::PathStateChanged { path: p, from, to });
        match to {
            PathState::PotentiallyFailed => {
                self.paths[p].stats.pf_episodes += 1;
                // RFC 7829 §4: probe a PF destination at once, then once per RTO.
                self.timers.set(Timer::Heartbeat(p), now);
            }
            PathState::Inactive if p == self.primary && !self.config.switchback => {
                let alt = self.alternate(p);
                if alt != p {
                    self.set_primary(alt);
                }
            }
            PathState::Active => {
                let path = &mut self.paths[p];
                path.error_count = 0;
                if from == PathState::PotentiallyFailed {
                    // RFC 7829 §4 (and CMT-PF rule 4: 1..4 MTU, then slow start): the
                    // controller decides the cwnd it returns with.
                    path.controller.on_pf_exit(&mut path.cc, self.config.pf_exit_cwnd());
                }
                self.reschedule_heartbeat(now, p);
            }
            PathState::Inactive => {}
        }
    }

    fn heartbeat_interval(&mut self, p: PathId) -> Option<Duration> {
        let path = &self.paths[p];
        let rto = path.rto.rto;
        if !path.confirmed || path.state == PathState::PotentiallyFailed {
            // §5.4 (unconfirmed) and RFC 7829 §4 (PF): one probe per RTO.
            return Some(rto);
        }
        // §8.3: RTO + HB.interval, jittered by ±RTO/2.
        let interval = self.config.hb_interval?;
        Some(self.jittered(rto + interval, rto))
    }

    fn reschedule_heartbeat(&mut self, now: Instant, p: PathId) {
        let next = self.heartbeat_interval(p).map(|d| now + d);
        self.timers.put(Timer::Heartbeat(p), next);
        self.paths[p].data_since_hb = false;
    }

    /// Sends a HEARTBEAT to destination `path` now (RFC 9260 §10.1 O, REQUESTHEARTBEAT: the
    /// upper layer asks for one, e.g. when a destination it could not reach may be reachable
    /// again). Its answer makes the destination active and measures its round trip; an
    /// earlier HEARTBEAT still outstanding is not counted as an error (either answer does).
    /// Returns false if the association is not established or has no such destination.
    pub fn request_heartbeat(&mut self, now: Instant, path: PathId) -> bool {
        if self.state != super::State::Established || !self.paths.contains(path) {
            return false;
        }
        let p = &self.paths[path];
        let info = encode_hb_info(p.remote, p.hb_nonce, now);
        self.paths[path].hb_outstanding = true;
        self.control.push_back((path, Chunk::Heartbeat { info }));
        self.reschedule_heartbeat(now, path);
        self.dirty = true;
        true
    }

    /// The lower layer has no route to destination `path` (IP's "no route to host"): the
    /// destination becomes inactive at once and its outstanding DATA (and an outstanding
    /// ASCONF) go to an alternate destination, as FreeBSD's SCTP does (sctp_output.c:
    /// a destination IP cannot route to is marked unreachable and its chunks are moved to
    /// another), rather than waiting for Path.Max.Retrans timeouts of backed-off RTOs
    /// (RFC 9260 §8.2 leaves how a destination is found unreachable to the implementation).
    /// Its heartbeats go on, one per RTO + HB.interval, and an answer makes it active again.
    /// Returns false if it names no destination or the destination is inactive already.
    pub fn report_unreachable(&mut self, now: Instant, path: PathId) -> bool {
        if !self.paths.contains(path) || self.paths[path].state == PathState::Inactive {
            return false;
        }
        // An active alternate, or else any other destination (one inactive after errors may
        // be reachable again; its heartbeats tell).
        let alt = match self.alternate(path) {
            a if a != path => a,
            _ => self.paths.ids().find(|&p| p != path).unwrap_or(path),
        };
        self.set_path_state(now, path, PathState::Inactive);
        if alt != path {
            self.evacuate_path(path, alt);
            self.move_asconf(path, alt);
        }
        self.dirty = true;
        true
    }

    /// The heartbeat timer of destination `p` fired (§8.3).
    pub(super) fn on_heartbeat_timer(&mut self, now: Instant, p: PathId) {
        self.release_memory_if_idle();
        self.timers.stop(Timer::Heartbeat(p));
        let path = &mut self.paths[p];
        if path.hb_outstanding {
            // The previous HEARTBEAT went unanswered: an error, and the RTO backs off.
            path.hb_outstanding = false;
            path.stats.heartbeat_timeouts += 1;
            path.rto.back_off(&self.config);
            self.path_error(now, p);
            if self.state == super::State::Closed {
                return;
            }
        }
        let path = &self.paths[p];
        let idle = !path.data_since_hb && path.flight_size == 0;
        let send = !path.confirmed || path.state != PathState::Active || idle;
        if send {
            let info = encode_hb_info(path.remote, path.hb_nonce, now);
            self.paths[p].hb_outstanding = true;
            self.control.push_back((p, Chunk::Heartbeat { info }));
        }
        self.reschedule_heartbeat(now, p);
    }

    /// A HEARTBEAT ACK (§8.3): RTT sample, error counters cleared, the destination confirmed
    /// (§5.4) and active again.
    pub(super) fn on_heartbeat_ack(&mut self, now: Instant, info: &[u8]) {
        let Some((remote, nonce, sent)) = decode_hb_info(info) else { return };
        let Some(p) = self.path_of(remote) else { return };
        if self.paths[p].hb_nonce != nonce || sent > now {
            return;
        }
        let rtt = now - sent;
        let path = &mut self.paths[p];
        path.rto.on_measurement(rtt, &self.config);
        path.hb_outstanding = false;
        path.error_count = 0;
        path.stats.heartbeat_acks += 1;
        self.error_count = 0;
        self.events.push_back(Event::HeartbeatAcked { path: p, rtt });
        if !self.paths[p].confirmed {
            self.paths[p].confirmed = true;
            self.events.push_back(Event::PathConfirmed { path: p });
            self.reschedule_heartbeat(now, p);
        }
        if self.paths[p].state != PathState::Active {
            self.set_path_state(now, p, PathState::Active);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heartbeat_info_round_trips_v4_and_v6() {
        for addr in ["10.1.2.3", "2001:db8::7"] {
            let a: IpAddr = addr.parse().unwrap();
            let info = encode_hb_info(a, 42, Instant::from_nanos(99));
            assert_eq!(decode_hb_info(&info), Some((a, 42, Instant::from_nanos(99))));
        }
        assert_eq!(decode_hb_info(&[0; 31]), None);
    }
}
