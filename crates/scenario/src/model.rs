//! The validated scenario: typed, cross-referenced, ready to build.
//!
//! [`Scenario::parse`] reads the TOML tree through the schema, resolves every name reference
//! (nodes, interfaces, links, addresses) and checks the rules no single key can express
//! (unique names and addresses, one link per interface, applications on hosts, free ports).
//! Anything wrong is reported with the path of the offending key before anything runs.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use netsim::apps::udp::{CbrConfig, CBR_HEADER_LEN};
use netsim::transport::sctp::{SctpAppConfig, SctpRole, MESSAGE_HEADER_LEN};
use netsim::fault::FaultAction;
use netsim::loss::LossConfig;
use netsim::network::{ChannelConfig, IfaceId, LinkId, NodeKind};
use netsim::queue::QueueConfig;
use netsim::{Duration, Instant};
use toml::{Table, Value};

use crate::error::ScenarioError;
use crate::reader::{show, suggest, Reader};
use crate::schema::{EVENT_KINDS, ROOT};

/// A node.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeSpec {
    /// Name.
    pub name: String,
    /// Host or router.
    pub kind: NodeKind,
    /// Interfaces: (name, address).
    pub ifaces: Vec<(String, Ipv4Addr)>,
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
    /// Forward (ends[0] -> ends[1]) and reverse parameters.
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
        /// Parameters (the endpoint seed is derived from the run's seed at build time).
        config: SctpAppConfig,
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
    /// Recording options.
    pub record: RecordSpec,
    resolved: Table,
}

/// Parse scenario text, apply `--set` overrides, validate.
pub fn parse(text: &str, overrides: &[String]) -> Result<Scenario, ScenarioError> {
    let mut root: Table = toml::from_str(text).map_err(|e| ScenarioError::syntax(text, &e))?;
    for o in overrides {
        crate::overrides::apply(&mut root, o)?;
    }
    Scenario::from_table(&root)
}

impl Scenario {
    /// Validate a TOML tree.
    pub fn from_table(root: &Table) -> Result<Scenario, ScenarioError> {
        let mut r = Reader::new(String::new(), root, &ROOT)?;
        let name = r.str("name")?;
        let duration = r.duration("duration")?;
        let seed = r.int("seed")? as u64;
        let mut b = Parser::default();
        let mut node_readers = r.table_list("nodes")?;
        let nodes = node_readers.iter_mut().map(|nr| b.node(nr)).collect::<Result<Vec<_>, _>>()?;
        r.put_list("nodes", node_readers.into_iter().map(Reader::finish).collect());
        b.nodes = nodes;
        let links = b.list(&mut r, "links", Parser::link)?;
        b.links = links.iter().map(|l| l.name.clone()).collect();
        let routes = b.list(&mut r, "routes", Parser::route)?;
        let apps = b.list(&mut r, "apps", Parser::app)?;
        let faults = b.list(&mut r, "faults", Parser::fault)?;
        let mut rec = r.table("record")?.expect("record has a default");
        let record = b.record(&mut rec)?;
        r.put_table("record", rec.finish());
        Ok(Scenario { name, duration, seed, nodes: b.nodes, links, routes, apps, faults, record, resolved: r.finish() })
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
    ports: BTreeMap<(usize, u16), String>,
    sctp_ports: BTreeMap<(usize, u16), String>,
    flows: usize,
}

impl Parser {
    /// Read `key` as a list of tables with `item`, storing the resolved tables.
    fn list<'a, T>(&mut self, r: &mut Reader<'a>, key: &str, item: impl Fn(&mut Self, &mut Reader<'a>) -> Result<T, ScenarioError>) -> Result<Vec<T>, ScenarioError> {
        let mut readers = r.table_list(key)?;
        let out = readers.iter_mut().map(|ir| item(self, ir)).collect::<Result<Vec<_>, _>>()?;
        r.put_list(key, readers.into_iter().map(Reader::finish).collect());
        Ok(out)
    }

