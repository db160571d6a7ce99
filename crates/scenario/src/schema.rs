//! The scenario schema: every key, its type, default, unit and meaning, in one place.
//!
//! The validator ([`crate::reader`]) reads scenarios through these tables — a key that is not
//! here is rejected — and `sctpsim params` / `docs/scenario-reference.md` are generated from
//! them, so the documentation cannot drift from what is accepted.

/// The type of a key's value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Ty {
    /// Free text.
    Str,
    /// A name: letters, digits, `-`, `_`, `.`; unique within its list.
    Name,
    /// A duration string such as `"30ms"`.
    Duration,
    /// A data-rate string such as `"100Mbps"`.
    Rate,
    /// A size: an integer number of bytes or a string such as `"64KiB"`.
    Size,
    /// An integer within bounds.
    Int(i64, i64),
    /// A probability: a number in [0, 1] or a percentage string such as `"1%"`.
    Probability,
    /// A number (integer or float) within bounds.
    Number(f64, f64),
    /// A power: a number in dBm, or a string with a unit such as `"16dBm"` or `"40mW"`.
    Power,
    /// One of a fixed set of words.
    Enum(&'static [&'static str]),
    /// An IPv4 address such as `"10.0.1.1"`.
    Addr,
    /// An IPv4 prefix such as `"10.0.1.0/24"`.
    Prefix,
    /// An interface reference `"node/iface"`.
    Endpoint,
    /// A destination: an IPv4 address, a node name (its first address) or `"node/iface"`.
    Destination,
    /// A queue capacity: an integer (packets) or a size string (bytes).
    QueueLimit,
    /// A speed string such as `"4.5km/h"` or `"1.25m/s"`.
    Speed,
    /// A non-negative number of metres.
    Metres,
    /// A point `[x, y]` in metres.
    Point,
    /// A rectangle: `[width, height]` from the origin, or corners `[[x0, y0], [x1, y1]]`, metres.
    Area,
    /// Waypoints: a list of points `[x, y]`, or of tables `{ at = duration, position = [x, y] }`.
    Waypoints,
    /// `true` or `false`.
    Bool,
    /// A list of strings.
    StrList,
    /// A table of keys described by a nested section.
    Table(&'static Section),
    /// A list of tables described by a nested section.
    TableList(&'static Section),
}

impl Ty {
    /// How the type is named in documentation and error messages.
    pub fn describe(&self) -> String {
        match self {
            Ty::Str => "string".into(),
            Ty::Name => "name".into(),
            Ty::Duration => "duration".into(),
            Ty::Rate => "rate".into(),
            Ty::Size => "size".into(),
            Ty::Int(lo, hi) => format!("integer {lo}..{hi}"),
            Ty::Probability => "probability".into(),
            Ty::Number(lo, hi) if *hi == f64::MAX => format!("number >= {lo}"),
            Ty::Number(lo, hi) => format!("number {lo}..{hi}"),
            Ty::Power => "power (dBm number, or \"16dBm\" / \"40mW\")".into(),
            Ty::Enum(words) => words.iter().map(|w| format!("\"{w}\"")).collect::<Vec<_>>().join(" | "),
            Ty::Addr => "IPv4 address".into(),
            Ty::Prefix => "IPv4 prefix".into(),
            Ty::Endpoint => "\"node/iface\"".into(),
            Ty::Destination => "address, node or \"node/iface\"".into(),
            Ty::QueueLimit => "packets (integer) or size".into(),
            Ty::Speed => "speed".into(),
            Ty::Metres => "number (metres)".into(),
            Ty::Point => "[x, y] (metres)".into(),
            Ty::Area => "[width, height] or [[x0, y0], [x1, y1]] (metres)".into(),
            Ty::Waypoints => "list of [x, y], or of { at = duration, position = [x, y] }".into(),
            Ty::Bool => "boolean".into(),
            Ty::StrList => "list of strings".into(),
            Ty::Table(_) => "table".into(),
            Ty::TableList(_) => "list of tables".into(),
        }
    }

    /// True for types whose values are written as TOML strings (defaults are given unquoted).
    pub fn is_stringy(&self) -> bool {
        matches!(
            self,
            Ty::Str
                | Ty::Name
                | Ty::Duration
                | Ty::Rate
                | Ty::Speed
                | Ty::Enum(_)
                | Ty::Addr
                | Ty::Prefix
                | Ty::Endpoint
                | Ty::Destination
        )
    }
}

/// What happens when a key is absent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Fallback {
    /// The key must be given.
    Required,
    /// This value is used (written as in a scenario; strings unquoted).
    Value(&'static str),
    /// No value; the text says what happens instead.
    Absent(&'static str),
}

/// One key.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Field {
    /// Key name.
    pub key: &'static str,
    /// Value type.
    pub ty: Ty,
    /// Default.
    pub default: Fallback,
    /// Unit of the value once parsed (empty when unitless).
    pub unit: &'static str,
    /// Meaning, one or two sentences.
    pub doc: &'static str,
}

/// A table of keys; `tag` names a key whose value selects extra `variants` keys.
#[derive(Debug, PartialEq)]
pub struct Section {
    /// Path shown in the reference (`links[]`, `links[].queue`).
    pub path: &'static str,
    /// Keys valid in every variant.
    pub fields: &'static [Field],
    /// The key that selects a variant, if any (it is listed in `fields` as an `Enum`).
    pub tag: Option<&'static str>,
    /// Extra keys per tag value.
    pub variants: &'static [(&'static str, &'static [Field])],
}

const fn f(key: &'static str, ty: Ty, default: Fallback, unit: &'static str, doc: &'static str) -> Field {
    Field { key, ty, default, unit, doc }
}

use Fallback::{Absent, Required, Value};

/// Words accepted by `record.events`.
pub const EVENT_KINDS: &[&str] = &["fault", "drop", "enqueue", "dequeue", "tx", "rx", "tcp", "sctp", "wlan"];

/// The top level of a scenario file.
pub static ROOT: Section = Section {
    path: "",
    fields: &[
        f("name", Ty::Name, Value("scenario"), "", "Scenario name; names the default output directory."),
        f("duration", Ty::Duration, Value("10s"), "s", "Simulated time at which the run stops, more than zero and at most 9223372036s (about 292 years, half the range of the 64-bit nanosecond clock; events due at exactly this time still happen; the run lasts this long even when nothing is left to do, so time averages are over the whole duration)."),
        f("seed", Ty::Int(0, i64::MAX), Value("1"), "", "Master random seed; every component derives its own stream from it and its name."),
        f("nodes", Ty::TableList(&NODE), Required, "", "Hosts and routers."),
        f("links", Ty::TableList(&LINK), Value("[]"), "", "Full-duplex point-to-point links between interfaces."),
        f("routes", Ty::TableList(&ROUTE), Value("[]"), "", "Explicit routes; they override the automatic shortest-path routes."),
        f("apps", Ty::TableList(&APP), Value("[]"), "", "Traffic sources and sinks on hosts."),
        f("groups", Ty::TableList(&GROUP), Value("[]"), "", "Shorthand for many single-homed hosts behind a router, each running a TCP upload or a UDP source to one destination host (hosts, links, sources and sinks are generated)."),
        f("wlans", Ty::TableList(&WLAN), Absent("no wireless LAN"), "", "IEEE 802.11g channels (shared media); WLAN interfaces (nodes[].interfaces[].wlan) are radios on them."),
        f("faults", Ty::TableList(&FAULT), Value("[]"), "", "Scheduled link and interface failures and repairs."),
        f("record", Ty::Table(&RECORD), Value("{}"), "", "What to record besides the scalars."),
    ],
    tag: None,
    variants: &[],
};

/// `nodes[]`.
pub static NODE: Section = Section {
    path: "nodes[]",
    fields: &[
        f("name", Ty::Name, Required, "", "Unique node name."),
        f(
            "kind",
            Ty::Enum(&["host", "router"]),
            Value("host"),
            "",
            "Hosts run applications and never forward; routers forward by their routing table.",
        ),
        f(
            "interfaces",
            Ty::TableList(&IFACE),
            Required,
            "",
            "Network interfaces, each with one IPv4 address (several for a multihomed host).",
        ),
        f("position", Ty::Point, Absent("none: the node has no place in the world (wired only)"), "m", "Where the node is at time zero (a WLAN station or access point needs one); it stays there unless mobility says otherwise."),
        f("mobility", Ty::Table(&MOBILITY), Absent("stationary at position"), "", "How the node moves. Positions are functions of time: nothing is sampled or ticked."),
        f("present", Ty::Bool, Absent("true"), "", "false: the node takes no part in the run, and neither do the applications on it (for a sweep over how many hosts there are: set it per cell). The scenario is checked whole first; then nothing left in it may name the node, its interfaces or those applications."),
    ],
    tag: None,
    variants: &[],
};

/// Speed keys shared by the random models.
const RANDOM_SPEEDS: [Field; 3] = [
    f(
        "speed",
        Ty::Speed,
        Absent("speed_min..speed_max"),
        "m/s",
        "A fixed speed, e.g. \"4.5km/h\" or \"1.25m/s\" (instead of speed_min and speed_max).",
    ),
    f(
        "speed_min",
        Ty::Speed,
        Absent("speed"),
        "m/s",
        "Lowest speed of the range each leg's speed is drawn from uniformly (positive; with speed_max).",
    ),
    f("speed_max", Ty::Speed, Absent("speed"), "m/s", "Highest speed of that range (at least speed_min)."),
];

/// `nodes[].mobility`.
pub static MOBILITY: Section = Section {
    path: "nodes[].mobility",
    fields: &[f(
        "model",
        Ty::Enum(&["stationary", "waypoints", "random-waypoint", "random-walk"]),
        Value("stationary"),
        "",
        "stationary: stays at position. waypoints: straight lines at constant speed through the given points. random-waypoint: pause, then to a destination drawn uniformly in the area at a speed drawn uniformly in the range, pause, and so on (Broch et al. 1998, as ns-2 setdest and ns-3; it starts with a pause). random-walk: ns-3's RandomWalk2d, a new speed and direction each step, reflected at the area's borders. Random draws come from the node's own stream (\"node/<name>/mobility\").",
    )],
    tag: Some("model"),
    variants: &[
        ("stationary", &[]),
        (
            "waypoints",
            &[
                f("waypoints", Ty::Waypoints, Required, "m", "The points in order. Plain [x, y] points are visited at speed, starting from position (or the first point); timed waypoints { at = \"10s\", position = [x, y] } are reached at their instants (not decreasing; two at one instant make a jump), moving linearly in between. The node stays at the last point."),
                f("speed", Ty::Speed, Absent("required with plain [x, y] waypoints"), "m/s", "Speed between plain waypoints, e.g. \"4.5km/h\" or \"1.25m/s\"."),
                f("start", Ty::Duration, Absent("0s"), "s", "When the node leaves its start for the first plain waypoint."),
                f("pause", Ty::Duration, Absent("0s"), "s", "Pause at each plain waypoint reached before the last."),
            ],
        ),
        (
            "random-waypoint",
            &[
                f("area", Ty::Area, Required, "m", "Where destinations are drawn, and where position (if given) must lie; without position the start is drawn there too."),
                RANDOM_SPEEDS[0],
                RANDOM_SPEEDS[1],
                RANDOM_SPEEDS[2],
                f("pause", Ty::Duration, Value("0s"), "s", "Pause at the start and at each destination."),
            ],
        ),
        (
            "random-walk",
            &[
                f("area", Ty::Area, Required, "m", "The rectangle the node walks in, reflected at its borders; position (if given) must lie in it, else the start is drawn there."),
                RANDOM_SPEEDS[0],
                RANDOM_SPEEDS[1],
                RANDOM_SPEEDS[2],
                f("step", Ty::Duration, Absent("1s unless step_distance is given"), "s", "A new speed and direction every this long (ns-3 mode Time)."),
                f("step_distance", Ty::Metres, Absent("none"), "m", "Instead of step: a new speed and direction after walking this far (ns-3 mode Distance)."),
            ],
        ),
    ],
};

/// `nodes[].interfaces[]`.
pub static IFACE: Section = Section {
    path: "nodes[].interfaces[]",
    fields: &[
        f(
            "name",
            Ty::Name,
            Absent("\"eth<i>\" where i is the position in the list"),
            "",
            "Interface name, unique within the node; referenced as \"node/name\".",
        ),
        f("address", Ty::Addr, Required, "", "IPv4 address, unique in the network."),
        f(
            "wlan",
            Ty::Table(&WLAN_IFACE),
            Absent("a wired interface (the end of a link)"),
            "",
            "Makes the interface a radio on a WLAN channel: an access point or a station associated with one.",
        ),
    ],
    tag: None,
    variants: &[],
};

/// `wlans[]`.
pub static WLAN: Section = Section {
    path: "wlans[]",
    fields: &[
        f("name", Ty::Name, Required, "", "Unique channel name (referenced by interfaces; `wlan` entity in results)."),
        f("channel", Ty::Int(1, 13), Value("1"), "", "2.4 GHz channel number (centre frequency 2407 + 5 n MHz)."),
        f("slot", Ty::Enum(&["short", "long"]), Value("short"), "", "Slot time: 9 us (ERP only) or 20 us (802.11b stations present), IEEE 802.11-2020 Table 18-5."),
        f(
            "eifs",
            Ty::Enum(&["dsss", "ofdm"]),
            Value("dsss"),
            "",
            "AckTxTime of EIFS (§10.3.2.3.7): \"dsss\" the 1 Mbit/s DSSS ACK (304 us, the ERP PHY's lowest mandatory rate: EIFS 342 us), \"ofdm\" the 6 Mbit/s OFDM ACK (50 us: EIFS 88 us).",
        ),
        f("path_loss", Ty::Enum(&["log-distance", "free-space"]), Value("log-distance"), "", "Path-loss model."),
        f("exponent", Ty::Number(1.0, 8.0), Value("3.0"), "", "Log-distance path-loss exponent."),
        f("reference_distance", Ty::Number(0.01, 1000.0), Value("1.0"), "m", "Log-distance reference distance."),
        f("reference_loss", Ty::Number(0.0, 200.0), Absent("free-space loss at the reference distance"), "dB", "Log-distance loss at the reference distance."),
        f("shadowing", Ty::Number(0.0, 30.0), Value("0.0"), "dB", "Standard deviation of log-normal shadowing, drawn once per pair of radios from the stream wlan/<name>/shadowing (0: none)."),
        f("noise_floor", Ty::Number(-200.0, 0.0), Value("-93.97"), "dBm", "Background noise over the 20 MHz channel (thermal noise plus a 7 dB noise figure)."),
        f("cca_threshold", Ty::Number(-200.0, 0.0), Value("-82.0"), "dBm", "Signals at or above it make the medium busy and can be received; weaker ones are interference."),
        f("sensitivity", Ty::Number(-200.0, 0.0), Absent("per rate, IEEE 802.11-2020 Table 17-18: -82 dBm at 6 Mbit/s to -65 dBm at 54 Mbit/s"), "dBm", "Reception threshold for every rate: frames received below it are lost; those above it pass the error model (SINR)."),
        f("capture_threshold", Ty::Number(0.0, 100.0), Absent("no capture: any overlap above the CCA threshold destroys both frames"), "dB", "A frame survives an overlapping transmission this much weaker."),
    ],
    tag: None,
    variants: &[],
};

/// `nodes[].interfaces[].wlan`.
pub static WLAN_IFACE: Section = Section {
    path: "nodes[].interfaces[].wlan",
    fields: &[
        f("channel", Ty::Name, Required, "", "Name of the wlans[] channel the radio is on."),
        f("role", Ty::Enum(&["station", "ap"]), Value("station"), "", "An access point (its node must be a router: it bridges its BSS to its wired links, one subnet per AP) or a station."),
        f("association", Ty::Enum(&["static", "roam"]), Value("static"), "", "A station's association: \"static\", with the AP named by `ap` from the start (no management frames), or \"roam\": it scans, authenticates and associates with management frames (IEEE 802.11-2020 §11.1.4, §11.3), and roams on its AP's signal strength. A roaming interface starts down; on association it comes up with the address whose host part is `address`'s in the AP's subnet (its agents are told: up, address added; on leaving: down, address removed)."),
        f("ap", Ty::Endpoint, Absent("required for a static station"), "", "The AP's interface, \"node/iface\", on the same channel."),
        f("beacon_interval", Ty::Duration, Value("102.4ms"), "", "An AP's beacon interval (100 TU; §11.1.3): a beacon at each multiple of it, through the DCF."),
        f("beacons", Ty::Bool, Value("true"), "", "Whether an AP sends beacons."),
        f("scan_channels", Ty::StrList, Absent("every wlans[] channel, in order"), "", "A roaming station's scan list: names of wlans[] channels, scanned in this order (its radio leaves its own channel meanwhile; frames queued there stay queued)."),
        f("scan", Ty::Enum(&["active", "passive"]), Value("active"), "", "A roaming station's scanning: active (Probe Request, then MinChannelTime / MaxChannelTime) or passive (listen for beacons)."),
        f("min_channel_time", Ty::Duration, Value("20.48ms"), "", "Active scanning: MinChannelTime (20 TU), from the probe; a channel silent meanwhile is left."),
        f("max_channel_time", Ty::Duration, Value("40.96ms"), "", "Active scanning: MaxChannelTime (40 TU), from the probe."),
        f("passive_dwell", Ty::Duration, Value("110ms"), "", "Passive scanning: time on each channel (over one beacon interval)."),
        f("scan_threshold", Ty::Number(-200.0, 50.0), Value("-80.0"), "dBm", "A roaming station scans when its AP's signal falls below this (paper 001: -80 dBm), again every rescan_interval while it stays below."),
        f("handover_threshold", Ty::Number(-200.0, 50.0), Value("-90.0"), "dBm", "A roaming station leaves its AP when its signal falls below this (paper 001: -90 dBm) and joins the strongest AP of its last scan. The crossings are computed from the mobility model."),
        f("rescan_interval", Ty::Duration, Value("1s"), "", "A roaming station's time between scans below the scan threshold, and after a scan that found no AP."),
        f("auth_timeout", Ty::Duration, Value("524.288ms"), "", "Wait for the Authentication response (dot11AuthenticationResponseTimeout, 512 TU)."),
        f("assoc_timeout", Ty::Duration, Value("524.288ms"), "", "Wait for the Association Response (dot11AssociationResponseTimeout, 512 TU)."),
        f("max_attempts", Ty::Int(1, 100), Value("3"), "", "Authentication or association requests sent to one AP before trying the next."),
        f("x", Ty::Number(-1e7, 1e7), Value("0.0"), "m", "Position, east, of a radio whose node has no position (nodes[].position and nodes[].mobility win)."),
        f("y", Ty::Number(-1e7, 1e7), Value("0.0"), "m", "Position, north, of a radio whose node has no position."),
        f("tx_power", Ty::Power, Value("16.02"), "dBm", "Transmit power."),
        f("rate", Ty::Int(6, 54), Value("54"), "Mbit/s", "ERP-OFDM data rate: 6, 9, 12, 18, 24, 36, 48 or 54 (the starting rate under ARF/AARF)."),
        f("rate_control", Ty::Enum(&["fixed", "arf", "aarf"]), Value("fixed"), "", "Data rate control: fixed, ARF or AARF."),
        f("rts_threshold", Ty::Size, Absent("never RTS/CTS"), "bytes", "Data frames whose MPDU is longer are preceded by RTS/CTS."),
        f("short_retry_limit", Ty::Int(1, 255), Value("7"), "", "Attempts of a frame sent without RTS, and of an RTS."),
        f("long_retry_limit", Ty::Int(1, 255), Value("4"), "", "Attempts of a data frame sent after RTS/CTS."),
        f("cw_min", Ty::Int(1, 1023), Value("15"), "slots", "aCWmin."),
        f("cw_max", Ty::Int(1, 65535), Value("1023"), "slots", "aCWmax (at least cw_min)."),
        f("queue", Ty::Table(&WLAN_QUEUE), Value("{}"), "", "Interface queue."),
    ],
    tag: None,
    variants: &[],
};

/// `nodes[].interfaces[].wlan.queue`: the disciplines of `links[].queue`, drop-tail holding 50
/// packets by default (paper 001's interface queue).
pub static WLAN_QUEUE: Section = Section {
    path: "nodes[].interfaces[].wlan.queue",
    fields: &[f(
        "kind",
        Ty::Enum(netsim::queue::KINDS),
        Value("droptail"),
        "",
        "Queue discipline (parameters as links[].queue; the rate is the radio's data rate, the delay zero).",
    )],
    tag: Some("kind"),
    variants: &[
        (
            netsim::queue::DropTail::KIND,
            &[f(
                "limit",
                Ty::QueueLimit,
                Value("50"),
                "packets|bytes",
                "Capacity: an integer is packets, a size string is bytes; arrivals beyond it are dropped.",
            )],
        ),
        (netsim::queue::Red::KIND, RED),
        (netsim::queue::Fred::KIND, FRED),
        (netsim::queue::Blue::KIND, BLUE),
        (netsim::queue::Rem::KIND, REM),
        (netsim::queue::Pi::KIND, PI),
    ],
};

/// `links[]`.
pub static LINK: Section = Section {
    path: "links[]",
    fields: &[
        f(
            "name",
            Ty::Name,
            Absent("the two node names joined by \"-\""),
            "",
            "Unique link name (used by faults and in results).",
        ),
        f(
            "ends",
            Ty::StrList,
            Required,
            "",
            "The two interfaces it connects, [\"node/iface\", \"node/iface\"]; the first is the \"forward\" sender.",
        ),
        f("rate", Ty::Rate, Value("100Mbps"), "bit/s", "Data rate of each direction."),
        f("delay", Ty::Duration, Value("1ms"), "s", "One-way propagation delay."),
        f(
            "mtu",
            Ty::Size,
            Value("1500"),
            "bytes",
            "Largest IP datagram carried; larger packets are dropped (no fragmentation).",
        ),
        f(
            "cost",
            Ty::Int(1, 1_000_000),
            Value("1"),
            "",
            "Routing cost; automatic routes minimise the sum (1 everywhere = fewest hops).",
        ),
        f("queue", Ty::Table(&QUEUE), Value("{}"), "", "Output queue of each direction."),
        f("loss", Ty::Table(&LOSS), Value("{}"), "", "Random loss of each direction."),
        f("forward", Ty::Table(&DIRECTION), Value("{}"), "", "Overrides for the direction ends[0] -> ends[1]."),
        f("reverse", Ty::Table(&DIRECTION), Value("{}"), "", "Overrides for the direction ends[1] -> ends[0]."),
    ],
    tag: None,
    variants: &[],
};

/// `links[].forward` / `links[].reverse`.
pub static DIRECTION: Section = Section {
    path: "links[].forward|reverse",
    fields: &[
        f("rate", Ty::Rate, Absent("the link's rate"), "bit/s", "Data rate of this direction."),
        f("delay", Ty::Duration, Absent("the link's delay"), "s", "Propagation delay of this direction."),
        f("mtu", Ty::Size, Absent("the link's mtu"), "bytes", "MTU of this direction."),
        f("queue", Ty::Table(&QUEUE), Absent("the link's queue"), "", "Output queue of this direction."),
        f("loss", Ty::Table(&LOSS), Absent("the link's loss"), "", "Random loss of this direction."),
    ],
    tag: None,
    variants: &[],
};

/// `links[].queue`.
pub static QUEUE: Section = Section {
    path: "links[].queue",
    fields: &[f("kind", Ty::Enum(netsim::queue::KINDS), Value("droptail"), "", "Queue discipline.")],
    tag: Some("kind"),
    variants: &[
        (netsim::queue::DropTail::KIND, &[QUEUE_LIMIT]),
        (netsim::queue::Red::KIND, RED),
        (netsim::queue::Fred::KIND, FRED),
        (netsim::queue::Blue::KIND, BLUE),
        (netsim::queue::Rem::KIND, REM),
        (netsim::queue::Pi::KIND, PI),
        (netsim::queue::CoDel::KIND, CODEL),
        (netsim::queue::FqCodel::KIND, FQ_CODEL),
        (netsim::queue::Pie::KIND, PIE),
    ],
};

/// The hard limit of every discipline's buffer.
const QUEUE_LIMIT: Field = f(
    "limit",
    Ty::QueueLimit,
    Value("100"),
    "packets|bytes",
    "Capacity: an integer is packets, a size string (\"64KiB\") is bytes; arrivals beyond it are dropped.",
);

/// Any non-negative number.
const NUMBER: Ty = Ty::Number(0.0, f64::MAX);

/// The ECN switch of the classic AQMs.
const AQM_ECN: Field = f(
    "ecn",
    Ty::Bool,
    Value("false"),
    "",
    "Mark ECN-capable packets Congestion Experienced instead of dropping them early (RFC 3168); Not-ECT packets are dropped as before, and forced and overflow drops stay drops.",
);

/// `links[].queue` with `kind = "red"`: defaults are ns-2.35's `Queue/RED` (ns-default.tcl).
const RED: &[Field] = &[
    QUEUE_LIMIT,
    f("mode", Ty::Enum(&["bytes", "packets"]), Value("bytes"), "", "What the average, the thresholds' unit and the count measure: bytes (thresholds in packets of mean_pktsize bytes, drop probability scaled by size) or packets (ns-2 bytes_ and queue_in_bytes_, true)."),
    f("min_th", NUMBER, Absent("automatic: max(5, target_delay x C / 2) for C mean-size packets per second, as ns-2"), "packets", "Minimum threshold of the average queue."),
    f("max_th", NUMBER, Absent("3 min_th"), "packets", "Maximum threshold of the average queue; more than min_th."),
    f("w_q", Ty::Number(0.0, 1.0), Absent("automatic: 1 - exp(-1 / (10 rtt C)), rtt = max(100 ms, 3 (delay + 1/C)), as ns-2"), "", "Weight of the newest sample in the average queue."),
    f("max_p", Ty::Probability, Value("0.1"), "", "Drop probability at max_th (the start value with adaptive)."),
    f("gentle", Ty::Bool, Value("true"), "", "Gentle RED: between max_th and 2 max_th the probability rises from max_p to 1 instead of every packet being dropped."),
    f("wait", Ty::Bool, Value("true"), "", "Spread drops uniformly between 1/p_b and 2/p_b packets (ns-2 wait_); false: p_b / (1 - count p_b) as in Floyd & Jacobson."),
    f("mean_pktsize", Ty::Size, Value("500"), "bytes", "Mean packet size: the unit of the thresholds in byte mode and of the decay of the average over idle time."),
    AQM_ECN,
    f("mark_p", Ty::Probability, Value("0.1"), "", "With ecn, mark only while the drop probability p_b is at most this; drop above (ns-2 mark_p_)."),
    f("adaptive", Ty::Bool, Value("false"), "", "Adaptive RED (Floyd, Gummadi, Shenker 2001): adapt max_p every interval to keep the average between the thresholds."),
    f("target_delay", Ty::Duration, Value("5ms"), "s", "Queueing delay the automatic min_th aims at."),
    f("interval", Ty::Duration, Value("500ms"), "s", "Adaptive RED: time between changes of max_p."),
    f("alpha", NUMBER, Value("0.01"), "", "Adaptive RED: additive increase of max_p (at most max_p / 4)."),
    f("beta", Ty::Number(0.0, 1.0), Value("0.9"), "", "Adaptive RED: multiplicative decrease of max_p."),
    f("top", Ty::Probability, Value("0.5"), "", "Adaptive RED: upper bound of max_p."),
    f("bottom", Ty::Probability, Absent("min(0.01, 80 kbit/s / rate), as ns-2"), "", "Adaptive RED: lower bound of max_p."),
];

/// `links[].queue` with `kind = "fred"`: paper 003's Table 2 where it gives a value.
const FRED: &[Field] = &[
    QUEUE_LIMIT,
    f(
        "min_th",
        NUMBER,
        Value("10"),
        "packets",
        "Minimum threshold of the average queue (paper 003, Table 2); also a flow's allowance below max_th.",
    ),
    f(
        "max_th",
        NUMBER,
        Value("30"),
        "packets",
        "Maximum threshold of the average queue (paper 003, Table 2); more than min_th.",
    ),
    f(
        "w_q",
        Ty::Number(0.0, 1.0),
        Value("0.002"),
        "",
        "Weight of the newest sample in the average queue (paper 003, Table 2).",
    ),
    f(
        "max_p",
        Ty::Probability,
        Value("0.02"),
        "",
        "Drop probability at max_th (1/50, Floyd & Jacobson's and Lin & Morris's value).",
    ),
    f("min_q", NUMBER, Value("2"), "packets", "Packets a flow may queue without random drops (Lin & Morris)."),
    f(
        "mean_pktsize",
        Ty::Size,
        Value("500"),
        "bytes",
        "Mean packet size, for the decay of the average over idle time (paper 003, Table 2).",
    ),
    AQM_ECN,
];

/// `links[].queue` with `kind = "blue"`: paper 003's Table 2 increments.
const BLUE: &[Field] = &[
    QUEUE_LIMIT,
    f(
        "d1",
        Ty::Probability,
        Value("0.02"),
        "",
        "Increase of the marking probability on a loss event (paper 003, Table 2).",
    ),
    f(
        "d2",
        Ty::Probability,
        Value("0.002"),
        "",
        "Decrease of the marking probability on a link idle event (paper 003, Table 2).",
    ),
    f("freeze_time", Ty::Duration, Value("100ms"), "s", "Minimum time between two changes of the marking probability."),
    f(
        "increase_above",
        Ty::Int(0, 1_000_000_000),
        Absent("only when the buffer overflows"),
        "packets",
        "Also raise the probability when an arrival finds more than this many packets queued (the paper's L).",
    ),
    AQM_ECN,
];

/// `links[].queue` with `kind = "rem"`: defaults are ns-2.35's `Queue/REM`.
const REM: &[Field] = &[
    QUEUE_LIMIT,
    f("gamma", NUMBER, Value("0.001"), "", "Step size of the price update."),
    f("phi", NUMBER, Value("1.001"), "", "Base of the marking probability 1 - phi^-price; more than 1."),
    f("alpha", NUMBER, Value("0.1"), "", "Weight of the backlog mismatch in the price update (fixed in ns-2)."),
    f("b_ref", NUMBER, Value("20"), "packets", "Target backlog."),
    f("interval", Ty::Duration, Value("2ms"), "s", "Time between price updates."),
    f(
        "inw",
        Ty::Number(0.0, 1.0),
        Value("1"),
        "",
        "Weight of the newest interval in the filtered input rate; more than zero.",
    ),
    f(
        "mean_pktsize",
        Ty::Size,
        Value("1000"),
        "bytes",
        "Mean packet size: the unit of the link capacity per interval, and of backlog and input in byte mode.",
    ),
    f(
        "mode",
        Ty::Enum(&["packets", "bytes"]),
        Value("packets"),
        "",
        "What backlog and input count; in byte mode the probability is scaled by the packet's size.",
    ),
    AQM_ECN,
];

/// `links[].queue` with `kind = "pi"`: defaults are ns-2.35's `Queue/PI`.
const PI: &[Field] = &[
    QUEUE_LIMIT,
    f("a", NUMBER, Value("1.822e-5"), "", "Coefficient of the current queue error (Hollot et al. 2002)."),
    f("b", NUMBER, Value("1.816e-5"), "", "Coefficient of the previous queue error."),
    f("w", NUMBER, Value("170"), "Hz", "Sampling frequency of the controller; more than zero."),
    f("q_ref", NUMBER, Value("50"), "packets", "Reference queue length the controller holds."),
    f("mean_pktsize", Ty::Size, Value("500"), "bytes", "Mean packet size: the unit of the queue in byte mode."),
    f(
        "mode",
        Ty::Enum(&["packets", "bytes"]),
        Value("packets"),
        "",
        "What the queue counts; in byte mode the probability is scaled by the packet's size.",
    ),
    AQM_ECN,
];

/// `links[].queue` with `kind = "codel"` (RFC 8289).
const CODEL: &[Field] = &[
    f("limit", Ty::QueueLimit, Value("1000"), "packets|bytes", "Hard capacity (packets, or bytes as a size string); arrivals beyond it are dropped (Linux's default)."),
    f("target", Ty::Duration, Value("5ms"), "s", "Acceptable standing queue delay (RFC 8289 §4.4); more than zero."),
    f("interval", Ty::Duration, Value("100ms"), "s", "Time the sojourn time must stay above target before dropping starts, and the base of the control law interval/sqrt(count) (RFC 8289 §4.3); more than zero."),
    f("ecn", Ty::Bool, Value("false"), "", "Mark ECN-capable packets Congestion Experienced instead of dropping them."),
];

/// `links[].queue` with `kind = "fq-codel"` (RFC 8290).
const FQ_CODEL: &[Field] = &[
    f("limit", Ty::Int(1, 1 << 30), Value("10240"), "packets", "Packets held in all flow queues before packets are dropped from the head of the flow with the most bytes (RFC 8290 §5.2.3)."),
    f("flows", Ty::Int(1, 65536), Value("1024"), "", "Number of flow queues the 5-tuple hash spreads packets over (RFC 8290 §5.2.5)."),
    f("quantum", Ty::Size, Value("1514"), "bytes", "Bytes a flow may send per deficit round-robin round (RFC 8290 §5.2.4); at least one."),
    f("drop_batch", Ty::Int(1, 65536), Value("64"), "packets", "On overflow, drop from the fattest flow until half its bytes are gone, at most this many packets (Linux's batch; 1 drops one packet)."),
    f("target", Ty::Duration, Value("5ms"), "s", "Each flow queue's CoDel target (RFC 8290 §5.2.2); more than zero."),
    f("interval", Ty::Duration, Value("100ms"), "s", "Each flow queue's CoDel interval (RFC 8290 §5.2.1); more than zero."),
    f("ecn", Ty::Bool, Value("true"), "", "Mark ECN-capable packets instead of dropping them (on by default: RFC 8290 §5.2.6, Linux)."),
];

/// `links[].queue` with `kind = "pie"` (RFC 8033).
const PIE: &[Field] = &[
    f("limit", Ty::QueueLimit, Value("1000"), "packets|bytes", "Hard capacity (packets, or bytes as a size string); arrivals beyond it are dropped (Linux's default)."),
    f("target", Ty::Duration, Value("15ms"), "s", "Reference queueing delay QDELAY_REF (RFC 8033 §4.2); more than zero."),
    f("t_update", Ty::Duration, Value("15ms"), "s", "Interval of the drop-probability update T_UPDATE (RFC 8033 §4.2); more than zero."),
    f("alpha", NUMBER, Value("0.125"), "1/s", "Weight of the delay's distance to the reference (RFC 8033 §4.2); more than zero."),
    f("beta", NUMBER, Value("1.25"), "1/s", "Weight of the delay's change since the last update (RFC 8033 §4.2); more than zero."),
    f("max_burst", Ty::Duration, Value("150ms"), "s", "Burst allowance MAX_BURST: no early drops for this long after a calm spell (RFC 8033 §4.4)."),
    f("delay", Ty::Enum(&["departure-rate", "timestamp"]), Value("departure-rate"), "", "Queueing delay from queued bytes over the measured departure rate (RFC 8033 §4.3, §5.2), or the sojourn time of the last packet to leave."),
    f("dq_threshold", Ty::Size, Value("\"16KiB\""), "bytes", "Bytes per departure-rate measurement cycle (RFC 8033 §5.2); at least one."),
    f("ecn", Ty::Bool, Value("false"), "", "Mark ECN-capable packets instead of dropping them while the probability is below mark_ecnth (RFC 8033 §5.1)."),
    f("mark_ecnth", Ty::Probability, Value("0.1"), "", "Probability above which ECN-capable packets are dropped too (RFC 8033 §5.1)."),
    f("cap_drop_adjustment", Ty::Bool, Value("true"), "", "Above 10 %, raise the probability by at most 2 % per update (RFC 8033 §5.5)."),
    f("derandomize", Ty::Bool, Value("false"), "", "De-randomize drops by the accumulated probability of arrivals (RFC 8033 §5.4)."),
];

/// `links[].loss`.
pub static LOSS: Section = Section {
    path: "links[].loss",
    fields: &[f(
        "model",
        Ty::Enum(&["none", "bernoulli", "gilbert-elliott"]),
        Value("none"),
        "",
        "Random loss process, applied to each packet that crosses the link.",
    )],
    tag: Some("model"),
    variants: &[
        ("none", &[]),
        ("bernoulli", &[f("p", Ty::Probability, Required, "", "Loss probability of each packet, independently.")]),
        (
            "gilbert-elliott",
            &[
                f(
                    "p_good_bad",
                    Ty::Probability,
                    Required,
                    "",
                    "Probability of moving from Good to Bad after each packet.",
                ),
                f(
                    "p_bad_good",
                    Ty::Probability,
                    Required,
                    "",
                    "Probability of moving from Bad to Good after each packet.",
                ),
                f("loss_good", Ty::Probability, Value("0"), "", "Loss probability in Good."),
                f("loss_bad", Ty::Probability, Value("1"), "", "Loss probability in Bad."),
            ],
        ),
    ],
};

/// `routes[]`.
pub static ROUTE: Section = Section {
    path: "routes[]",
    fields: &[
        f("node", Ty::Name, Required, "", "Node whose table gets the route."),
        f(
            "dest",
            Ty::Prefix,
            Required,
            "",
            "Destination prefix, e.g. \"10.0.2.0/24\" (\"0.0.0.0/0\" is a default route).",
        ),
        f("via", Ty::Name, Required, "", "Name of the node's outgoing interface."),
    ],
    tag: None,
    variants: &[],
};

/// `apps[]`.
pub static APP: Section = Section {
    path: "apps[]",
    fields: &[
        f("kind", Ty::Enum(&["udp-cbr", "udp-vbr", "udp-onoff", "udp-sink", "tcp-bulk", "tcp-sink", "sctp-bulk", "sctp-sink", "sctp-requests"]), Required, "", "Application type."),
        f("name", Ty::Name, Absent("\"<kind>-<i>\" where i is the position in the list"), "", "Unique application name; a source's name is its flow's name in results."),
        f("node", Ty::Name, Required, "", "Host it runs on."),
    ],
    tag: Some("kind"),
    variants: &[
        (
            "udp-cbr",
            &[
                f("dst", Ty::Destination, Required, "", "Destination: an IPv4 address, a node name (its first interface) or \"node/iface\"."),
                f("dst_port", Ty::Int(1, 65535), Value("9"), "", "Destination UDP port."),
                f("src", Ty::Destination, Absent("the node's first interface"), "", "Source address (an address or \"node/iface\" of this node); selects the interface on a multihomed host."),
                f("src_port", Ty::Int(1, 65535), Absent("49152 + position in the apps list"), "", "Source UDP port."),
                f("rate", Ty::Rate, Required, "bit/s", "Application data rate (payload bits per second)."),
                f("packet_size", Ty::Size, Value("1000"), "bytes", "Application payload per datagram (16..65507); the first 16 bytes carry a sequence number and the send time."),
                f("start", Ty::Duration, Value("0s"), "s", "Time of the first datagram."),
                f("start_jitter", Ty::Duration, Absent("0s: starts exactly at start"), "s", "Start at a time drawn uniformly from [start, start + start_jitter) from the application's own random stream (\"app/<name>/start\"), so replications (other seeds) start it at other times."),
                f("stop", Ty::Duration, Absent("runs until the end"), "s", "No datagram is sent at or after this time."),
            ],
        ),
        (
            "udp-vbr",
            &[
                f("dst", Ty::Destination, Required, "", "Destination: an IPv4 address, a node name (its first interface) or \"node/iface\"."),
                f("dst_port", Ty::Int(1, 65535), Value("9"), "", "Destination UDP port."),
                f("src", Ty::Destination, Absent("the node's first interface"), "", "Source address of this node."),
                f("src_port", Ty::Int(1, 65535), Absent("49152 + position in the apps list"), "", "Source UDP port."),
                f("rate", Ty::Rate, Value("448kbps"), "bit/s", "Mean application data rate (paper 003, Table 1: 448 kbit/s)."),
                f("min_size", Ty::Size, Value("100"), "bytes", "Smallest payload (16..65507); sizes are uniform between min_size and max_size."),
                f("max_size", Ty::Size, Value("200"), "bytes", "Largest payload (min_size..65507)."),
                f("random", Ty::Bool, Value("false"), "", "Dither each inter-departure gap by a uniform factor in [0.5, 1.5) (ns-2 random_)."),
                f("start", Ty::Duration, Value("0s"), "s", "Time of the first datagram."),
                f("start_jitter", Ty::Duration, Absent("0s: starts exactly at start"), "s", "Start at a time drawn uniformly from [start, start + start_jitter) from the application's own random stream (\"app/<name>/start\"), so replications (other seeds) start it at other times."),
                f("stop", Ty::Duration, Absent("runs until the end"), "s", "No datagram is sent at or after this time."),
            ],
        ),
        (
            "udp-onoff",
            &[
                f("dst", Ty::Destination, Required, "", "Destination: an IPv4 address, a node name (its first interface) or \"node/iface\"."),
                f("dst_port", Ty::Int(1, 65535), Value("9"), "", "Destination UDP port."),
                f("src", Ty::Destination, Absent("the node's first interface"), "", "Source address of this node."),
                f("src_port", Ty::Int(1, 65535), Absent("49152 + position in the apps list"), "", "Source UDP port."),
                f("rate", Ty::Rate, Required, "bit/s", "Application data rate during ON periods."),
                f("packet_size", Ty::Size, Value("1000"), "bytes", "Application payload per datagram (16..65507)."),
                f("on_mean", Ty::Duration, Value("500ms"), "s", "Mean of the exponentially distributed ON periods."),
                f("off_mean", Ty::Duration, Value("500ms"), "s", "Mean of the exponentially distributed OFF periods."),
                f("start", Ty::Duration, Value("0s"), "s", "Start of the first ON period."),
                f("start_jitter", Ty::Duration, Absent("0s: starts exactly at start"), "s", "Start at a time drawn uniformly from [start, start + start_jitter) from the application's own random stream (\"app/<name>/start\"), so replications (other seeds) start it at other times."),
                f("stop", Ty::Duration, Absent("runs until the end"), "s", "No datagram is sent at or after this time."),
            ],
        ),
        ("udp-sink", &[f("port", Ty::Int(1, 65535), Value("9"), "", "UDP port it listens on.")]),
        (
            "sctp-bulk",
            &[
                f("peer", Ty::Name, Required, "", "Host running the sctp-sink; every address of it becomes a path."),
                f("more_peers", Ty::StrList, Absent("none: one association, to peer"), "", "Further hosts running an sctp-sink on peer_port: one more association to each, carrying as many bytes; results per association under \"<name>/assoc<k>\"."),
                f("primary", Ty::Destination, Absent("the peer's first interface"), "", "The peer address used as the primary path (an address or \"node/iface\")."),
                f("port", Ty::Int(1, 65535), Absent("5000 + position in the apps list"), "", "Local SCTP port."),
                f("peer_port", Ty::Int(1, 65535), Value("5000"), "", "The sink's SCTP port."),
                f("start", Ty::Duration, Value("0s"), "s", "When the association is opened (data follows at once)."),
                f("bytes", Ty::Size, Absent("unlimited: sends until the end of the run"), "bytes", "User bytes to transfer."),
                f("message_size", Ty::Size, Value("1452"), "bytes", "User message size (16..1048576); the first 16 bytes carry a sequence number and the send time."),
                f("streams", Ty::Int(1, 65535), Value("1"), "", "Messages go round-robin over this many streams: at most the association's outbound streams (`sctp.streams`) and the sink's (its `sctp.streams`); if the association negotiates fewer, it uses those, with an event."),
                f("delivery", Ty::Enum(&["ordered", "unordered"]), Value("ordered"), "", "Ordered or unordered delivery."),
                f("sctp", Ty::Table(&SCTP), Value("{}"), "", "Association parameters."),
            ],
        ),
        (
            "sctp-sink",
            &[
                f("port", Ty::Int(1, 65535), Value("5000"), "", "SCTP port it listens on."),
                f("drain_rate", Ty::Rate, Absent("reads everything as soon as it arrives"), "bit/s", "Rate at which the application reads the receive buffer (a slow reader shrinks the advertised window)."),
                f("sctp", Ty::Table(&SCTP), Value("{}"), "", "Association parameters."),
            ],
        ),
        (
            "sctp-requests",
            &[
                f("peer", Ty::Name, Required, "", "Host running the sctp-sink that answers each request."),
                f("primary", Ty::Destination, Absent("the peer's first interface"), "", "The peer address used as the primary path."),
                f("port", Ty::Int(1, 65535), Absent("5000 + position in the apps list"), "", "Local SCTP port."),
                f("peer_port", Ty::Int(1, 65535), Value("5000"), "", "The sink's SCTP port."),
                f("start", Ty::Duration, Value("0s"), "s", "When the association is opened."),
                f("message_size", Ty::Size, Value("200"), "bytes", "Request (and response) size, 16..1048576."),
                f("rate", Ty::Int(1, 1_000_000), Value("10"), "1/s", "Requests per second."),
                f("sctp", Ty::Table(&SCTP), Value("{}"), "", "Association parameters."),
            ],
        ),
        (
            "tcp-bulk",
            &[
                f("dst", Ty::Destination, Required, "", "Destination host (a tcp-sink listens there): an IPv4 address, a node name or \"node/iface\"."),
                f("dst_port", Ty::Int(1, 65535), Value("5001"), "", "Destination TCP port."),
                f("src", Ty::Destination, Absent("the node's first interface"), "", "Source address of this node."),
                f("src_port", Ty::Int(1, 65535), Absent("49152 + position in the apps list"), "", "Source TCP port."),
                f("bytes", Ty::Size, Absent("unlimited: sends until the end of the run"), "bytes", "Bytes to upload (\"FTP upload of N bytes\"); the connection closes when all are acknowledged."),
                f("start", Ty::Duration, Value("0s"), "s", "When the connection opens."),
                f("start_jitter", Ty::Duration, Absent("0s: starts exactly at start"), "s", "Start at a time drawn uniformly from [start, start + start_jitter) from the application's own random stream (\"app/<name>/start\"), so replications (other seeds) start it at other times."),
                f("tcp", Ty::Table(&TCP), Value("{}"), "", "TCP parameters."),
            ],
        ),
        (
            "tcp-sink",
            &[
                f("port", Ty::Int(1, 65535), Value("5001"), "", "TCP port it listens on; it accepts any number of connections."),
                f("drain_rate", Ty::Rate, Absent("reads everything as soon as it arrives"), "bit/s", "Rate at which the application reads the receive buffer (a slow reader shrinks the advertised window)."),
                f("tcp", Ty::Table(&TCP), Value("{}"), "", "TCP parameters of accepted connections (recv_buffer matters most)."),
            ],
        ),
    ],
};

/// TCP parameters (`apps[].tcp`, `groups[].tcp`).
pub static TCP: Section = Section {
    path: "apps[].tcp",
    fields: &[
        f("cc", Ty::Enum(&["newreno", "sack", "cubic"]), Value("newreno"), "", "Congestion control: newreno (RFC 5681 + RFC 6582), sack (RFC 5681 + RFC 6675 SACK-based loss recovery), cubic (RFC 9438 with RFC 6675 recovery)."),
        f("mss", Ty::Size, Value("1460"), "bytes", "Maximum segment size advertised and used (64..65495); with timestamps each segment carries 12 bytes less data (RFC 6691)."),
        f("initial_window", Ty::Int(1, 1000), Absent("RFC 6928: min(10*MSS, max(2*MSS, 14600 bytes))"), "segments", "Initial congestion window."),
        f("sack", Ty::Bool, Value("true"), "", "Offer the SACK option (RFC 2018)."),
        f("window_scaling", Ty::Bool, Value("true"), "", "Offer window scaling (RFC 7323)."),
        f("timestamps", Ty::Bool, Value("true"), "", "Offer timestamps (RFC 7323)."),
        f("send_buffer", Ty::Size, Value("\"1MiB\""), "bytes", "Send buffer: how much the application may queue."),
        f("recv_buffer", Ty::Size, Value("\"1MiB\""), "bytes", "Receive buffer: the largest window advertised."),
        f("delayed_ack", Ty::Duration, Value("200ms"), "s", "Delayed-ACK timeout (at most 500ms, RFC 5681 §4.2); \"0s\" acknowledges every segment."),
        f("ack_every", Ty::Int(1, 64), Value("2"), "segments", "Acknowledge at least every this many segments."),
        f("nagle", Ty::Bool, Value("true"), "", "Nagle's algorithm (RFC 9293 §3.7.4)."),
        f("initial_rto", Ty::Duration, Value("1s"), "s", "Retransmission timeout before the first RTT sample (RFC 6298 §2.1)."),
        f("min_rto", Ty::Duration, Value("1s"), "s", "Lower bound of the retransmission timeout (RFC 6298 §2.4; Linux uses 200ms)."),
        f("max_rto", Ty::Duration, Value("60s"), "s", "Upper bound of the retransmission timeout."),
        f("max_retries", Ty::Int(1, 100), Value("15"), "", "Consecutive timeouts after which the connection is aborted."),
        f("dupthresh", Ty::Int(1, 100), Value("3"), "", "Duplicate ACKs that trigger fast retransmit."),
        f("time_wait", Ty::Duration, Value("1s"), "s", "Time in TIME-WAIT (2 MSL)."),
        f("ecn", Ty::Bool, Absent("false"), "", "Explicit Congestion Notification (RFC 3168 §6.1): offer ECN in the SYN (or accept it in the SYN-ACK); when both ends agree, new data goes out ECT(0), CE marks are echoed (ECE) and the sender halves its window once per window of data (CWR) instead of losing packets. Needs a queue that marks."),
    ],
    tag: None,
    variants: &[],
};

/// `groups[]`.
pub static GROUP: Section = Section {
    path: "groups[]",
    fields: &[
        f("name", Ty::Name, Required, "", "Group name; hosts are named \"<name>-<i>\" (i from 1), and so are their links, sources and flows."),
        f("router", Ty::Name, Required, "", "Router the hosts attach to (each gets its own link and router interface)."),
        f("count", Ty::Int(1, 1000), Required, "hosts", "Number of hosts."),
        f("dst", Ty::Destination, Required, "", "Destination host of every source: an IPv4 address, a node name or \"node/iface\"; sinks are added there unless one already listens."),
        f("prefix", Ty::Prefix, Absent("\"10.<200 + position in the groups list>.0.0/16\""), "", "Addresses of the generated hosts and router interfaces: host i gets the 4i+1-th address, the router's interface the 4i+2-th."),
        f("link", Ty::Table(&GROUP_LINK), Value("{}"), "", "The access links (both directions)."),
        f("mix", Ty::Table(&MIX), Value("{}"), "", "Share of TCP uploads and UDP sources, as a ratio (paper 003: tcp = 4, udp = 1)."),
        f("start", Ty::Duration, Value("0s"), "s", "When the sources start."),
        f("spread", Ty::Duration, Value("0s"), "s", "Host i (from 0) starts at start + i * spread / count."),
        f("bytes", Ty::Size, Absent("unlimited"), "bytes", "Bytes each TCP host uploads."),
        f("tcp_port", Ty::Int(1, 65535), Value("5001"), "", "TCP port of the destination's sink."),
        f("tcp", Ty::Table(&TCP), Value("{}"), "", "TCP parameters of the uploads (and of the sink, when the group adds one)."),
        f("udp", Ty::Table(&GROUP_UDP), Value("{}"), "", "The UDP sources."),
    ],
    tag: None,
    variants: &[],
};

/// `groups[].link`.
pub static GROUP_LINK: Section = Section {
    path: "groups[].link",
    fields: &[
        f("rate", Ty::Rate, Value("100Mbps"), "bit/s", "Data rate of each direction."),
        f("delay", Ty::Duration, Value("1ms"), "s", "One-way propagation delay."),
        f("mtu", Ty::Size, Value("1500"), "bytes", "MTU."),
        f("queue", Ty::Table(&QUEUE), Value("{}"), "", "Output queue of each direction."),
        f("loss", Ty::Table(&LOSS), Value("{}"), "", "Random loss of each direction."),
    ],
    tag: None,
    variants: &[],
};

/// `groups[].mix`.
pub static MIX: Section = Section {
    path: "groups[].mix",
    fields: &[
        f("tcp", Ty::Int(0, 1000), Value("1"), "", "Weight of TCP uploads."),
        f(
            "udp",
            Ty::Int(0, 1000),
            Value("0"),
            "",
            "Weight of UDP sources; of count hosts, round(count * udp / (tcp + udp)) run UDP, the last ones.",
        ),
    ],
    tag: None,
    variants: &[],
};

/// `groups[].udp`.
pub static GROUP_UDP: Section = Section {
    path: "groups[].udp",
    fields: &[
        f(
            "kind",
            Ty::Enum(&["cbr", "vbr", "onoff"]),
            Value("cbr"),
            "",
            "Source type (as the udp-cbr, udp-vbr and udp-onoff apps).",
        ),
        f("port", Ty::Int(1, 65535), Value("9"), "", "UDP port of the destination's sink."),
    ],
    tag: Some("kind"),
    variants: &[
        (
            "cbr",
            &[
                f("rate", Ty::Rate, Value("1Mbps"), "bit/s", "Application data rate."),
                f("packet_size", Ty::Size, Value("1000"), "bytes", "Payload per datagram (16..65507)."),
            ],
        ),
        (
            "vbr",
            &[
                f("rate", Ty::Rate, Value("448kbps"), "bit/s", "Mean application data rate."),
                f("min_size", Ty::Size, Value("100"), "bytes", "Smallest payload (16..65507)."),
                f("max_size", Ty::Size, Value("200"), "bytes", "Largest payload (min_size..65507)."),
                f("random", Ty::Bool, Value("false"), "", "Dither the gaps by a uniform factor in [0.5, 1.5)."),
            ],
        ),
        (
            "onoff",
            &[
                f("rate", Ty::Rate, Value("1Mbps"), "bit/s", "Data rate during ON periods."),
                f("packet_size", Ty::Size, Value("1000"), "bytes", "Payload per datagram (16..65507)."),
                f("on_mean", Ty::Duration, Value("500ms"), "s", "Mean ON period."),
                f("off_mean", Ty::Duration, Value("500ms"), "s", "Mean OFF period."),
            ],
        ),
    ],
};

/// `apps[].sctp`: association parameters (RFC 9260 §16, RFC 7829). Unset keys take the
/// preset's value.
pub static SCTP: Section = Section {
    path: "apps[].sctp",
    fields: &[
        f("preset", Ty::Enum(&["rfc9260", "rfc4960", "linux", "freebsd", "freebsd-cmt"]), Value("rfc9260"), "", "Parameter set the other keys start from (see the SCTP section of the README)."),
        f("rto_initial", Ty::Duration, Absent("preset (RFC 9260: 1s)"), "s", "RTO.Initial (more than zero)."),
        f("rto_min", Ty::Duration, Absent("preset (1s)"), "s", "RTO.Min (more than zero, at most rto_max)."),
        f("rto_max", Ty::Duration, Absent("preset (60s)"), "s", "RTO.Max."),
        f("rto_alpha", Ty::Probability, Absent("preset (0.125)"), "", "RTO.Alpha."),
        f("rto_beta", Ty::Probability, Absent("preset (0.25)"), "", "RTO.Beta."),
        f("max_burst", Ty::Int(1, 1000), Absent("preset (4)"), "packets", "Max.Burst."),
        f("valid_cookie_life", Ty::Duration, Absent("preset (60s)"), "s", "Valid.Cookie.Life."),
        f("assoc_max_retrans", Ty::Int(0, 1000), Absent("preset (10)"), "", "Association.Max.Retrans."),
        f("path_max_retrans", Ty::Int(0, 1000), Absent("preset (5)"), "", "Path.Max.Retrans: a path is inactive when its error count exceeds it."),
        f("max_init_retransmits", Ty::Int(0, 1000), Absent("preset (8)"), "", "Max.Init.Retransmits."),
        f("hb_interval", Ty::Duration, Absent("preset (30s)"), "s", "HB.interval (0s disables heartbeats on idle confirmed paths)."),
        f("sack_delay", Ty::Duration, Absent("preset (200ms)"), "s", "SACK.Delay (at most 500ms, RFC 9260 §6.2)."),
        f("sack_freq", Ty::Int(1, 1000), Absent("preset (2)"), "packets", "Acknowledge every Nth packet carrying DATA."),
        f("sack_on_gap", Ty::Enum(&["immediate", "counted"]), Absent("immediate"), "", "immediate: out-of-order DATA and DATA filling a gap are acknowledged at once (RFC 9260 §6.7); counted: they count toward sack_freq like any packet, bounded by sack_delay (a deviation, as paper 002's SACK every 7 packets; duplicates are still acknowledged at once)."),
        f("nagle", Ty::Enum(&["on", "off"]), Absent("off"), "", "Nagle-like bundling delay: on, new data leaves only in whole packets while data is outstanding; off (NO-DELAY, SCTP_NODELAY) sends it as soon as the windows allow."),
        f("go_back_n", Ty::Enum(&["on", "off"]), Absent("off"), "", "Go-back-N instead of selective acknowledgement (a deviation, as paper 002): as a receiver, DATA above the next expected TSN is discarded and SACKs carry no gap blocks; as a sender, the third SACK in a row not advancing the cumulative ack while DATA is in flight resends everything in flight (one fast-recovery cwnd reduction)."),
        f("pf_max_retrans", Ty::Int(0, 1000), Absent("preset (rfc9260: PF off; linux: 0)"), "", "PotentiallyFailed.Max.Retrans (RFC 7829); setting it turns PF on."),
        f("pf", Ty::Enum(&["on", "off"]), Absent("preset"), "", "Turn the PF state off even where the preset has it."),
        f("primary_switchover_max_retrans", Ty::Int(0, 1000), Absent("never"), "", "RFC 7829 Primary.Switchover.Max.Retrans."),
        f("switchback", Ty::Enum(&["on", "off"]), Value("on"), "", "Return to the primary when it is active again, or keep the alternate."),
        f("recv_buffer", Ty::Size, Absent("preset (256KiB)"), "bytes", "Receive buffer (initial a_rwnd; at least 1500 bytes, RFC 9260 §6)."),
        f("send_buffer", Ty::Size, Absent("preset (256KiB)"), "bytes", "Send buffer."),
        f("streams", Ty::Int(1, 65535), Absent("10"), "", "Outbound streams requested and inbound streams accepted."),
        f("pmtu", Ty::Size, Absent("1500"), "bytes", "Path MTU (largest IP datagram) the association builds packets for, from 576 (the IPv4 datagram every host accepts) to 65535; no PMTU discovery, so keep it within every link's mtu."),
        f("congestion", Ty::Enum(&["rfc9260", "rfc4960", "ca-shrink", "uncoupled", "lia", "olia", "rp-v1", "rp-v2"]), Absent("preset (rfc9260)"), "", "Congestion control; ca-shrink is paper 000's extra stage (cwnd -= factor*cwnd while cwnd > ssthresh); uncoupled is rfc9260 per destination; lia (RFC 6356), olia (Khalili et al.), rp-v1 and rp-v2 (CMT/RP, as INET) couple the destinations of a multipath (CMT) association."),
        f("congestion_factor", Ty::Probability, Value("0.144"), "", "The factor of ca-shrink (below 1)."),
        f("congestion_step", Ty::Enum(&["window", "sack"]), Absent("window"), "", "How lia, olia, rp-v1 and rp-v2 apply their congestion-avoidance increase: all at once per cwnd of acknowledged data (RFC 9260 §7.2.2, as INET) or a share on every SACK (RFC 6356 §3's per-ACK form)."),
        f("cmt", Ty::Table(&SCTP_CMT), Absent("CMT off"), "", "Concurrent Multipath Transfer (Iyengar, Amer, Stewart, IEEE/ACM ToN 14(5), 2006)."),
        f("ecn", Ty::Bool, Absent("false"), "", "Explicit Congestion Notification (RFC 9260 Appendix A): list the ECN Capable parameter in INIT / INIT ACK; when both ends do, packets of new DATA go out ECT(0), CE marks are echoed in ECNE chunks and the destination the marked data went to reduces its cwnd as for a fast retransmit, once per window, answered by CWR. Needs a queue that marks."),
        f("auth", Ty::Bool, Absent("false"), "", "Authenticated chunks (RFC 4895): RANDOM, CHUNKS and HMAC-ALGO in INIT / INIT ACK; when both ends do, ASCONF and ASCONF-ACK (with asconf) go out behind an HMAC-SHA-1 signed AUTH chunk and are discarded without one."),
        f("asconf", Ty::Bool, Absent("false"), "", "Dynamic address reconfiguration (RFC 5061): announce and accept ASCONF (ADD-IP, DELETE-IP, SET-PRIMARY). Needs auth = true (RFC 5061 §4.1)."),
        f("handover", Ty::Enum(&["none", "make-before-break", "break-before-make"]), Absent("none"), "", "What the application does when its node's interfaces gain or lose addresses: none (plain multihoming, failover only); make-before-break (ADD-IP a new address and SET-PRIMARY it as handover_trigger says, DELETE-IP an address when it goes); break-before-make (wait for an address to go, then ADD-IP and SET-PRIMARY the new one and DELETE-IP the old). Needs asconf = true. Results: handovers, handover_delay_mean and per handover <app>/handover<k> (requested_at, handover_delay: set-primary request to the first DATA sent from the new address, asconf_rtt, l2_handover_time and l2_associated_at when a link layer reports them: a roaming WLAN interface, from the start of the scan that found its AP (or the loss of its previous AP, if later) to its association); asconf_rtt_mean and l2_handover_time_mean. The SCTP endpoint's local addresses follow the node's, and the association's own primary destination moves to a peer address the new interface reaches once the SET-PRIMARY is acknowledged."),
        f("handover_trigger", Ty::Enum(&["new-address", "old-address-lost"]), Absent("new-address"), "", "When make-before-break moves the primary: new-address (the standard reading: ADD-IP and SET-PRIMARY as soon as the new interface has its address, while the old link still works) or old-address-lost (paper 001, section 3.3.4 step 6: ADD-IP when the new address comes, SET-PRIMARY with the DELETE-IP of the old address when the old interface loses its AP, which a roaming WLAN interface does when the AP's signal falls below its wlan.handover_threshold, -90 dBm by default). Under either, an address the associations still use hands over to the newest address left when it goes."),
    ],
    tag: None,
    variants: &[],
};

/// `apps[].sctp.cmt`: Concurrent Multipath Transfer. SFR, CUC and DAC take effect only
/// with `enabled`.
pub static SCTP_CMT: Section = Section {
    path: "apps[].sctp.cmt",
    fields: &[
        f("enabled", Ty::Bool, Value("false"), "", "CMT on: new data over every usable path at once, with SFR, CUC and DAC as set below."),
        f("scheduler", Ty::Enum(&["primary", "round-robin", "largest-cwnd"]), Absent("round-robin when enabled, else primary"), "", "Destinations of new data: the primary only (RFC 9260 §6.4), every usable one in turn (the CMT paper), or the one with the most cwnd room first."),
        f("sfr", Ty::Bool, Value("true"), "", "Split fast retransmit: miss indications only from later TSNs acknowledged on the same path."),
        f("cuc", Ty::Bool, Value("true"), "", "Cwnd update for CMT: each path's slow start follows its own pseudo-cumack, not the cumulative ack."),
        f("dac", Ty::Bool, Absent("preset (true; freebsd-cmt: false)"), "", "Delayed ack for CMT: the receiver keeps delaying SACKs on reordering and reports 1 or 2 packets in the SACK flags; the sender counts them."),
        f("retransmit", Ty::Enum(&["alternate", "same", "asap", "cwnd", "ssthresh", "lossrate"]), Absent("preset (alternate; freebsd-cmt: cwnd)"), "", "Where retransmissions go: alternate (RFC 9260 §6.4), or a CMT policy of Iyengar et al. 2004: same (where first sent), asap (a path with cwnd room now), cwnd (largest cwnd), ssthresh (largest ssthresh), lossrate (lowest configured route loss: an ideal policy, as in ns-2). Ties at random (seeded)."),
        f("pf", Ty::Bool, Value("false"), "", "CMT-PF (Natarajan et al. 2008): a path is potentially failed after its first timeout (or sctp.pf_max_retrans), gets no data until a heartbeat ACK, which restarts it at pf_cwnd MTU; an acknowledged retransmission does not bring it back."),
        f("pf_cwnd", Ty::Int(1, 4), Value("2"), "MTU", "cwnd of a path leaving CMT-PF (CMT-PF1..4; 2 as Natarajan et al. recommend)."),
        f("buffer_splitting", Ty::Enum(&["off", "sender", "receiver", "both"]), Absent("off"), "", "Buffer splitting (Dreibholz et al., GLOBECOM 2010; as INET's cmtBufferSplitVariant): each destination of new data may hold only its share of the send buffer (sender), of the peer's receive window plus one MTU (receiver), or both, so a slow path cannot block the fast ones."),
        f("buffer_split_share", Ty::Enum(&["equal", "cwnd"]), Absent("equal"), "", "Each destination's share under buffer splitting: 1/n of the buffer (INET) or in proportion to its cwnd."),
        f("buffer_split_counts", Ty::Enum(&["queued", "outstanding"]), Absent("queued"), "", "Bytes that count against a destination's share: sent to it and not yet cumulatively acked (INET's default), or only those in flight (INET's cmtBufferSplittingUsesOSB)."),
    ],
    tag: None,
    variants: &[],
};

/// `faults[]`.
pub static FAULT: Section = Section {
    path: "faults[]",
    fields: &[
        f("at", Ty::Duration, Required, "s", "When it happens (a fault after the end of the run never happens)."),
        f("action", Ty::Enum(&["link-down", "link-up", "iface-down", "iface-up"]), Required, "", "link-down loses everything queued or in flight on the link; iface-down loses the interface's queue and stops it sending and receiving."),
        f("target", Ty::Str, Required, "", "A link name for link-*, \"node/iface\" for iface-*."),
    ],
    tag: None,
    variants: &[],
};

/// `record`.
pub static RECORD: Section = Section {
    path: "record",
    fields: &[
        f("interval", Ty::Duration, Value("100ms"), "s", "Time-series sampling interval (queue lengths, rates); \"0s\" turns time series off. A run takes at most 10 million samples (duration / interval)."),
        f("events", Ty::StrList, Value("[\"fault\"]"), "", "Event kinds to log: fault, drop, enqueue, dequeue, tx, rx, tcp (state changes and loss episodes of TCP connections), sctp (path state and primary changes, timeouts, fast retransmits, heartbeats of SCTP associations), wlan (scans, authentication, association and handover steps of roaming stations)."),
        f("capture", Ty::StrList, Value("[]"), "", "Interfaces (\"node/iface\") to capture to pcap files (<node>-<iface>.pcap), packets sent and received there; two captures whose files would be one (also ignoring case) are rejected."),
        f("capture_wlans", Ty::StrList, Absent("[]"), "", "WLAN channels (wlans[].name) to capture to pcap files with radiotap headers (wlan-<name>.pcap): every frame on the channel's air (data, ACK, RTS/CTS, management), as a monitor-mode capture there would."),
        f("checksums", Ty::Enum(&["auto", "always"]), Absent("auto"), "", "When SCTP endpoints compute their packets' CRC32c (RFC 9260 §6.8) and TCP connections their Internet checksum (RFC 9293 §3.1): \"auto\" only when a capture is taken (nothing in the simulated network alters a packet's bytes, so the checksum detects nothing and results are the same without it; captured packets carry correct checksums), \"always\" on every packet."),
        f("rss", Ty::Bool, Absent("false"), "", "Sample each roaming station's signal strength of its AP at each interval (time series kind \"iface\", metric rss, in dBm; only while associated)."),
        f("positions", Ty::Bool, Absent("false"), "", "Sample the x and y of every node that has a position at each interval (time series kind \"node\", metrics x and y, in metres)."),
        f("packets", Ty::Bool, Absent("false"), "", "Log each SCTP DATA chunk sent and SACK chunk received (time, association, path, TSN or cumulative TSN ack, retransmission) to packets.parquet, for time-sequence graphs (sctpsim show)."),
    ],
    tag: None,
    variants: &[],
};

/// One row of the parameter reference.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamDoc {
    /// Full key path, e.g. `links[].delay`.
    pub key: String,
    /// Type description.
    pub ty: String,
    /// Default rendered as in a scenario file, `None` when required.
    pub default: Option<String>,
    /// Unit.
    pub unit: String,
    /// Meaning.
    pub doc: String,
}

