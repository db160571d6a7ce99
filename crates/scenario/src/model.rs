//! The validated scenario: typed, cross-referenced, ready to build.
//!
//! [`parse`] reads the TOML tree through the schema, resolves every name reference
//! (nodes, interfaces, links, addresses) and checks the rules no single key can express
//! (unique names and addresses, one link per interface, applications on hosts, free ports).
//! Anything wrong is reported with the path of the offending key before anything runs.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use netsim::apps::handover::{HandoverPolicy, HandoverTrigger};
use netsim::apps::onoff::OnOffConfig;
use netsim::apps::sctp::{SctpAppConfig, SctpRole, MESSAGE_HEADER_LEN};
use netsim::apps::tcp::{BulkConfig, SinkConfig};
use netsim::apps::udp::{CbrConfig, CBR_HEADER_LEN};
use netsim::apps::vbr::VbrConfig;
use netsim::fault::FaultAction;
use netsim::loss::LossConfig;
use netsim::network::{ChannelConfig, IfaceId, LinkId, NodeKind};
use netsim::wire::PROTO_SCTP;
use netsim::wire::{PROTO_TCP, PROTO_UDP};
use netsim::{Duration, Instant};
use toml::{Table, Value};

use crate::error::ScenarioError;
use crate::mobility::MobilitySpec;
use crate::reader::{show, suggest, Reader};
use crate::schema::{EVENT_KINDS, ROOT, SCTP};
use crate::units;
use crate::wlan::{RadioSpec, WlanSpec};

/// The longest run: 2^63 ns, half the range of the simulation clock, in whole seconds (about
/// 292 years).
///
/// The clock counts nanoseconds in a `u64` (about 584 years), and the engines set timers as
/// `now + delay`, which overflows past its end: the time-series sampler schedules its next
/// sample one interval after a sample at the end of the run, so a run of `18446744073s`
/// sampled every `18446744073s` panicked (with overflow checks; it wrapped into the past
/// without them). Runs within half the range leave the other half for any timer set before the
/// end with a delay up to as long again, which covers that sampler and every default timer. No
/// realistic run comes near the limit; it turns a typo (`duration = "5124096h"`) into an error.
pub const MAX_DURATION: Duration = Duration::from_secs(9_223_372_036);

/// The most time-series samples a run may take (`duration / record.interval`).
///
/// A sample keeps a row (20 bytes) per interface metric, flow metric and association metric
/// in memory until the run ends, so ten million samples of even a two-node scenario take
/// more than a gigabyte; the bundled studies take at most 5000. A typo such as
/// `record.interval = "1ns"` (meant as 1ms) asked for ten billion, and the run grew until the
/// allocator aborted the process; the limit rejects it before anything runs.
pub const MAX_SAMPLES: u64 = 10_000_000;

/// A node.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeSpec {
    /// Name.
    pub name: String,
    /// Host or router.
    pub kind: NodeKind,
    /// Interfaces: (name, address).
    pub ifaces: Vec<(String, Ipv4Addr)>,
    /// Where it is and how it moves (`None`: no place in the world, as a wired-only node).
    pub mobility: Option<MobilitySpec>,
}

/// An interface by position: node index and interface index within the node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IfaceRef {
    /// Node index.
    pub node: usize,
    /// Interface index within the node.
    pub iface: usize,
}

impl IfaceRef {
    /// The network-wide interface id: interfaces are numbered in declaration order, which is
    /// the order [`Scenario::build`] creates them in.
    pub fn global_id(self, nodes: &[NodeSpec]) -> IfaceId {
        let before: usize = nodes[..self.node].iter().map(|n| n.ifaces.len()).sum();
        IfaceId((before + self.iface) as u32)
    }
}

/// A link.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkSpec {
    /// Name.
    pub name: String,
    /// The two ends.
    pub ends: [IfaceRef; 2],
    /// Forward (`ends[0]` -> `ends[1]`) and reverse parameters.
    pub dirs: [ChannelConfig; 2],
    /// Routing cost.
    pub cost: u64,
}

/// An explicit route.
#[derive(Clone, Debug, PartialEq)]
pub struct RouteSpec {
    /// Node index.
    pub node: usize,
    /// Destination prefix.
    pub prefix: Ipv4Addr,
    /// Prefix length.
    pub len: u8,
    /// Outgoing interface index within the node.
    pub via: usize,
}

/// An application.
#[derive(Clone, Debug, PartialEq)]
pub enum AppSpec {
    /// UDP constant bit rate source.
    UdpCbr {
        /// Name (and flow name).
        name: String,
        /// Node index.
        node: usize,
        /// Parameters.
        config: CbrConfig,
        /// Width of the window its start is drawn from (zero: no draw).
        start_jitter: Duration,
    },
    /// UDP sink.
    UdpSink {
        /// Name.
        name: String,
        /// Node index.
        node: usize,
        /// Port.
        port: u16,
    },
    /// An SCTP application (bulk sender, sink or request/response client).
    Sctp {
        /// Node index.
        node: usize,
        /// Parameters (the endpoint seed is derived from the run's seed at build time); boxed,
        /// as the association parameters make it many times larger than the other variants.
        config: Box<SctpAppConfig>,
    },
    /// UDP variable bit rate source.
    UdpVbr {
        /// Name (and flow name).
        name: String,
        /// Node index.
        node: usize,
        /// Parameters.
        config: VbrConfig,
        /// Width of the window its start is drawn from (zero: no draw).
        start_jitter: Duration,
    },
    /// UDP exponential on/off source.
    UdpOnOff {
        /// Name (and flow name).
        name: String,
        /// Node index.
        node: usize,
        /// Parameters.
        config: OnOffConfig,
        /// Width of the window its start is drawn from (zero: no draw).
        start_jitter: Duration,
    },
    /// TCP bulk transfer (its seed is derived from its name when the world is built).
    TcpBulk {
        /// Name (and flow name).
        name: String,
        /// Node index.
        node: usize,
        /// Parameters.
        config: BulkConfig,
        /// Width of the window its start is drawn from (zero: no draw).
        start_jitter: Duration,
    },
    /// TCP sink.
    TcpSink {
        /// Name.
        name: String,
        /// Node index.
        node: usize,
        /// Parameters.
        config: SinkConfig,
    },
}

/// What to record.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordSpec {
    /// Time-series sampling interval (None = off).
    pub interval: Option<Duration>,
    /// Event kinds to log.
    pub events: Vec<String>,
    /// Interfaces to capture.
    pub capture: Vec<IfaceRef>,
    /// WLAN channels (indices into `wlans`) whose air to capture (`record.capture_wlans`).
    pub capture_wlans: Vec<usize>,
    /// Keep the SCTP packet log (DATA chunks sent, SACK chunks received).
    pub packets: bool,
    /// Sample node positions as time series.
    pub positions: bool,
    /// Sample roaming stations' RSS as time series.
    pub rss: bool,
    /// When transports compute their checksums (`record.checksums`).
    pub checksums: netsim::world::ChecksumPolicy,
}

/// A validated scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// Name.
    pub name: String,
    /// Simulated duration.
    pub duration: Duration,
    /// Master seed.
    pub seed: u64,
    /// Nodes.
    pub nodes: Vec<NodeSpec>,
    /// Links.
    pub links: Vec<LinkSpec>,
    /// Explicit routes.
    pub routes: Vec<RouteSpec>,
    /// Applications.
    pub apps: Vec<AppSpec>,
    /// Faults, as (time, action) with ids in build order.
    pub faults: Vec<(Instant, FaultAction)>,
    /// Flow groups reported together (name, names of the member sources): one per
    /// `groups[]` entry, over its TCP uploads.
    pub flow_groups: Vec<(String, Vec<String>)>,
    /// Recording options.
    pub record: RecordSpec,
    /// WLAN channels.
    pub wlans: Vec<WlanSpec>,
    /// WLAN interfaces (radios), in declaration order.
    pub radios: Vec<RadioSpec>,
    resolved: Table,
}

/// Parse scenario text, apply `--set` overrides, validate.
///
/// Nodes with `present = false` are left out, with the applications on them
/// (`crate::absent`): the scenario is validated whole first, so every error names the key as
/// the file has it, and its resolved form keeps them.
pub fn parse(text: &str, overrides: &[String]) -> Result<Scenario, ScenarioError> {
    let mut root: Table = toml::from_str(text).map_err(|e| ScenarioError::syntax(text, &e))?;
    for o in overrides {
        crate::overrides::apply(&mut root, o)?;
    }
    let whole = Scenario::from_table(&root)?;
    match crate::absent::without_absent_nodes(&root)? {
        None => Ok(whole),
        Some(trimmed) => {
            let mut s = Scenario::from_table(&trimmed)?;
            s.resolved = whole.resolved;
            Ok(s)
        }
    }
}

