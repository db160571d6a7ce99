//! IPv4 routing by prefix: automatic shortest paths to every subnet, plus explicit routes that
//! override them.
//!
//! Every interface address has a prefix length; the addresses of one attachment (the two ends
//! of a point-to-point link) that share a prefix form a **subnet**. Each node keeps one entry
//! per reachable subnet, found by longest-prefix match, so tables grow with nodes × subnets,
//! not with the square of the number of addresses. When two attachments claim the same prefix,
//! or an address falls inside a longer prefix of another attachment, its addresses become
//! host (/32) subnets of their own, so a lookup never leaves by the wrong link.
//!
//! Paths: every link has a cost (1 by default, so "shortest" means fewest hops) and hosts never
//! forward: paths pass through routers only. A subnet is reached by crossing its link towards
//! an address it holds, from the link's other end (so a multihomed host's addresses are
//! reached over their own paths, as SCTP multihoming needs). A router keeps its best next hop
//! (lowest cost, then lowest interface id); a host keeps, per subnet, every interface that
//! reaches it, best first, so that a transport which binds a source address leaves by that
//! address's interface when it can — the behaviour of source-address policy routing on a real
//! multihomed host. Explicit routes (`prefix/len -> interface`) are matched longest prefix
//! first and win over automatic ones.
//!
//! Routes are recomputed when the topology or the addresses change ([`crate::network::Network::
//! recompute_routes`]), not when a link or interface fails: failures are what the transports
//! under study must detect and survive.

use std::cell::Cell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::net::Ipv4Addr;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::ids::IfaceId;

/// An explicit route: packets to `prefix/len` leave through `iface`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StaticRoute {
    /// Network prefix (host bits are ignored).
    pub prefix: Ipv4Addr,
    /// Prefix length, 0..=32.
    pub len: u8,
    /// Outgoing interface.
    pub iface: IfaceId,
}

impl StaticRoute {
    fn matches(&self, dst: u32) -> bool {
        (dst & mask(self.len)) == (u32::from(self.prefix) & mask(self.len))
    }
}

/// The network mask of a prefix length (lengths above 32 count as 32).
#[inline]
pub fn mask(len: u8) -> u32 {
    match len {
        0 => 0,
        l if l >= 32 => u32::MAX,
        l => u32::MAX << (32 - u32::from(l)),
    }
}

/// Index of a subnet in a [`SubnetIndex`].
pub type SubnetId = u32;

/// Every subnet of the network, for longest-prefix match: one exact-match map per prefix
/// length present, longest first (a network uses a handful of lengths, so a lookup is a few
/// hash probes at most; one when every subnet has the same length).
#[derive(Clone, Debug, Default)]
pub struct SubnetIndex {
    /// (network mask, masked prefix -> subnet), longest prefix first.
    by_len: Vec<(u32, FxHashMap<u32, SubnetId>)>,
    /// (prefix, length) of each subnet.
    subnets: Vec<(u32, u8)>,
}

impl SubnetIndex {
    /// Add a subnet (or find it if present).
    fn insert(&mut self, net: u32, len: u8) -> SubnetId {
        let net = net & mask(len);
        // Longer prefixes have numerically larger masks.
        let m = mask(len);
        let at = self.by_len.partition_point(|(other, _)| *other > m);
        if self.by_len.get(at).is_none_or(|(other, _)| *other != m) {
            self.by_len.insert(at, (m, FxHashMap::default()));
        }
        let next = self.subnets.len() as SubnetId;
        let id = *self.by_len[at].1.entry(net).or_insert(next);
        if id == next {
            self.subnets.push((net, len));
        }
        id
    }

    /// The subnet with the longest prefix containing `dst`.
    #[inline(always)]
    pub fn longest_match(&self, dst: u32) -> Option<SubnetId> {
        for (m, map) in &self.by_len {
            if let Some(&id) = map.get(&(dst & m)) {
                return Some(id);
            }
        }
        None
    }

    /// Number of subnets.
    pub fn len(&self) -> usize {
        self.subnets.len()
    }

    /// True when there is no subnet.
    pub fn is_empty(&self) -> bool {
        self.subnets.is_empty()
    }

