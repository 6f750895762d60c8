//! The three actions: the mesh made or read (every rank the same), then generated, smoothed
//! on the ranks' patches, or partitioned, and the report built.

use super::output::{self, Outcome};
use super::{Action, MeshWorkload, Source};
use crate::error::{Error, Result};
use crate::harness::Harness;
use crate::mesh::adjacency::{self, Csr};
use crate::mesh::distributed::{MpiExchange, MpiRanks};
use crate::mesh::patch::Patch;
use crate::device::Selected;
use crate::comm::gpu::GpuExchange;
use crate::mesh::smooth::gpu::{DeviceHalo, GpuSmoother};
use crate::mesh::smooth::{self, Record, Settings};
use crate::mesh::{colour, generate, partition, readers, Mesh};
use crate::report::Report;
use std::time::Instant;

pub fn execute(w: &MeshWorkload, h: &Harness) -> Result<Report> {
    let mesh = h.timed("mesh", || h.world.agree(load(&w.source)))?;
    let (n2c, graph) = h.timed("adjacency", || {
        let n2c = adjacency::node_to_cell(&mesh.cells, mesh.num_nodes());
        let graph = adjacency::node_graph(&mesh, &n2c);
        Ok((n2c, graph))
    })?;
    log::info!(
        "mesh: {} nodes, {} cells ({}D), {} fixed",
        mesh.num_nodes(),
        mesh.num_cells(),
        mesh.dim,
        mesh.fixed.iter().filter(|&&f| f).count()
    );
    let mut out = Outcome::new(&mesh);
    match w.action {
        Action::Generate => {}
        Action::Smooth => smooth_mesh(w, h, &mesh, (n2c, &graph), &mut out)?,
        Action::Partition => partition_mesh(w, h, &mesh, &graph, &mut out)?,
    }
    let write_mesh = w.write_mesh.unwrap_or(mesh.num_nodes() <= 1 << 24);
    Ok(output::report(w, h, &mesh, &out, write_mesh))
}

fn load(source: &Source) -> Result<Mesh> {
    match source {
        Source::Box { cubes, ball: true, .. } => Ok(generate::kuhn_ball(cubes[0])),
        Source::Box { cubes, extent, perturb, .. } => {
            let mut mesh = generate::kuhn_box(*cubes, *extent);
            if let Some(kind) = perturb {
                generate::perturb(&mut mesh, *kind);
            }
            Ok(mesh)
        }
        Source::File { path, free } => readers::read(path, free),
    }
}

/// Node owners for smoothing: the geometric partition into one part per rank.
fn owners(h: &Harness, mesh: &Mesh, graph: &Csr) -> Vec<u32> {
    if h.world.size() == 1 {
        return vec![0; mesh.num_nodes()];
    }
    partition::geometric(mesh, graph, h.world.size(), &MpiRanks(h.world)).0
}

fn smooth_mesh(w: &MeshWorkload, h: &Harness, mesh: &Mesh, (n2c, graph): (Csr, &Csr), out: &mut Outcome) -> Result<()> {
    let owner = h.timed("distribute", || Ok(owners(h, mesh, graph)))?;
    let mut patch = h.timed("patch", || {
        Ok(match h.world.size() {
            // One rank's patch is the whole mesh, whose adjacency is made already.
            1 => Patch::whole_with(mesh.clone(), n2c, graph.clone()),
            _ => Patch::of_rank(mesh, &owner, h.world.rank() as u32),
        })
    })?;
    let exchange = MpiExchange::new(h.world, &patch, graph, &owner);
    let free: Vec<bool> = mesh.fixed.iter().map(|f| !f).collect();
    let colours = match w.method {
        smooth::Method::OptColour => {
            let global = colour::jones_plassmann(graph, &free, h.run.seed);
            patch.global.iter().map(|&g| global[g as usize]).collect()
        }
        _ => Vec::new(),
    };
    let settings = Settings {
        method: w.method,
        iterations: w.iterations,
        preconditioner: w.preconditioner,
        smart: w.smart,
        tolerance: w.tolerance * mesh.mean_edge_length(),
        colours,
    };
    out.before = Some(h.timed("quality", || Ok(smooth::global_summary(&patch, &exchange)))?);
    let mut on_gpu = h.timed("device", || gpu_smoother(h, &patch, &exchange, &settings))?;
    let start = Instant::now();
    let records = h.timed("smooth", || match on_gpu.as_mut() {
        Some(g) => g.smooth(&mut patch, &exchange, &settings, log_iteration),
        None => Ok(smooth::smooth(&mut patch, &exchange, &settings, log_iteration)),
    })?;
    out.smooth_seconds = start.elapsed().as_secs_f64();
    out.after = Some(smooth::global_summary(&patch, &exchange));
    out.halo = exchange.halo();
    out.positions = gather_positions(h, &patch, mesh.num_nodes())?;
    out.owner = owner;
    out.records = records;
    Ok(())
}

fn log_iteration(it: usize, r: &Record) {
    log::info!(
        "mesh: iteration {}: F {:.9e}, min eta {:.6}, mean eta {:.6}, inverted {}, max move {:.3e}, {:.3} s",
        it + 1, r.deformation, r.min_eta, r.mean_eta, r.inverted, r.max_move,
        r.seconds_cell + r.seconds_node + r.seconds_exchange
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

/// Every node's smoothed position on rank 0 (others: empty), from its owner.
fn gather_positions(h: &Harness, patch: &Patch, n: usize) -> Result<Option<[Vec<f64>; 3]>> {
    let mut mine: Vec<f64> = Vec::new();
    for i in (0..patch.global.len()).filter(|&i| patch.owned[i]) {
        mine.extend([patch.global[i] as f64, patch.mesh.x[i], patch.mesh.y[i], patch.mesh.z[i]]);
    }
    let all = h.world.gather_owned(mine)?;
    if !h.world.is_root() {
        return Ok(None);
    }
    let mut xyz = [vec![0.0; n], vec![0.0; n], vec![0.0; n]];
    for q in all.chunks(4) {
        let g = q[0] as usize;
        for d in 0..3 {
            xyz[d][g] = q[d + 1];
        }
    }
    Ok(Some(xyz))
}

fn partition_mesh(w: &MeshWorkload, h: &Harness, mesh: &Mesh, graph: &Csr, out: &mut Outcome) -> Result<()> {
    let k = w.parts;
    if k > mesh.num_nodes() {
        return Err(Error::Check(format!("{k} parts for {} nodes: expected at most one part per node", mesh.num_nodes())));
    }
    let start = Instant::now();
    let (mut parts, iterations) = h.timed("partition", || Ok(partition::geometric(mesh, graph, k, &MpiRanks(h.world))))?;
    out.partition_seconds = start.elapsed().as_secs_f64();
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
