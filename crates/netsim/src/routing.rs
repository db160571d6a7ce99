//! Static IPv4 routing: automatic shortest paths plus explicit routes that override them.
//!
//! Every link has a cost (1 by default, so "shortest" means fewest hops). Hosts never forward:
//! paths may pass through routers only. A host with several interfaces keeps, for every
//! destination, the list of its interfaces that reach it, best first, so that a transport which
//! binds a source address (SCTP multihoming) leaves by that address's interface when it can —
//! the behaviour of source-address policy routing on a real multihomed host. Explicit routes
//! (`prefix/len -> interface`) are matched longest-prefix-first and win over automatic ones.
//! Routing is static: link and interface failures do not trigger recomputation.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::net::Ipv4Addr;

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
    fn mask(&self) -> u32 {
        if self.len == 0 {
            0
        } else {
            u32::MAX << (32 - self.len as u32)
        }
    }
    fn matches(&self, dst: u32) -> bool {
        (dst & self.mask()) == (u32::from(self.prefix) & self.mask())
    }
}

/// One node's forwarding table.
#[derive(Clone, Debug, Default)]
pub struct RoutingTable {
    /// Explicit routes, longest prefix first (ties keep scenario order).
    explicit: Vec<StaticRoute>,
    /// Automatic routes: destination address -> interfaces that reach it, best first.
    auto: FxHashMap<u32, Vec<IfaceId>>,
}

impl RoutingTable {
    /// Add an explicit route.
    pub fn add_static(&mut self, route: StaticRoute) {
        let at = self.explicit.partition_point(|r| r.len >= route.len);
        self.explicit.insert(at, route);
    }

    /// Replace the automatic routes.
    pub fn set_auto(&mut self, auto: FxHashMap<u32, Vec<IfaceId>>) {
        self.auto = auto;
    }

    /// The interface for a packet to `dst`. `preferred` is the interface owning the packet's
    /// source address (hosts only): it is used when it reaches `dst` at all.
    #[inline]
    pub fn lookup(&self, dst: Ipv4Addr, preferred: Option<IfaceId>) -> Option<IfaceId> {
        let dst = u32::from(dst);
        if let Some(r) = self.explicit.iter().find(|r| r.matches(dst)) {
            return Some(r.iface);
        }
        let candidates = self.auto.get(&dst)?;
        match preferred {
            Some(p) if candidates.contains(&p) => Some(p),
            _ => candidates.first().copied(),
        }
    }

    /// All interfaces that automatically reach `dst`, best first (for inspection and tests).
    pub fn candidates(&self, dst: Ipv4Addr) -> &[IfaceId] {
        self.auto.get(&u32::from(dst)).map_or(&[], |v| v.as_slice())
    }
}

/// The far end of an interface's link: (neighbour node, link cost).
pub type FarEnd = (usize, u64);

/// The graph routing is computed on.
pub struct Graph {
    /// Per node: may it forward (routers yes, hosts no).
    pub transit: Vec<bool>,
    /// Per node: (own interface, neighbour node, link cost) for each interface that has a link.
    pub adjacency: Vec<Vec<(IfaceId, usize, u64)>>,
    /// Per node: its addresses, each with the node at the other end of its interface's link
    /// and that link's cost (`None` for an unattached interface).
    pub addresses: Vec<Vec<(Ipv4Addr, Option<FarEnd>)>>,
}

