//! Identifiers of the simulator's entities: small `Copy` indices into the tables that own
//! them. A leaf module: anything may use it, it uses nothing.

macro_rules! id_type {
    ($(#[$doc:meta] $name:ident),*) => {$(
        #[$doc]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub u32);
        impl $name {
            /// Position in the owning table.
            #[inline]
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }
    )*};
}

id_type!(
    /// Index of a node in the network.
    NodeId,
    /// Index of an interface in the network.
    IfaceId,
    /// Index of a link in the network.
    LinkId,
    /// Index of an agent in the world.
    AgentId
);

/// Index of a registered flow, as carried in a packet's metadata
/// ([`crate::wire::PacketMeta::flow`]); [`crate::wire::NO_FLOW`] for none.
pub type FlowId = u32;