impl Scenario {
    /// Validate a TOML tree.
    pub fn from_table(root: &Table) -> Result<Scenario, ScenarioError> {
        let mut r = Reader::new(String::new(), root, &ROOT)?;
        let name = r.str("name")?;
        let beyond = format!(
            "is longer than a run may last ({}, about {} years: half the range of the simulation clock, \
             which counts nanoseconds in 64 bits)",
            units::format_duration(MAX_DURATION),
            units::years(MAX_DURATION)
        );
        let duration = r.duration_up_to("duration", MAX_DURATION, &beyond)?;
        if duration.is_zero() {
            let shown = r.given("duration").map_or_else(|| "0s".to_string(), ToString::to_string);
            return Err(r.error("duration", format!("{shown} is not a positive duration")));
        }
        let seed = r.int("seed")? as u64;
        let mut b = Parser::default();
        // Read only when given, so scenarios without WLANs resolve exactly as before.
        if r.has("wlans") {
            b.wlans = b.list(&mut r, "wlans", |_, wr| crate::wlan::channel(wr))?;
            for (i, w) in b.wlans.iter().enumerate() {
                if let Some(j) = b.wlans[..i].iter().position(|o| o.name == w.name) {
                    return Err(ScenarioError::new(
                        format!("wlans[{i}].name"),
                        format!("\"{}\" is already used by wlans[{j}]", w.name),
                    ));
                }
            }
        }
        let mut node_readers = r.table_list("nodes")?;
        let nodes = node_readers.iter_mut().map(|nr| b.node(nr)).collect::<Result<Vec<_>, _>>()?;
        r.put_list("nodes", node_readers.into_iter().map(Reader::finish).collect());
        b.nodes = nodes;
        b.resolve_aps()?;
        let links = b.list(&mut r, "links", Parser::link)?;
        b.links = links.iter().map(|l| l.name.clone()).collect();
        let routes = b.list(&mut r, "routes", Parser::route)?;
        let mut apps = b.list(&mut r, "apps", Parser::app)?;
        b.check_sctp_streams(&apps)?;
        b.check_sctp_message_sizes()?;
        let mut links = links;
        let mut flow_groups = Vec::new();
        let mut group_readers = r.table_list("groups")?;
        for (gi, gr) in group_readers.iter_mut().enumerate() {
            flow_groups.push(b.group(gr, gi, &mut links, &mut apps)?);
        }
        r.put_list("groups", group_readers.into_iter().map(Reader::finish).collect());
        b.links = links.iter().map(|l| l.name.clone()).collect();
        let faults = b.list(&mut r, "faults", Parser::fault)?;
        let mut rec = r.table("record")?.expect("record has a default");
        let record = b.record(&mut rec)?;
        check_samples(&r, &rec, duration, record.interval)?;
        r.put_table("record", rec.finish());
        Ok(Scenario {
            name,
            duration,
            seed,
            nodes: b.nodes,
            links,
            routes,
            apps,
            faults,
            flow_groups,
            record,
            wlans: b.wlans,
            radios: b.radios.into_iter().map(|(spec, _)| spec).collect(),
            resolved: r.finish(),
        })
    }

    /// The scenario with every default filled in, as TOML (with `seed` set to `seed`).
    pub fn resolved_toml(&self, seed: u64) -> String {
        let mut t = self.resolved.clone();
        t.insert("seed".into(), Value::Integer(seed as i64));
        let body = toml::to_string(&t).unwrap_or_else(|e| format!("# could not render resolved scenario: {e}\n"));
        format!("# Resolved by sctpsim {}: every key with the value used.\n{body}", env!("CARGO_PKG_VERSION"))
    }

    /// `node/iface` name of a reference.
    pub fn iface_name(&self, r: IfaceRef) -> String {
        format!("{}/{}", self.nodes[r.node].name, self.nodes[r.node].ifaces[r.iface].0)
    }
}

/// Cross-reference state while parsing.
#[derive(Default)]
struct Parser {
    nodes: Vec<NodeSpec>,
    links: Vec<String>,
    node_index: BTreeMap<String, usize>,
    addresses: BTreeMap<Ipv4Addr, String>,
    link_of_iface: BTreeMap<(usize, usize), String>,
    link_names: BTreeMap<String, String>,
    app_names: BTreeMap<String, String>,
    ports: BTreeMap<(usize, u8, u16), String>,
    flows: usize,
    /// SCTP applications by (node, port): their key path and receive buffer.
    sctp_receivers: BTreeMap<(usize, u16), (String, u32)>,
    /// SCTP senders: key path of `message_size`, peer node and port, message size.
    sctp_senders: Vec<(String, usize, u16, u64)>,
    /// WLAN channels.
    wlans: Vec<WlanSpec>,
    /// Radios, each with its `ap` text and the key path of its `wlan` table.
    radios: Vec<(RadioSpec, Option<(String, String)>)>,
}

impl Parser {
    /// Read `key` as a list of tables with `item`, storing the resolved tables.
    fn list<'a, T>(
        &mut self,
        r: &mut Reader<'a>,
        key: &str,
        item: impl Fn(&mut Self, &mut Reader<'a>) -> Result<T, ScenarioError>,
    ) -> Result<Vec<T>, ScenarioError> {
        let mut readers = r.table_list(key)?;
        let out = readers.iter_mut().map(|ir| item(self, ir)).collect::<Result<Vec<_>, _>>()?;
        r.put_list(key, readers.into_iter().map(Reader::finish).collect());
        Ok(out)
    }

    fn node(&mut self, r: &mut Reader<'_>) -> Result<NodeSpec, ScenarioError> {
        let name = r.str("name")?;
        // Read for validation only: [`parse`] leaves absent nodes out before this parse.
        r.opt_bool("present")?;
        if let Some(&other) = self.node_index.get(&name) {
            return Err(r.error("name", format!("\"{name}\" is already used by nodes[{other}]")));
        }
        self.node_index.insert(name.clone(), self.node_index.len());
        let kind = match r.str("kind")?.as_str() {
            "router" => NodeKind::Router,
            _ => NodeKind::Host,
        };
        let mut iface_readers = r.table_list("interfaces")?;
        let mut ifaces: Vec<(String, Ipv4Addr)> = Vec::new();
        for (i, ir) in iface_readers.iter_mut().enumerate() {
            let iname = match ir.opt_str("name")? {
                Some(n) => n,
                None => {
                    let n = format!("eth{i}");
                    ir.resolve("name", n.clone());
                    n
                }
            };
            if ifaces.iter().any(|(n, _)| *n == iname) {
                return Err(ir.error("name", format!("\"{iname}\" is already used by another interface of \"{name}\"")));
            }
            let addr = ir.addr("address")?;
            if let Some(owner) = self.addresses.get(&addr) {
                return Err(ir.error("address", format!("{addr} is already used by {owner}")));
            }
            self.addresses.insert(addr, format!("{name}/{iname}"));
            if let Some(mut wr) = ir.table("wlan")? {
                let at = IfaceRef { node: self.node_index.len() - 1, iface: i };
                let (spec, ap) = crate::wlan::radio(&mut wr, &self.wlans, at, kind == NodeKind::Router)?;
                self.radios.push((spec, ap.map(|text| (text, wr.key_path("ap")))));
                ir.put_table("wlan", wr.finish());
            }
            ifaces.push((iname, addr));
        }
        r.put_list("interfaces", iface_readers.into_iter().map(Reader::finish).collect());
        let mobility = crate::mobility::read(r)?;
        Ok(NodeSpec { name, kind, ifaces, mobility })
    }

    /// Resolve each station's `ap` to an access point's radio on the same channel.
    fn resolve_aps(&mut self) -> Result<(), ScenarioError> {
        for k in 0..self.radios.len() {
            let Some((text, key)) = self.radios[k].1.clone() else { continue };
            let ap = self.iface_ref(&text).map_err(|m| ScenarioError::new(key.clone(), m))?;
            let found = self.radios.iter().find(|(s, _)| s.iface == ap);
            match found {
                Some((s, None)) if s.roam.is_none() && s.channel == self.radios[k].0.channel => {
                    self.radios[k].0.ap = Some(ap)
                }
                Some((s, None)) if s.roam.is_none() => {
                    return Err(ScenarioError::new(
                        key,
                        format!(
                            "\"{text}\" is an access point on channel \"{}\", not this station's",
                            self.wlans[s.channel].name
                        ),
                    ))
                }
                _ => {
                    return Err(ScenarioError::new(key, format!("\"{text}\" is not an access point's WLAN interface")))
                }
            }
        }
        Ok(())
    }

    /// Resolve a node name.
    fn node_ref(&self, name: &str) -> Result<usize, String> {
        self.node_index.get(name).copied().ok_or_else(|| {
            match suggest(name, self.node_index.keys().map(String::as_str)) {
                Some(s) => format!("no node named \"{name}\" (did you mean \"{s}\"?)"),
                None => format!("no node named \"{name}\""),
            }
        })
    }