    /// (prefix, length) of a subnet.
    pub fn prefix(&self, id: SubnetId) -> (Ipv4Addr, u8) {
        let (net, len) = self.subnets[id as usize];
        (Ipv4Addr::from(net), len)
    }
}

/// No route to the subnet.
const NONE: u32 = u32::MAX;
/// Flag of a next-hop code that indexes a list of several interfaces.
const LIST: u32 = 1 << 31;

/// One node's forwarding table.
#[derive(Clone, Debug, Default)]
pub struct RoutingTable {
    /// Explicit routes, longest prefix first (ties keep scenario order).
    explicit: Vec<StaticRoute>,
    /// Automatic routes.
    auto: AutoRoutes,
    /// Next-hop codes of recently looked-up destinations.
    cache: LookupCache,
}

/// Entries of the [`LookupCache`] (a power of two).
const CACHE_SLOTS: usize = 32;
/// A cache slot holding nothing (`LIST` with an index no table reaches).
const EMPTY: u32 = LIST | (LIST - 1);

/// A direct-mapped cache of (destination, next-hop code) for the automatic routes: the fast
/// path of a lookup, one multiply and one compare for the destinations a node sees over and
/// over. Emptied whenever the automatic routes change.
#[derive(Clone, Debug)]
struct LookupCache([Cell<(u32, u32)>; CACHE_SLOTS]);

impl Default for LookupCache {
    fn default() -> Self {
        LookupCache(std::array::from_fn(|_| Cell::new((0, EMPTY))))
    }
}

impl LookupCache {
    #[inline(always)]
    fn slot(&self, dst: u32) -> &Cell<(u32, u32)> {
        // Fibonacci hashing: the top bits of dst × 2^32/φ.
        let i = (dst.wrapping_mul(0x9E37_79B9) >> (32 - CACHE_SLOTS.trailing_zeros())) as usize;
        &self.0[i & (CACHE_SLOTS - 1)]
    }
}

impl RoutingTable {
    /// Add an explicit route.
    pub fn add_static(&mut self, route: StaticRoute) {
        let at = self.explicit.partition_point(|r| r.len >= route.len);
        self.explicit.insert(at, route);
    }

    /// Replace the automatic routes.
    pub fn set_auto(&mut self, auto: AutoRoutes) {
        self.auto = auto;
        self.cache = LookupCache::default();
    }

    /// The interface for a packet to `dst`. `preferred` is the interface owning the packet's
    /// source address (hosts only): it is used when it reaches `dst` at all. Inlined: it is
    /// on every hop's path.
    #[inline(always)]
    pub fn lookup(&self, dst: Ipv4Addr, preferred: Option<IfaceId>) -> Option<IfaceId> {
        let dst = u32::from(dst);
        if let Some(r) = self.explicit.iter().find(|r| r.matches(dst)) {
            return Some(r.iface);
        }
        let slot = self.cache.slot(dst);
        let code = match slot.get() {
            (d, code) if d == dst && code != EMPTY => code,
            _ => {
                let code = self.auto.subnets.longest_match(dst).map_or(NONE, |id| self.auto.code(id));
                slot.set((dst, code));
                code
            }
        };
        if code & LIST == 0 {
            return Some(IfaceId(code));
        }
        if code == NONE {
            return None;
        }
        let candidates = self.auto.list(code);
        match preferred {
            Some(p) if candidates.contains(&p) => Some(p),
            _ => candidates.first().copied(),
        }
    }

    /// All interfaces that automatically reach `dst`, best first (for inspection and tests).
    pub fn candidates(&self, dst: Ipv4Addr) -> Vec<IfaceId> {
        let Some(id) = self.auto.subnets.longest_match(u32::from(dst)) else { return Vec::new() };
        match self.auto.code(id) {
            NONE => Vec::new(),
            c if c & LIST == 0 => vec![IfaceId(c)],
            c => self.auto.list(c).to_vec(),
        }
    }

    /// Number of subnets this table reaches automatically.
    pub fn reachable(&self) -> usize {
        match &self.auto.next {
            NextHops::PerSubnet(codes) => codes.iter().filter(|&&c| c != NONE).count(),
            NextHops::Uniform { unreachable, .. } => self.auto.subnets.len() - unreachable.len(),
        }
    }
}

