//! Association parameters: RFC 9260 §16 protocol parameters with their RFC defaults, the
//! RFC 7829 potentially-failed settings, and local choices (buffers, SACK policy, congestion
//! control). Named presets reproduce other stacks' documented defaults.

use simtime::Duration;

use crate::association::BufferSplitting;
use crate::cmt::{CmtConfig, PfVariant, RetransmitConfig, SchedulerConfig};
use crate::congestion::CongestionConfig;

/// Everything that configures one association. `Config::default()` is the `rfc9260` preset.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// RTO.Initial (§16): RTO before the first RTT measurement. Default 1 s.
    pub rto_initial: Duration,
    /// RTO.Min (§16): lower bound of the computed RTO. Default 1 s.
    pub rto_min: Duration,
    /// RTO.Max (§16): upper bound, also of the backed-off RTO. Default 60 s.
    pub rto_max: Duration,
    /// RTO.Alpha (§16): SRTT gain. Default 1/8.
    pub rto_alpha: f64,
    /// RTO.Beta (§16): RTTVAR gain. Default 1/4.
    pub rto_beta: f64,
    /// Clock granularity G (§6.3.1 C3): RTTVAR is never taken below it. Default 1 ms.
    pub clock_granularity: Duration,
    /// Max.Burst (§16): new-data packets sent in one transmission opportunity. Default 4.
    pub max_burst: u32,
    /// Valid.Cookie.Life (§16). Default 60 s.
    pub valid_cookie_life: Duration,
    /// Association.Max.Retrans (§16): consecutive errors before the association fails.
    /// Default 10.
    pub assoc_max_retrans: u32,
    /// Path.Max.Retrans (§16): consecutive errors on a destination before it is marked
    /// inactive (when its error counter *exceeds* this value, §8.2). Default 5.
    pub path_max_retrans: u32,
    /// Max.Init.Retransmits (§16): INIT and COOKIE ECHO retransmissions. Default 8.
    pub max_init_retransmits: u32,
    /// HB.interval (§16). `None` disables heartbeats on idle confirmed paths. Default 30 s.
    pub hb_interval: Option<Duration>,
    /// HB.Max.Burst (§16): heartbeats to unconfirmed addresses sent at once. Default 1.
    pub hb_max_burst: u32,
    /// SACK.Delay (§16, §6.2): longest wait before acknowledging DATA. Default 200 ms.
    pub sack_delay: Duration,
    /// SACK frequency: acknowledge every Nth packet carrying DATA at once (§6.2 says every
    /// second packet). 1 acknowledges every packet. Default 2.
    pub sack_freq: u32,
    /// Acknowledge out-of-order DATA, and DATA that fills a gap, at once (RFC 9260 §6.7).
    /// `false` is a deliberate deviation used by paper 002 (SCTP in data centres, "SACK
    /// every 7 packets"): the `sack_freq` count, bounded by `sack_delay`, then holds under
    /// loss and reordering too, so a loss does not turn every following packet into a
    /// SACK. Duplicates are still acknowledged at once (§6.2), since they hint at a lost
    /// SACK. Default true.
    pub sack_immediate_on_gap: bool,
    /// Nagle-like bundling delay (RFC 9260 §6.1; the SCTP_NODELAY socket option of RFC 6458
    /// §8.1.5 turns it off): while DATA is outstanding, new data leaves only in whole packets
    /// and a smaller remainder waits for an acknowledgement. The engine's default is off
    /// ("NO-DELAY": data is sent as soon as the windows allow), as paper 002 runs it.
    pub nagle: bool,
    /// Go-back-N instead of selective acknowledgement, the mode paper 002 (SCTP in data
    /// centres, Section VI.B, Figs. 9-10) emulates in SCTP; a deliberate deviation from
    /// RFC 9260 §6.2 and §7.2.4, off by default. As a receiver, DATA above the next
    /// expected TSN is discarded, not kept, so SACKs carry the cumulative TSN ack and no gap
    /// ack blocks (discarded DATA is acknowledged like out-of-order DATA: at once, or counted
    /// with `sack_immediate_on_gap = false`). As a sender, the third SACK in a row that
    /// does not advance the cumulative TSN ack while DATA is in flight (TCP's duplicate-ACK
    /// threshold, the analogue of §7.2.4's three miss indications, which gap blocks no
    /// longer give) marks every chunk in flight for retransmission, on every destination,
    /// with one fast-recovery cwnd reduction; a T3-rtx expiry already marks everything
    /// outstanding on its destination (§6.3.3 E3). Default off.
    pub go_back_n: bool,
    /// PotentiallyFailed.Max.Retrans (RFC 7829 §4): a destination whose error counter
    /// exceeds this value enters the PF state. `None` (default) disables PF.
    pub pf_max_retrans: Option<u32>,
    /// Primary.Switchover.Max.Retrans (RFC 7829 §5): when the primary's error counter
    /// exceeds it, the alternate in use becomes the primary for good. `None` (default) never.
    pub primary_switchover_max_retrans: Option<u32>,
    /// Return to the configured primary when it becomes active again (§6.4). `false` makes
    /// the alternate chosen at failover the new primary, as stacks' "no switch-back" options
    /// do. Default true.
    pub switchback: bool,
    /// Receive buffer in bytes: the a_rwnd advertised when empty (§6.2.1). Default 256 KiB.
    pub recv_buffer: u32,
    /// Send buffer in bytes: user data accepted but not yet acknowledged. Default 256 KiB.
    pub send_buffer: u32,
    /// Outbound streams requested in INIT (OS). Default 10.
    pub outbound_streams: u16,
    /// Inbound streams accepted (MIS). Default 10.
    pub max_inbound_streams: u16,
    /// Path MTU in bytes at the IP layer, used for fragmentation and in the congestion
    /// control's MTU terms. Default 1500.
    pub pmtu: u32,
    /// Bytes below the SCTP common header per packet (20 for IPv4, 28 for IPv4 + UDP
    /// encapsulation per RFC 6951). Default 20.
    pub lower_layer_overhead: u32,
    /// Congestion control for every destination.
    pub congestion: CongestionConfig,
    /// cwnd in bytes given to a destination that returns from potentially failed to active
    /// (passed to [`crate::Controller::on_pf_exit`]; CMT-PF uses 1 to 4 MTU). `None`
    /// (default) leaves cwnd as it is, as RFC 7829 does, or with [`PfVariant::Cmt`] gives
    /// 2 MTU (CMT-PF2).
    pub pf_return_cwnd: Option<u32>,
    /// How a destination leaves the potentially-failed state: RFC 7829 (default) or CMT-PF
    /// (Natarajan et al. 2008), which returns it only on a HEARTBEAT ACK or the ack of a
    /// chunk sent once and restarts it at 2 MTU unless `pf_return_cwnd` says otherwise.
    /// See [`crate::cmt::PfVariant`].
    pub pf_variant: PfVariant,
    /// Which destinations new data goes to (see [`crate::cmt`]). Default `primary`: the
    /// primary, or an alternate after failover (§6.4).
    pub scheduler: SchedulerConfig,
    /// Concurrent Multipath Transfer: on/off and its SFR, CUC and DAC algorithms (see
    /// [`CmtConfig`]; Iyengar, Amer, Stewart, IEEE/ACM ToN 14(5), 2006). Default off.
    /// [`Config::with_cmt`] turns it on together with the `round-robin` scheduler.
    pub cmt: CmtConfig,
    /// Where retransmissions go (see [`crate::cmt`]). Default `alternate`: timed-out chunks
    /// to an alternate destination, fast retransmissions where they were sent (§6.4).
    pub retransmit: RetransmitConfig,
    /// Buffer splitting among the destinations new data goes to at once (CMT): each may
    /// hold only its share of the send buffer (`sender`) and of the peer's receive window
    /// (`receiver`); see [`crate::BufferSplitting`]. Default off.
    pub buffer_splitting: BufferSplitting,
    /// Fixed initial TSN instead of a random one (tests use it to cross the 2^32 wrap).
    pub initial_tsn: Option<u32>,
    /// Explicit Congestion Notification (RFC 9260 Appendix A): offer the ECN Capable
    /// parameter; when both ends do, DATA goes out ECT(0), CE marks are echoed in ECNE chunks
    /// and the marked destination's cwnd is reduced once per window, answered by CWR.
    /// Default off.
    pub ecn: bool,
    /// Authenticated chunks (RFC 4895): send RANDOM, CHUNKS and HMAC-ALGO in INIT / INIT ACK;
    /// when the peer does too, chunks it lists go out behind a signed AUTH chunk and chunks
    /// listed in [`Config::auth_chunks`] (plus ASCONF and ASCONF-ACK with
    /// [`Config::asconf`]) are discarded unless a valid AUTH precedes them (§6.3).
    /// Default off.
    pub auth: bool,
    /// Chunk types to require authenticated (the CHUNKS parameter, RFC 4895 §3.2), besides
    /// ASCONF and ASCONF-ACK which [`Config::asconf`] adds. INIT, INIT ACK, SHUTDOWN
    /// COMPLETE and AUTH may not be listed. Default empty.
    pub auth_chunks: Vec<u8>,
    /// List HMAC-SHA-256 before HMAC-SHA-1 in HMAC-ALGO (RFC 4895 §3.3: SHA-1 is always
    /// listed; the peer uses the first it supports). Default false (SHA-1 only first).
    pub auth_prefer_sha256: bool,
    /// Dynamic address reconfiguration (RFC 5061): announce ASCONF / ASCONF-ACK in the
    /// Supported Extensions parameter, accept the peer's ASCONFs and allow the application's
    /// add / delete / set-primary requests. Needs [`Config::auth`] (RFC 5061 §4.1: ASCONF
    /// and ASCONF-ACK are always authenticated). Default off.
    pub asconf: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            rto_initial: Duration::from_secs(1),
            rto_min: Duration::from_secs(1),
            rto_max: Duration::from_secs(60),
            rto_alpha: 0.125,
            rto_beta: 0.25,
            clock_granularity: Duration::from_millis(1),
            max_burst: 4,
            valid_cookie_life: Duration::from_secs(60),
            assoc_max_retrans: 10,
            path_max_retrans: 5,
            max_init_retransmits: 8,
            hb_interval: Some(Duration::from_secs(30)),
            hb_max_burst: 1,
            sack_delay: Duration::from_millis(200),
            sack_freq: 2,
            sack_immediate_on_gap: true,
            nagle: false,
            go_back_n: false,
            pf_max_retrans: None,
            primary_switchover_max_retrans: None,
            switchback: true,
            recv_buffer: 256 * 1024,
            send_buffer: 256 * 1024,
            outbound_streams: 10,
            max_inbound_streams: 10,
            pmtu: 1500,
            lower_layer_overhead: crate::wire::IPV4_HEADER_LEN as u32,
            congestion: CongestionConfig::default(),
            pf_return_cwnd: None,
            pf_variant: PfVariant::Rfc7829,
            scheduler: SchedulerConfig::default(),
            cmt: CmtConfig::default(),
            retransmit: RetransmitConfig::default(),
            buffer_splitting: BufferSplitting::default(),
            initial_tsn: None,
            ecn: false,
            auth: false,
            auth_chunks: Vec::new(),
            auth_prefer_sha256: false,
            asconf: false,
        }
    }
}

