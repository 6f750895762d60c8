//! The Erdős–Rényi split tree's lower levels on the GPU (kernels/generators.cu `er_split`,
//! `er_chunks`): from the window of a level the host reached, a launch a level, a thread a
//! node, each node's hypergeometric draw the host's operation for operation (so the chunks,
//! and the graph, are the CPU run's). No level waits for the host: the kernels keep each
//! level's window (which nodes hold this rank's edges) on the GPU.

use crate::device::{grid, Gpu};
use crate::error::Result;
use cudarc::driver::{CudaSlice, PushKernelArg};

/// The kernel file.
const FILE: &str = "generators.cu";
/// Numbers before the window's nodes in the descent's parameters.
const HEAD: usize = 9;

/// Where the host left the descent, as the parameters of `descend`: [0] levels, [1] the
/// window's level, [2] pairs, [3] split key, [4] slot key, [5..7] this rank's edges, [7] the
/// window's first node, [8] its nodes, then (first edge, edges) of each.
pub struct Descent {
    pub levels: u32,
    pub level: u32,
    pub pairs: u64,
    pub split_key: u64,
    pub slot_key: u64,
    pub local: std::ops::Range<u64>,
    pub lo: u64,
    pub window: Vec<(u64, u64)>,
}

impl Descent {
    pub fn params(&self) -> Vec<u64> {
        let head = [
            self.levels as u64,
            self.level as u64,
            self.pairs,
            self.split_key,
            self.slot_key,
            self.local.start,
            self.local.end,
            self.lo,
            self.window.len() as u64,
        ];
        let nodes = self
            .window
            .iter()
            .flat_map(|&(first, count)| [first, count]);
        head.into_iter().chain(nodes).collect()
    }
}

/// The chunk list of the "er" kernels, descended on `gpu` from `params` (`Descent::params`);
/// None where a chunk draws more slots than a block holds.
pub fn descend(gpu: &Gpu, params: &[u64]) -> Result<Option<CudaSlice<u64>>> {
    let (levels, start, width) = (params[0] as u32, params[1] as u32, params[8]);
    let head = gpu.upload("Erdős–Rényi tree", &params[..HEAD])?;
    // Per level: the window's first node and width before trimming, and whether its first
    // and its last node are trimmed (the start level's window as the host left it).
    let mut windows = vec![0u64; 4 * (levels as usize + 1)];
    windows[4 * start as usize..][..2].copy_from_slice(&[params[7], width]);
    let mut windows = gpu.upload("Erdős–Rényi windows", &windows)?;
    // Each level's window is at most twice the one above.
    let most = width << (levels - start);
    let mut nodes = [
        gpu.zeros::<u64>("Erdős–Rényi nodes", 2 * most as usize)?,
        gpu.zeros::<u64>("Erdős–Rényi nodes", 2 * most as usize)?,
    ];
    if width > 0 {
        gpu.stream
            .memcpy_htod(
                &params[HEAD..],
                &mut nodes[0].slice_mut(0..2 * width as usize),
            )
            .map_err(|e| crate::device::gpu_error("upload the Erdős–Rényi window", e))?;
    }
    let split = gpu.function(FILE, "er_split")?;
    for level in start..levels {
        let [a, b] = &mut nodes;
        let (above, below) = match (level - start) % 2 {
            0 => (&*a, b),
            _ => (&*b, a),
        };
        gpu.launch(&split, grid(width << (level - start)), |l| {
            l.arg(&head)
                .arg(&level)
                .arg(&mut windows)
                .arg(above)
                .arg(below);
        })?;
    }
    let leaves = &nodes[((levels - start) % 2) as usize];
    let mut chunks = gpu.zeros::<u64>("Erdős–Rényi chunks", 1 + 5 * most as usize)?;
    let mut too_big = gpu.zeros::<u64>("Erdős–Rényi chunk check", 1)?;
    let finish = gpu.function(FILE, "er_chunks")?;
    gpu.launch(&finish, grid(most), |l| {
        l.arg(&head)
            .arg(&windows)
            .arg(leaves)
            .arg(&mut chunks)
            .arg(&mut too_big);
    })?;
    let fits = gpu.download("Erdős–Rényi chunk check", &too_big, 1)?[0] == 0;
    Ok(fits.then_some(chunks))
}

#[cfg(test)]
mod tests {
    use super::super::erdos_renyi::ErdosRenyi;
    use super::super::{emulate, section};
    use crate::graph::EdgeSource;

    /// The kernels, run on the host by tests/emulate/er_tree.cpp (g++), make each rank's
    /// chunks as the host's descent does, for trees the GPU takes over at various levels
    /// (5 levels of 15 at 2^26 edges on one rank), several ranks, and trees the host
    /// descends to their leaves (too few nodes in a window).
    #[test]
    fn the_kernels_emulated_descend_as_the_host_does() {
        let graphs: [(u64, u64, usize); 8] = [
            (1 << 24, 1 << 26, 1),
            (1 << 22, 1 << 25, 3),
            (1 << 16, 1 << 20, 1),
            (1 << 16, 1 << 20, 3),
            (1 << 20, 1 << 23, 7),
            (1 << 22, 1 << 24, 2),
            (100, 4000, 2),
            (5000, 3_000_000, 4),
        ];
        let sources: Vec<ErdosRenyi> = graphs
            .iter()
            .flat_map(|&(n, m, ranks)| (0..ranks).map(move |r| ErdosRenyi::new(n, m, 5, ranks, r)))
            .collect();
        let input: String = sources
            .iter()
            .map(|s| {
                let p = s.device_edges().unwrap().params;
                p.iter().map(|v| format!("{v} ")).collect::<String>() + "\n"
            })
            .collect();
        let prelude = include_str!("../../../kernels/prelude.cuh");
        let kernels = include_str!("../../../kernels/generators.cu");
        let draw = section(prelude, "#define RNG_GOLDEN", "// A stream key");
        let tree = section(
            kernels,
            "// ---- Erdős–Rényi split tree",
            "// ---- Kernel 1",
        );
        let files = [
            ("er_kernel.h", (draw + &tree).replace("extern \"C\" ", "")),
            (
                "er_tree.cpp",
                include_str!("../../../tests/emulate/er_tree.cpp").to_string(),
            ),
        ];
        let out = emulate("er_tree", &files, &input);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), sources.len());
        for (s, line) in sources.iter().zip(&lines) {
            let want: Vec<String> = s
                .chunk_counts()
                .iter()
                .map(|(f, c)| format!("{f},{c}"))
                .collect();
            assert_eq!(*line, want.join(" "));
        }
    }
}
