//! The three actions: the mesh made or read, then generated, smoothed on the ranks' patches,
//! or partitioned, and the report built. A generated mesh to smooth is made in layers, each
//! rank only its patch (`smooth_layers`); otherwise every rank holds the whole mesh.

use super::output::{self, Outcome, Totals};
use super::piece;
use super::{Action, MeshWorkload, Source};
use crate::error::{Error, Result};
use crate::harness::Harness;
use crate::mesh::adjacency::{self, Csr};
use crate::mesh::distributed::{MpiExchange, MpiRanks};
use crate::mesh::patch::{Exchange, Patch};
use crate::device::Selected;
use crate::comm::gpu::GpuExchange;
use crate::mesh::smooth::gpu::{DeviceHalo, GpuSmoother};
use crate::mesh::smooth::{self, Record, Settings};
use crate::mesh::partition::Ranks;
use crate::mesh::{colour, generate, partition, readers, Mesh};
use crate::comm::ranges::block_range;
use crate::report::Report;
use std::ops::Range;
use std::time::Instant;

pub fn execute(w: &MeshWorkload, h: &Harness) -> Result<Report> {
    match (&w.source, w.action) {
        (Source::Box { cubes, .. }, Action::Smooth) if h.world.size() <= cubes[2] + 1 => smooth_layers(w, h, *cubes),
        _ => whole(w, h),
    }
}

/// Every rank makes or reads the whole mesh (files, partitioning, generating).
fn whole(w: &MeshWorkload, h: &Harness) -> Result<Report> {
    let mesh = h.timed("mesh", || h.world.agree(load(&w.source, &MpiRanks(h.world))))?;
    let (n2c, graph) = h.timed("adjacency", || {
        let n2c = adjacency::node_to_cell(&mesh.cells, mesh.num_nodes());
        let graph = adjacency::node_graph(&mesh, &n2c);
        Ok((n2c, graph))
    })?;
    let totals = Totals::of(&mesh);
    log_mesh(&totals, mesh.dim);
    let write_mesh = w.write_mesh.unwrap_or(totals.nodes <= 1 << 24);
    let mut out = Outcome::new(&mesh);
    match w.action {
        Action::Generate => {}
        Action::Smooth => {
            let owner = h.timed("distribute", || Ok(owners(h, &mesh, &graph)))?;
            let mut patch = h.timed("patch", || {
                Ok(match h.world.size() {
                    // One rank's patch is the whole mesh, whose adjacency is made already.
                    1 => Patch::whole_with(mesh.clone(), n2c, graph.clone()),
                    _ => Patch::of_rank(&mesh, &owner, h.world.rank() as u32),
                })
            })?;
            let owner_of = |g: u64| owner[g as usize];
            let exchange = MpiExchange::new(h.world, &patch, owner_of);
            smooth_patch(w, h, (&mut patch, &exchange), &owner_of, write_mesh, &mut out)?;
        }
        Action::Partition => partition_mesh(w, h, &mesh, &graph, &mut out)?,
    }
    if write_mesh && w.action != Action::Smooth {
        // A block of the cells per rank.
        let r = block_range(mesh.num_cells() as u64, h.world.size(), h.world.rank());
        let cells: Vec<usize> = (r.start as usize..r.end as usize).collect();
        let mut p = piece::cut(&mesh, &mesh, &cells, |i| i as u64, |c| c as u64, |i| out.owner[i]);
        piece::place(h.world, &mut p);
        out.piece = Some(p);
    }
    Ok(output::report(w, h, &totals, Some(&mesh), &out))
}