/// Named parameter sets. See the scenario reference for where each value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preset {
    /// RFC 9260 §16 defaults, PF off.
    Rfc9260,
    /// RFC 4960 §15 defaults (RTO.Initial 3 s) with RFC 4960's congestion-control rules.
    Rfc4960,
    /// Linux defaults: RTO.Initial 3 s (include/net/sctp/constants.h), PF enabled with
    /// pf_retrans 0 and ps_retrans 0xffff, i.e. no switchover (net/sctp/protocol.c), and an
    /// initial receive window of sk_rcvbuf / 2 (net/sctp/associola.c) with sk_rcvbuf =
    /// net.core.rmem_default = 212992 bytes.
    Linux,
    /// FreeBSD defaults (netinet/sctp_constants.h, sctp_sysctl.h): RTO.Initial 3 s, PF off
    /// (path_pf_threshold 0xffff), 256 KiB receive space.
    FreeBsd,
    /// [`Preset::FreeBsd`] with CMT switched on as FreeBSD's sysctls leave it when only
    /// `net.inet.sctp.cmt_on_off` is set to 1 (`SCTP_CMT_BASE`, netinet/sctp.h;
    /// `SCTPCTL_CMT_ON_OFF_DEFAULT` is `SCTP_CMT_OFF`, netinet/sctp_sysctl.h): SFR and CUC
    /// (always on with CMT, netinet/sctp_indata.c), DAC off (`SCTPCTL_CMT_USE_DAC_DEFAULT`
    /// 0), PF off (`SCTPCTL_PATH_PF_THRESHOLD_DEFAULT` = `SCTPCTL_PATH_PF_THRESHOLD_MAX`
    /// 0xffff, above Path.Max.Retrans), new data round-robin over the destinations, and
    /// retransmissions to the largest cwnd (`cwnd`): `sctp_find_alternate_net(stcb, net, 1)`
    /// (netinet/sctp_timer.c), called for timeouts (`sctp_t3rxt_timer`) and fast
    /// retransmits (netinet/sctp_indata.c) alike, picks the reachable, confirmed destination
    /// with the largest cwnd, ties at random, although the comments at both call sites say
    /// "RTX_SSTHRESH" (paper 004 §2.2 repeats them). A destination leaving PF (when PF is
    /// switched on) gets 1 MTU (`sctp_cwnd_update_exit_pf_common`, netinet/sctp_cc_functions.c).
    FreeBsdCmt,
}

