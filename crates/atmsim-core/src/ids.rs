//! Typed indices of the network's parts: a VC, a flow, a scenario link,
//! and a link's index inside its fabric (which also names the link's
//! output port: a port has no index of its own). Each is a `u32` of its own
//! type, so that an index of one space handed where another is expected
//! fails to compile; `index()` gives the `usize` to index a vector with.
//!
//! Links have two index spaces: a [`LinkId`] numbers the scenario's links
//! (ATM and IP together, as the scenario lists them); an [`AtmLinkIx`]
//! numbers the ATM links inside the ATM fabric, an [`IpLinkIx`] the IP
//! links inside the IP fabric (`sim` maps one to the other).

macro_rules! typed_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[repr(transparent)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub u32);

        impl $name {
            /// The id of number `n`.
            #[inline(always)]
            pub const fn new(n: u32) -> Self {
                $name(n)
            }

            /// The id of position `i` of a vector (which must fit a u32).
            #[inline(always)]
            pub const fn from_index(i: usize) -> Self {
                $name(i as u32)
            }

            /// Its number.
            #[inline(always)]
            pub const fn get(self) -> u32 {
                self.0
            }

            /// Its position, to index a vector with.
            #[inline(always)]
            pub const fn index(self) -> usize {
                self.0 as usize
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.0.fmt(f)
            }
        }
    };
}

typed_id!(
    /// A virtual circuit, by its place in the scenario's VCs.
    VcId
);
typed_id!(
    /// A TCP flow, by its place in the scenario's flows.
    FlowId
);
typed_id!(
    /// A scenario link, by its place in the scenario's links (ATM and IP
    /// together).
    LinkId
);
typed_id!(
    /// An ATM link, by its place in the ATM fabric's links.
    AtmLinkIx
);
typed_id!(
    /// An IP link, by its place in the IP fabric's links.
    IpLinkIx
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_is_as_small_as_its_number() {
        assert_eq!(std::mem::size_of::<VcId>(), 4);
        assert_eq!(std::mem::size_of::<Option<AtmLinkIx>>(), 8);
        assert_eq!(VcId::from_index(7).index(), 7);
        assert_eq!(LinkId::new(3).get(), 3);
    }
}