/// Automatic routes of one node, as [`Graph::shortest_paths`] computes them.
#[derive(Clone, Debug, Default)]
pub struct AutoRoutes {
    /// The network's subnets (shared by every node's table).
    subnets: Arc<SubnetIndex>,
    /// Next hops by subnet.
    next: NextHops,
    /// (start, len) in `pool` of each multi-interface entry.
    lists: Vec<(u32, u32)>,
    /// Interfaces of multi-interface entries, best first.
    pool: Vec<IfaceId>,
}

/// A node's next hop per subnet: an interface id, [`NONE`], or [`LIST`] | index into the
/// lists. Most nodes of a large network are hosts on one link, whose every reachable subnet
/// has the same next hop: they store it once, with the few subnets they cannot reach.
#[derive(Clone, Debug)]
enum NextHops {
    /// One code per subnet.
    PerSubnet(Vec<u32>),
    /// The same code for every subnet but `unreachable` (sorted).
    Uniform { code: u32, unreachable: Vec<SubnetId> },
}

impl Default for NextHops {
    fn default() -> Self {
        NextHops::PerSubnet(Vec::new())
    }
}

impl AutoRoutes {
    /// The next-hop code for a subnet.
    #[inline(always)]
    fn code(&self, id: SubnetId) -> u32 {
        match &self.next {
            NextHops::PerSubnet(codes) => codes.get(id as usize).copied().unwrap_or(NONE),
            NextHops::Uniform { code, unreachable } => {
                if unreachable.is_empty() || unreachable.binary_search(&id).is_err() {
                    *code
                } else {
                    NONE
                }
            }
        }
    }

    fn list(&self, code: u32) -> &[IfaceId] {
        let (start, len) = self.lists[(code & !LIST) as usize];
        &self.pool[start as usize..(start + len) as usize]
    }

    /// Store the codes once when they are all the same.
    fn compact(&mut self) {
        let NextHops::PerSubnet(codes) = &self.next else { return };
        let mut reached = codes.iter().filter(|&&c| c != NONE);
        let Some(&first) = reached.next() else { return };
        if first & LIST != 0 || reached.any(|&c| c != first) {
            return;
        }
        let unreachable = (0..codes.len() as SubnetId).filter(|&id| codes[id as usize] == NONE).collect();
        self.next = NextHops::Uniform { code: first, unreachable };
    }
}

/// An address as routing sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RoutedAddr {
    /// The address.
    pub addr: Ipv4Addr,
    /// Its prefix length.
    pub prefix_len: u8,
    /// Where it is reached from: the link it sits on (an attachment key, for telling
    /// attachments apart), the node at the other end of that link and the link's cost.
    /// `None` for an address on an unattached interface (unreachable).
    pub attached: Option<(u32, FarEnd)>,
}

/// The far end of an interface's link: (neighbour node, link cost).
pub type FarEnd = (usize, u64);

/// The graph routing is computed on.
pub struct Graph {
    /// Per node: may it forward (routers yes, hosts no).
    pub transit: Vec<bool>,
    /// Per node: (own interface, neighbour node, link cost, attachment key of the link) for
    /// each interface that has a link; the key is the one its addresses carry in
    /// [`RoutedAddr::attached`].
    pub adjacency: Vec<Vec<(IfaceId, usize, u64, u32)>>,
    /// Per node: its addresses.
    pub addresses: Vec<Vec<RoutedAddr>>,
}

/// One address of a subnet, as a way in: the packet leaves node `entry` over the address's
/// link (attachment key `link`, cost `cost`) and reaches `owner`.
#[derive(Clone, Copy, Debug)]
struct Way {
    owner: usize,
    entry: usize,
    link: u32,
    cost: u64,
}

