//! Building a runnable [`World`] from a validated [`Scenario`].

use std::path::Path;

use netsim::apps::onoff::OnOffConfig;
use netsim::apps::onoff::UdpOnOff;
use netsim::apps::sctp::{SctpApp, SctpRole};
use netsim::apps::tcp::{TcpBulk, TcpSink};
use netsim::apps::udp::CbrConfig;
use netsim::apps::udp::{UdpCbr, UdpSink};
use netsim::apps::vbr::UdpVbr;
use netsim::apps::vbr::VbrConfig;
use netsim::pcap::{PcapSink, RadiotapSink};
use netsim::recorder::EventLog;
use netsim::routing::StaticRoute;
use netsim::wire::{PROTO_SCTP, PROTO_TCP, PROTO_UDP};
use netsim::wlan::Role;
use netsim::world::{World, WorldBuilder};
use netsim::{Duration, Instant};
use rand::RngCore;

use crate::model::{AppSpec, Scenario};

/// A world ready to run, and the names of the capture files it will write.
pub struct Built {
    /// The simulation.
    pub world: World,
    /// File names (within the capture directory) of the pcap files.
    pub captures: Vec<String>,
}

impl Scenario {
    /// Build the world for master seed `seed`. Capture files are created in `capture_dir`
    /// (when the scenario asks for captures and a directory is given).
    pub fn build(&self, seed: u64, capture_dir: Option<&Path>) -> std::io::Result<Built> {
        let mut b = WorldBuilder::new(seed, Instant(self.duration.as_nanos()));
        let mut node_ids = Vec::new();
        let mut ids = Vec::new();
        for node in &self.nodes {
            let n = b.node(&node.name, node.kind);
            node_ids.push(n);
            ids.push(node.ifaces.iter().map(|(name, addr)| b.iface(n, name, *addr)).collect::<Vec<_>>());
            if let Some(spec) = &node.mobility {
                // Random models draw from the node's own stream (validation built them once).
                let rng = b.rng().stream(&netsim::mobility::stream_name(&node.name));
                b.mobility(n, spec.build(rng).map_err(std::io::Error::other)?);
            }
        }
        debug_assert!(self.nodes.iter().enumerate().all(|(n, spec)| (0..spec.ifaces.len())
            .all(|i| ids[n][i] == crate::model::IfaceRef { node: n, iface: i }.global_id(&self.nodes))));
        // WLAN channels, then the radios: access points before the stations that name them.
        for w in &self.wlans {
            b.wlan_channel(&w.name, w.config.clone());
        }
        let aps = self.radios.iter().filter(|r| r.ap.is_none() && r.roam.is_none());
        for radio in aps.chain(self.radios.iter().filter(|r| r.ap.is_some())) {
            let mut config = radio.config.clone();
            if let Some(ap) = radio.ap {
                config.role = Role::Station { ap: ids[ap.node][ap.iface] };
            }
            let iface = ids[radio.iface.node][radio.iface.iface];
            b.attach_wlan(iface, radio.channel as u32, &config).map_err(std::io::Error::other)?;
        }
        // Roaming stations: a radio on each channel of the scan list; the interface's address
        // gives the host number it takes in each AP's subnet.
        for radio in &self.radios {
            let Some((roam, list)) = &radio.roam else { continue };
            let mut config = radio.config.clone();
            config.role = Role::Roaming;
            let mut roam = *roam;
            roam.host = Some(self.nodes[radio.iface.node].ifaces[radio.iface.iface].1);
            let iface = ids[radio.iface.node][radio.iface.iface];
            let media: Vec<u32> = list.iter().map(|&c| c as u32).collect();
            b.attach_roaming(iface, &media, &config, roam).map_err(std::io::Error::other)?;
        }
        for link in &self.links {
            let [a, z] = link.ends.map(|e| ids[e.node][e.iface]);
            b.link(&link.name, a, z, link.dirs[0].clone(), link.dirs[1].clone(), link.cost);
        }
        for route in &self.routes {
            b.route(
                node_ids[route.node],
                StaticRoute { prefix: route.prefix, len: route.len, iface: ids[route.node][route.via] },
            );
        }
        let mut flow_of = std::collections::BTreeMap::new();
        for app in &self.apps {
            // Each source draws from (and seeds its connection with) a stream named after it.
            let stream = |name: &str| b.rng().stream(&format!("app/{name}"));
            match app {
                AppSpec::UdpCbr { name, node, config, start_jitter } => {
                    let start = jittered(&b, name, config.start, *start_jitter);
                    let flow = b.flow(name);
                    b.agent(node_ids[*node], Box::new(UdpCbr::new(CbrConfig { start, ..config.clone() }, flow)));
                }
                AppSpec::UdpSink { name, node, port } => {
                    let agent = b.agent(node_ids[*node], Box::new(UdpSink::new(name)));
                    let bound = b.bind_port(agent, PROTO_UDP, *port);
                    debug_assert!(bound, "validation guarantees free ports");
                }
                AppSpec::Sctp { node, config } => {
                    let mut config = (**config).clone();
                    // The endpoint's RNG (tags, initial TSNs, heartbeat jitter) comes from the
                    // run's seed and the application's name.
                    config.seed = rand::RngCore::next_u64(&mut b.rng().stream(&format!("app/{}/sctp", config.name)));
                    // One flow per association the application opens, named as the
                    // association is in results (`<name>`, then `<name>/assoc<k>`).
                    if let SctpRole::Bulk { more_peers, .. } = &config.role {
                        let n = 1 + more_peers.len();
                        config.flows = (0..n)
                            .map(|k| if k == 0 { config.name.clone() } else { format!("{}/assoc{k}", config.name) })
                            .map(|name| b.flow(&name))
                            .collect();
                    } else if let SctpRole::Requests { .. } = &config.role {
                        config.flows = vec![b.flow(&config.name)];
                    }
                    let port = config.port;
                    let agent = b.agent(node_ids[*node], Box::new(SctpApp::new(config)));
                    let bound = b.bind_port(agent, PROTO_SCTP, port);
                    debug_assert!(bound, "validation guarantees free ports");
                }
                AppSpec::UdpVbr { name, node, config, start_jitter } => {
                    let rng = stream(name);
                    let start = jittered(&b, name, config.start, *start_jitter);
                    let flow = b.flow(name);
                    b.agent(node_ids[*node], Box::new(UdpVbr::new(VbrConfig { start, ..config.clone() }, flow, rng)));
                }
                AppSpec::UdpOnOff { name, node, config, start_jitter } => {
                    let rng = stream(name);
                    let start = jittered(&b, name, config.start, *start_jitter);
                    let flow = b.flow(name);
                    let config = OnOffConfig { start, ..config.clone() };
                    b.agent(node_ids[*node], Box::new(UdpOnOff::new(config, flow, rng)));
                }
                AppSpec::TcpBulk { name, node, config, start_jitter } => {
                    let seed = stream(name).next_u64();
                    let start = jittered(&b, name, config.start, *start_jitter);
                    let flow = b.flow(name);
                    flow_of.insert(name.as_str(), flow);
                    let bulk = netsim::apps::tcp::BulkConfig { seed, start, ..config.clone() };
                    let agent = b.agent(node_ids[*node], Box::new(TcpBulk::new(bulk, flow, name)));
                    let bound = b.bind_port(agent, PROTO_TCP, config.src_port);
                    debug_assert!(bound, "validation guarantees free ports");
                }
                AppSpec::TcpSink { name, node, config } => {
                    let seed = stream(name).next_u64();
                    let agent = b.agent(
                        node_ids[*node],
                        Box::new(TcpSink::new(netsim::apps::tcp::SinkConfig { seed, ..config.clone() }, name)),
                    );
                    let bound = b.bind_port(agent, PROTO_TCP, config.port);
                    debug_assert!(bound, "validation guarantees free ports");
                }
            }
        }
        for (name, members) in &self.flow_groups {
            b.group(name, members.iter().filter_map(|m| flow_of.get(m.as_str()).copied()).collect());
        }
        for (at, action) in &self.faults {
            b.fault(*at, *action);
        }
        if let Some(interval) = self.record.interval {
            b.sample_every(interval);
        }
        if self.record.packets {
            b.record_packets();
        }
        if self.record.rss {
            b.record_rss();
        }
        if self.record.positions {
            b.record_positions();
        }
        b.checksums(self.record.checksums);
        if !self.record.events.is_empty() {
            b.trace(Box::new(EventLog::new(self.record.events.clone())));
        }
        let mut captures = Vec::new();
        if let (Some(dir), false) = (capture_dir, self.record.capture.is_empty()) {
            let targets: Vec<_> = self
                .record
                .capture
                .iter()
                .map(|r| {
                    let node = &self.nodes[r.node];
                    let file = crate::model::iface_capture_file(&node.name, &node.ifaces[r.iface].0);
                    captures.push(file.clone());
                    (ids[r.node][r.iface], dir.join(file))
                })
                .collect();
            b.trace(Box::new(PcapSink::create(&targets, b.network().ifaces.len())?));
        }
        if let (Some(dir), false) = (capture_dir, self.record.capture_wlans.is_empty()) {
            let targets: Vec<_> = self
                .record
                .capture_wlans
                .iter()
                .map(|&w| {
                    let file = crate::model::wlan_capture_file(&self.wlans[w].name);
                    captures.push(file.clone());
                    b.capture_air(w as u32);
                    (w as u32, dir.join(file))
                })
                .collect();
            b.trace(Box::new(RadiotapSink::create(&targets, self.wlans.len())?));
        }
        Ok(Built { world: b.build(), captures })
    }
}

/// The start of source `name`: `start`, or with a jitter window a time drawn uniformly from
/// `[start, start + jitter)` with the application's own stream `app/<name>/start` (so no other
/// stream's draws move, and a scenario without jitter draws nothing).
fn jittered(b: &WorldBuilder, name: &str, start: Instant, jitter: Duration) -> Instant {
    if jitter == Duration::ZERO {
        return start;
    }
    let draw = b.rng().stream(&format!("app/{name}/start")).next_u64();
    // A 64-bit fraction of the window: floor(draw * jitter / 2^64) < jitter.
    let offset = ((u128::from(draw) * u128::from(jitter.0)) >> 64) as u64;
    Instant(start.0.saturating_add(offset))
}
