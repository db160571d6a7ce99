//! The WLAN sections of a scenario: channels (`wlans[]`) and radios
//! (`nodes[].interfaces[].wlan`), read into `netsim::wlan` configurations.

use netsim::wlan::{
    BasicRates, ChannelConfig, EifsAck, PathLoss, Position, Propagation, RadioConfig, Rate, RateControl, Role, SlotTime,
};

use netsim::wlan::sme::{RoamConfig, ScanMode};

use crate::error::ScenarioError;
use crate::model::IfaceRef;
use crate::reader::{show, Reader};

/// A WLAN channel.
#[derive(Clone, Debug, PartialEq)]
pub struct WlanSpec {
    /// Name.
    pub name: String,
    /// Parameters.
    pub config: ChannelConfig,
}

/// A radio: a WLAN interface.
#[derive(Clone, Debug, PartialEq)]
pub struct RadioSpec {
    /// The interface.
    pub iface: IfaceRef,
    /// Index of its channel in [`crate::model::Scenario::wlans`].
    pub channel: usize,
    /// A station's AP interface (`None` for an AP).
    pub ap: Option<IfaceRef>,
    /// Its parameters; the role's AP interface is filled in when the world is built.
    pub config: RadioConfig,
    /// A roaming station's management parameters and scan list (indices into
    /// [`crate::model::Scenario::wlans`]); the host number is its interface's address.
    pub roam: Option<(RoamConfig, Vec<usize>)>,
}

/// Read `wlans[i]`.
pub(crate) fn channel(r: &mut Reader<'_>) -> Result<WlanSpec, ScenarioError> {
    let name = r.str("name")?;
    let channel = r.int("channel")? as u8;
    let slot = if r.str("slot")? == "long" { SlotTime::Long } else { SlotTime::Short };
    let eifs_ack = if r.str("eifs")? == "ofdm" { EifsAck::Ofdm6 } else { EifsAck::Dsss1 };
    let free_space = r.str("path_loss")? == "free-space";
    let exponent = r.number("exponent")?;
    let reference_distance = r.number("reference_distance")?;
    let reference_loss_db = r.opt_number("reference_loss")?;
    let path_loss = if free_space {
        PathLoss::FreeSpace
    } else {
        PathLoss::LogDistance { exponent, reference_distance, reference_loss_db }
    };
    let config = ChannelConfig {
        channel,
        slot,
        eifs_ack,
        basic_rates: BasicRates::default(),
        propagation: Propagation { path_loss, shadowing_sigma_db: r.number("shadowing")? },
        noise_floor_dbm: r.number("noise_floor")?,
        cca_threshold_dbm: r.number("cca_threshold")?,
        capture_threshold_db: r.opt_number("capture_threshold")?,
        sensitivity_dbm: r.opt_number("sensitivity")?,
    };
    Ok(WlanSpec { name, config })
}

