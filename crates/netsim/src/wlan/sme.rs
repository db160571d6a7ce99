//! Station and AP management (IEEE 802.11-2020 §11.1 and §11.3): beacons, scanning, Open
//! System authentication, association, and roaming on signal strength. Every step is a
//! management frame on the medium ([`crate::wlan::mgmt`]), sent through the DCF with its
//! airtime and, when individually addressed, its ACK and retries; so association takes the
//! time it takes.
//!
//! # Access points
//!
//! An AP with a beacon interval sends a Beacon at each TBTT, the instants `k * interval` from
//! the start of the run (§11.1.3.2: the TSF starts at zero and a beacon is scheduled as the
//! next frame at each TBTT; it then contends through the DCF like any frame, so it goes out
//! late when the medium is busy). It answers a Probe Request with a Probe Response, an
//! Authentication (transaction 1) with an Authentication (transaction 2, success), and an
//! Association Request with an Association Response, each as soon as the request is received.
//! Addresses: a station configured with a host number ([`RoamConfig::host`]) takes that host
//! in the AP's subnet (a station numbered 10.0.1.10 gets 10.0.2.10 from an AP 10.0.2.1/24).
//! Otherwise the AP leases it the lowest free host address of its own interface's subnet
//! above its own address (in association order; a station that comes back gets its lease
//! again). Either way the prefix length is the AP's; the lease ends when the station leaves
//! (the simulator frees it at once, standing in for the AP's inactivity timeout).
//!
//! # Stations that roam
//!
//! A roaming station ([`crate::wlan::Role::Roaming`]) has a radio on each channel of its scan
//! list, one tuned at a time ([`crate::wlan::medium::Medium::set_enabled`]); its interface is
//! attached to the radio of the channel it is associated on. It starts unassociated with its
//! interface down and scans at once.
//!
//! - **Scanning** (§11.1.4): the channels of the scan list in order. Passive: dwell
//!   `passive_dwell` on each, listening to beacons. Active (§11.1.4.3.2): send a Probe Request
//!   [`PROBE_DELAY`] after arrival and wait `min_channel_time` from then; if the radio heard
//!   any frame meanwhile, stay until `max_channel_time` from the probe, else move on. Every Beacon and Probe Response heard (on
//!   any channel, while scanning or not) records the AP with its signal strength.
//!   While the station scans away from its own channel, its radio there is tuned away: the
//!   packets in its queue stay queued and are sent when it returns (packets offered meanwhile
//!   join the queue, up to its limit); on its own channel it keeps sending.
//! - **Joining** (§11.3): after a scan without an AP, the station authenticates (Open System,
//!   two frames) and associates (two frames) with the AP heard strongest in the last scan
//!   (above the handover threshold). A request not answered within its timeout
//!   (`auth_timeout`, `assoc_timeout`; dot11AuthenticationResponseTimeout and
//!   dot11AssociationResponseTimeout) is sent again, up to `max_attempts`; then the next best
//!   AP is tried, and after the last one the station scans again `rescan_interval` later.
//! - **Associated**: the interface's radio points to the AP, the interface comes up and gets
//!   its lease; routes are recomputed (the AP's node reaches the station's address).
//! - **Roaming** on the signal strength of its AP, `RSS = P_tx - PL(d) - shadowing` for the
//!   pair, the strength every beacon of the AP arrives with (no fading is modelled, so the
//!   beacons' RSS is this function of distance and needs no averaging). Rather than checking
//!   each beacon, the station computes from the mobility model the instants RSS crosses the
//!   scan and handover thresholds (a threshold on RSS is one on distance;
//!   [`crate::wlan::medium::Medium::rss_crossing`]) and acts exactly then: below the scan
//!   threshold (paper 001: -80 dBm) it scans, and again every `rescan_interval` while it stays
//!   below; below the handover threshold (-90 dBm) it leaves its AP: it sends a Disassociation
//!   (reason 8, §11.3.5.3), stays on the channel until that frame is out (acknowledged, or
//!   given up at the short retry limit, as it usually is: at that strength the AP rarely
//!   decodes it), and joins the best AP of its last scan, or scans if there is none. The
//!   lease ends when the station decides to leave (the AP's inactivity timeout, which would
//!   free it when the frame is lost, is not modelled). Computing the crossings matters
//!   because the thresholds lie below what a receiver decodes (-82 dBm at 6 Mbit/s): the
//!   beacons stop arriving before the handover threshold is reached.
//! - **Deauthenticated**: an AP whose interface goes down (a fault) sends each station it has
//!   associated a Deauthentication (reason 3, §11.3.4.3; individually addressed, so
//!   acknowledged and retried), then neither beacons nor answers until its interface is up
//!   again. A station receiving a Deauthentication or Disassociation from its AP leaves once
//!   it has acknowledged it (no frame back) and joins the best other AP of its last scan, or scans. Beacon loss
//!   is not detected: a station that misses the frame stays until its thresholds say
//!   otherwise.
//!
//! Interface events ([`crate::event::IfaceEvent`], told to every agent on the node): on
//! association `Up` then `AddressAdded(lease)`; on leaving `Down` then
//! `AddressRemoved(lease)`. Leaving also discards the packets the interface's radio holds
//! (`iface_down` drops). The steps appear in the run's events as kind `wlan` (scan-start,
//! scan-end, auth, associated, handover or deauthenticated, disassociated, and `left` when a
//! roaming station's Disassociation is out), with times, e.g.
//! `step=associated channel=bss1 ap=ap1/wlan0 addr=10.0.1.10 rss=-54.4`.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use crate::event::{DropReason, Event, MgmtTimer};
use crate::ids::IfaceId;
use crate::kernel::Scheduler;
use crate::mobility::Crossing;
use crate::network::IfaceAddr;
use crate::time::{Duration, Instant};
use crate::wlan::medium::{Medium, BROADCAST};
use crate::wlan::mgmt::{MgmtKind, REASON_LEAVING, REASON_LEAVING_BSS};
use crate::wlan::phy::{self, Rate};