    fn node(&mut self, r: &mut Reader<'_>) -> Result<NodeSpec, ScenarioError> {
        let name = r.str("name")?;
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
            ifaces.push((iname, addr));
        }
        r.put_list("interfaces", iface_readers.into_iter().map(Reader::finish).collect());
        Ok(NodeSpec { name, kind, ifaces })
    }

    /// Resolve a node name.
    fn node_ref(&self, name: &str) -> Result<usize, String> {
        self.node_index.get(name).copied().ok_or_else(|| match suggest(name, self.node_index.keys().map(String::as_str)) {
            Some(s) => format!("no node named \"{name}\" (did you mean \"{s}\"?)"),
            None => format!("no node named \"{name}\""),
        })
    }

    /// Resolve `"node/iface"`.
    fn iface_ref(&self, text: &str) -> Result<IfaceRef, String> {
        let (node, iface) = text.split_once('/').ok_or_else(|| format!("\"{text}\" is not an interface reference (expected \"node/iface\")"))?;
        let n = self.node_ref(node).map_err(|m| format!("\"{text}\": {m}"))?;
        let names: Vec<&str> = self.nodes[n].ifaces.iter().map(|(i, _)| i.as_str()).collect();
        let i = names.iter().position(|i| *i == iface).ok_or_else(|| format!("\"{text}\": node \"{node}\" has no interface \"{iface}\" (it has {})", names.join(", ")))?;
        Ok(IfaceRef { node: n, iface: i })
    }