/// Smoothing a generated box, bar, ball or ring: the ranks own runs of whole node layers along z
/// (node ids are layer-major), and each makes only its layers and one more on either side
/// (its cells and their ghost layer): nothing on a rank is as large as the whole mesh.
fn smooth_layers(w: &MeshWorkload, h: &Harness, cubes: [usize; 3]) -> Result<Report> {
    let (size, layers) = (h.world.size(), cubes[2] as u64 + 1);
    let layer = ((cubes[0] + 1) * (cubes[1] + 1)) as u64;
    let starts: Vec<u64> = (0..size).map(|r| block_range(layers, size, r).start).collect();
    let owner = |g: u64| (starts.partition_point(|&s| s <= g / layer) - 1) as u32;
    let owned = block_range(layers, size, h.world.rank());
    let held = owned.start.saturating_sub(1)..(owned.end + 1).min(layers);
    let mut patch = h.timed("patch", || {
        let mesh = load_layers(&w.source, held.start as usize..held.end as usize);
        let first_cell = held.start * 6 * (cubes[0] * cubes[1]) as u64;
        Ok(Patch::of_block(mesh, (held.start * layer, first_cell), owned.start * layer..owned.end * layer))
    })?;
    let exchange = MpiExchange::new(h.world, &patch, owner);
    let totals = Totals::of_patch(h, &patch);
    log_mesh(&totals, 3);
    let write_mesh = w.write_mesh.unwrap_or(totals.nodes <= 1 << 24);
    let mut out = Outcome::default();
    smooth_patch(w, h, (&mut patch, &exchange), &owner, write_mesh, &mut out)?;
    Ok(output::report(w, h, &totals, None, &out))
}

fn log_mesh(t: &Totals, dim: usize) {
    log::info!("mesh: {} nodes, {} cells ({dim}D), {} fixed", t.nodes, t.cells, t.fixed);
}

/// The whole mesh on every rank (collective: a file may be read in parts).
fn load(source: &Source, ranks: &dyn Ranks) -> Result<Mesh> {
    match source {
        Source::Box { cubes, .. } => Ok(load_layers(source, 0..cubes[2] + 1)),
        Source::File { path, free } => readers::read(path, free, ranks),
    }
}

/// The node layers `layers` (along z) of a generated mesh (`generate::box_layers`).
fn load_layers(source: &Source, layers: Range<usize>) -> Mesh {
    let Source::Box { cubes, extent, perturb, shape } = source else {
        unreachable!("layers of a generated mesh only")
    };
    let mut mesh = generate::box_layers(*cubes, *extent, layers);
    if let Some(shape) = shape {
        shape.map(&mut mesh);
    }
    if let Some(kind) = perturb {
        generate::perturb_in(&mut mesh, *kind, generate::box_spans(*cubes, *extent));
    }
    mesh
}

/// Node owners for smoothing: the geometric partition into one part per rank.
fn owners(h: &Harness, mesh: &Mesh, graph: &Csr) -> Vec<u32> {
    if h.world.size() == 1 {
        return vec![0; mesh.num_nodes()];
    }
    partition::geometric(mesh, graph, h.world.size(), &MpiRanks(h.world)).0
}

