//! The one list of workloads: a new workload is one line here (and its module).

use crate::harness::{Entry, Registered};

pub static WORKLOADS: &[&dyn Entry] = &[
    &Registered::<crate::bfs::Bfs>::ENTRY,
    &Registered::<crate::langford::Langford>::ENTRY,
    &Registered::<crate::generate::Generate>::ENTRY,
    &Registered::<crate::analyze::Analyze>::ENTRY,
    &Registered::<crate::cc::Cc>::ENTRY,
    &Registered::<crate::percolation::Percolation>::ENTRY,
    &Registered::<crate::spin::Spin>::ENTRY,
    &Registered::<crate::euler::Euler>::ENTRY,
];

/// The workload of that name.
pub fn find(name: &str) -> Option<&'static dyn Entry> {
    WORKLOADS.iter().copied().find(|w| w.name() == name)
}

#[cfg(test)]
mod tests {
    /// Every workload's flag set (its own, `[run]`'s and `[graph]`'s) is a valid command: a
    /// key two tables share would otherwise surface only as a panic when parsing its flags.
    #[test]
    fn every_workload_command_is_well_formed() {
        for w in super::WORKLOADS {
            w.command().debug_assert();
        }
    }
}