/// One time unit (TU), 1024 us (§3.1).
pub const TU: Duration = Duration(1_024_000);

/// ProbeDelay of active scanning (§11.1.4.3.2 b): the wait on arriving on a channel before
/// the Probe Request is sent (1 TU; a frame heard meanwhile does not shorten it here). It keeps
/// a probe from colliding with a beacon that starts at the same instant.
pub const PROBE_DELAY: Duration = TU;

/// How a station scans.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ScanMode {
    /// Listen for beacons on each channel.
    Passive {
        /// Time on each channel.
        dwell: Duration,
    },
    /// Probe each channel (§11.1.4.3.2).
    Active {
        /// MinChannelTime.
        min_channel_time: Duration,
        /// MaxChannelTime.
        max_channel_time: Duration,
    },
}

/// Parameters of a roaming station.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RoamConfig {
    /// Scan mode.
    pub scan: ScanMode,
    /// Below this RSS of its AP (dBm) the station scans.
    pub scan_threshold_dbm: f64,
    /// Below this RSS of its AP (dBm) the station hands over.
    pub handover_threshold_dbm: f64,
    /// Time between scans while below the scan threshold, and before scanning again after a
    /// scan that found no AP to join.
    pub rescan_interval: Duration,
    /// Wait for the Authentication response.
    pub auth_timeout: Duration,
    /// Wait for the Association Response.
    pub assoc_timeout: Duration,
    /// Requests sent to one AP before trying another.
    pub max_attempts: u32,
    /// The station's host number: in each AP's subnet it takes the address with this
    /// address's host part (under the AP's prefix length). `None`: the AP leases the lowest
    /// free host number above its own address.
    pub host: Option<Ipv4Addr>,
}

impl Default for RoamConfig {
    /// Active scanning (MinChannelTime 20 TU, MaxChannelTime 40 TU), paper 001's thresholds
    /// (-80 and -90 dBm), rescans every second, the MIB's 512 TU response timeouts, 3 attempts.
    fn default() -> Self {
        RoamConfig {
            scan: ScanMode::Active { min_channel_time: Duration(TU.0 * 20), max_channel_time: Duration(TU.0 * 40) },
            scan_threshold_dbm: -80.0,
            handover_threshold_dbm: -90.0,
            rescan_interval: Duration::from_secs(1),
            auth_timeout: Duration(TU.0 * 512),
            assoc_timeout: Duration(TU.0 * 512),
            max_attempts: 3,
            host: None,
        }
    }
}

/// Counters of a roaming station.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StationStats {
    /// Scans started.
    pub scans: u64,
    /// Associations completed.
    pub associations: u64,
    /// Handovers (leaving an AP below the handover threshold).
    pub handovers: u64,
    /// Authentication or association requests that timed out.
    pub timeouts: u64,
    /// Associations ended by the AP (a Deauthentication or Disassociation received).
    pub deauthentications: u64,
}

/// Something the network applies or reports after a management step.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Action {
    /// The station's interface is associated through `radio` on `medium` with its AP's radio
    /// `ap` and gets `addr`.
    Associate { iface: IfaceId, medium: u32, radio: u32, ap: u32, addr: IfaceAddr },
    /// The station's interface leaves its AP and loses `addr`.
    Disassociate { iface: IfaceId, medium: u32, radio: u32, addr: IfaceAddr },
    /// A step for the run's events, with the AP concerned (channel index, AP's interface).
    Note { iface: IfaceId, what: &'static str, ap: Option<(u32, IfaceId)>, detail: String },
}