impl Graph {
    /// The subnets and, per subnet, the ways into it.
    fn subnets(&self) -> (SubnetIndex, Vec<Vec<Way>>) {
        // (prefix, len) -> attachment key of its first address, and whether another
        // attachment claims it too.
        let mut claims: FxHashMap<(u32, u8), (u32, bool)> = FxHashMap::default();
        let attached = || {
            self.addresses
                .iter()
                .enumerate()
                .flat_map(|(n, addrs)| addrs.iter().filter_map(move |a| a.attached.map(|(key, far)| (n, a, key, far))))
        };
        for (_, a, key, _) in attached() {
            let len = a.prefix_len.min(32);
            let net = u32::from(a.addr) & mask(len);
            let claim = claims.entry((net, len)).or_insert((key, false));
            claim.1 |= claim.0 != key;
        }
        let prefix_of = |a: &RoutedAddr| {
            let len = a.prefix_len.min(32);
            let net = u32::from(a.addr) & mask(len);
            match claims.get(&(net, len)) {
                Some((_, false)) => (net, len),
                _ => (u32::from(a.addr), 32),
            }
        };
        let mut index = SubnetIndex::default();
        for (_, a, _, _) in attached() {
            let (net, len) = prefix_of(a);
            index.insert(net, len);
        }
        // An address inside a longer prefix of another attachment is a host subnet of its own.
        let mut ways: Vec<Vec<Way>> = vec![Vec::new(); index.len()];
        let mut extra = Vec::new();
        for (owner, a, link, (entry, cost)) in attached() {
            let own = prefix_of(a);
            let id = index.longest_match(u32::from(a.addr)).unwrap_or(NONE);
            let way = Way { owner, entry, link, cost };
            if index.subnets.get(id as usize) == Some(&own) {
                ways[id as usize].push(way);
            } else {
                extra.push((u32::from(a.addr), way));
            }
        }
        for (addr, way) in extra {
            let id = index.insert(addr, 32);
            if id as usize == ways.len() {
                ways.push(Vec::new());
            }
            ways[id as usize].push(way);
        }
        (index, ways)
    }

    /// Automatic routing tables for every node (index = node).
    pub fn shortest_paths(&self) -> Vec<AutoRoutes> {
        let n = self.transit.len();
        let (index, ways) = self.subnets();
        let index = Arc::new(index);
        // Distances from every router over routers (a host reaches only itself).
        let mut dist_from: Vec<Option<Vec<u64>>> = vec![None; n];
        for (s, adj) in self.adjacency.iter().enumerate() {
            for &(_, nb, _, _) in adj {
                if self.transit[nb] && dist_from[nb].is_none() {
                    dist_from[nb] = Some(self.distances_from(nb));
                }
            }
            let _ = s;
        }
        let mut options: Vec<(u64, IfaceId)> = Vec::new();
        (0..n)
            .map(|s| {
                let mut codes = vec![NONE; index.len()];
                let (mut lists, mut pool) = (Vec::new(), Vec::new());
                for (id, subnet_ways) in ways.iter().enumerate() {
                    options.clear();
                    for &(iface, nb, cost, link) in &self.adjacency[s] {
                        // The cheapest way in through this neighbour.
                        let rest = subnet_ways
                            .iter()
                            .filter(|w| w.owner != s)
                            .filter_map(|w| {
                                if nb == w.owner {
                                    // A connected subnet is reached over its own link only (the
                                    // connected route of any IP stack): with parallel links
                                    // between the same two nodes, another link to the owner does
                                    // not lead into this subnet.
                                    (w.entry == s && w.link == link).then_some(0)
                                } else if nb == w.entry {
                                    Some(w.cost)
                                } else if self.transit[w.entry] {
                                    let d = dist_from[nb].as_ref()?[w.entry];
                                    (d != u64::MAX).then(|| d + w.cost)
                                } else {
                                    None
                                }
                            })
                            .min();
                        if let Some(rest) = rest {
                            options.push((cost + rest, iface));
                        }
                    }
                    if options.is_empty() {
                        continue;
                    }
                    options.sort_unstable();
                    if self.transit[s] || options.len() == 1 {
                        codes[id] = options[0].1 .0; // a router only needs its best next hop
                    } else {
                        codes[id] = LIST | lists.len() as u32;
                        lists.push((pool.len() as u32, options.len() as u32));
                        pool.extend(options.iter().map(|&(_, i)| i));
                    }
                }
                let mut auto = AutoRoutes { subnets: index.clone(), next: NextHops::PerSubnet(codes), lists, pool };
                auto.compact();
                auto
            })
            .collect()
    }