/// Every key of the schema, depth-first in declaration order.
pub fn reference() -> Vec<ParamDoc> {
    let mut out = Vec::new();
    walk(&ROOT, "", &mut out);
    out
}

fn walk(section: &Section, prefix: &str, out: &mut Vec<ParamDoc>) {
    let join = |key: &str| if prefix.is_empty() { key.to_string() } else { format!("{prefix}.{key}") };
    let emit = |field: &Field, key: String, when: &str, out: &mut Vec<ParamDoc>| {
        let default = match field.default {
            Required => None,
            Value(v) if field.ty.is_stringy() => Some(format!("\"{v}\"")),
            Value(v) => Some(v.to_string()),
            Absent(text) => Some(format!("({text})")),
        };
        let doc = format!("{when}{}", field.doc);
        out.push(ParamDoc { key: key.clone(), ty: field.ty.describe(), default, unit: field.unit.into(), doc });
        match field.ty {
            Ty::Table(sub) => walk(sub, &key, out),
            Ty::TableList(sub) => walk(sub, &format!("{key}[]"), out),
            _ => {}
        }
    };
    for field in section.fields {
        emit(field, join(field.key), "", out);
    }
    if let Some(tag) = section.tag {
        for (value, fields) in section.variants {
            for field in *fields {
                emit(field, join(field.key), &format!("(when {tag} = \"{value}\") "), out);
            }
        }
    }
}
