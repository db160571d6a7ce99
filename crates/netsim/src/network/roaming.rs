//! The network's side of WLAN management ([`crate::wlan::sme`]): roaming stations' radios,
//! management frames and timers handed to the management entities, and what they decide
//! applied to interfaces (attachment, up/down, addresses, routes) and reported as
//! [`WlanNotice`]s for the world to pass on.

use crate::event::{Event, IfaceEvent, Location, MgmtTimer, NetObserver};
use crate::ids::IfaceId;
use crate::kernel::Scheduler;
use crate::rng::SimRng;
use crate::time::Instant;
use crate::wlan::medium::Output as WlanOutput;
use crate::wlan::sme::{Action, Io, RoamConfig, Sme};
use crate::wlan::{RadioConfig, Role};

use super::{Attachment, L2Timing, Network, WlanError};

/// What WLAN management did that the world passes on: interface events for the node's agents,
/// and steps for the run's events (kind `wlan`).
#[derive(Clone, Debug, PartialEq)]
pub enum WlanNotice {
    /// An interface event, told to every agent on the interface's node.
    Iface(IfaceId, IfaceEvent),
    /// A management step of a station's interface (`scan-start`, `scan-end`, `auth`,
    /// `associated`, `handover`, `deauthenticated`, `disassociated`, `left`) with `key=value`
    /// details.
    Step {
        /// The station's interface.
        iface: IfaceId,
        /// The step.
        what: &'static str,
        /// The AP concerned, if any: the channel (index in [`Network::wlans`]) and the AP's
        /// interface.
        ap: Option<(u32, IfaceId)>,
        /// Details.
        detail: String,
    },
}

impl Network {
    /// Make `iface` a roaming station ([`Role::Roaming`]) with a radio on each of `media` (its
    /// scan list, in scan order), each drawing from its pair of streams in `rngs` (MAC,
    /// queue). The interface starts down, without address, attached to the first radio.
    pub fn attach_roaming(
        &mut self,
        iface: IfaceId,
        media: &[u32],
        config: &RadioConfig,
        roam: RoamConfig,
        rngs: Vec<(SimRng, SimRng)>,
    ) -> Result<(), WlanError> {
        let mut radios = Vec::with_capacity(media.len());
        let mut config = config.clone();
        config.role = Role::Roaming;
        for (&m, (rng, queue_rng)) in media.iter().zip(rngs) {
            let medium = self.wlans.get_mut(m as usize).ok_or(WlanError::NoSuchChannel(m))?;
            radios.push((m, medium.add_radio(iface, &config, None, rng, queue_rng)));
        }
        let Some(&(medium, radio)) = radios.first() else { return Err(WlanError::NoSuchChannel(u32::MAX)) };
        let i = &mut self.ifaces[iface.index()];
        i.attachment = Some(Attachment::Wlan { medium, radio });
        i.up = false;
        self.sme.add_station(iface, radios, roam);
        Ok(())
    }

    /// The management entities (for results).
    pub fn sme(&self) -> &crate::wlan::sme::Sme {
        &self.sme
    }

    /// Start WLAN management: APs' beacons, roaming stations' first scans (once, at time zero).
    pub fn start_wlan_mgmt(&mut self, sched: &mut Scheduler<Event>) {
        if self.sme.is_empty() {
            return;
        }
        let ifaces = &self.ifaces;
        let wlans = &self.wlans;
        let addr_of = |m: u32, r: u32| ifaces[wlans[m as usize].iface(r).index()].addrs.first().copied();
        // The closure borrows the media immutably; start needs them mutably afterwards.
        let addrs: Vec<Vec<_>> =
            (0..wlans.len()).map(|m| (0..wlans[m].radios() as u32).map(|r| addr_of(m as u32, r)).collect()).collect();
        self.with_sme(Instant::ZERO, sched, |sme, io| sme.start(|m, r| addrs[m as usize][r as usize], io));
    }

    /// A WLAN management timer.
    pub fn on_wlan_mgmt<O: NetObserver + ?Sized>(
        &mut self,
        who: u32,
        timer: MgmtTimer,
        gen: u32,
        now: Instant,
        sched: &mut Scheduler<Event>,
        obs: &mut O,
    ) {
        self.with_sme(now, sched, |sme, io| sme.on_timer(who, timer, gen, io));
        self.settle_media_drops(now, obs);
    }