    /// Resolve `"node/iface"`.
    fn iface_ref(&self, text: &str) -> Result<IfaceRef, String> {
        let (node, iface) = text
            .split_once('/')
            .ok_or_else(|| format!("\"{text}\" is not an interface reference (expected \"node/iface\")"))?;
        let n = self.node_ref(node).map_err(|m| format!("\"{text}\": {m}"))?;
        let names: Vec<&str> = self.nodes[n].ifaces.iter().map(|(i, _)| i.as_str()).collect();
        let i = names.iter().position(|i| *i == iface).ok_or_else(|| {
            format!("\"{text}\": node \"{node}\" has no interface \"{iface}\" ({})", has_ifaces(&names))
        })?;
        Ok(IfaceRef { node: n, iface: i })
    }

    /// Resolve a destination: address, node name, or "node/iface".
    fn destination(&self, text: &str) -> Result<Ipv4Addr, String> {
        if let Ok(addr) = text.parse::<Ipv4Addr>() {
            return if self.addresses.contains_key(&addr) {
                Ok(addr)
            } else {
                Err(format!("no interface has address {addr}"))
            };
        }
        if text.contains('/') {
            let r = self.iface_ref(text)?;
            return Ok(self.nodes[r.node].ifaces[r.iface].1);
        }
        let n = self.node_ref(text)?;
        self.nodes[n].ifaces.first().map(|i| i.1).ok_or_else(|| format!("node \"{text}\" has no interface"))
    }

    fn channel(&self, r: &mut Reader<'_>, base: Option<&ChannelConfig>) -> Result<ChannelConfig, ScenarioError> {
        // A direction's key falls back to the link's value; the link's keys have defaults.
        fn or<T>(v: Option<T>, base: Option<&ChannelConfig>, f: impl Fn(&ChannelConfig) -> T) -> T {
            v.or_else(|| base.map(f)).expect("link keys have defaults")
        }
        let rate_bps = or(r.opt_rate("rate")?, base, |c| c.rate_bps);
        let delay = or(r.opt_duration("delay")?, base, |c| c.delay);
        let mtu = or(r.opt_size("mtu")?, base, |c| c.mtu as u64);
        if mtu < 68 {
            return Err(r.error(
                "mtu",
                format!(
                    "{} is below the IPv4 minimum MTU of 68 bytes",
                    show(r.given("mtu").unwrap_or(&Value::Integer(mtu as i64)))
                ),
            ));
        }
        let queue = match r.table("queue")? {
            Some(mut q) => {
                let cfg = crate::queues::read(&mut q, rate_bps, delay)?;
                r.put_table("queue", q.finish());
                cfg
            }
            None => {
                let cfg = base.expect("queue has a default on links").queue.clone();
                // Inherited from the link: its derived defaults must suit this direction too.
                cfg.check(rate_bps, delay)
                    .map_err(|e| r.error("queue", format!("the link's queue does not suit this direction: {e}")))?;
                cfg
            }
        };
        let loss = match r.table("loss")? {
            Some(mut l) => {
                let cfg = Self::loss(&mut l)?;
                r.put_table("loss", l.finish());
                cfg
            }
            None => base.expect("loss has a default on links").loss,
        };
        Ok(ChannelConfig { rate_bps, delay, mtu: mtu as usize, queue, loss })
    }

    fn loss(r: &mut Reader<'_>) -> Result<LossConfig, ScenarioError> {
        Ok(match r.str("model")?.as_str() {
            "bernoulli" => LossConfig::Bernoulli { p: r.probability("p")? },
            "gilbert-elliott" => LossConfig::GilbertElliott {
                p_good_bad: r.probability("p_good_bad")?,
                p_bad_good: r.probability("p_bad_good")?,
                loss_good: r.probability("loss_good")?,
                loss_bad: r.probability("loss_bad")?,
            },
            _none => LossConfig::None,
        })
    }

    fn link(&mut self, r: &mut Reader<'_>) -> Result<LinkSpec, ScenarioError> {
        let ends_text = r.str_list("ends")?;
        if ends_text.len() != 2 {
            return Err(r.error(
                "ends",
                format!(
                    "{} must name exactly two interfaces, e.g. [\"A/eth0\", \"R1/eth0\"]",
                    show(r.given("ends").expect("ends was read"))
                ),
            ));
        }
        let mut ends = [IfaceRef { node: 0, iface: 0 }; 2];
        for (i, text) in ends_text.iter().enumerate() {
            ends[i] =
                self.iface_ref(text).map_err(|m| ScenarioError::new(format!("{}[{i}]", r.key_path("ends")), m))?;
        }
        if ends[0] == ends[1] {
            return Err(r.error("ends", "a link needs two different interfaces"));
        }
        let name = match r.opt_str("name")? {
            Some(n) => n,
            None => {
                let n = format!("{}-{}", self.nodes[ends[0].node].name, self.nodes[ends[1].node].name);
                r.resolve("name", n.clone());
                n
            }
        };
        if let Some(other) = self.link_names.get(&name) {
            let why = if r.has("name") { "" } else { " (give this link a name)" };
            return Err(r.error("name", format!("\"{name}\" is already used by {other}{why}")));
        }
        self.link_names.insert(name.clone(), r.path().to_string());
        for (i, end) in ends.iter().enumerate() {
            if self.radios.iter().any(|(s, _)| s.iface == *end) {
                return Err(ScenarioError::new(
                    format!("{}[{i}]", r.key_path("ends")),
                    format!("\"{}\" is a WLAN interface; a link connects wired interfaces", ends_text[i]),
                ));
            }
            if let Some(other) = self.link_of_iface.insert((end.node, end.iface), r.path().to_string()) {
                return Err(ScenarioError::new(
                    format!("{}[{i}]", r.key_path("ends")),
                    format!("\"{}\" is already connected by {other}", ends_text[i]),
                ));
            }
        }
        let base = self.channel(r, None)?;
        let cost = r.int("cost")? as u64;
        let mut dirs = [base.clone(), base.clone()];
        for (i, key) in ["forward", "reverse"].iter().enumerate() {
            let mut d = r.table(key)?.expect("direction tables default to {}");
            dirs[i] = self.channel(&mut d, Some(&base))?;
            r.put_table(key, d.finish());
        }
        Ok(LinkSpec { name, ends, dirs, cost })
    }

    fn route(&mut self, r: &mut Reader<'_>) -> Result<RouteSpec, ScenarioError> {
        let node_name = r.str("node")?;
        let node = self.node_ref(&node_name).map_err(|m| r.error("node", m))?;
        let (prefix, len) = r.prefix("dest")?;
        let via = r.str("via")?;
        let names: Vec<&str> = self.nodes[node].ifaces.iter().map(|(n, _)| n.as_str()).collect();
        let via = names.iter().position(|n| *n == via).ok_or_else(|| {
            r.error("via", format!("node \"{node_name}\" has no interface \"{via}\" ({})", has_ifaces(&names)))
        })?;
        Ok(RouteSpec { node, prefix, len, via })
    }