impl Preset {
    /// Every preset with its name, in documentation order.
    pub const ALL: [(&'static str, Preset); 5] = [
        ("rfc9260", Preset::Rfc9260),
        ("rfc4960", Preset::Rfc4960),
        ("linux", Preset::Linux),
        ("freebsd", Preset::FreeBsd),
        ("freebsd-cmt", Preset::FreeBsdCmt),
    ];

    /// Looks a preset up by name.
    pub fn from_name(name: &str) -> Option<Preset> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|(_, p)| *p)
    }

    /// The parameters of this preset.
    pub fn config(self) -> Config {
        let base = Config::default();
        match self {
            Preset::Rfc9260 => base,
            Preset::Rfc4960 => {
                Config { rto_initial: Duration::from_secs(3), congestion: CongestionConfig::rfc4960(), ..base }
            }
            Preset::Linux => Config {
                rto_initial: Duration::from_secs(3),
                pf_max_retrans: Some(0),
                recv_buffer: 212_992 / 2,
                send_buffer: 212_992,
                ..base
            },
            Preset::FreeBsd => {
                Config { rto_initial: Duration::from_secs(3), recv_buffer: 262_144, send_buffer: 262_144, ..base }
            }
            Preset::FreeBsdCmt => {
                let freebsd = Preset::FreeBsd.config().with_cmt();
                Config {
                    cmt: CmtConfig { dac: false, ..freebsd.cmt },
                    retransmit: RetransmitConfig::Cwnd,
                    pf_return_cwnd: Some(freebsd.pmtu),
                    ..freebsd
                }
            }
        }
    }
}