    /// Cost from `s` to every node when only routers may be crossed; `u64::MAX` = unreachable.
    /// A host reaches only itself (it is never a transit node).
    fn distances_from(&self, s: usize) -> Vec<u64> {
        let mut dist = vec![u64::MAX; self.transit.len()];
        dist[s] = 0;
        if !self.transit[s] {
            return dist;
        }
        let mut heap = BinaryHeap::from([Reverse((0u64, s))]);
        while let Some(Reverse((d, u))) = heap.pop() {
            if d > dist[u] || (u != s && !self.transit[u]) {
                continue;
            }
            for &(_, v, cost, _) in &self.adjacency[u] {
                if d + cost < dist[v] {
                    dist[v] = d + cost;
                    heap.push(Reverse((d + cost, v)));
                }
            }
        }
        dist
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(last: u8) -> Ipv4Addr {
        Ipv4Addr::new(10, 0, 0, last)
    }

    /// `addr/32` on link `key`, whose far end is `far`.
    fn host(addr: Ipv4Addr, key: u32, far: usize) -> RoutedAddr {
        RoutedAddr { addr, prefix_len: 32, attached: Some((key, (far, 1))) }
    }

    /// H0 (two interfaces) -- R1 -- R2 -- H3, and H0 -- R4 -- H3 (shorter). Every address a
    /// /32 of its own, so each is reached exactly as its own link dictates.
    fn graph() -> Graph {
        // interfaces: H0: 0 (to R1), 1 (to R4); R1: 2 (H0), 3 (R2); R2: 4 (R1), 5 (H3);
        // H3: 6 (R2), 7 (R4); R4: 8 (H0), 9 (H3). Links: 0 H0-R1, 1 H0-R4, 2 R1-R2, 3 R2-H3,
        // 4 H3-R4.
        Graph {
            transit: vec![false, true, true, false, true],
            adjacency: vec![
                vec![(IfaceId(0), 1, 1, 0), (IfaceId(1), 4, 1, 1)],
                vec![(IfaceId(2), 0, 1, 0), (IfaceId(3), 2, 1, 2)],
                vec![(IfaceId(4), 1, 1, 2), (IfaceId(5), 3, 1, 3)],
                vec![(IfaceId(6), 2, 1, 3), (IfaceId(7), 4, 1, 4)],
                vec![(IfaceId(8), 0, 1, 1), (IfaceId(9), 3, 1, 4)],
            ],
            addresses: vec![
                vec![host(ip(1), 0, 1), host(ip(2), 1, 4)],
                vec![host(ip(11), 0, 0)],
                vec![host(ip(12), 2, 1)],
                vec![host(ip(31), 3, 2), host(ip(32), 4, 4)],
                vec![host(ip(14), 1, 0)],
            ],
        }
    }

    fn table(auto: AutoRoutes) -> RoutingTable {
        let mut t = RoutingTable::default();
        t.set_auto(auto);
        t
    }

    #[test]
    fn hosts_rank_interfaces_and_routers_keep_the_best() {
        let tables = graph().shortest_paths();
        // Host 0 to host 3: each of H3's addresses is reached over its own link, so
        // 10.0.0.31 (on the R2 link) via R1-R2 and 10.0.0.32 (on the R4 link) via R4.
        let t0 = table(tables[0].clone());
        assert_eq!(t0.candidates(ip(31)), vec![IfaceId(0)]);
        assert_eq!(t0.lookup(ip(31), None), Some(IfaceId(0)));
        assert_eq!(t0.candidates(ip(32)), vec![IfaceId(1)]);
        // A source address whose interface does not reach the destination is not used.
        assert_eq!(t0.lookup(ip(32), Some(IfaceId(0))), Some(IfaceId(1)));
        // Router R1 reaches H3 via R2 (its only non-host path; H0 is not transit).
        assert_eq!(table(tables[1].clone()).candidates(ip(31)), vec![IfaceId(3)]);
        // Router R2 reaches R4 only through H3 or H0, which do not forward: unreachable.
        assert!(table(tables[2].clone()).candidates(ip(14)).is_empty());
    }

    #[test]
    fn explicit_routes_override_longest_prefix_first() {
        let mut t = table(graph().shortest_paths()[0].clone());
        t.add_static(StaticRoute { prefix: Ipv4Addr::new(10, 0, 0, 0), len: 8, iface: IfaceId(0) });
        t.add_static(StaticRoute { prefix: ip(32), len: 32, iface: IfaceId(1) });
        assert_eq!(t.lookup(ip(31), None), Some(IfaceId(0)));
        assert_eq!(t.lookup(ip(32), Some(IfaceId(0))), Some(IfaceId(1)));
        // Default route catches the rest.
        t.add_static(StaticRoute { prefix: Ipv4Addr::UNSPECIFIED, len: 0, iface: IfaceId(1) });
        assert_eq!(t.lookup(Ipv4Addr::new(192, 168, 1, 1), None), Some(IfaceId(1)));
        assert_eq!(RoutingTable::default().lookup(ip(9), None), None);
    }

    /// H0 -- R1 -- H2 and H0 -- R3 -- H2, each link its own /24 (10.0.<link>.0/24).
    fn two_paths(len: u8) -> Graph {
        let a = |link: u8, last: u8, far: usize| RoutedAddr {
            addr: Ipv4Addr::new(10, 0, link, last),
            prefix_len: len,
            attached: Some((link as u32, (far, 1))),
        };
        // interfaces: H0: 0 (R1), 1 (R3); R1: 2 (H0), 3 (H2); H2: 4 (R1), 5 (R3); R3: 6 (H0), 7 (H2)
        Graph {
            transit: vec![false, true, false, true],
            adjacency: vec![
                vec![(IfaceId(0), 1, 1, 1), (IfaceId(1), 3, 1, 2)],
                vec![(IfaceId(2), 0, 1, 1), (IfaceId(3), 2, 1, 3)],
                vec![(IfaceId(4), 1, 1, 3), (IfaceId(5), 3, 1, 4)],
                vec![(IfaceId(6), 0, 1, 2), (IfaceId(7), 2, 1, 4)],
            ],
            addresses: vec![
                vec![a(1, 1, 1), a(2, 1, 3)],
                vec![a(1, 2, 0), a(3, 2, 2)],
                vec![a(3, 1, 1), a(4, 1, 3)],
                vec![a(2, 2, 0), a(4, 2, 2)],
            ],
        }
    }

    #[test]
    fn one_entry_per_subnet_matches_any_address_in_it() {
        let tables = two_paths(24).shortest_paths();
        assert_eq!(tables[0].subnets.len(), 4);
        let h0 = table(tables[0].clone());
        assert_eq!(h0.reachable(), 4);
        // H2's address on link 3 is reached over R1, the one on link 4 over R3; any address
        // of those subnets goes the same way.
        assert_eq!(h0.lookup(Ipv4Addr::new(10, 0, 3, 1), None), Some(IfaceId(0)));
        assert_eq!(h0.lookup(Ipv4Addr::new(10, 0, 4, 1), None), Some(IfaceId(1)));
        assert_eq!(h0.lookup(Ipv4Addr::new(10, 0, 4, 77), None), Some(IfaceId(1)));
        assert_eq!(h0.lookup(Ipv4Addr::new(10, 0, 5, 1), None), None);
        // The router's connected subnets leave by their own interfaces.
        let r1 = table(tables[1].clone());
        assert_eq!(r1.lookup(Ipv4Addr::new(10, 0, 1, 1), None), Some(IfaceId(2)));
        assert_eq!(r1.lookup(Ipv4Addr::new(10, 0, 3, 1), None), Some(IfaceId(3)));
    }

    #[test]
    fn a_prefix_two_links_claim_falls_back_to_host_routes() {
        // Every address in 10.0.0.0/16: the links cannot be told apart by prefix, so each
        // address is a /32 of its own and routing is still exact.
        let tables = two_paths(16).shortest_paths();
        assert_eq!(tables[0].subnets.len(), 8);
        let h0 = table(tables[0].clone());
        assert_eq!(h0.lookup(Ipv4Addr::new(10, 0, 3, 1), None), Some(IfaceId(0)));
        assert_eq!(h0.lookup(Ipv4Addr::new(10, 0, 4, 1), None), Some(IfaceId(1)));
        assert_eq!(h0.lookup(Ipv4Addr::new(10, 0, 4, 77), None), None);
    }

    #[test]
    fn an_address_inside_a_longer_prefix_of_another_link_gets_a_host_route() {
        // Link 3 (R1 -- H2) is 10.0.0.0/8, and H2's address on it, 10.0.4.9, lies inside
        // link 4's 10.0.4.0/24.
        let mut g = two_paths(24);
        g.addresses[2][0] = RoutedAddr { addr: Ipv4Addr::new(10, 0, 4, 9), prefix_len: 8, attached: Some((3, (1, 1))) };
        g.addresses[1][1] = RoutedAddr { addr: Ipv4Addr::new(10, 0, 0, 2), prefix_len: 8, attached: Some((3, (2, 1))) };
        let h0 = table(g.shortest_paths()[0].clone());
        // 10.0.4.9 is on link 3 (via R1) although it lies in link 4's /24 (via R3).
        assert_eq!(h0.lookup(Ipv4Addr::new(10, 0, 4, 9), None), Some(IfaceId(0)));
        assert_eq!(h0.lookup(Ipv4Addr::new(10, 0, 4, 1), None), Some(IfaceId(1)));
        // The rest of 10/8 holds only R1's address, entered from H2's end, which does not
        // forward: unreachable from H0.
        assert_eq!(h0.lookup(Ipv4Addr::new(10, 9, 9, 9), None), None);
    }

    #[test]
    fn multihomed_hosts_keep_every_way_best_first() {
        // Once R1 and R3 are joined, H0 reaches link 3 both ways (via R1 in 2 hops, via R3
        // in 3): both are kept, best first, and a bound source address picks its own.
        let mut g = two_paths(24);
        // Join R1 and R3 (interfaces 8 on R1, 9 on R3, link 5), cost 1.
        g.adjacency[1].push((IfaceId(8), 3, 1, 5));
        g.adjacency[3].push((IfaceId(9), 1, 1, 5));
        let h0 = table(g.shortest_paths()[0].clone());
        assert_eq!(h0.candidates(Ipv4Addr::new(10, 0, 3, 1)), vec![IfaceId(0), IfaceId(1)]);
        assert_eq!(h0.lookup(Ipv4Addr::new(10, 0, 3, 1), Some(IfaceId(1))), Some(IfaceId(1)));
        assert_eq!(h0.lookup(Ipv4Addr::new(10, 0, 3, 1), None), Some(IfaceId(0)));
        assert_eq!(h0.lookup(Ipv4Addr::new(10, 0, 3, 1), Some(IfaceId(7))), Some(IfaceId(0)));
    }

    #[test]
    fn a_host_on_one_link_stores_its_next_hop_once() {
        // H0 -- R1 -- H2, and H3 -- H4 on their own; link i is 10.0.i.0/24.
        let a = |link: u8, last: u8, far: usize| RoutedAddr {
            addr: Ipv4Addr::new(10, 0, link, last),
            prefix_len: 24,
            attached: Some((link as u32, (far, 1))),
        };
        let g = Graph {
            transit: vec![false, true, false, false, false],
            adjacency: vec![
                vec![(IfaceId(0), 1, 1, 0)],
                vec![(IfaceId(1), 0, 1, 0), (IfaceId(2), 2, 1, 1)],
                vec![(IfaceId(3), 1, 1, 1)],
                vec![(IfaceId(4), 4, 1, 2)],
                vec![(IfaceId(5), 3, 1, 2)],
            ],
            addresses: vec![
                vec![a(0, 1, 1)],
                vec![a(0, 2, 0), a(1, 1, 2)],
                vec![a(1, 2, 1)],
                vec![a(2, 1, 4)],
                vec![a(2, 2, 3)],
            ],
        };
        let tables = g.shortest_paths();
        assert!(matches!(tables[0].next, NextHops::Uniform { code: 0, .. }));
        assert!(matches!(tables[1].next, NextHops::PerSubnet(_)));
        let h0 = table(tables[0].clone());
        assert_eq!(h0.reachable(), 2);
        assert_eq!(h0.lookup(Ipv4Addr::new(10, 0, 0, 2), None), Some(IfaceId(0)));
        assert_eq!(h0.lookup(Ipv4Addr::new(10, 0, 1, 2), None), Some(IfaceId(0)));
        assert_eq!(h0.lookup(Ipv4Addr::new(10, 0, 2, 1), None), None);
        assert_eq!(h0.candidates(Ipv4Addr::new(10, 0, 2, 1)), vec![]);
        assert_eq!(h0.lookup(Ipv4Addr::new(10, 0, 9, 1), None), None);
    }

    #[test]
    fn cached_lookups_follow_new_routes_and_colliding_destinations() {
        let mut t = table(two_paths(24).shortest_paths()[0].clone());
        // Many destinations share the cache's slots; each keeps its own answer.
        for round in 0..2 {
            for i in 0..=255u8 {
                let via = t.lookup(Ipv4Addr::new(10, 0, 3, i), None);
                assert_eq!(via, Some(IfaceId(0)), "round {round}");
                assert_eq!(t.lookup(Ipv4Addr::new(10, 0, 4, i), None), Some(IfaceId(1)));
                assert_eq!(t.lookup(Ipv4Addr::new(10, 0, 9, i), None), None);
            }
        }
        // New routes replace the cached answers.
        t.set_auto(AutoRoutes::default());
        assert_eq!(t.lookup(Ipv4Addr::new(10, 0, 3, 1), None), None);
    }

    /// H0 and H1 joined by two parallel links, link 1 (10.1.1.0/24, cost `c1`) and link 2
    /// (10.2.1.0/24, cost `c2`). Interfaces: H0: 0 (link 1), 1 (link 2); H1: 2 (link 1),
    /// 3 (link 2). H0's addresses end in .1, H1's in .2.
    fn parallel_links(c1: u64, c2: u64) -> Graph {
        let a = |link: u8, last: u8, far: usize, cost: u64| RoutedAddr {
            addr: Ipv4Addr::new(10, link, 1, last),
            prefix_len: 24,
            attached: Some((link as u32, (far, cost))),
        };
        Graph {
            transit: vec![false, false],
            adjacency: vec![
                vec![(IfaceId(0), 1, c1, 1), (IfaceId(1), 1, c2, 2)],
                vec![(IfaceId(2), 0, c1, 1), (IfaceId(3), 0, c2, 2)],
            ],
            addresses: vec![vec![a(1, 1, 1, c1), a(2, 1, 1, c2)], vec![a(1, 2, 0, c1), a(2, 2, 0, c2)]],
        }
    }

    #[test]
    fn parallel_links_reach_each_subnet_over_its_own_link() {
        // Equal costs, and link 2 dearer than link 1: either way, each of the other host's
        // addresses leaves by the interface on its subnet and only by it (a connected route),
        // whatever source address is bound.
        for (c1, c2) in [(1, 1), (1, 10)] {
            let tables = parallel_links(c1, c2).shortest_paths();
            let h0 = table(tables[0].clone());
            let (b1, b2) = (Ipv4Addr::new(10, 1, 1, 2), Ipv4Addr::new(10, 2, 1, 2));
            assert_eq!(h0.candidates(b1), vec![IfaceId(0)], "costs {c1}/{c2}");
            assert_eq!(h0.candidates(b2), vec![IfaceId(1)], "costs {c1}/{c2}");
            assert_eq!(h0.lookup(b2, None), Some(IfaceId(1)));
            assert_eq!(h0.lookup(b2, Some(IfaceId(0))), Some(IfaceId(1)));
            assert_eq!(h0.lookup(b1, Some(IfaceId(1))), Some(IfaceId(0)));
            let h1 = table(tables[1].clone());
            assert_eq!(h1.lookup(Ipv4Addr::new(10, 2, 1, 1), None), Some(IfaceId(3)));
            assert_eq!(h1.lookup(Ipv4Addr::new(10, 1, 1, 1), Some(IfaceId(3))), Some(IfaceId(2)));
        }
    }
}