    /// Resolve a destination: address, node name, or "node/iface".
    fn destination(&self, text: &str) -> Result<Ipv4Addr, String> {
        if let Ok(addr) = text.parse::<Ipv4Addr>() {
            return if self.addresses.contains_key(&addr) { Ok(addr) } else { Err(format!("no interface has address {addr}")) };
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
            return Err(r.error("mtu", format!("{} is below the IPv4 minimum MTU of 68 bytes", show(r.given("mtu").unwrap_or(&Value::Integer(mtu as i64))))));
        }
        let queue = match r.table("queue")? {
            Some(mut q) => {
                let cfg = self.queue(&mut q)?;
                r.put_table("queue", q.finish());
                cfg
            }
            None => base.expect("queue has a default on links").queue.clone(),
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

    fn queue(&self, r: &mut Reader<'_>) -> Result<QueueConfig, ScenarioError> {
        // The schema admits only the kinds listed in `schema::QUEUE`; each builds here.
        let kind = r.str("kind")?;
        debug_assert_eq!(kind, "droptail");
        Ok(QueueConfig::DropTail { limit: r.queue_limit("limit")? })
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
            return Err(r.error("ends", format!("{} must name exactly two interfaces, e.g. [\"A/eth0\", \"R1/eth0\"]", show(r.given("ends").expect("ends was read")))));
        }
        let mut ends = [IfaceRef { node: 0, iface: 0 }; 2];
        for (i, text) in ends_text.iter().enumerate() {
            ends[i] = self.iface_ref(text).map_err(|m| ScenarioError::new(format!("{}[{i}]", r.key_path("ends")), m))?;
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
            if let Some(other) = self.link_of_iface.insert((end.node, end.iface), r.path().to_string()) {
                return Err(ScenarioError::new(format!("{}[{i}]", r.key_path("ends")), format!("\"{}\" is already connected by {other}", ends_text[i])));
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
        let via = names.iter().position(|n| *n == via).ok_or_else(|| r.error("via", format!("node \"{node_name}\" has no interface \"{via}\" (it has {})", names.join(", "))))?;
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
                let rate_bps = r.rate("rate")?;
                let payload = r.size("packet_size")?;
                if !(CBR_HEADER_LEN as u64..=65507).contains(&payload) {
                    return Err(r.error("packet_size", format!("{} is out of range (expected {CBR_HEADER_LEN}..65507 bytes)", show(r.given("packet_size").unwrap_or(&Value::Integer(payload as i64))))));
                }
                let start = r.duration("start")?;
                let stop = r.opt_duration("stop")?;
                if let Some(stop) = stop.filter(|s| *s < start) {
                    return Err(r.error("stop", format!("\"{stop}\" is before start (\"{start}\")")));
                }
                let config = CbrConfig {
                    src,
                    src_port,
                    dst,
                    dst_port,
                    rate_bps,
                    payload: payload as usize,
                    start: Instant(start.as_nanos()),
                    stop: stop.map_or(Instant::MAX, |s| Instant(s.as_nanos())),
                };
                self.flows += 1;
                Ok(AppSpec::UdpCbr { name, node, config })
            }
            "sctp-bulk" | "sctp-sink" | "sctp-requests" => self.sctp_app(r, &kind, name, node, index),
            _udp_sink => {
                let port = r.int("port")? as u16;
                if let Some(other) = self.ports.insert((node, port), r.path().to_string()) {
                    return Err(r.error("port", format!("UDP port {port} on \"{node_name}\" is already used by {other}")));
                }
                Ok(AppSpec::UdpSink { name, node, port })
            }
        }
    }

    fn sctp_app(&mut self, r: &mut Reader<'_>, kind: &str, name: String, node: usize, index: usize) -> Result<AppSpec, ScenarioError> {
        let node_name = self.nodes[node].name.clone();
        let port = match r.opt_int("port")? {
            Some(p) => p as u16,
            None => {
                let p = 5000 + (index as u16 % 60000);
                r.resolve("port", p as i64);
                p
            }
        };
        if let Some(other) = self.sctp_ports.insert((node, port), r.path().to_string()) {
            return Err(r.error("port", format!("SCTP port {port} on \"{node_name}\" is already used by {other}")));
        }
        let mut s = r.table("sctp")?.expect("sctp has a default");
        let config = Self::sctp_config(&mut s)?;
        r.put_table("sctp", s.finish());
        let role = if kind == "sctp-sink" {
            let read_rate = r.opt_rate("read_rate")?.map(|bps| (bps / 8).max(1));
            SctpRole::Sink { read_rate }
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
            if !(MESSAGE_HEADER_LEN as u64..=1 << 20).contains(&message_size) {
                return Err(r.error("message_size", format!("{message_size} is out of range (expected {MESSAGE_HEADER_LEN}..1048576 bytes)")));
            }
            if message_size > u64::from(config.send_buffer) {
                return Err(r.error("message_size", format!("{message_size} bytes does not fit the send buffer ({} bytes)", config.send_buffer)));
            }
            if kind == "sctp-bulk" {
                SctpRole::Bulk {
                    peer,
                    peer_port,
                    start,
                    bytes: r.opt_size("bytes")?,
                    message_size: message_size as usize,
                    streams: r.int("streams")? as u16,
                    unordered: r.str("delivery")? == "unordered",
                }
            } else {
                SctpRole::Requests { peer, peer_port, start, message_size: message_size as usize, rate: r.int("rate")? as f64 }
            }
        };
        let addrs = self.nodes[node].ifaces.iter().map(|(_, a)| *a).collect();
        Ok(AppSpec::Sctp { node, config: SctpAppConfig { name, addrs, port, config, role, seed: 0 } })
    }

    /// `apps[].sctp`: a preset, then every key given.
    fn sctp_config(r: &mut Reader<'_>) -> Result<sctp::Config, ScenarioError> {
        let preset = r.str("preset")?;
        let mut c = sctp::Preset::from_name(&preset).expect("schema lists only known presets").config();
        let dur = |r: &mut Reader<'_>, key: &str| -> Result<Option<netsim::Duration>, ScenarioError> {
            Ok(r.opt_duration(key)?.map(|d| netsim::Duration(d.as_nanos())))
        };
        let int = |r: &mut Reader<'_>, key: &str| -> Result<Option<u32>, ScenarioError> { Ok(r.opt_int(key)?.map(|v| v as u32)) };
        if let Some(v) = dur(r, "rto_initial")? { c.rto_initial = v; }
        if let Some(v) = dur(r, "rto_min")? { c.rto_min = v; }
        if let Some(v) = dur(r, "rto_max")? { c.rto_max = v; }
        if r.has("rto_alpha") { c.rto_alpha = r.probability("rto_alpha")?; }
        if r.has("rto_beta") { c.rto_beta = r.probability("rto_beta")?; }
        if let Some(v) = int(r, "max_burst")? { c.max_burst = v; }
        if let Some(v) = dur(r, "valid_cookie_life")? { c.valid_cookie_life = v; }
        if let Some(v) = int(r, "assoc_max_retrans")? { c.assoc_max_retrans = v; }
        if let Some(v) = int(r, "path_max_retrans")? { c.path_max_retrans = v; }
        if let Some(v) = int(r, "max_init_retransmits")? { c.max_init_retransmits = v; }
        if let Some(v) = dur(r, "hb_interval")? { c.hb_interval = (!v.is_zero()).then_some(v); }
        if let Some(v) = dur(r, "sack_delay")? { c.sack_delay = v; }
        if let Some(v) = int(r, "sack_freq")? { c.sack_freq = v; }
        if let Some(v) = int(r, "pf_max_retrans")? { c.pf_max_retrans = Some(v); }
        if r.opt_str("pf")?.as_deref() == Some("off") { c.pf_max_retrans = None; }
        if let Some(v) = int(r, "primary_switchover_max_retrans")? { c.primary_switchover_max_retrans = Some(v); }
        c.switchback = r.str("switchback")? == "on";
        if let Some(v) = r.opt_size("recv_buffer")? { c.recv_buffer = v.min(u64::from(u32::MAX)) as u32; }
        if let Some(v) = r.opt_size("send_buffer")? { c.send_buffer = v.min(u64::from(u32::MAX)) as u32; }
        if let Some(v) = r.opt_int("streams")? {
            c.outbound_streams = v as u16;
            c.max_inbound_streams = v as u16;
        }
        let factor = r.probability("congestion_factor")?;
        if let Some(name) = r.opt_str("congestion")? {
            c.congestion = sctp::CongestionConfig::from_name(&name, Some(factor)).expect("schema lists only known controllers");
        }
        c.validate().map_err(|m| {
            let (key, why) = m.split_once(": ").unwrap_or(("preset", m.as_str()));
            r.error(key, why.to_string())
        })?;
        Ok(c)
    }