/// The smallest path MTU the engine accepts, in bytes: 576, the datagram size every IPv4
/// host must be able to receive (RFC 791; EMTU_R, RFC 1122 §3.3.3), so every IPv4 path
/// carries it. RFC 8899 §5.1.2 starts PMTU search from 1200 (BASE_PLPMTU); 576 is the lower
/// bound below which a path is not a working IPv4 path at all.
///
/// The engine needs room for its largest control chunks in one packet: an INIT ACK with a
/// State Cookie (20-byte chunk + 8 bytes per address + a 4-byte parameter header + a cookie of
/// 86 bytes + 5 per IPv4
/// peer address) and a SACK, which reserves 256 bytes beside its 16-byte header and 12-byte
/// common header before gap blocks. At 576 bytes (556 after the IPv4 header) an INIT ACK for
/// a dozen addresses on each side fits, and a SACK still carries 68 gap blocks; below 304 the
/// SACK's room went negative.
pub const MIN_PMTU: u32 = 576;

/// The longest SACK.Delay RFC 9260 §6.2 allows to be configured.
pub const MAX_SACK_DELAY: Duration = Duration::from_millis(500);

impl Config {
    /// This configuration with Concurrent Multipath Transfer on: `cmt.enabled` (SFR, CUC
    /// and DAC as `cmt` has them, all on by default) and new data spread over every usable
    /// destination by the `round-robin` scheduler (the CMT paper's sender).
    pub fn with_cmt(self) -> Self {
        Config { cmt: CmtConfig { enabled: true, ..self.cmt }, scheduler: SchedulerConfig::RoundRobin, ..self }
    }

    /// Largest user-data payload of one DATA chunk on a path of `pmtu` bytes: the MTU less
    /// the lower layers, the common header (12) and the DATA chunk header (16).
    pub fn max_fragment(&self) -> usize {
        (self.pmtu.saturating_sub(self.lower_layer_overhead + 12 + 16) as usize & !3).max(4)
    }