/// Smooth this rank's patch (on its GPU where it has one); with `write_mesh`, its counted
/// cells are its piece of the written mesh (`owner`: the owning rank of a global node id).
fn smooth_patch(
    w: &MeshWorkload,
    h: &Harness,
    (patch, exchange): (&mut Patch, &MpiExchange),
    owner: &dyn Fn(u64) -> u32,
    write_mesh: bool,
    out: &mut Outcome,
) -> Result<()> {
    let colours = match w.method {
        smooth::Method::OptColour => h.timed("colour", || Ok(colour::of_patch(patch, exchange, h.run.seed)))?,
        _ => Vec::new(),
    };
    let settings = Settings {
        method: w.method,
        iterations: w.iterations,
        preconditioner: w.preconditioner,
        smart: w.smart,
        tolerance: w.tolerance * smooth::mean_edge_length(patch, exchange),
        colours,
    };
    out.before = Some(h.timed("quality", || Ok(smooth::global_summary(patch, exchange)))?);
    let input = write_mesh.then(|| patch.mesh.clone());
    let mut on_gpu = h.timed("device", || gpu_smoother(h, patch, exchange, &settings))?;
    let start = Instant::now();
    let records = h.timed("smooth", || match on_gpu.as_mut() {
        Some(g) => g.smooth(exchange, &settings, log_iteration),
        None => Ok(smooth::smooth(patch, exchange, &settings, log_iteration)),
    })?;
    out.smooth_seconds = start.elapsed().as_secs_f64();
    // The copy back to the host is outside the rate, as the upload is (set-up).
    if let Some(g) = &on_gpu {
        h.timed("download", || g.download(patch))?;
    }
    out.after = Some(smooth::global_summary(patch, exchange));
    out.halo = exchange.halo();
    out.records = records;
    if let Some(input) = input {
        exchange.ghosts(&mut patch.mesh);
        let cells: Vec<usize> = (0..patch.counted.len()).filter(|&c| patch.counted[c]).collect();
        let (global, cell_global) = (&patch.global, &patch.cell_global);
        let mut p = piece::cut(&patch.mesh, &input, &cells, |i| global[i], |c| cell_global[c], |i| owner(global[i]));
        piece::place(h.world, &mut p);
        out.piece = Some(p);
    }
    Ok(())
}

fn log_iteration(it: usize, r: &Record) {
    log::info!(
        "mesh: iteration {}: F {:.9e}, min eta {:.6}, mean eta {:.6}, inverted {}, max move {:.3e}, cell {:.3e} s, node {:.3e} s, exchange {:.3e} s",
        it + 1, r.deformation, r.min_eta, r.mean_eta, r.inverted, r.max_move,
        r.seconds_cell, r.seconds_node, r.seconds_exchange
    );
}

/// The smoother set up on this rank's GPU (kernels compiled, the patch uploaded: outside the
/// timed iterations); None on the CPU.
fn gpu_smoother<'h>(h: &'h Harness, patch: &Patch, exchange: &MpiExchange, settings: &Settings) -> Result<Option<GpuSmoother<'h>>> {
    let Selected::Gpu(gpu) = &h.device else {
        return Ok(None);
    };
    let halo = if h.world.size() > 1 {
        let transport = GpuExchange::open(h.world, gpu, h.run.gpu_transport)?;
        Some(DeviceHalo::new(gpu, transport, exchange.neighbours())?)
    } else {
        None
    };
    GpuSmoother::new(gpu, patch, halo, settings).map(Some)
}

fn partition_mesh(w: &MeshWorkload, h: &Harness, mesh: &Mesh, graph: &Csr, out: &mut Outcome) -> Result<()> {
    let k = w.parts;
    if k > mesh.num_nodes() {
        return Err(Error::Check(format!("{k} parts for {} nodes: expected at most one part per node", mesh.num_nodes())));
    }
    let ranks = MpiRanks(h.world);
    // Each rank partitions its block of the nodes; gathering the parts (for the measures
    // and the written mesh) is not part of partitioning.
    let share = partition::Share::of_mesh(mesh, graph, ranks.range(mesh.num_nodes()));
    let start = Instant::now();
    let (mine, iterations) = h.timed("partition", || Ok(partition::geometric_share(&share, k, &ranks)))?;
    out.partition_seconds = start.elapsed().as_secs_f64();
    let mut parts = h.timed("gather", || Ok(ranks.gather(&mine)))?;
    out.partition_iterations = iterations;
    out.geometric = Some(partition::measure(graph, &parts, k));
    if w.refine {
        let limit = partition::bound(mesh.num_nodes(), k);
        let t = Instant::now();
        out.refine_moves = h.timed("refine", || Ok(partition::refine(graph, &mut parts, k, limit, 10)))?;
        out.refine_seconds = t.elapsed().as_secs_f64();
    }
    out.measures = Some(partition::measure(graph, &parts, k));
    out.owner = parts;
    Ok(())
}