    fn fault(&mut self, r: &mut Reader<'_>) -> Result<(Instant, FaultAction), ScenarioError> {
        let at = Instant(r.duration("at")?.as_nanos());
        let action = r.str("action")?;
        let target = r.str("target")?;
        let action = if action.starts_with("link") {
            let link = self.links.iter().position(|l| *l == target).ok_or_else(|| {
                let hint = suggest(&target, self.links.iter().map(String::as_str)).map(|s| format!(" (did you mean \"{s}\"?)")).unwrap_or_default();
                r.error("target", format!("no link named \"{target}\"{hint}"))
            })?;
            let id = LinkId(link as u32);
            if action == "link-down" { FaultAction::LinkDown(id) } else { FaultAction::LinkUp(id) }
        } else {
            let id = self.iface_ref(&target).map_err(|m| r.error("target", m))?.global_id(&self.nodes);
            if action == "iface-down" { FaultAction::IfaceDown(id) } else { FaultAction::IfaceUp(id) }
        };
        Ok((at, action))
    }

    fn record(&mut self, r: &mut Reader<'_>) -> Result<RecordSpec, ScenarioError> {
        let interval = Some(r.duration("interval")?).filter(|d| *d > Duration::ZERO);
        let events = r.str_list("events")?;
        for (i, e) in events.iter().enumerate() {
            if !EVENT_KINDS.contains(&e.as_str()) {
                let hint = suggest(e, EVENT_KINDS.iter().copied()).map(|s| format!(" (did you mean \"{s}\"?)")).unwrap_or_else(|| format!(" (expected one of: {})", EVENT_KINDS.join(", ")));
                return Err(ScenarioError::new(format!("{}[{i}]", r.key_path("events")), format!("\"{e}\" is not an event kind{hint}")));
            }
        }
        let capture = r
            .str_list("capture")?
            .iter()
            .enumerate()
            .map(|(i, c)| self.iface_ref(c).map_err(|m| ScenarioError::new(format!("{}[{i}]", r.key_path("capture")), m)))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(RecordSpec { interval, events, capture })
    }
}