    /// CMT-PF (Natarajan et al. 2008) with the destination returning from PF at `mtus`
    /// MTUs (CMT-PF1 .. CMT-PF4 for 1..4): PF after the first timeout
    /// (`pf_max_retrans` 0) unless a threshold is already set.
    pub fn with_cmt_pf(self, mtus: u32) -> Config {
        Config {
            pf_variant: PfVariant::Cmt,
            pf_max_retrans: Some(self.pf_max_retrans.unwrap_or(0)),
            pf_return_cwnd: Some(mtus.saturating_mul(self.pmtu)),
            ..self
        }
    }

    /// The cwnd a destination returning from potentially failed gets, if any: the configured
    /// [`Config::pf_return_cwnd`], or 2 MTU under CMT-PF.
    pub fn pf_exit_cwnd(&self) -> Option<u32> {
        match self.pf_variant {
            PfVariant::Rfc7829 => self.pf_return_cwnd,
            PfVariant::Cmt => {
                Some(self.pf_return_cwnd.unwrap_or(PfVariant::CMT_DEFAULT_MTUS.saturating_mul(self.pmtu)))
            }
        }
    }

    /// What this side sends in its INIT / INIT ACK for AUTH (RFC 4895 §3), with `random`, if
    /// [`Config::auth`] is on.
    pub fn auth_params(&self, random: Vec<u8>) -> crate::auth::AuthParams {
        let mut chunks = self.auth_chunks.clone();
        if self.asconf {
            // RFC 5061 §4.1: ASCONF and ASCONF-ACK must be received authenticated.
            chunks.extend([0xC1, 0x80]);
        }
        chunks.sort_unstable();
        chunks.dedup();
        let hmacs = if self.auth_prefer_sha256 {
            vec![crate::auth::HMAC_SHA256, crate::auth::HMAC_SHA1]
        } else {
            vec![crate::auth::HMAC_SHA1, crate::auth::HMAC_SHA256]
        };
        crate::auth::AuthParams { random, chunks, hmacs }
    }

    /// Largest SCTP packet (common header and chunks) that fits the path MTU.
    pub fn max_packet(&self) -> usize {
        self.pmtu.saturating_sub(self.lower_layer_overhead) as usize
    }