impl Graph {
    /// Automatic routing tables for every node (index = node).
    pub fn shortest_paths(&self) -> Vec<FxHashMap<u32, Vec<IfaceId>>> {
        let n = self.transit.len();
        let dist: Vec<Vec<u64>> = (0..n).map(|s| self.distances_from(s)).collect();
        (0..n)
            .map(|s| {
                let mut table: FxHashMap<u32, Vec<IfaceId>> = FxHashMap::default();
                // An address is reached over its own interface's link: the last hop is the
                // node at the other end of that link (so a multihomed host's addresses are
                // reached over their own paths, as SCTP multihoming needs).
                for d in (0..n).filter(|&d| d != s) {
                    for &(addr, attached) in &self.addresses[d] {
                        let Some((last, last_cost)) = attached else { continue };
                        let mut options: Vec<(u64, IfaceId)> = self.adjacency[s]
                            .iter()
                            .filter_map(|&(iface, nb, cost)| {
                                let rest = if nb == d {
                                    (last == s).then_some(0)?
                                } else if nb == last {
                                    last_cost
                                } else if self.transit[last] && dist[nb][last] != u64::MAX {
                                    dist[nb][last] + last_cost
                                } else {
                                    return None;
                                };
                                Some((cost + rest, iface))
                            })
                            .collect();
                        options.sort();
                        if self.transit[s] {
                            options.truncate(1); // a router only needs its best next hop
                        }
                        if !options.is_empty() {
                            table.insert(u32::from(addr), options.into_iter().map(|(_, i)| i).collect());
                        }
                    }
                }
                table
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
            for &(_, v, cost) in &self.adjacency[u] {
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

    /// H0 (two interfaces) -- R1 -- R2 -- H3, and H0 -- R4 -- H3 (shorter).
    fn graph() -> Graph {
        // interfaces: H0: 0 (to R1), 1 (to R4); R1: 2 (H0), 3 (R2); R2: 4 (R1), 5 (H3);
        // H3: 6 (R2), 7 (R4); R4: 8 (H0), 9 (H3)
        Graph {
            transit: vec![false, true, true, false, true],
            adjacency: vec![
                vec![(IfaceId(0), 1, 1), (IfaceId(1), 4, 1)],
                vec![(IfaceId(2), 0, 1), (IfaceId(3), 2, 1)],
                vec![(IfaceId(4), 1, 1), (IfaceId(5), 3, 1)],
                vec![(IfaceId(6), 2, 1), (IfaceId(7), 4, 1)],
                vec![(IfaceId(8), 0, 1), (IfaceId(9), 3, 1)],
            ],
            addresses: vec![
                vec![(ip(1), Some((1, 1))), (ip(2), Some((4, 1)))],
                vec![(ip(11), Some((0, 1)))],
                vec![(ip(12), Some((1, 1)))],
                vec![(ip(31), Some((2, 1))), (ip(32), Some((4, 1)))],
                vec![(ip(14), Some((0, 1)))],
            ],
        }
    }

    #[test]
    fn hosts_rank_interfaces_and_routers_keep_the_best() {
        let tables = graph().shortest_paths();
        // Host 0 to host 3: each of H3's addresses is reached over its own link, so
        // 10.0.0.31 (on the R2 link) via R1-R2 and 10.0.0.32 (on the R4 link) via R4.
        let mut t0 = RoutingTable::default();
        t0.set_auto(tables[0].clone());
        assert_eq!(t0.candidates(ip(31)), &[IfaceId(0)]);
        assert_eq!(t0.lookup(ip(31), None), Some(IfaceId(0)));
        assert_eq!(t0.candidates(ip(32)), &[IfaceId(1)]);
        // A source address whose interface does not reach the destination is not used.
        assert_eq!(t0.lookup(ip(32), Some(IfaceId(0))), Some(IfaceId(1)));
        // Router R1 reaches H3 via R2 (its only non-host path; H0 is not transit).
        assert_eq!(tables[1][&u32::from(ip(31))], vec![IfaceId(3)]);
        // Router R2 reaches R4 only through H3 or H0, which do not forward: unreachable.
        assert!(!tables[2].contains_key(&u32::from(ip(14))));
    }

    #[test]
    fn explicit_routes_override_longest_prefix_first() {
        let mut t = RoutingTable::default();
        t.set_auto(graph().shortest_paths()[0].clone());
        t.add_static(StaticRoute { prefix: Ipv4Addr::new(10, 0, 0, 0), len: 8, iface: IfaceId(0) });
        t.add_static(StaticRoute { prefix: ip(32), len: 32, iface: IfaceId(1) });
        assert_eq!(t.lookup(ip(31), None), Some(IfaceId(0)));
        assert_eq!(t.lookup(ip(32), Some(IfaceId(0))), Some(IfaceId(1)));
        // Default route catches the rest.
        t.add_static(StaticRoute { prefix: Ipv4Addr::UNSPECIFIED, len: 0, iface: IfaceId(1) });
        assert_eq!(t.lookup(Ipv4Addr::new(192, 168, 1, 1), None), Some(IfaceId(1)));
        assert_eq!(RoutingTable::default().lookup(ip(9), None), None);
    }
}