    fn app(&mut self, r: &mut Reader<'_>) -> Result<AppSpec, ScenarioError> {
        let kind = r.str("kind")?;
        let index = self.app_names.len();
        let name = match r.opt_str("name")? {
            Some(n) => n,
            None => {
                let n = format!("{kind}-{index}");
                r.resolve("name", n.clone());
                n
            }
        };
        if let Some(other) = self.app_names.get(&name) {
            return Err(r.error("name", format!("\"{name}\" is already used by {other}")));
        }
        self.app_names.insert(name.clone(), r.path().to_string());
        let node_name = r.str("node")?;
        let node = self.node_ref(&node_name).map_err(|m| r.error("node", m))?;
        if self.nodes[node].kind == NodeKind::Router {
            return Err(r.error("node", format!("\"{node_name}\" is a router; applications run on hosts")));
        }
        if self.nodes[node].ifaces.is_empty() {
            return Err(r.error("node", format!("\"{node_name}\" has no interface")));
        }
        match kind.as_str() {
            "udp-cbr" => {
                let (src, src_port, dst, dst_port) = self.endpoints(r, node, &node_name, index)?;
                let rate_bps = r.rate("rate")?;
                let payload = payload_size(r, "packet_size")?;
                let (start, stop) = start_stop(r)?;
                let start_jitter = start_jitter(r)?;
                let config = CbrConfig { src, src_port, dst, dst_port, rate_bps, payload, start, stop };
                self.flows += 1;
                Ok(AppSpec::UdpCbr { name, node, config, start_jitter })
            }
            "sctp-bulk" | "sctp-sink" | "sctp-requests" => self.sctp_app(r, &kind, name, node, index),
            "udp-vbr" => {
                let (src, src_port, dst, dst_port) = self.endpoints(r, node, &node_name, index)?;
                let rate_bps = r.rate("rate")?;
                let (min_size, max_size) = size_range(r)?;
                let random = r.bool("random")?;
                let (start, stop) = start_stop(r)?;
                let start_jitter = start_jitter(r)?;
                let config =
                    VbrConfig { src, src_port, dst, dst_port, rate_bps, min_size, max_size, random, start, stop };
                self.flows += 1;
                Ok(AppSpec::UdpVbr { name, node, config, start_jitter })
            }
            "udp-onoff" => {
                let (src, src_port, dst, dst_port) = self.endpoints(r, node, &node_name, index)?;
                let rate_bps = r.rate("rate")?;
                let packet_size = payload_size(r, "packet_size")?;
                let (on_mean, off_mean) = on_off(r)?;
                let (start, stop) = start_stop(r)?;
                let start_jitter = start_jitter(r)?;
                let config =
                    OnOffConfig { src, src_port, dst, dst_port, rate_bps, packet_size, on_mean, off_mean, start, stop };
                self.flows += 1;
                Ok(AppSpec::UdpOnOff { name, node, config, start_jitter })
            }
            "tcp-bulk" => {
                let (src, src_port, dst, dst_port) = self.endpoints(r, node, &node_name, index)?;
                self.bind(r, "src_port", node, PROTO_TCP, src_port)?;
                let bytes = r.opt_size("bytes")?;
                let start = Instant(r.duration("start")?.as_nanos());
                let start_jitter = start_jitter(r)?;
                let tcp = self.tcp_table(r)?;
                self.flows += 1;
                Ok(AppSpec::TcpBulk {
                    name,
                    node,
                    start_jitter,
                    config: BulkConfig { src, src_port, dst, dst_port, bytes, start, tcp, seed: 0 },
                })
            }
            "tcp-sink" => {
                let port = r.int("port")? as u16;
                self.bind(r, "port", node, PROTO_TCP, port)?;
                let drain_rate = r.opt_rate("drain_rate")?;
                let tcp = self.tcp_table(r)?;
                Ok(AppSpec::TcpSink { name, node, config: SinkConfig { port, tcp, drain_rate, seed: 0 } })
            }
            _udp_sink => {
                let port = r.int("port")? as u16;
                self.bind(r, "port", node, PROTO_UDP, port)?;
                Ok(AppSpec::UdpSink { name, node, port })
            }
        }
    }

    fn sctp_app(
        &mut self,
        r: &mut Reader<'_>,
        kind: &str,
        name: String,
        node: usize,
        index: usize,
    ) -> Result<AppSpec, ScenarioError> {
        let port = match r.opt_int("port")? {
            Some(p) => p as u16,
            None => {
                let p = 5000 + (index as u16 % 60000);
                r.resolve("port", p as i64);
                p
            }
        };
        self.bind(r, "port", node, PROTO_SCTP, port)?;
        let mut s = r.table("sctp")?.expect("sctp has a default");
        let config = Self::sctp_config(&mut s)?;
        let handover = match s.opt_str("handover")? {
            Some(name) => HandoverPolicy::from_name(&name).expect("schema lists only known policies"),
            None => HandoverPolicy::None,
        };
        // Absent unless given, like `handover`: a scenario without it resolves as before.
        let handover_trigger = match s.opt_str("handover_trigger")? {
            Some(name) => HandoverTrigger::from_name(&name).expect("schema lists only known triggers"),
            None => HandoverTrigger::NewAddress,
        };
        if handover != HandoverPolicy::None && !config.asconf {
            return Err(s.error("handover", format!("\"{}\" needs asconf = true (and auth = true)", handover.name())));
        }
        r.put_table("sctp", s.finish());
        self.sctp_receivers.insert((node, port), (r.key_path("sctp"), config.recv_buffer));
        let role = if kind == "sctp-sink" {
            let drain_rate = r.opt_rate("drain_rate")?.map(|bps| (bps / 8).max(1));
            SctpRole::Sink { drain_rate }
        } else {
            let peer_name = r.str("peer")?;
            let peer_node = self.node_ref(&peer_name).map_err(|m| r.error("peer", m))?;
            let mut peer: Vec<_> = self.nodes[peer_node].ifaces.iter().map(|(_, a)| *a).collect();
            if peer.is_empty() || peer_node == node {
                return Err(r.error("peer", format!("\"{peer_name}\" must be another host with interfaces")));
            }
            if let Some(text) = r.opt_str("primary")? {
                let a = self.destination(&text).map_err(|m| r.error("primary", m))?;
                let Some(i) = peer.iter().position(|x| *x == a) else {
                    return Err(r.error("primary", format!("\"{text}\" is not an address of \"{peer_name}\"")));
                };
                peer.swap(0, i);
            }
            let peer_port = r.int("peer_port")? as u16;
            let start = Instant(r.duration("start")?.as_nanos());
            let message_size = r.size("message_size")?;
            self.sctp_senders.push((r.key_path("message_size"), peer_node, peer_port, message_size));
            if kind == "sctp-requests" {
                // Responses are as large as requests and come back to this application.
                self.sctp_senders.push((r.key_path("message_size"), node, port, message_size));
            }
            if !(MESSAGE_HEADER_LEN as u64..=1 << 20).contains(&message_size) {
                return Err(r.error(
                    "message_size",
                    format!("{message_size} is out of range (expected {MESSAGE_HEADER_LEN}..1048576 bytes)"),
                ));
            }
            if message_size > u64::from(config.send_buffer) {
                return Err(r.error(
                    "message_size",
                    format!("{message_size} bytes does not fit the send buffer ({} bytes)", config.send_buffer),
                ));
            }
            if kind == "sctp-bulk" {
                let more_peers = self.more_peers(r, node, peer_node)?;
                for addrs in &more_peers {
                    if let Some(&a) = addrs.first() {
                        let n = self.node_of(a);
                        self.sctp_senders.push((r.key_path("message_size"), n, peer_port, message_size));
                    }
                }
                SctpRole::Bulk {
                    peer,
                    more_peers,
                    peer_port,
                    start,
                    bytes: r.opt_size("bytes")?,
                    message_size: message_size as usize,
                    streams: r.int("streams")? as u16,
                    unordered: r.str("delivery")? == "unordered",
                }
            } else {
                SctpRole::Requests {
                    peer,
                    peer_port,
                    start,
                    message_size: message_size as usize,
                    rate: r.int("rate")? as f64,
                }
            }
        };
        let addrs = self.nodes[node].ifaces.iter().map(|(_, a)| *a).collect();
        Ok(AppSpec::Sctp {
            node,
            config: Box::new(SctpAppConfig {
                name,
                addrs,
                port,
                config,
                role,
                seed: 0,
                flows: Vec::new(),
                handover,
                handover_trigger,
            }),
        })
    }

    /// `more_peers` of an `sctp-bulk` on `node` whose `peer` is `peer_node`: the addresses of
    /// each (the host's interfaces, the first as primary); each another host, once.
    fn more_peers(
        &self,
        r: &mut Reader<'_>,
        node: usize,
        peer_node: usize,
    ) -> Result<Vec<Vec<Ipv4Addr>>, ScenarioError> {
        if !r.has("more_peers") {
            return Ok(Vec::new());
        }
        let mut seen = vec![peer_node];
        let mut out = Vec::new();
        for (i, name) in r.str_list("more_peers")?.into_iter().enumerate() {
            let key = format!("more_peers[{i}]");
            let n = self.node_ref(&name).map_err(|m| r.error(&key, m))?;
            if n == node || self.nodes[n].ifaces.is_empty() {
                return Err(r.error(&key, format!("\"{name}\" must be another host with interfaces")));
            }
            // One association between two endpoints (RFC 9260 §1.4, §5.2).
            if seen.contains(&n) {
                return Err(r.error(&key, format!("\"{name}\" is already a peer of this application")));
            }
            seen.push(n);
            out.push(self.nodes[n].ifaces.iter().map(|(_, a)| *a).collect());
        }
        Ok(out)
    }

