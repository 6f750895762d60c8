//! The one list of workloads. A workload is its folder `src/workloads/NAME/` (its deck table,
//! procedure, report and verifier), its kernel file `kernels/NAME.cu` (found by build.rs) and
//! one line here: the macro declares its module and registers its type as a subcommand.

use crate::harness::{Entry, Registered};

macro_rules! workloads {
    ($($module:ident :: $workload:ident),* $(,)?) => {
        $(pub mod $module;)*

        /// Every workload, in the order `--help` lists them.
        pub static WORKLOADS: &[&dyn Entry] = &[$(&Registered::<$module::$workload>::ENTRY),*];
    };
}

workloads! {
    bfs::Bfs,
    langford::Langford,
    generate::Generate,
    analyze::Analyze,
    cc::Cc,
    percolation::Percolation,
    spin::Spin,
    euler::Euler,
    bc::Bc,
    ssca2::Ssca2,
    cortex::Cortex,
    mesh::MeshWorkload,
}

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