/// What a management step works with: the channels, the time, the event list, and the
/// actions it decides (for the network to apply).
pub(crate) struct Io<'a> {
    pub media: &'a mut [Medium],
    pub now: Instant,
    pub sched: &'a mut Scheduler<Event>,
    pub out: &'a mut Vec<Action>,
}

/// An AP's management state.
#[derive(Debug)]
struct Ap {
    medium: u32,
    radio: u32,
    /// Its own address on the BSS (the subnet it leases from).
    addr: Option<IfaceAddr>,
    beacon_interval: Option<Duration>,
    /// Host offset above the AP's address -> station radio.
    leases: BTreeMap<u32, u32>,
    /// In service: false while its interface is down (no beacons, no answers).
    up: bool,
}

/// An AP a station heard.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Candidate {
    /// Index into the station's radios.
    k: usize,
    ap: u32,
    rss: f64,
    /// Heard in the scan with this number.
    scan: u64,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    /// Unassociated and waiting to scan again.
    Idle,
    /// Scanning channel `c` of the list since `since`.
    Scanning { c: usize, since: Instant, extended: bool, heard: u64, probed: bool },
    /// Authenticating with a candidate (`tries` requests sent).
    Auth { cand: Candidate, tries: u32 },
    /// Associating with a candidate.
    Assoc { cand: Candidate, tries: u32 },
    /// Associated (possibly scanning: see `Station::bg`).
    Associated,
    /// Left its AP; stays on the channel until its Disassociation has gone out (acknowledged
    /// or given up at the retry limit), or until it has acknowledged the AP's
    /// Deauthentication.
    Leaving,
}

/// The association a station holds.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Assoc {
    k: usize,
    ap: u32,
    /// Index of the AP in `Sme::aps`.
    ap_index: usize,
    addr: IfaceAddr,
}

#[derive(Debug)]
struct Station {
    iface: IfaceId,
    /// (medium, radio) per channel of the scan list.
    radios: Vec<(u32, u32)>,
    config: RoamConfig,
    phase: Phase,
    /// While associated: a background scan's state (the channel, as in `Phase::Scanning`).
    bg: Option<Phase>,
    tuned: usize,
    assoc: Option<Assoc>,
    candidates: Vec<Candidate>,
    scan_no: u64,
    below_scan: bool,
    below_handover: bool,
    /// Generation of the phase timer and of the crossing timer.
    gen: u32,
    cross_gen: u32,
    stats: StationStats,
}

/// The management entities of every AP and roaming station.
#[derive(Debug, Default)]
pub struct Sme {
    aps: Vec<Ap>,
    stations: Vec<Station>,
}

/// Counters and state of a roaming station, for results.
#[derive(Clone, Copy, Debug)]
pub struct StationReport {
    /// Its interface.
    pub iface: IfaceId,
    /// Counters.
    pub stats: StationStats,
    /// The AP's radio (medium, radio) it is associated with, if any.
    pub ap: Option<(u32, u32)>,
}

impl Sme {
    /// Register an AP's radio; with a beacon interval it sends beacons.
    pub(crate) fn add_ap(&mut self, medium: u32, radio: u32, beacon_interval: Option<Duration>) {
        self.aps.push(Ap { medium, radio, addr: None, beacon_interval, leases: BTreeMap::new(), up: true });
    }

    /// Register a roaming station with its radios (one per channel of its scan list).
    pub(crate) fn add_station(&mut self, iface: IfaceId, radios: Vec<(u32, u32)>, config: RoamConfig) {
        self.stations.push(Station {
            iface,
            radios,
            config,
            phase: Phase::Idle,
            bg: None,
            tuned: 0,
            assoc: None,
            candidates: Vec::new(),
            scan_no: 0,
            below_scan: false,
            below_handover: false,
            gen: 0,
            cross_gen: 0,
            stats: StationStats::default(),
        });
    }

    /// True if `radio` on `medium` is one of a roaming station's radios.
    pub fn is_station_radio(&self, medium: u32, radio: u32) -> bool {
        self.stations.iter().any(|s| s.radios.contains(&(medium, radio)))
    }

    /// True if nothing is registered.
    pub fn is_empty(&self) -> bool {
        self.aps.is_empty() && self.stations.is_empty()
    }