    /// Checks values that would make the engine misbehave; the message names the field.
    pub fn validate(&self) -> Result<(), String> {
        let fail = |field: &str, why: &str| Err(format!("{field}: {why}"));
        if self.pmtu < MIN_PMTU {
            return fail("pmtu", &format!("{} is below the minimum of {MIN_PMTU} bytes", self.pmtu));
        }
        // §6.3.1 and §16: RTO.Initial, RTO.Min and RTO.Max are times, RTO.Min <= RTO.Max.
        for (field, rto) in [("rto_initial", self.rto_initial), ("rto_min", self.rto_min), ("rto_max", self.rto_max)] {
            if rto.is_zero() {
                return fail(field, "0 is not a positive time");
            }
        }
        if self.rto_min > self.rto_max {
            return fail("rto_min", &format!("{} exceeds rto_max ({})", self.rto_min, self.rto_max));
        }
        for (field, gain) in [("rto_alpha", self.rto_alpha), ("rto_beta", self.rto_beta)] {
            if !(0.0..=1.0).contains(&gain) {
                return fail(field, &format!("{gain} is not within [0, 1]"));
            }
        }
        // §6.2: "An implementation MUST NOT allow the maximum delay (protocol parameter
        // 'SACK.Delay') to be configured to be more than 500 ms."
        if self.sack_delay > MAX_SACK_DELAY {
            return fail("sack_delay", &format!("{} is longer than the {MAX_SACK_DELAY} §6.2 allows", self.sack_delay));
        }
        if self.max_burst == 0 {
            return fail("max_burst", "must be at least 1");
        }
        if self.sack_freq == 0 {
            return fail("sack_freq", "must be at least 1");
        }
        if self.outbound_streams == 0 || self.max_inbound_streams == 0 {
            return fail("streams", "must be at least 1");
        }
        if self.pmtu < self.lower_layer_overhead + 12 + 16 + 64 {
            return fail("pmtu", "too small to carry DATA");
        }
        // §6: an endpoint MUST NOT indicate less than 1500 bytes in its initial a_rwnd.
        if self.recv_buffer < 1500 {
            return fail("recv_buffer", &format!("{} is below 1500 bytes (RFC 9260 §6)", self.recv_buffer));
        }
        if self.pf_return_cwnd == Some(0) {
            return fail("pf_return_cwnd", "must be at least 1 byte");
        }
        if self.pf_variant == PfVariant::Cmt && self.pf_max_retrans.is_none() {
            return fail("pf_variant", "cmt needs pf_max_retrans (CMT-PF uses 0)");
        }
        if self.asconf && !self.auth {
            return fail("asconf", "needs auth (RFC 5061 §4.1: ASCONF chunks are authenticated)");
        }
        if let Some(&c) = self.auth_chunks.iter().find(|&&c| !crate::auth::may_be_authenticated(c)) {
            return fail("auth_chunks", &format!("chunk type {c} may not be authenticated (RFC 4895 §3.2)"));
        }
        if let Some(f) = self.congestion.shrink_factor() {
            if !(0.0..1.0).contains(&f) {
                return fail("congestion", &format!("the ca-shrink factor {f} is not within [0, 1)"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_check_names_its_own_field_with_the_value() {
        let check = |c: Config| c.validate().unwrap_err();
        let ms = Duration::from_millis;
        // rto_min used to be reported as rto_initial, and the factor as a "congestion.factor".
        assert_eq!(check(Config { rto_min: ms(0), ..Config::default() }), "rto_min: 0 is not a positive time");
        assert_eq!(check(Config { rto_initial: ms(0), ..Config::default() }), "rto_initial: 0 is not a positive time");
        assert_eq!(check(Config { rto_max: ms(500), ..Config::default() }), "rto_min: 1s exceeds rto_max (500ms)");
        assert_eq!(check(Config { rto_beta: 2.0, ..Config::default() }), "rto_beta: 2 is not within [0, 1]");
        assert_eq!(
            check(Config { sack_delay: ms(501), ..Config::default() }),
            "sack_delay: 501ms is longer than the 500ms §6.2 allows"
        );
        assert_eq!(
            check(Config { recv_buffer: 1000, ..Config::default() }),
            "recv_buffer: 1000 is below 1500 bytes (RFC 9260 §6)"
        );
        let shrink =
            Config { congestion: CongestionConfig::from_name("ca-shrink", Some(1.0)).unwrap(), ..Config::default() };
        assert_eq!(check(shrink), "congestion: the ca-shrink factor 1 is not within [0, 1)");
        Config { sack_delay: MAX_SACK_DELAY, ..Config::default() }.validate().unwrap();
    }

    #[test]
    fn every_preset_is_valid_and_found_by_name() {
        for (name, preset) in Preset::ALL {
            assert_eq!(Preset::from_name(name), Some(preset));
            preset.config().validate().unwrap();
        }
    }

    #[test]
    fn freebsd_cmt_is_freebsd_with_its_cmt_sysctl_defaults() {
        let c = Preset::FreeBsdCmt.config();
        assert_eq!(c.cmt, CmtConfig { enabled: true, sfr: true, cuc: true, dac: false });
        assert_eq!(c.scheduler, SchedulerConfig::RoundRobin);
        assert_eq!(c.retransmit, RetransmitConfig::Cwnd);
        assert_eq!(c.pf_max_retrans, None);
        assert_eq!(c.pf_exit_cwnd(), Some(1500));
        // Everything else as the freebsd preset.
        let freebsd = Preset::FreeBsd.config();
        let back = Config {
            cmt: freebsd.cmt,
            scheduler: freebsd.scheduler.clone(),
            retransmit: freebsd.retransmit.clone(),
            pf_return_cwnd: freebsd.pf_return_cwnd,
            ..c
        };
        assert_eq!(back, freebsd);
    }

    #[test]
    fn cmt_pf_needs_a_threshold_and_returns_at_two_mtu_by_default() {
        let c = Config { pf_variant: PfVariant::Cmt, ..Config::default() };
        assert!(c.validate().unwrap_err().starts_with("pf_variant"));
        let c = Config { pf_max_retrans: Some(0), ..c };
        c.validate().unwrap();
        assert_eq!(c.pf_exit_cwnd(), Some(3000));
        assert_eq!(Config::default().pf_exit_cwnd(), None);
        let c = Config::default().with_cmt_pf(3);
        assert_eq!((c.pf_variant, c.pf_max_retrans, c.pf_exit_cwnd()), (PfVariant::Cmt, Some(0), Some(4500)));
        assert_eq!(PfVariant::from_name("cmt"), Some(PfVariant::Cmt));
        assert_eq!(PfVariant::Rfc7829.name(), "rfc7829");
    }
}