    /// Every `sctp-bulk`'s `streams` must be open on its association: no more than its own
    /// outbound streams (`sctp.streams`) and the peer's maximum inbound streams (the sink's
    /// `sctp.streams`), which RFC 9260 §5.1.1 makes the most the association can have.
    fn check_sctp_streams(&self, apps: &[AppSpec]) -> Result<(), ScenarioError> {
        for (i, app) in apps.iter().enumerate() {
            let AppSpec::Sctp { config, .. } = app else { continue };
            let SctpRole::Bulk { streams, ref peer, ref more_peers, peer_port, .. } = config.role else { continue };
            let key = format!("apps[{i}].streams");
            let own = config.config.outbound_streams;
            if streams > own {
                return Err(ScenarioError::new(
                    key,
                    format!("{streams} is more than the association's {own} outbound streams (apps[{i}].sctp.streams)"),
                ));
            }
            for addr in std::iter::once(peer).chain(more_peers).filter_map(|p| p.first()) {
                let peer_node = self.node_of(*addr);
                let sink = apps.iter().enumerate().find_map(|(j, a)| match a {
                    AppSpec::Sctp { node, config: c } if *node == peer_node && c.port == peer_port => {
                        matches!(c.role, SctpRole::Sink { .. }).then_some((j, c.config.max_inbound_streams))
                    }
                    _ => None,
                });
                if let Some((j, inbound)) = sink.filter(|&(_, inbound)| streams > inbound) {
                    return Err(ScenarioError::new(
                        key,
                        format!(
                            "{streams} is more than the {inbound} inbound streams the peer accepts (apps[{j}].sctp.streams)"
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Every SCTP message must fit the receive buffer of the application it goes to: a larger
    /// one cannot be reassembled there and is only handed over in parts (RFC 9260 §6.9), which
    /// the applications here do not expect.
    fn check_sctp_message_sizes(&self) -> Result<(), ScenarioError> {
        for (key, node, port, size) in &self.sctp_senders {
            let Some((receiver, buffer)) = self.sctp_receivers.get(&(*node, *port)) else { continue };
            if *size > u64::from(*buffer) {
                let app = receiver.strip_suffix(".sctp").unwrap_or(receiver);
                return Err(ScenarioError::new(
                    key.clone(),
                    format!(
                        "{size} bytes does not fit the receive buffer of {app} ({receiver}.recv_buffer = {buffer} \
                         bytes): a message larger than its receiver's buffer is only handed over in parts"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// `apps[].sctp`: a preset, then every key given.
    fn sctp_config(r: &mut Reader<'_>) -> Result<sctp::Config, ScenarioError> {
        let preset = r.str("preset")?;
        let mut c = sctp::Preset::from_name(&preset).expect("schema lists only known presets").config();
        let dur = |r: &mut Reader<'_>, key: &str| -> Result<Option<netsim::Duration>, ScenarioError> {
            Ok(r.opt_duration(key)?.map(|d| netsim::Duration(d.as_nanos())))
        };
        let int = |r: &mut Reader<'_>, key: &str| -> Result<Option<u32>, ScenarioError> {
            Ok(r.opt_int(key)?.map(|v| v as u32))
        };
        if let Some(v) = dur(r, "rto_initial")? {
            c.rto_initial = v;
        }
        if let Some(v) = dur(r, "rto_min")? {
            c.rto_min = v;
        }
        if let Some(v) = dur(r, "rto_max")? {
            c.rto_max = v;
        }
        if r.has("rto_alpha") {
            c.rto_alpha = r.probability("rto_alpha")?;
        }
        if r.has("rto_beta") {
            c.rto_beta = r.probability("rto_beta")?;
        }
        if let Some(v) = int(r, "max_burst")? {
            c.max_burst = v;
        }
        if let Some(v) = dur(r, "valid_cookie_life")? {
            c.valid_cookie_life = v;
        }
        if let Some(v) = int(r, "assoc_max_retrans")? {
            c.assoc_max_retrans = v;
        }
        if let Some(v) = int(r, "path_max_retrans")? {
            c.path_max_retrans = v;
        }
        if let Some(v) = int(r, "max_init_retransmits")? {
            c.max_init_retransmits = v;
        }
        if let Some(v) = dur(r, "hb_interval")? {
            c.hb_interval = (!v.is_zero()).then_some(v);
        }
        if let Some(v) = r.opt_duration_up_to("sack_delay", MAX_ACK_DELAY, &longer_than_allowed("RFC 9260 §6.2"))? {
            c.sack_delay = v;
        }
        if let Some(v) = int(r, "sack_freq")? {
            c.sack_freq = v;
        }
        if let Some(v) = r.opt_str("sack_on_gap")? {
            c.sack_immediate_on_gap = v == "immediate";
        }
        if let Some(v) = r.opt_str("nagle")? {
            c.nagle = v == "on";
        }
        if let Some(v) = r.opt_str("go_back_n")? {
            c.go_back_n = v == "on";
        }
        if let Some(v) = int(r, "pf_max_retrans")? {
            c.pf_max_retrans = Some(v);
        }
        if r.opt_str("pf")?.as_deref() == Some("off") {
            c.pf_max_retrans = None;
        }
        if let Some(v) = int(r, "primary_switchover_max_retrans")? {
            c.primary_switchover_max_retrans = Some(v);
        }
        c.switchback = r.str("switchback")? == "on";
        if let Some(v) = r.opt_size("recv_buffer")? {
            c.recv_buffer = v.min(u64::from(u32::MAX)) as u32;
        }
        if let Some(v) = r.opt_size("send_buffer")? {
            c.send_buffer = v.min(u64::from(u32::MAX)) as u32;
        }
        if let Some(v) = r.opt_int("streams")? {
            c.outbound_streams = v as u16;
            c.max_inbound_streams = v as u16;
        }
        if let Some(v) = r.opt_size("pmtu")? {
            if v > 65535 {
                return Err(r.error("pmtu", format!("{v} is larger than the largest IPv4 datagram (65535 bytes)")));
            }
            c.pmtu = v as u32;
        }
        let factor = r.probability("congestion_factor")?;
        if let Some(name) = r.opt_str("congestion")? {
            c.congestion =
                sctp::CongestionConfig::from_name(&name, Some(factor)).expect("schema lists only known controllers");
        }
        let step = match r.opt_str("congestion_step")?.as_deref() {
            Some("sack") => sctp::congestion::CaStep::Sack,
            _ => sctp::congestion::CaStep::Window,
        };
        c.congestion = c.congestion.with_ca_step(step);
        if let Some(mut m) = r.table("cmt")? {
            Self::sctp_cmt(&mut m, &mut c)?;
            r.put_table("cmt", m.finish());
        }
        if let Some(ecn) = r.opt_bool("ecn")? {
            c.ecn = ecn;
        }
        if let Some(auth) = r.opt_bool("auth")? {
            c.auth = auth;
        }
        if let Some(asconf) = r.opt_bool("asconf")? {
            c.asconf = asconf;
        }
        Self::check_sctp_config(r, &preset, &c)?;
        // The engine's own checks, for anything the ones above leave out: its messages start
        // with the name of a field, which is the scenario's key where there is one.
        c.validate().map_err(|m| match m.split_once(": ") {
            Some((key, why)) if SCTP.fields.iter().any(|f| f.key == key) => r.error(key, why.to_string()),
            _ => ScenarioError::new(r.path(), m),
        })?;
        Ok(c)
    }

    /// The limits of an SCTP configuration that the keys' types cannot say. Each error names
    /// the key the scenario gives, with its value, and the value of any other key it is
    /// compared with (the preset's when the scenario leaves that key out).
    fn check_sctp_config(r: &Reader<'_>, preset: &str, c: &sctp::Config) -> Result<(), ScenarioError> {
        let value = |key: &str, d: netsim::Duration| match r.given(key) {
            Some(v) => show(v),
            None => format!("\"{}\" of preset \"{preset}\"", units::format_duration(d)),
        };
        // RFC 9260 §6.3.1 computes the RTO from RTO.Initial and bounds it by RTO.Min and
        // RTO.Max (§16): each is a positive time, and RTO.Min cannot exceed RTO.Max.
        for (key, d) in [("rto_initial", c.rto_initial), ("rto_min", c.rto_min), ("rto_max", c.rto_max)] {
            if d.is_zero() {
                return Err(r.error(key, format!("{} is not a positive duration", value(key, d))));
            }
        }
        if c.rto_min > c.rto_max {
            let (min, max) = (value("rto_min", c.rto_min), value("rto_max", c.rto_max));
            return Err(if r.has("rto_max") {
                r.error("rto_max", format!("{max} is below rto_min ({min})"))
            } else {
                r.error("rto_min", format!("{min} is above rto_max ({max})"))
            });
        }
        // RFC 9260 §6: an endpoint MUST NOT indicate less than 1500 bytes in its initial a_rwnd.
        if c.recv_buffer < 1500 {
            let shown = r.given("recv_buffer").map_or_else(|| c.recv_buffer.to_string(), show);
            return Err(r.error(
                "recv_buffer",
                format!("{shown} is below the 1500 bytes RFC 9260 §6 requires of the initial receive window"),
            ));
        }
        // ca-shrink takes factor * cwnd off the window at each step: 1 or more leaves nothing.
        if let Some(factor) = c.congestion.shrink_factor().filter(|f| !(0.0..1.0).contains(f)) {
            let shown = r.given("congestion_factor").map_or_else(|| factor.to_string(), show);
            return Err(r.error(
                "congestion_factor",
                format!(
                    "{shown} is out of range for \"ca-shrink\" (expected at least 0 and below 1: each step takes \
                     factor * cwnd off the window)"
                ),
            ));
        }
        // RFC 5061 §4.1: ASCONF and ASCONF-ACK chunks are sent authenticated (RFC 4895).
        if c.asconf && !c.auth {
            let shown = r.given("asconf").map_or_else(|| "true".to_string(), show);
            return Err(r.error(
                "asconf",
                format!("{shown} needs auth = true (RFC 5061 §4.1: ASCONF chunks are authenticated)"),
            ));
        }
        Ok(())
    }

    /// `apps[].sctp.cmt`: CMT on or off, its scheduler and its three algorithms, the
    /// retransmission policy, CMT-PF and buffer splitting.
    fn sctp_cmt(r: &mut Reader<'_>, c: &mut sctp::Config) -> Result<(), ScenarioError> {
        if r.bool("enabled")? {
            *c = std::mem::take(c).with_cmt();
        }
        if let Some(name) = r.opt_str("scheduler")? {
            c.scheduler = sctp::cmt::SchedulerConfig::from_name(&name).expect("schema lists only known schedulers");
        }
        c.cmt.sfr = r.bool("sfr")?;
        c.cmt.cuc = r.bool("cuc")?;
        // DAC's default is the preset's (freebsd-cmt has it off, as FreeBSD's cmt_use_dac).
        if let Some(dac) = r.opt_bool("dac")? {
            c.cmt.dac = dac;
        }
        r.resolve("dac", c.cmt.dac);
        if let Some(name) = r.opt_str("retransmit")? {
            c.retransmit = sctp::cmt::RetransmitConfig::from_name(&name).expect("schema lists only known policies");
        }
        r.resolve("retransmit", c.retransmit.name());
        let pf_cwnd = r.int("pf_cwnd")?;
        if r.bool("pf")? {
            *c = std::mem::take(c).with_cmt_pf(pf_cwnd as u32);
        }
        // Buffer splitting (Dreibholz et al., GLOBECOM 2010): each key only where given, so
        // scenarios without them resolve as before.
        if let Some(side) = r.opt_str("buffer_splitting")? {
            let split = &mut c.buffer_splitting;
            (split.sender, split.receiver) = match side.as_str() {
                "sender" => (true, false),
                "receiver" => (false, true),
                "both" => (true, true),
                _ => (false, false),
            };
        }
        if let Some(share) = r.opt_str("buffer_split_share")? {
            c.buffer_splitting.share = if share == "cwnd" { sctp::SplitShare::Cwnd } else { sctp::SplitShare::Equal };
        }
        if let Some(counts) = r.opt_str("buffer_split_counts")? {
            c.buffer_splitting.counts =
                if counts == "outstanding" { sctp::SplitCounts::Outstanding } else { sctp::SplitCounts::Queued };
        }
        Ok(())
    }

    /// Claim (protocol, port) on a node for the app being read.
    fn bind(&mut self, r: &Reader<'_>, key: &str, node: usize, protocol: u8, port: u16) -> Result<(), ScenarioError> {
        if let Some(other) = self.ports.insert((node, protocol, port), r.path().to_string()) {
            let proto = match protocol {
                PROTO_TCP => "TCP",
                PROTO_SCTP => "SCTP",
                _ => "UDP",
            };
            return Err(r.error(
                key,
                format!("{proto} port {port} on \"{}\" is already used by {other}", self.nodes[node].name),
            ));
        }
        Ok(())
    }

    /// `src`, `src_port`, `dst`, `dst_port` of a source on `node`.
    fn endpoints(
        &mut self,
        r: &mut Reader<'_>,
        node: usize,
        node_name: &str,
        index: usize,
    ) -> Result<(Ipv4Addr, u16, Ipv4Addr, u16), ScenarioError> {
        let dst_text = r.str("dst")?;
        let dst = self.destination(&dst_text).map_err(|m| r.error("dst", m))?;
        let dst_port = r.int("dst_port")? as u16;
        let src = match r.opt_str("src")? {
            None => {
                let a = self.nodes[node].ifaces[0].1;
                r.resolve("src", a.to_string());
                a
            }
            Some(text) => {
                let a = self.destination(&text).map_err(|m| r.error("src", m))?;
                if !self.nodes[node].ifaces.iter().any(|(_, x)| *x == a) {
                    return Err(r.error("src", format!("\"{text}\" is not an address of \"{node_name}\"")));
                }
                a
            }
        };
        let src_port = match r.opt_int("src_port")? {
            Some(p) => p as u16,
            None => {
                let p = 49152 + (index as u16 % 16384);
                r.resolve("src_port", p as i64);
                p
            }
        };
        Ok((src, src_port, dst, dst_port))
    }

    /// The `tcp` table of an app or group.
    fn tcp_table(&self, r: &mut Reader<'_>) -> Result<tcp::Config, ScenarioError> {
        let mut t = r.table("tcp")?.expect("tcp has a default");
        let cfg = tcp_config(&mut t)?;
        r.put_table("tcp", t.finish());
        Ok(cfg)
    }

    /// Expand one `groups[]` entry into hosts, links, sources and sinks. Returns the flow group
    /// of its TCP uploads.
    fn group(
        &mut self,
        r: &mut Reader<'_>,
        gi: usize,
        links: &mut Vec<LinkSpec>,
        apps: &mut Vec<AppSpec>,
    ) -> Result<(String, Vec<String>), ScenarioError> {
        let name = r.str("name")?;
        let router_name = r.str("router")?;
        let router = self.node_ref(&router_name).map_err(|m| r.error("router", m))?;
        if self.nodes[router].kind != NodeKind::Router {
            return Err(r.error("router", format!("\"{router_name}\" is a host; hosts attach to a router")));
        }
        let count = r.int("count")? as usize;
        let dst_text = r.str("dst")?;
        let dst = self.destination(&dst_text).map_err(|m| r.error("dst", m))?;
        let dst_node = self.node_of(dst);
        if self.nodes[dst_node].kind == NodeKind::Router {
            return Err(r.error(
                "dst",
                format!("\"{dst_text}\" is a router; the destination runs sinks, so it must be a host"),
            ));
        }
        let (base, len) = match r.opt_str("prefix")? {
            Some(_) => r.prefix("prefix")?,
            None => {
                let p = (Ipv4Addr::new(10, (200 + gi % 56) as u8, 0, 0), 16);
                r.resolve("prefix", format!("{}/{}", p.0, p.1));
                p
            }
        };
        let room = 1u64 << (32 - len as u32);
        if (count as u64) * 4 > room {
            return Err(r.error(
                "prefix",
                format!("\"{base}/{len}\" has {room} addresses; {count} hosts need {} (4 each)", count * 4),
            ));
        }
        let link_cfg = {
            let mut l = r.table("link")?.expect("link has a default");
            let cfg = self.channel(&mut l, None)?;
            r.put_table("link", l.finish());
            cfg
        };
        let (tcp_w, udp_w) = {
            let mut m = r.table("mix")?.expect("mix has a default");
            let w = (m.int("tcp")? as u64, m.int("udp")? as u64);
            if w.0 + w.1 == 0 {
                return Err(m.error("tcp", "tcp and udp weights are both 0 (give at least one a positive weight)"));
            }
            r.put_table("mix", m.finish());
            w
        };
        let n_udp = ((count as u64 * udp_w) as f64 / (tcp_w + udp_w) as f64).round() as usize;
        let start = r.duration("start")?;
        let spread = r.duration("spread")?;
        let bytes = r.opt_size("bytes")?;
        let tcp_port = r.int("tcp_port")? as u16;
        let tcp = self.tcp_table(r)?;
        let mut u = r.table("udp")?.expect("udp has a default");
        let udp_kind = u.str("kind")?;
        let udp_port = u.int("port")? as u16;
        let udp_rate = u.rate("rate")?;
        let udp_sizes = match udp_kind.as_str() {
            "vbr" => size_range(&mut u)?,
            _ => {
                let s = payload_size(&mut u, "packet_size")?;
                (s, s)
            }
        };
        let udp_random = if udp_kind == "vbr" { u.bool("random")? } else { false };
        let udp_onoff = if udp_kind == "onoff" { Some(on_off(&mut u)?) } else { None };
        r.put_table("udp", u.finish());

        let base = u32::from(base) & !((room - 1) as u32);
        let mut members = Vec::new();
        for i in 0..count {
            let host = format!("{name}-{}", i + 1);
            let host_addr = Ipv4Addr::from(base + 4 * i as u32 + 1);
            let router_addr = Ipv4Addr::from(base + 4 * i as u32 + 2);
            let clash =
                |what: &str, other: &str| r.error("name", format!("generated {what} \"{host}\" clashes with {other}"));
            if self.node_index.contains_key(&host) {
                return Err(clash("host", "a node of the same name"));
            }
            if let Some(other) = self.link_names.get(&host) {
                return Err(clash("link", other));
            }
            if let Some(other) = self.app_names.get(&host) {
                return Err(clash("source", other));
            }
            for addr in [host_addr, router_addr] {
                if let Some(owner) = self.addresses.get(&addr) {
                    return Err(r.error("prefix", format!("generated address {addr} is already used by {owner}")));
                }
            }
            if self.nodes[router].ifaces.iter().any(|(n, _)| *n == host) {
                return Err(clash("router interface", "an interface of the router"));
            }
            let h = self.nodes.len();
            self.node_index.insert(host.clone(), h);
            self.nodes.push(NodeSpec {
                name: host.clone(),
                kind: NodeKind::Host,
                ifaces: vec![("eth0".into(), host_addr)],
                mobility: None,
            });
            self.nodes[router].ifaces.push((host.clone(), router_addr));
            self.addresses.insert(host_addr, format!("{host}/eth0"));
            self.addresses.insert(router_addr, format!("{router_name}/{host}"));
            let ends =
                [IfaceRef { node: h, iface: 0 }, IfaceRef { node: router, iface: self.nodes[router].ifaces.len() - 1 }];
            let path = format!("{} (host {})", r.path(), i + 1);
            self.link_names.insert(host.clone(), path.clone());
            self.app_names.insert(host.clone(), path);
            links.push(LinkSpec { name: host.clone(), ends, dirs: [link_cfg.clone(), link_cfg.clone()], cost: 1 });
            let at = start.as_nanos() + (spread.as_nanos() as u128 * i as u128 / count as u128) as u64;
            let (start_i, stop) = (Instant(at), Instant::MAX);
            let src_port = 49152 + (i as u16 % 16384);
            self.flows += 1;
            if i < count - n_udp {
                let config = BulkConfig {
                    src: host_addr,
                    src_port,
                    dst,
                    dst_port: tcp_port,
                    bytes,
                    start: start_i,
                    tcp: tcp.clone(),
                    seed: 0,
                };
                apps.push(AppSpec::TcpBulk { name: host.clone(), node: h, config, start_jitter: Duration::ZERO });
                members.push(host);
            } else {
                let (src, dst_port) = (host_addr, udp_port);
                apps.push(match (udp_kind.as_str(), udp_onoff) {
                    ("vbr", _) => AppSpec::UdpVbr {
                        name: host,
                        node: h,
                        start_jitter: Duration::ZERO,
                        config: VbrConfig {
                            src,
                            src_port,
                            dst,
                            dst_port,
                            rate_bps: udp_rate,
                            min_size: udp_sizes.0,
                            max_size: udp_sizes.1,
                            random: udp_random,
                            start: start_i,
                            stop,
                        },
                    },
                    (_, Some((on_mean, off_mean))) => AppSpec::UdpOnOff {
                        name: host,
                        node: h,
                        start_jitter: Duration::ZERO,
                        config: OnOffConfig {
                            src,
                            src_port,
                            dst,
                            dst_port,
                            rate_bps: udp_rate,
                            packet_size: udp_sizes.0,
                            on_mean,
                            off_mean,
                            start: start_i,
                            stop,
                        },
                    },
                    _ => AppSpec::UdpCbr {
                        name: host,
                        node: h,
                        start_jitter: Duration::ZERO,
                        config: CbrConfig {
                            src,
                            src_port,
                            dst,
                            dst_port,
                            rate_bps: udp_rate,
                            payload: udp_sizes.0,
                            start: start_i,
                            stop,
                        },
                    },
                });
            }
        }
        // Sinks on the destination, unless something already listens on the port.
        if n_udp < count && !self.ports.contains_key(&(dst_node, PROTO_TCP, tcp_port)) {
            let sink = format!("{name}-tcp-sink");
            self.ports.insert((dst_node, PROTO_TCP, tcp_port), r.path().to_string());
            self.app_names.insert(sink.clone(), r.path().to_string());
            apps.push(AppSpec::TcpSink {
                name: sink,
                node: dst_node,
                config: SinkConfig { port: tcp_port, tcp, drain_rate: None, seed: 0 },
            });
        }
        if n_udp > 0 && !self.ports.contains_key(&(dst_node, PROTO_UDP, udp_port)) {
            let sink = format!("{name}-udp-sink");
            self.ports.insert((dst_node, PROTO_UDP, udp_port), r.path().to_string());
            self.app_names.insert(sink.clone(), r.path().to_string());
            apps.push(AppSpec::UdpSink { name: sink, node: dst_node, port: udp_port });
        }
        Ok((name, members))
    }

    /// The node owning an address known to be in the scenario.
    fn node_of(&self, addr: Ipv4Addr) -> usize {
        self.nodes.iter().position(|n| n.ifaces.iter().any(|(_, a)| *a == addr)).unwrap_or(0)
    }

    fn fault(&mut self, r: &mut Reader<'_>) -> Result<(Instant, FaultAction), ScenarioError> {
        let at = Instant(r.duration("at")?.as_nanos());
        let action = r.str("action")?;
        let target = r.str("target")?;
        let action = if action.starts_with("link") {
            let link = self.links.iter().position(|l| *l == target).ok_or_else(|| {
                let hint = suggest(&target, self.links.iter().map(String::as_str))
                    .map(|s| format!(" (did you mean \"{s}\"?)"))
                    .unwrap_or_default();
                r.error("target", format!("no link named \"{target}\"{hint}"))
            })?;
            let id = LinkId(link as u32);
            if action == "link-down" {
                FaultAction::LinkDown(id)
            } else {
                FaultAction::LinkUp(id)
            }
        } else {
            let id = self.iface_ref(&target).map_err(|m| r.error("target", m))?.global_id(&self.nodes);
            if action == "iface-down" {
                FaultAction::IfaceDown(id)
            } else {
                FaultAction::IfaceUp(id)
            }
        };
        Ok((at, action))
    }

    fn record(&mut self, r: &mut Reader<'_>) -> Result<RecordSpec, ScenarioError> {
        let interval = Some(r.duration("interval")?).filter(|d| *d > Duration::ZERO);
        let events = r.str_list("events")?;
        for (i, e) in events.iter().enumerate() {
            if !EVENT_KINDS.contains(&e.as_str()) {
                let hint = suggest(e, EVENT_KINDS.iter().copied())
                    .map(|s| format!(" (did you mean \"{s}\"?)"))
                    .unwrap_or_else(|| format!(" (expected one of: {})", EVENT_KINDS.join(", ")));
                return Err(ScenarioError::new(
                    format!("{}[{i}]", r.key_path("events")),
                    format!("\"{e}\" is not an event kind{hint}"),
                ));
            }
        }
        let capture_texts = r.str_list("capture")?;
        let capture = capture_texts
            .iter()
            .enumerate()
            .map(|(i, c)| {
                self.iface_ref(c).map_err(|m| ScenarioError::new(format!("{}[{i}]", r.key_path("capture")), m))
            })
            .collect::<Result<Vec<_>, _>>()?;
        // Absent unless given, like the keys below.
        let capture_wlan_texts = if r.has("capture_wlans") { r.str_list("capture_wlans")? } else { Vec::new() };
        let capture_wlans = if r.has("capture_wlans") {
            capture_wlan_texts
                .iter()
                .enumerate()
                .map(|(i, name)| {
                    self.wlans.iter().position(|w| &w.name == name).ok_or_else(|| {
                        let known: Vec<_> = self.wlans.iter().map(|w| format!("\"{}\"", w.name)).collect();
                        let known = if known.is_empty() { "none".to_string() } else { known.join(", ") };
                        ScenarioError::new(
                            format!("{}[{i}]", r.key_path("capture_wlans")),
                            format!("\"{name}\" is not a WLAN channel (wlans[].name: {known})"),
                        )
                    })
                })
                .collect::<Result<Vec<_>, _>>()?
        } else {
            Vec::new()
        };
        let files = capture
            .iter()
            .map(|c| iface_capture_file(&self.nodes[c.node].name, &self.nodes[c.node].ifaces[c.iface].0))
            .zip(capture_texts.iter().enumerate().map(|(i, t)| (r.key_path("capture"), i, t)))
            .chain(
                capture_wlans
                    .iter()
                    .map(|&w| wlan_capture_file(&self.wlans[w].name))
                    .zip(capture_wlan_texts.iter().enumerate().map(|(i, t)| (r.key_path("capture_wlans"), i, t))),
            );
        check_capture_files(files)?;
        // No default in the resolved scenario: a scenario that does not ask for the log
        // resolves exactly as before the key existed.
        let packets = r.opt_bool("packets")?.unwrap_or(false);
        // Absent too: positions are sampled only when asked for.
        let positions = r.opt_bool("positions")?.unwrap_or(false);
        let rss = r.opt_bool("rss")?.unwrap_or(false);
        // Absent as well: "auto" unless the scenario says otherwise.
        let checksums = match r.opt_str("checksums")?.as_deref() {
            Some("always") => netsim::world::ChecksumPolicy::Always,
            _ => netsim::world::ChecksumPolicy::Auto,
        };
        Ok(RecordSpec { interval, events, capture, capture_wlans, packets, positions, rss, checksums })
    }
}

/// The pcap file (in the capture directory) of the captured interface `node/iface`.
pub fn iface_capture_file(node: &str, iface: &str) -> String {
    format!("{node}-{iface}.pcap")
}

/// The pcap file (in the capture directory) of the captured WLAN channel `channel`.
pub fn wlan_capture_file(channel: &str) -> String {
    format!("wlan-{channel}.pcap")
}

/// Each capture (`record.capture`, `record.capture_wlans`) must have a file of its own: two
/// that shared one wrote their packets into it in turn, and one capture was lost (nodes `A`
/// and `A-b` with interfaces `b-c` and `c`: both `A-b-c.pcap`; or a node `wlan` with an
/// interface named as a captured channel). Names are compared ignoring case, as file names
/// are on macOS and Windows. `files` gives each capture's file with its list's key path,
/// index and entry.
fn check_capture_files<'t>(
    files: impl IntoIterator<Item = (String, (String, usize, &'t String))>,
) -> Result<(), ScenarioError> {
    let mut taken: BTreeMap<String, (String, String, &String)> = BTreeMap::new();
    for (file, (list, i, entry)) in files {
        let key = format!("{list}[{i}]");
        if let Some((other_key, other_file, other_entry)) = taken.get(&file.to_lowercase()) {
            let message = if other_key.starts_with(&format!("{list}[")) && *other_entry == entry {
                format!("\"{entry}\" is already captured by {other_key}")
            } else if *other_file == file {
                format!(
                    "\"{entry}\" would be captured to \"{file}\", as {other_key} (\"{other_entry}\") is: rename a \
                     node, interface or channel so that each capture has a file of its own"
                )
            } else {
                format!(
                    "\"{entry}\" would be captured to \"{file}\", which is \"{other_file}\" of {other_key} \
                     (\"{other_entry}\") where file names ignore case, as on macOS and Windows: rename a node, \
                     interface or channel so that each capture has a file of its own"
                )
            };
            return Err(ScenarioError::new(key, message));
        }
        taken.insert(file.to_lowercase(), (key, file, entry));
    }
    Ok(())
}

/// The longest delayed acknowledgement the transports may be given. TCP: an ACK "MUST be
/// generated within 500 ms of the arrival of the first unacknowledged packet" (RFC 5681
/// §4.2). SCTP: "An implementation MUST NOT allow the maximum delay (protocol parameter
/// 'SACK.Delay') to be configured to be more than 500 ms" (RFC 9260 §6.2).
const MAX_ACK_DELAY: Duration = Duration::from_millis(500);

/// What a delay beyond [`MAX_ACK_DELAY`] is, by the RFC that sets it (see
/// [`Reader::opt_duration_up_to`]).
fn longer_than_allowed(rfc: &str) -> String {
    format!("is longer than the {} {rfc} allows", units::format_duration(MAX_ACK_DELAY))
}

/// `duration` and `record.interval` (`rec`) must not ask for more than [`MAX_SAMPLES`] samples.
/// The error names `record.interval` if the scenario gives it, else `duration`.
fn check_samples(
    root: &Reader<'_>,
    rec: &Reader<'_>,
    duration: Duration,
    interval: Option<Duration>,
) -> Result<(), ScenarioError> {
    let Some(interval) = interval else { return Ok(()) };
    let samples = duration.as_nanos() / interval.as_nanos();
    if samples <= MAX_SAMPLES {
        return Ok(());
    }
    let least = units::format_duration(Duration(duration.as_nanos().div_ceil(MAX_SAMPLES)));
    let shown = |r: &Reader<'_>, key: &str, d: Duration| {
        r.given(key).map_or_else(|| format!("\"{}\"", units::format_duration(d)), show)
    };
    let (interval, duration) = (shown(rec, "interval", interval), shown(root, "duration", duration));
    let why = format!(
        "more than the {MAX_SAMPLES} a run may keep (each holds a row per interface, flow and association in memory)"
    );
    if rec.has("interval") || !root.has("duration") {
        return Err(rec.error(
            "interval",
            format!(
                "{interval} would take {samples} samples over duration {duration}, {why}: use \"{least}\" or longer, \
                 or \"0s\" for no time series"
            ),
        ));
    }
    Err(root.error(
        "duration",
        format!(
            "{duration} would take {samples} samples at record.interval {interval}, {why}: set record.interval to \
             \"{least}\" or longer, or to \"0s\" for no time series"
        ),
    ))
}

/// A payload size in 16..65507 bytes (the first 16 carry sequence number and send time).
fn payload_size(r: &mut Reader<'_>, key: &str) -> Result<usize, ScenarioError> {
    let v = r.size(key)?;
    if !(CBR_HEADER_LEN as u64..=65507).contains(&v) {
        return Err(r.error(
            key,
            format!(
                "{} is out of range (expected {CBR_HEADER_LEN}..65507 bytes)",
                show(r.given(key).unwrap_or(&Value::Integer(v as i64)))
            ),
        ));
    }
    Ok(v as usize)
}

/// `min_size` and `max_size` of a VBR source.
fn size_range(r: &mut Reader<'_>) -> Result<(usize, usize), ScenarioError> {
    let lo = payload_size(r, "min_size")?;
    let hi = payload_size(r, "max_size")?;
    if hi < lo {
        return Err(r.error("max_size", format!("{hi} is below min_size ({lo})")));
    }
    Ok((lo, hi))
}

/// `on_mean` and `off_mean` of an on/off source (both positive).
fn on_off(r: &mut Reader<'_>) -> Result<(Duration, Duration), ScenarioError> {
    let on = r.duration("on_mean")?;
    if on == Duration::ZERO {
        return Err(r.error("on_mean", "must be longer than 0s"));
    }
    Ok((on, r.duration("off_mean")?))
}

/// `start_jitter` of a source: the width of the window its start is drawn from (zero when
/// absent).
fn start_jitter(r: &mut Reader<'_>) -> Result<Duration, ScenarioError> {
    Ok(r.opt_duration("start_jitter")?.map_or(Duration::ZERO, |d| Duration(d.as_nanos())))
}

/// `start` and `stop` of a UDP source.
fn start_stop(r: &mut Reader<'_>) -> Result<(Instant, Instant), ScenarioError> {
    let start = r.duration("start")?;
    let stop = r.opt_duration("stop")?;
    if let Some(stop) = stop.filter(|s| *s < start) {
        return Err(r.error("stop", format!("\"{stop}\" is before start (\"{start}\")")));
    }
    Ok((Instant(start.as_nanos()), stop.map_or(Instant::MAX, |s| Instant(s.as_nanos()))))
}

/// Read a `tcp` table into the engine's configuration.
fn tcp_config(r: &mut Reader<'_>) -> Result<tcp::Config, ScenarioError> {
    let cc = tcp::CcAlgorithm::from_name(&r.str("cc")?).unwrap_or_default();
    let mss = r.size("mss")?;
    if !(64..=65495).contains(&mss) {
        return Err(r.error("mss", format!("{mss} is out of range (expected 64..65495 bytes)")));
    }
    let initial_window = r.opt_int("initial_window")?.map(|n| n as u32);
    let (sack, window_scaling, timestamps) = (r.bool("sack")?, r.bool("window_scaling")?, r.bool("timestamps")?);
    let mut buffer = |key: &str| -> Result<usize, ScenarioError> {
        let b = r.size(key)?;
        // RFC 7323 §2.3: a window of at most 2^30 bytes can be advertised.
        if !(mss..=1 << 30).contains(&b) {
            return Err(r.error(key, format!("{b} is out of range (expected mss ({mss})..1GiB bytes)")));
        }
        Ok(b as usize)
    };
    let send_buffer = buffer("send_buffer")?;
    let recv_buffer = buffer("recv_buffer")?;
    let delayed_ack = r.duration_up_to("delayed_ack", MAX_ACK_DELAY, &longer_than_allowed("RFC 5681 §4.2"))?;
    let ack_every = r.int("ack_every")? as u32;
    let nagle = r.bool("nagle")?;
    let initial_rto = r.duration("initial_rto")?;
    let min_rto = r.duration("min_rto")?;
    let max_rto = r.duration("max_rto")?;
    if min_rto == Duration::ZERO {
        return Err(r.error("min_rto", "must be longer than 0s"));
    }
    if max_rto < min_rto {
        return Err(r.error("max_rto", format!("\"{max_rto}\" is below min_rto (\"{min_rto}\")")));
    }
    let max_retries = r.int("max_retries")? as u32;
    let dupthresh = r.int("dupthresh")? as u32;
    let time_wait = r.duration("time_wait")?;
    let ecn = r.opt_bool("ecn")?.unwrap_or(false);
    Ok(tcp::Config {
        mss: mss as u16,
        initial_window,
        cc,
        sack,
        window_scaling,
        timestamps,
        send_buffer,
        recv_buffer,
        delayed_ack,
        ack_every,
        nagle,
        initial_rto,
        min_rto,
        max_rto,
        max_retries,
        dupthresh,
        time_wait,
        ecn,
    })
}

/// "it has eth0, eth1", or "it has none", for an error about a node's interfaces.
fn has_ifaces(names: &[&str]) -> String {
    if names.is_empty() {
        return "it has none".to_owned();
    }
    format!("it has {}", names.join(", "))
}