    /// Per roaming station: its counters and AP.
    pub fn stations(&self) -> impl Iterator<Item = StationReport> + '_ {
        self.stations.iter().map(|s| StationReport {
            iface: s.iface,
            stats: s.stats,
            ap: s.assoc.map(|a| (s.radios[a.k].0, a.ap)),
        })
    }

    /// The signal strength (dBm) of each associated roaming station's AP at `t`.
    pub fn rss_at<'a>(&'a self, media: &'a [Medium], t: Instant) -> impl Iterator<Item = (IfaceId, f64)> + 'a {
        self.stations.iter().filter_map(move |s| {
            let a = s.assoc?;
            let (m, r) = s.radios[a.k];
            Some((s.iface, media[m as usize].rss_dbm_at(a.ap, r, t)))
        })
    }

    /// At the start of the run: APs' first TBTT, stations' first scan. `addr_of` gives an AP
    /// radio's interface address.
    pub(crate) fn start(&mut self, addr_of: impl Fn(u32, u32) -> Option<IfaceAddr>, io: &mut Io<'_>) {
        for (i, ap) in self.aps.iter_mut().enumerate() {
            ap.addr = addr_of(ap.medium, ap.radio);
            if ap.beacon_interval.is_some() {
                io.sched.schedule_in(Duration::ZERO, Event::WlanMgmt { who: i as u32, timer: MgmtTimer::Tbtt, gen: 0 });
            }
        }
        for s in 0..self.stations.len() {
            let st = &mut self.stations[s];
            for (k, &(m, r)) in st.radios.iter().enumerate() {
                io.media[m as usize].set_enabled(r, k == 0, io.now, io.sched);
            }
            self.begin_scan(s, io);
        }
    }

    /// A management timer.
    pub(crate) fn on_timer(&mut self, who: u32, timer: MgmtTimer, gen: u32, io: &mut Io<'_>) {
        let w = who as usize;
        match timer {
            MgmtTimer::Tbtt => {
                let ap = &self.aps[w];
                let Some(interval) = ap.beacon_interval else { return };
                if ap.up {
                    io.media[ap.medium as usize].send_mgmt(ap.radio, BROADCAST, MgmtKind::Beacon, io.now, io.sched);
                }
                io.sched.schedule_in(interval, Event::WlanMgmt { who, timer, gen });
            }
            MgmtTimer::Phase => {
                if self.stations[w].gen == gen {
                    self.on_phase_timer(w, io);
                }
            }
            MgmtTimer::Crossing => {
                if self.stations[w].cross_gen == gen {
                    self.on_crossing(w, io);
                }
            }
        }
    }

    /// A management frame reached `radio` on `medium`.
    pub(crate) fn on_frame(&mut self, medium: u32, radio: u32, from: u32, kind: MgmtKind, rss: f64, io: &mut Io<'_>) {
        if let Some(a) = self.aps.iter().position(|ap| ap.medium == medium && ap.radio == radio) {
            self.ap_frame(a, from, kind, io);
            return;
        }
        let Some((s, k)) = self
            .stations
            .iter()
            .enumerate()
            .find_map(|(s, st)| st.radios.iter().position(|&(m, r)| m == medium && r == radio).map(|k| (s, k)))
        else {
            return;
        };
        match kind {
            MgmtKind::Beacon | MgmtKind::ProbeResponse => {
                let st = &mut self.stations[s];
                let scan = st.scan_no;
                match st.candidates.iter_mut().find(|c| c.k == k && c.ap == from) {
                    Some(c) => {
                        c.rss = rss;
                        c.scan = scan;
                    }
                    None => st.candidates.push(Candidate { k, ap: from, rss, scan }),
                }
            }
            MgmtKind::Auth { seq: 2 } => {
                let st = &mut self.stations[s];
                if let Phase::Auth { cand, .. } = st.phase {
                    if cand.k == k && cand.ap == from {
                        st.phase = Phase::Assoc { cand, tries: 0 };
                        self.send_request(s, io);
                    }
                }
            }
            MgmtKind::AssocResponse => {
                if let Phase::Assoc { cand, .. } = self.stations[s].phase {
                    if cand.k == k && cand.ap == from {
                        self.associated(s, cand, io);
                    }
                }
            }
            MgmtKind::Deauth { reason } | MgmtKind::Disassoc { reason } => {
                // §11.3.4.4 / §11.3.5.4: the AP ended the association; the station leaves at
                // once it has acknowledged the frame, and looks for another.
                let st = &self.stations[s];
                if st.assoc.is_some_and(|a| a.k == k && a.ap == from) {
                    self.stations[s].stats.deauthentications += 1;
                    self.leave(s, "deauthenticated", format!("reason={reason}"), false, io);
                }
            }
            _ => {}
        }
    }

    /// A management frame of `radio` on `medium` left its MAC (`delivered`: acknowledged, or
    /// group-addressed; else discarded at the retry limit).
    pub(crate) fn on_sent(&mut self, medium: u32, radio: u32, kind: MgmtKind, delivered: bool, io: &mut Io<'_>) {
        if !matches!(kind, MgmtKind::Disassoc { .. }) {
            return;
        }
        let Some(s) = self.stations.iter().position(|st| st.radios.contains(&(medium, radio))) else { return };
        if self.stations[s].phase == Phase::Leaving {
            let st = &self.stations[s];
            io.out.push(Action::Note {
                iface: st.iface,
                what: "left",
                ap: None,
                detail: format!("disassoc_acked={delivered}"),
            });
            self.rejoin(s, io);
        }
    }

    /// The AP on `radio` of `medium` goes out of service (`up` false: its interface went down)
    /// or back into it. Going out it tells each station it has associated with a
    /// Deauthentication (reason 3, leaving the ESS; §11.3.4.3), individually addressed so that
    /// it is acknowledged and retried like any such frame, and stops beaconing and answering
    /// until it is back. Nothing if the radio is not an AP's.
    pub(crate) fn set_ap_up(&mut self, medium: u32, radio: u32, up: bool, io: &mut Io<'_>) {
        let Some(ap) = self.aps.iter_mut().find(|ap| ap.medium == medium && ap.radio == radio) else { return };
        if ap.up == up {
            return;
        }
        ap.up = up;
        if !up {
            let m = &mut io.media[medium as usize];
            for (_, sta) in std::mem::take(&mut ap.leases) {
                m.send_mgmt(radio, sta, MgmtKind::Deauth { reason: REASON_LEAVING }, io.now, io.sched);
            }
        }
    }

    // ------------------------------------------------------------------------------------
    // Access point
    // ------------------------------------------------------------------------------------

    fn ap_frame(&mut self, a: usize, from: u32, kind: MgmtKind, io: &mut Io<'_>) {
        let ap = &mut self.aps[a];
        if !ap.up {
            return;
        }
        let m = &mut io.media[ap.medium as usize];
        let reply = match kind {
            MgmtKind::ProbeRequest => MgmtKind::ProbeResponse,
            MgmtKind::Auth { seq: 1 } => MgmtKind::Auth { seq: 2 },
            MgmtKind::AssocRequest => {
                if !ap.leases.values().any(|&r| r == from) {
                    let host = (1..).find(|h| !ap.leases.contains_key(h)).unwrap_or(1);
                    ap.leases.insert(host, from);
                }
                MgmtKind::AssocResponse
            }
            MgmtKind::Disassoc { .. } => {
                // §11.3.5.4: the station is gone; its lease ends (if it has not already).
                ap.leases.retain(|_, r| *r != from);
                return;
            }
            _ => return,
        };
        m.send_mgmt(ap.radio, from, reply, io.now, io.sched);
    }

    /// The lease of station radio `radio` at AP `a`: the AP's address plus the lease's host
    /// offset, with the AP's prefix length (`None` if the AP has no address or the subnet is
    /// full).
    fn lease_addr(&self, a: usize, radio: u32) -> Option<IfaceAddr> {
        let ap = &self.aps[a];
        let own = ap.addr?;
        let host = ap.leases.iter().find(|(_, &r)| r == radio).map(|(&h, _)| h)?;
        let base = u32::from(own.addr);
        let mask = if own.prefix_len == 0 { 0 } else { u32::MAX << (32 - own.prefix_len.min(32)) };
        let addr = base.checked_add(host)?;
        // Within the subnet and not its broadcast address.
        if addr & mask != base & mask || addr | mask == u32::MAX {
            return None;
        }
        Some(IfaceAddr { addr: Ipv4Addr::from(addr), prefix_len: own.prefix_len })
    }

    fn release(&mut self, a: usize, radio: u32) {
        self.aps[a].leases.retain(|_, r| *r != radio);
    }

    // ------------------------------------------------------------------------------------
    // Station: scanning
    // ------------------------------------------------------------------------------------

    fn tune(&mut self, s: usize, k: usize, io: &mut Io<'_>) {
        let st = &mut self.stations[s];
        if st.tuned == k {
            return;
        }
        let (m, r) = st.radios[st.tuned];
        io.media[m as usize].set_enabled(r, false, io.now, io.sched);
        let (m, r) = st.radios[k];
        io.media[m as usize].set_enabled(r, true, io.now, io.sched);
        st.tuned = k;
    }

    fn begin_scan(&mut self, s: usize, io: &mut Io<'_>) {
        let st = &mut self.stations[s];
        st.scan_no += 1;
        st.stats.scans += 1;
        let background = st.assoc.is_some();
        io.out.push(Action::Note {
            iface: st.iface,
            what: "scan-start",
            ap: None,
            detail: format!("channels={} background={background}", st.radios.len()),
        });
        self.enter_channel(s, 0, io);
    }

    fn enter_channel(&mut self, s: usize, c: usize, io: &mut Io<'_>) {
        self.tune(s, c, io);
        let st = &mut self.stations[s];
        let (m, r) = st.radios[c];
        let heard = heard(&io.media[m as usize], r);
        let (wait, probed) = match st.config.scan {
            ScanMode::Passive { dwell } => (dwell, true),
            ScanMode::Active { .. } => (PROBE_DELAY, false),
        };
        let scanning = Phase::Scanning { c, since: io.now, extended: false, heard, probed };
        if st.assoc.is_some() {
            st.bg = Some(scanning);
        } else {
            st.phase = scanning;
        }
        self.phase_timer(s, wait, io.sched);
    }

    fn phase_timer(&mut self, s: usize, after: Duration, sched: &mut Scheduler<Event>) {
        let st = &mut self.stations[s];
        st.gen = st.gen.wrapping_add(1);
        sched.schedule_in(after, Event::WlanMgmt { who: s as u32, timer: MgmtTimer::Phase, gen: st.gen });
    }

    fn on_phase_timer(&mut self, s: usize, io: &mut Io<'_>) {
        let st = &self.stations[s];
        let scanning = if st.assoc.is_some() { st.bg } else { Some(st.phase) };
        match scanning {
            Some(Phase::Scanning { c, since, extended, heard: mark, probed }) => {
                if let (ScanMode::Active { min_channel_time, .. }, false) = (st.config.scan, probed) {
                    let (m, r) = st.radios[c];
                    io.media[m as usize].send_mgmt(r, BROADCAST, MgmtKind::ProbeRequest, io.now, io.sched);
                    let heard = heard(&io.media[m as usize], r);
                    let next = Phase::Scanning { c, since: io.now, extended: false, heard, probed: true };
                    let st = &mut self.stations[s];
                    if st.assoc.is_some() {
                        st.bg = Some(next);
                    } else {
                        st.phase = next;
                    }
                    self.phase_timer(s, min_channel_time, io.sched);
                    return;
                }
                if let (ScanMode::Active { max_channel_time, .. }, false) = (st.config.scan, extended) {
                    let (m, r) = st.radios[c];
                    if heard(&io.media[m as usize], r) != mark {
                        // §11.1.4.3.2: the medium was busy within MinChannelTime: wait for
                        // responses until MaxChannelTime.
                        let ext = Phase::Scanning { c, since, extended: true, heard: mark, probed };
                        let st = &mut self.stations[s];
                        if st.assoc.is_some() {
                            st.bg = Some(ext);
                        } else {
                            st.phase = ext;
                        }
                        let left = (since + max_channel_time).saturating_since(io.now);
                        self.phase_timer(s, left, io.sched);
                        return;
                    }
                }
                if c + 1 < st.radios.len() {
                    self.enter_channel(s, c + 1, io);
                } else {
                    self.end_scan(s, io);
                }
            }
            Some(Phase::Idle) => self.begin_scan(s, io),
            Some(Phase::Leaving) => self.rejoin(s, io),
            Some(Phase::Auth { cand, tries }) | Some(Phase::Assoc { cand, tries }) => {
                let st = &mut self.stations[s];
                st.stats.timeouts += 1;
                if tries < st.config.max_attempts {
                    self.send_request(s, io);
                } else {
                    st.candidates.retain(|c| !(c.k == cand.k && c.ap == cand.ap));
                    self.join_best(s, io);
                }
            }
            _ => {
                // A background scan's timer with no scan (a rescan while associated).
                let st = &self.stations[s];
                if st.assoc.is_some() && st.bg.is_none() && st.below_scan {
                    self.begin_scan(s, io);
                }
            }
        }
    }

    fn end_scan(&mut self, s: usize, io: &mut Io<'_>) {
        let st = &mut self.stations[s];
        let no = st.scan_no;
        let found = st.candidates.iter().filter(|c| c.scan == no).count();
        io.out.push(Action::Note { iface: st.iface, what: "scan-end", ap: None, detail: format!("aps={found}") });
        match st.assoc {
            Some(a) => {
                st.bg = None;
                self.tune(s, a.k, io);
                let st = &self.stations[s];
                if st.below_scan {
                    let every = st.config.rescan_interval;
                    self.phase_timer(s, every, io.sched);
                }
            }
            None => self.join_best(s, io),
        }
    }

    /// Authenticate with the best AP of the last scan above the handover threshold, or scan
    /// again later.
    fn join_best(&mut self, s: usize, io: &mut Io<'_>) {
        let st = &mut self.stations[s];
        let no = st.scan_no;
        let th = st.config.handover_threshold_dbm;
        let best = st
            .candidates
            .iter()
            .filter(|c| c.scan == no && c.rss >= th)
            .copied()
            .max_by(|a, b| a.rss.total_cmp(&b.rss).then(b.k.cmp(&a.k)).then(b.ap.cmp(&a.ap)));
        match best {
            Some(cand) => {
                st.phase = Phase::Auth { cand, tries: 0 };
                let (m, _) = st.radios[cand.k];
                io.out.push(Action::Note {
                    iface: st.iface,
                    what: "auth",
                    ap: Some((m, io.media[m as usize].iface(cand.ap))),
                    detail: format!("rss={:.1}", cand.rss),
                });
                self.tune(s, cand.k, io);
                self.send_request(s, io);
            }
            None => {
                st.phase = Phase::Idle;
                let every = st.config.rescan_interval;
                self.phase_timer(s, every, io.sched);
            }
        }
    }

    /// Send (again) the request of the current phase and wait for its response.
    fn send_request(&mut self, s: usize, io: &mut Io<'_>) {
        let st = &mut self.stations[s];
        let (kind, cand, wait) = match &mut st.phase {
            Phase::Auth { cand, tries } => {
                *tries += 1;
                (MgmtKind::Auth { seq: 1 }, *cand, st.config.auth_timeout)
            }
            Phase::Assoc { cand, tries } => {
                *tries += 1;
                (MgmtKind::AssocRequest, *cand, st.config.assoc_timeout)
            }
            _ => return,
        };
        let (m, r) = st.radios[cand.k];
        io.media[m as usize].send_mgmt(r, cand.ap, kind, io.now, io.sched);
        self.phase_timer(s, wait, io.sched);
    }

    // ------------------------------------------------------------------------------------
    // Station: association and roaming
    // ------------------------------------------------------------------------------------

    fn associated(&mut self, s: usize, cand: Candidate, io: &mut Io<'_>) {
        let (m, r) = self.stations[s].radios[cand.k];
        let Some(ap_index) = self.aps.iter().position(|a| a.medium == m && a.radio == cand.ap) else { return };
        let addr = match self.stations[s].config.host {
            Some(host) => self.aps[ap_index].addr.and_then(|own| in_subnet(own, host)),
            None => self.lease_addr(ap_index, r),
        };
        let Some(addr) = addr else {
            // No address to give: treat as refused.
            self.release(ap_index, r);
            let st = &mut self.stations[s];
            st.candidates.retain(|c| !(c.k == cand.k && c.ap == cand.ap));
            return self.join_best(s, io);
        };
        let st = &mut self.stations[s];
        st.gen = st.gen.wrapping_add(1); // the response timer is void
        st.phase = Phase::Associated;
        st.bg = None;
        st.assoc = Some(Assoc { k: cand.k, ap: cand.ap, ap_index, addr });
        st.stats.associations += 1;
        let rss = io.media[m as usize].rss_dbm_at(cand.ap, r, io.now);
        io.out.push(Action::Note {
            iface: st.iface,
            what: "associated",
            ap: Some((m, io.media[m as usize].iface(cand.ap))),
            detail: format!("addr={} rss={rss:.1}", addr.addr),
        });
        io.out.push(Action::Associate { iface: st.iface, medium: m, radio: r, ap: cand.ap, addr });
        st.below_scan = false;
        st.below_handover = false;
        self.on_crossing(s, io);
    }

    /// The signal strength of the AP may have crossed a threshold: compare, act, and compute
    /// the next crossing.
    fn on_crossing(&mut self, s: usize, io: &mut Io<'_>) {
        let st = &mut self.stations[s];
        let Some(a) = st.assoc else { return };
        let (m, r) = st.radios[a.k];
        let medium = &io.media[m as usize];
        let scan_th = st.config.scan_threshold_dbm;
        let ho_th = st.config.handover_threshold_dbm;
        let below_scan = medium.rss_below(a.ap, r, io.now, scan_th);
        let below_ho = medium.rss_below(a.ap, r, io.now, ho_th);
        let next = [scan_th, ho_th]
            .into_iter()
            .filter_map(|th| match medium.rss_crossing(a.ap, r, io.now, th) {
                Crossing::At(t) | Crossing::NotBefore(t) => Some(t),
                Crossing::Never => None,
            })
            .min();
        st.cross_gen = st.cross_gen.wrapping_add(1);
        if let Some(t) = next {
            let event = Event::WlanMgmt { who: s as u32, timer: MgmtTimer::Crossing, gen: st.cross_gen };
            io.sched.schedule_in(t.saturating_since(io.now), event);
        }
        let (was_scan, was_ho) = (st.below_scan, st.below_handover);
        st.below_scan = below_scan;
        st.below_handover = below_ho;
        if below_ho && !was_ho {
            return self.handover(s, io);
        }
        if below_scan && !was_scan && st.bg.is_none() {
            self.begin_scan(s, io);
        }
    }

    /// Leave the AP (below the handover threshold) and join the best AP of the last scan.
    fn handover(&mut self, s: usize, io: &mut Io<'_>) {
        let st = &mut self.stations[s];
        let Some(a) = st.assoc else { return };
        st.stats.handovers += 1;
        let (m, r) = st.radios[a.k];
        let rss = io.media[m as usize].rss_dbm_at(a.ap, r, io.now);
        self.leave(s, "handover", format!("rss={rss:.1}"), true, io);
    }

    /// End the station's association (`why`: the step noted): its interface goes down and
    /// loses its lease, the packets its radio holds are discarded. With `tell_ap` (a station
    /// roaming away, §11.3.5.3) it sends its AP a Disassociation (reason 8) and stays on the
    /// channel until that frame has gone out, acknowledged or given up after the short retry
    /// limit (at the handover threshold the AP usually no longer decodes it: seven attempts
    /// with their backoffs, about 10 ms); then, or at once without `tell_ap` (the AP ended
    /// it), it joins the best AP of its last scan, or scans.
    fn leave(&mut self, s: usize, why: &'static str, detail: String, tell_ap: bool, io: &mut Io<'_>) {
        let st = &mut self.stations[s];
        let Some(a) = st.assoc.take() else { return };
        st.bg = None;
        st.cross_gen = st.cross_gen.wrapping_add(1);
        st.gen = st.gen.wrapping_add(1); // a pending rescan is void
        let (m, r) = st.radios[a.k];
        let ap = Some((m, io.media[m as usize].iface(a.ap)));
        io.out.push(Action::Note { iface: st.iface, what: why, ap, detail });
        io.out.push(Action::Note {
            iface: st.iface,
            what: "disassociated",
            ap,
            detail: format!("addr={}", a.addr.addr),
        });
        io.out.push(Action::Disassociate { iface: st.iface, medium: m, radio: r, addr: a.addr });
        io.media[m as usize].set_ap(r, None);
        io.media[m as usize].flush(r, DropReason::IfaceDown, io.now);
        st.candidates.retain(|c| !(c.k == a.k && c.ap == a.ap));
        self.release(a.ap_index, r);
        self.stations[s].phase = Phase::Leaving;
        if tell_ap {
            // Back on the AP's channel if a background scan had tuned it away.
            self.tune(s, a.k, io);
            io.media[m as usize].send_mgmt(
                r,
                a.ap,
                MgmtKind::Disassoc { reason: REASON_LEAVING_BSS },
                io.now,
                io.sched,
            );
            // A guard only: the frame always leaves the MAC well within this.
            self.phase_timer(s, Duration::from_secs(1), io.sched);
        } else {
            // The AP's frame, just received, is acknowledged SIFS after it (§10.3.2.9, at 6
            // Mbit/s, the rate management frames go at): stay on the channel until then.
            let ack = io.media[m as usize].timing().sifs + phy::frame_duration(phy::ACK_BYTES, Rate::R6);
            self.phase_timer(s, ack, io.sched);
        }
    }

    /// After leaving an AP: join the best AP of the last scan, or scan.
    fn rejoin(&mut self, s: usize, io: &mut Io<'_>) {
        let st = &self.stations[s];
        let no = st.scan_no;
        let th = st.config.handover_threshold_dbm;
        if st.candidates.iter().any(|c| c.scan == no && c.rss >= th) {
            self.join_best(s, io);
        } else {
            self.stations[s].phase = Phase::Idle;
            self.begin_scan(s, io);
        }
    }
}

/// The address with `host`'s host part in `own`'s subnet (`None` if that is the subnet's
/// network or broadcast address, or the AP's own).
fn in_subnet(own: IfaceAddr, host: Ipv4Addr) -> Option<IfaceAddr> {
    let len = own.prefix_len.min(32);
    let mask = if len == 0 { 0 } else { u32::MAX << (32 - len) };
    let addr = (u32::from(own.addr) & mask) | (u32::from(host) & !mask);
    let bad = len < 31 && (addr & !mask == 0 || addr & !mask == !mask);
    (!bad && addr != u32::from(own.addr)).then(|| IfaceAddr { addr: Ipv4Addr::from(addr), prefix_len: own.prefix_len })
}

/// Frames a radio has locked onto so far (whole, errored or collided): activity on the channel.
fn heard(m: &Medium, radio: u32) -> u64 {
    let st = m.radio_stats(radio);
    st.rx_ok + st.rx_errors + st.rx_collisions
}