    /// Management frames a channel produced, to their entities.
    pub(super) fn on_mgmt_frames<O: NetObserver + ?Sized>(
        &mut self,
        medium: u32,
        frames: &mut Vec<WlanOutput>,
        now: Instant,
        sched: &mut Scheduler<Event>,
        obs: &mut O,
    ) {
        self.with_sme(now, sched, |sme, io| {
            for f in frames.drain(..) {
                match f {
                    WlanOutput::Mgmt { radio, from, kind, rss_dbm } => {
                        sme.on_frame(medium, radio, from, kind, rss_dbm, io)
                    }
                    WlanOutput::MgmtDone { radio, kind, delivered } => sme.on_sent(medium, radio, kind, delivered, io),
                    _ => {}
                }
            }
        });
        self.settle_media_drops(now, obs);
    }

    /// An AP's WLAN interface went down (`up` false) or came back: its management entity
    /// deauthenticates its stations, or beacons and admits again.
    pub(super) fn set_ap_up(&mut self, medium: u32, radio: u32, up: bool, now: Instant, sched: &mut Scheduler<Event>) {
        self.with_sme(now, sched, |sme, io| sme.set_ap_up(medium, radio, up, io));
    }

    /// Run a step of the management entities and apply the actions it decides.
    fn with_sme(&mut self, now: Instant, sched: &mut Scheduler<Event>, step: impl FnOnce(&mut Sme, &mut Io<'_>)) {
        let mut actions = std::mem::take(&mut self.wlan_actions);
        step(&mut self.sme, &mut Io { media: &mut self.wlans, now, sched, out: &mut actions });
        self.apply_wlan_actions(&mut actions, now);
        self.wlan_actions = actions;
    }

    /// Drops the channels produced outside their own events (packets a station held when it
    /// left its AP).
    pub(super) fn settle_media_drops<O: NetObserver + ?Sized>(&mut self, now: Instant, obs: &mut O) {
        let mut out = Vec::new();
        for m in 0..self.wlans.len() {
            self.wlans[m].take_outputs(&mut out);
            for o in out.drain(..) {
                if let WlanOutput::Drop(radio, pkt, reason) = o {
                    let iface = self.wlans[m].iface(radio);
                    self.drop(pkt, reason, Location::Iface(iface), now, obs);
                }
            }
        }
    }

    fn apply_wlan_actions(&mut self, actions: &mut Vec<Action>, now: Instant) {
        for a in actions.drain(..) {
            match a {
                Action::Associate { iface, medium, radio, ap, addr } => {
                    let l2 = self.l2_mut(iface);
                    let from = l2.scan_started.max(l2.left_at).unwrap_or(now);
                    l2.joined = Some((from, now));
                    self.wlans[medium as usize].set_ap(radio, Some(ap));
                    let i = &mut self.ifaces[iface.index()];
                    i.attachment = Some(Attachment::Wlan { medium, radio });
                    i.up = true;
                    self.notices.push(WlanNotice::Iface(iface, IfaceEvent::Up));
                    if self.add_address(iface, addr) {
                        self.notices.push(WlanNotice::Iface(iface, IfaceEvent::AddressAdded(addr.addr)));
                    } else {
                        self.recompute_routes();
                    }
                }
                Action::Disassociate { iface, addr, .. } => {
                    self.l2_mut(iface).left_at = Some(now);
                    // The radio no longer points to its AP (set by the entity); the packets it
                    // held were discarded there.
                    self.ifaces[iface.index()].up = false;
                    self.notices.push(WlanNotice::Iface(iface, IfaceEvent::Down));
                    if self.remove_address(iface, addr.addr) {
                        self.notices.push(WlanNotice::Iface(iface, IfaceEvent::AddressRemoved(addr.addr)));
                    } else {
                        self.recompute_routes();
                    }
                }
                Action::Note { iface, what, ap, detail } => {
                    if what == "scan-start" {
                        self.l2_mut(iface).scan_started = Some(now);
                    }
                    self.notices.push(WlanNotice::Step { iface, what, ap, detail })
                }
            }
        }
    }

    /// Layer-2 timing of a roaming interface: its last scan, the loss of its last AP and its
    /// last association ([`L2Timing`]); `None` for an interface that never roamed.
    pub fn l2_timing(&self, iface: IfaceId) -> Option<&L2Timing> {
        self.l2.get(iface.index()).filter(|t| **t != L2Timing::default())
    }

    fn l2_mut(&mut self, iface: IfaceId) -> &mut L2Timing {
        let i = iface.index();
        if self.l2.len() <= i {
            self.l2.resize(i + 1, L2Timing::default());
        }
        &mut self.l2[i]
    }

    /// Take what WLAN management did since the last call.
    pub fn take_wlan_notices(&mut self, into: &mut Vec<WlanNotice>) {
        into.append(&mut self.notices);
    }

    /// True if WLAN management has something to report.
    #[inline]
    pub fn has_wlan_notices(&self) -> bool {
        !self.notices.is_empty()
    }
}