/// Read `nodes[n].interfaces[i].wlan` of interface `iface` on a node that is a router or not.
/// Returns the radio (without its AP resolved) and the text of `ap`, if given.
pub(crate) fn radio(
    r: &mut Reader<'_>,
    channels: &[WlanSpec],
    iface: IfaceRef,
    router: bool,
) -> Result<(RadioSpec, Option<String>), ScenarioError> {
    let name = r.str("channel")?;
    let channel = channels.iter().position(|c| c.name == name).ok_or_else(|| {
        let known: Vec<_> = channels.iter().map(|c| format!("\"{}\"", c.name)).collect();
        let known = if known.is_empty() { "none is defined in wlans".to_string() } else { known.join(", ") };
        r.error("channel", format!("no WLAN channel named \"{name}\" ({known})"))
    })?;
    let ap_role = r.str("role")? == "ap";
    let roams = r.str("association")? == "roam";
    let ap_text = r.opt_str("ap")?;
    if ap_role && ap_text.is_some() {
        return Err(r.error("ap", "an access point is associated with no other AP (remove \"ap\")"));
    }
    if ap_role && roams {
        return Err(r.error("association", "\"roam\" is a station's (remove it or the role \"ap\")"));
    }
    if roams && ap_text.is_some() {
        return Err(r.error("ap", "a roaming station finds its AP by scanning (remove \"ap\")"));
    }
    if !ap_role && !roams && ap_text.is_none() {
        return Err(r.error(
            "ap",
            "missing: a static station names its access point's interface, \"node/iface\" (or set association = \"roam\")",
        ));
    }
    let beacon_interval = r.duration("beacon_interval")?;
    if beacon_interval.is_zero() {
        return Err(r.error("beacon_interval", "0 is not a beacon interval (use beacons = false for none)"));
    }
    let beacons = r.bool("beacons")?;
    let roam = if roams { Some(roam_config(r, channels, channel)?) } else { None };
    if ap_role && !router {
        return Err(r.error(
            "role",
            "an access point's node must be a router (it forwards between its BSS and its wired links)",
        ));
    }
    let position = Position::new(r.number("x")?, r.number("y")?);
    let mut config = RadioConfig::new(Role::AccessPoint, position);
    config.tx_power_dbm = r.power_dbm("tx_power")?;
    let mbps = r.int("rate")?;
    let rate = Rate::from_mbps(mbps as u32)
        .ok_or_else(|| r.error("rate", format!("{mbps} is not an ERP-OFDM rate (6, 9, 12, 18, 24, 36, 48 or 54)")))?;
    config.rate = match r.str("rate_control")?.as_str() {
        "arf" => RateControl::Arf(rate),
        "aarf" => RateControl::Aarf(rate),
        _ => RateControl::Fixed(rate),
    };
    config.rts_threshold = r.opt_size("rts_threshold")?.map(|b| b as usize);
    config.short_retry_limit = r.int("short_retry_limit")? as u32;
    config.long_retry_limit = r.int("long_retry_limit")? as u32;
    config.cw_min = r.int("cw_min")? as u32;
    config.cw_max = r.int("cw_max")? as u32;
    if config.cw_max < config.cw_min {
        let shown = r.given("cw_max").map_or_else(|| config.cw_max.to_string(), show);
        return Err(r.error("cw_max", format!("{shown} is below cw_min ({})", config.cw_min)));
    }
    let mut q = r.table("queue")?.expect("queue has a default");
    config.queue = crate::queues::read(&mut q, rate.mbps() as u64 * 1_000_000, netsim::Duration::ZERO)?;
    r.put_table("queue", q.finish());
    if ap_role && beacons {
        config.beacon_interval = Some(netsim::Duration(beacon_interval.0));
    }
    Ok((RadioSpec { iface, channel, ap: None, config, roam }, ap_text))
}

/// A roaming station's keys: scan list, scanning, thresholds, timeouts.
fn roam_config(
    r: &mut Reader<'_>,
    channels: &[WlanSpec],
    own: usize,
) -> Result<(RoamConfig, Vec<usize>), ScenarioError> {
    let list = if r.has("scan_channels") {
        let names = r.str_list("scan_channels")?;
        let mut list = Vec::new();
        for (i, n) in names.iter().enumerate() {
            let Some(c) = channels.iter().position(|c| c.name == *n) else {
                let key = format!("scan_channels[{i}]");
                return Err(r.error(&key, format!("no WLAN channel named \"{n}\"")));
            };
            if list.contains(&c) {
                return Err(r.error(&format!("scan_channels[{i}]"), format!("\"{n}\" is listed twice")));
            }
            list.push(c);
        }
        if !list.contains(&own) {
            let name = &channels[own].name;
            return Err(r.error("scan_channels", format!("does not list the station's channel \"{name}\"")));
        }
        list
    } else {
        (0..channels.len()).collect()
    };
    let dur = |r: &mut Reader<'_>, key: &str| -> Result<netsim::Duration, ScenarioError> {
        let d = r.duration(key)?;
        if d.is_zero() {
            return Err(r.error(key, "must be longer than 0"));
        }
        Ok(netsim::Duration(d.0))
    };
    let scan = if r.str("scan")? == "passive" {
        ScanMode::Passive { dwell: dur(r, "passive_dwell")? }
    } else {
        let min_channel_time = dur(r, "min_channel_time")?;
        let max_channel_time = dur(r, "max_channel_time")?;
        if max_channel_time < min_channel_time {
            return Err(r.error("max_channel_time", "is shorter than min_channel_time"));
        }
        ScanMode::Active { min_channel_time, max_channel_time }
    };
    let scan_threshold_dbm = r.number("scan_threshold")?;
    let handover_threshold_dbm = r.number("handover_threshold")?;
    if handover_threshold_dbm > scan_threshold_dbm {
        return Err(r.error(
            "handover_threshold",
            format!("{handover_threshold_dbm} dBm is above scan_threshold ({scan_threshold_dbm} dBm)"),
        ));
    }
    let config = RoamConfig {
        scan,
        scan_threshold_dbm,
        handover_threshold_dbm,
        rescan_interval: dur(r, "rescan_interval")?,
        auth_timeout: dur(r, "auth_timeout")?,
        assoc_timeout: dur(r, "assoc_timeout")?,
        max_attempts: r.int("max_attempts")? as u32,
        host: None,
    };
    Ok((config, list))
}
