//! What a run records and writes: per β the time series of the energy per site and the order
//! parameter (kept on rank 0), update seconds, Wolff clusters, last configurations; the
//! summaries (means over every measurement, jackknife errors over bins, integrated
//! autocorrelation times); the run's report (rendered once: the statistics block and
//! `/spin`); the checkpoint, that report of the record so far plus `/spin/checkpoint` (the
//! chain, the sweep and the spins), written atomically into the output mid-run and gone from
//! the finished file; and the resume from it.

use super::chain::{owned_sites, Spins};
use super::{beta_name, Spin, Update};
use crate::error::{Error, Result};
use crate::harness::{read_checkpoint_on_root, Harness};
use crate::output::{add_part, open_to_read, read_stored, stored_dataset, ResultFile};
use crate::report::{Report, Section};
use crate::stats::{binder, jackknife, tau_int};
use hdf5::types::VarLenUnicode;
use hdf5_metno as hdf5;
use std::ops::Range;
use std::path::Path;

/// Bins of the jackknife (fewer when there are fewer measurements).
const JACKKNIFE_BINS: usize = 32;

/// The series and figures of every β (rank 0's are the run's; other ranks keep what they
/// measured since the start of this job).
pub struct Record {
    pub energy: Vec<Vec<f64>>,
    pub order: Vec<Vec<f64>>,
    /// Seconds of the sweeps (measurements and checkpoints excluded), over all jobs.
    pub seconds: Vec<f64>,
    /// Sweeps those seconds cover.
    pub sweeps_timed: Vec<u64>,
    /// Sites the Wolff clusters flipped.
    pub flipped: Vec<u64>,
    /// Last spins of each finished chain (rank 0, with `write_configuration`).
    pub configurations: Vec<Vec<u8>>,
}

/// Where a run starts: chain `beta` at sweep `sweep` with this rank's `spins` (none: from
/// the start state).
#[derive(Default)]
pub struct Position {
    pub beta: usize,
    pub sweep: u64,
    pub spins: Option<Vec<u8>>,
}

impl Record {
    pub fn new(cfg: &Spin) -> Record {
        let n = cfg.betas.len();
        Record {
            energy: vec![Vec::new(); n],
            order: vec![Vec::new(); n],
            seconds: vec![0.0; n],
            sweeps_timed: vec![0; n],
            flipped: vec![0; n],
            configurations: vec![Vec::new(); n],
        }
    }

    /// The progress line of chain `b` after `done` sweeps (rank 0, info).
    pub fn progress(&self, cfg: &Spin, b: usize, done: u64) {
        let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len().max(1) as f64;
        let rate = updates(cfg, self, b) / self.seconds[b] / 1e9;
        log::info!(
            "spin: beta = {}: sweep {done} of {} ({} measured): <e> = {:.6}, <|m|> = {:.6}, {rate:.4} site updates/ns",
            cfg.betas[b],
            cfg.chain_sweeps(),
            self.energy[b].len(),
            mean(&self.energy[b]),
            mean(&self.order[b]),
        );
    }
}

/// The figures of one β.
pub struct Summary {
    pub beta: f64,
    pub measured: usize,
    pub energy: (f64, f64),
    pub m: (f64, f64),
    pub m2: (f64, f64),
    pub m4: (f64, f64),
    pub specific_heat: (f64, f64),
    pub susceptibility: (f64, f64),
    pub binder: (f64, f64),
    /// Integrated autocorrelation times, in sweeps.
    pub tau_energy: f64,
    pub tau_m: f64,
    /// Site updates per ns (Wolff: sites flipped per ns).
    pub flips_per_ns: f64,
    /// Wolff: mean sites per cluster (else 0).
    pub mean_cluster_size: f64,
}

pub fn summarise(cfg: &Spin, record: &Record, b: usize) -> Summary {
    let (e, m) = (&record.energy[b][..], &record.order[b][..]);
    let (beta, n) = (cfg.betas[b], cfg.lattice.sites() as f64);
    let pow = |xs: &[f64], k: i32| xs.iter().map(|x| x.powi(k)).collect::<Vec<f64>>();
    let (e2, m2, m4) = (pow(e, 2), pow(m, 2), pow(m, 4));
    let jk = |cols: &[&[f64]], f: &dyn Fn(&[f64]) -> f64| estimate(cols, f);
    let every = cfg.measure_every as f64;
    Summary {
        beta,
        measured: e.len(),
        energy: jk(&[e], &|x| x[0]),
        m: jk(&[m], &|x| x[0]),
        m2: jk(&[&m2], &|x| x[0]),
        m4: jk(&[&m4], &|x| x[0]),
        specific_heat: jk(&[e, &e2], &|x| beta * beta * n * (x[1] - x[0] * x[0])),
        susceptibility: jk(&[m, &m2], &|x| beta * n * (x[1] - x[0] * x[0])),
        binder: jk(&[&m2, &m4], &|x| binder(x[0], x[1])),
        tau_energy: tau_int(e).0 * every,
        tau_m: tau_int(m).0 * every,
        flips_per_ns: updates(cfg, record, b) / record.seconds[b] / 1e9,
        mean_cluster_size: if cfg.update == Update::Wolff {
            record.flipped[b] as f64 / (record.sweeps_timed[b] * cfg.clusters_per_sweep) as f64
        } else {
            0.0
        },
    }
}

/// `f` of the means of `columns` over every measurement, with its jackknife error over
/// `JACKKNIFE_BINS` bins (the bins, which drop the measurements that do not fill one, give
/// only the error).
fn estimate(columns: &[&[f64]], f: &dyn Fn(&[f64]) -> f64) -> (f64, f64) {
    let (_, error) = jackknife(columns, JACKKNIFE_BINS, f);
    let means: Vec<f64> = columns
        .iter()
        .map(|c| c.iter().sum::<f64>() / c.len() as f64)
        .collect();
    (f(&means), error)
}

/// Site updates in the timed sweeps of chain `b` (Wolff: sites flipped).
fn updates(cfg: &Spin, record: &Record, b: usize) -> f64 {
    if cfg.update == Update::Wolff {
        record.flipped[b] as f64
    } else {
        record.sweeps_timed[b] as f64 * cfg.lattice.sites() as f64
    }
}

fn model_name(cfg: &Spin) -> String {
    if cfg.model.ising {
        "Ising".into()
    } else {
        format!("{}-state Potts", cfg.model.q)
    }
}

/// `/spin` as the record stands: the settings (printed as the model and sweeps lines), one
/// line per β, the per-β series and figures, and `summary/`. `complete` once every chain is
/// done (the final report); a checkpoint adds `checkpoint/` to the same.
pub fn report(report: &mut Report, cfg: &Spin, seed: u64, record: &Record, complete: bool) {
    let lattice = cfg.lattice;
    let mut g = report.group("spin");
    g.text("model", if cfg.model.ising { "ising" } else { "potts" })
        .shown_as(format!(
            "{}, {}D L = {} ({} sites, periodic{}), {} updates, {} start",
            model_name(cfg),
            lattice.dim,
            lattice.l,
            lattice.sites(),
            cfg.rewiring
                .map_or(String::new(), |p| format!(", rewired with p = {p}")),
            cfg.update.name(),
            if cfg.hot { "hot" } else { "cold" }
        ));
    g.count("q", cfg.model.q).stored_only();
    let kind = match (cfg.rewiring, lattice.dim) {
        (Some(p), _) => {
            g.number("p", p, "").stored_only();
            "rewired"
        }
        (None, 2) => "2d",
        (None, _) => "3d",
    };
    g.text("lattice", kind).stored_only();
    g.count("dim", lattice.dim as u64).stored_only();
    g.count("l", lattice.l).stored_only();
    g.count("sites", lattice.sites()).stored_only();
    g.text("update", cfg.update.name()).stored_only();
    g.text("start", if cfg.hot { "hot" } else { "cold" })
        .stored_only();
    g.count("seed", seed).stored_only();
    g.count("equilibration", cfg.equilibration).stored_only();
    g.count("sweeps", cfg.sweeps).stored_only();
    g.count("measure_every", cfg.measure_every).stored_only();
    g.shown_only(
        "sweeps per beta",
        format!(
            "{} equilibration + {} measured every {}",
            cfg.equilibration, cfg.sweeps, cfg.measure_every
        ),
    );
    g.text("job", cfg.job(seed)).stored_only();
    g.flag("complete", complete, "no").stored_only();
    let summaries: Vec<Summary> = (0..cfg.betas.len())
        .map(|b| summarise(cfg, record, b))
        .collect();
    for s in &summaries {
        g.shown_only(
            &beta_name(s.beta),
            format!(
                "T = {:.5}: e = {:.6} ± {:.6}, |m| = {:.6} ± {:.6}, C = {:.4} ± {:.4}, chi = {:.4} ± {:.4}, U4 = {:.5} ± {:.5}, tau_e = {:.2}, tau_m = {:.2} sweeps, {:.4} flips/ns",
                1.0 / s.beta,
                s.energy.0,
                s.energy.1,
                s.m.0,
                s.m.1,
                s.specific_heat.0,
                s.specific_heat.1,
                s.susceptibility.0,
                s.susceptibility.1,
                s.binder.0,
                s.binder.1,
                s.tau_energy,
                s.tau_m,
                s.flips_per_ns
            ),
        );
    }
    series(&mut g, cfg, record);
    summary(&mut g.subgroup("summary"), &summaries);
}

/// The per-β series (padded with NaN to the measurements of a whole chain), times, Wolff
/// flips and the last configurations.
fn series(g: &mut Section, cfg: &Spin, record: &Record) {
    let betas = cfg.betas.len();
    g.data("beta", cfg.betas.as_slice());
    g.data(
        "temperature",
        cfg.betas.iter().map(|b| 1.0 / b).collect::<Vec<f64>>(),
    );
    let measured: Vec<u64> = record.energy.iter().map(|e| e.len() as u64).collect();
    g.data("measured", measured);
    let width = cfg.measurements() as usize;
    let padded = |series: &[Vec<f64>]| -> Vec<f64> {
        series
            .iter()
            .flat_map(|s| {
                s.iter()
                    .copied()
                    .chain(std::iter::repeat(f64::NAN))
                    .take(width)
            })
            .collect()
    };
    g.data_2d("energy", betas, padded(&record.energy));
    g.data_2d("m", betas, padded(&record.order));
    g.data("update_seconds", record.seconds.as_slice());
    g.data("sweeps_timed", record.sweeps_timed.as_slice());
    g.data("wolff_flipped", record.flipped.as_slice());
    if cfg.write_configuration {
        let sites = cfg.lattice.sites() as usize;
        let all: Vec<u8> = record
            .configurations
            .iter()
            .flat_map(|c| c.iter().copied().chain(std::iter::repeat(0)).take(sites))
            .collect();
        g.data_2d("configuration", betas, all);
    }
}

/// `summary/`: one row per β, each figure with its error.
fn summary(s: &mut Section, all: &[Summary]) {
    let col = |f: &dyn Fn(&Summary) -> f64| all.iter().map(f).collect::<Vec<f64>>();
    s.data("beta", col(&|x| x.beta));
    s.data("temperature", col(&|x| 1.0 / x.beta));
    s.data(
        "measured",
        all.iter().map(|x| x.measured as u64).collect::<Vec<_>>(),
    );
    type Figure = dyn Fn(&Summary) -> (f64, f64);
    let pairs: [(&str, &Figure); 7] = [
        ("energy", &|x| x.energy),
        ("m", &|x| x.m),
        ("m2", &|x| x.m2),
        ("m4", &|x| x.m4),
        ("specific_heat", &|x| x.specific_heat),
        ("susceptibility", &|x| x.susceptibility),
        ("binder", &|x| x.binder),
    ];
    for (name, f) in pairs {
        s.data(name, col(&|x| f(x).0));
        s.data(&format!("{name}_error"), col(&|x| f(x).1));
    }
    s.data("tau_energy", col(&|x| x.tau_energy));
    s.data("tau_m", col(&|x| x.tau_m));
    s.data("flips_per_ns", col(&|x| x.flips_per_ns));
    s.data("mean_cluster_size", col(&|x| x.mean_cluster_size));
}

/// Name of the checkpoint's spins in the result file.
const SPINS: &str = "spin/checkpoint/spins";

/// Write the result file as it stands, with the position of chain `b` after `sweep` sweeps
/// (collective): the report of the record so far (`report`, not complete) and
/// `/spin/checkpoint` (the position and the spins). Rank 0 writes the report and its slab of
/// the spins; then each rank in turn adds its slab to the file (no rank gathers the
/// lattice); then rank 0 renames the file. The finished run's file, the harness's, has no
/// checkpoint.
pub fn checkpoint(
    h: &Harness,
    cfg: &Spin,
    record: &Record,
    b: usize,
    sweep: u64,
    spins: &Spins,
) -> Result<()> {
    let world = h.world;
    let local = spins.local()?;
    let provenance = h.provenance()?;
    let path = &h.run.output;
    let started = if world.is_root() {
        let mut so_far = Report::new();
        report(&mut so_far, cfg, h.run.seed, record, false);
        ResultFile::create(path)
            .and_then(|file| {
                provenance.write(&file.root())?;
                so_far.write(&file)?;
                let c = file.group("spin/checkpoint")?;
                c.writer().attr("beta_index", b as u64)?;
                c.writer().attr("sweep", sweep)?;
                c.dataset_part("spins", cfg.lattice.sites() as usize, 0, &local)?;
                file.close_unfinished()
            })
            .map(Some)
    } else {
        Ok(None)
    };
    let unfinished = world.agree(started)?;
    let mut added = Ok(());
    for rank in 1..world.size() {
        world.barrier();
        if rank == world.rank() {
            added = owned_sites(cfg, world)
                .and_then(|owned| add_part(path, SPINS, owned.start as usize, &local));
        }
    }
    world.agree(added)?;
    let finished = unfinished.map_or(Ok(None), |u| u.finish().map(Some));
    world.agree(finished)?;
    log::info!(
        "spin: checkpoint at beta = {}, sweep {sweep} in {}",
        cfg.betas[b],
        path.display()
    );
    Ok(())
}

fn resume_error(path: &Path, msg: impl std::fmt::Display) -> Error {
    Error::Config {
        file: path.display().to_string(),
        msg: format!("cannot resume from this checkpoint: {msg}"),
    }
}

/// The record and position of the checkpoint in the output file (collective: rank 0 reads
/// and checks it, then every rank reads the spins of the sites it `owns`). A missing file
/// starts from the beginning.
pub fn resume(h: &Harness, cfg: &Spin, owns: Range<u64>) -> Result<(Record, Position)> {
    let world = h.world;
    let path = &h.run.output;
    let read = read_checkpoint_on_root(h, "the first sweep", |path| {
        read_checkpoint(path, cfg, h.run.seed)
    })?;
    let mut head = match &read {
        Some((_, at)) => [at.beta as u64, at.sweep, u64::from(at.spins.is_some())]
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect(),
        None => Vec::new(),
    };
    world.broadcast_bytes(&mut head);
    if head.is_empty() {
        return Ok((Record::new(cfg), Position::default()));
    }
    let word = |k: usize| u64::from_le_bytes(head[8 * k..8 * k + 8].try_into().expect("8 bytes"));
    let (beta, sweep) = (word(0) as usize, word(1));
    let spins = if word(2) == 1 {
        Some(world.agree(read_part(path, owns, cfg.model.q))?)
    } else {
        None
    };
    log::info!(
        "resuming at beta = {}, sweep {sweep}",
        cfg.betas.get(beta).copied().unwrap_or(f64::NAN)
    );
    let record = read.map_or_else(|| Record::new(cfg), |(record, _)| record);
    Ok((record, Position { beta, sweep, spins }))
}

/// The checkpoint's spins of the sites `owns`, each a state below `q`.
fn read_part(path: &Path, owns: Range<u64>, q: u32) -> Result<Vec<u8>> {
    let bad = |e: hdf5::Error| resume_error(path, e);
    let file = open_to_read(path).map_err(bad)?;
    let spins = file
        .dataset(SPINS)
        .and_then(|d| d.read_slice_1d::<u8, _>(owns.start as usize..owns.end as usize))
        .map_err(bad)?
        .to_vec();
    check_states(path, SPINS, &spins, q)?;
    Ok(spins)
}

/// Refuse a spin that is no state of the model (the updates index tables by it).
fn check_states(path: &Path, name: &str, spins: &[u8], q: u32) -> Result<()> {
    match spins.iter().find(|&&s| u32::from(s) >= q) {
        Some(s) => Err(resume_error(
            path,
            format!(
                "{name} holds a spin {s}: expected states 0 to {} (q = {q})",
                q - 1
            ),
        )),
        None => Ok(()),
    }
}

/// Dataset `spin/NAME`, refused unless it holds the type this run writes in `shape` (`form`
/// says what that is).
fn read_shaped<T: hdf5::H5Type>(
    path: &Path,
    group: &hdf5::Group,
    name: &str,
    shape: &[usize],
    form: &str,
) -> Result<Vec<T>> {
    read_stored(group, name, shape, form).map_err(|e| resume_error(path, e))
}

/// The form of a dataset of one item per β.
const PER_BETA: &str = "one per beta";

/// The record of a checkpoint's `/spin` group, every series of the shape this run writes.
fn read_record(path: &Path, group: &hdf5::Group, cfg: &Spin) -> Result<Record> {
    let betas = cfg.betas.len();
    let width = cfg.measurements() as usize;
    let series = |name: &str| -> Result<Vec<f64>> {
        let form = "one row per beta, one column per measurement of a chain";
        read_shaped(path, group, name, &[betas, width], form)
    };
    let measured: Vec<u64> = read_shaped(path, group, "measured", &[betas], PER_BETA)?;
    let rows = |flat: Vec<f64>| -> Vec<Vec<f64>> {
        flat.chunks(width)
            .zip(&measured)
            .map(|(row, &n)| row[..n as usize].to_vec())
            .collect()
    };
    if let Some(n) = measured.iter().find(|&&n| n > width as u64) {
        return Err(resume_error(
            path,
            format!("spin/measured holds {n}: expected at most {width}, the measurements of a chain"),
        ));
    }
    let sites = cfg.lattice.sites() as usize;
    let configurations = if cfg.write_configuration {
        let form = "one row per beta, one column per site";
        let flat: Vec<u8> = read_shaped(path, group, "configuration", &[betas, sites], form)?;
        check_states(path, "spin/configuration", &flat, cfg.model.q)?;
        flat.chunks(sites).map(<[u8]>::to_vec).collect()
    } else {
        vec![Vec::new(); betas]
    };
    Ok(Record {
        energy: rows(series("energy")?),
        order: rows(series("m")?),
        seconds: read_shaped(path, group, "update_seconds", &[betas], PER_BETA)?,
        sweeps_timed: read_shaped(path, group, "sweeps_timed", &[betas], PER_BETA)?,
        flipped: read_shaped(path, group, "wolff_flipped", &[betas], PER_BETA)?,
        configurations,
    })
}

/// The position of `/spin/checkpoint`, refused where it lies outside this run's chains (the
/// checkpoint is then not this run's) or lacks its spins.
fn read_position(path: &Path, c: &hdf5::Group, cfg: &Spin) -> Result<Position> {
    let attr = |name: &str| {
        c.attr(name)
            .and_then(|a| a.read_scalar::<u64>())
            .map_err(|e| resume_error(path, format!("spin/checkpoint attribute {name}: {e}")))
    };
    let (beta, sweep) = (attr("beta_index")?, attr("sweep")?);
    let (betas, total) = (cfg.betas.len() as u64, cfg.chain_sweeps());
    let outside = |key: &str, value: u64, expected: String| {
        resume_error(
            path,
            format!("spin/checkpoint {key} = {value} is out of range: expected {expected}; the checkpoint does not belong to this run"),
        )
    };
    if beta >= betas {
        let expected = format!("below {betas}, the betas of this run");
        return Err(outside("beta_index", beta, expected));
    }
    if sweep > total {
        let expected = format!("at most {total}, the sweeps of one chain of this run");
        return Err(outside("sweep", sweep, expected));
    }
    let sites = cfg.lattice.sites() as usize;
    let form = format!("{sites} spins, one per site of this lattice");
    if !c.link_exists("spins") {
        return Err(resume_error(
            path,
            format!("it has no dataset {SPINS} ({form}): the checkpoint is malformed"),
        ));
    }
    // Its type too: HDF5 would read spins stored as floats into states, converted quietly.
    stored_dataset::<u8>(c, "spins", &[sites], &form).map_err(|e| resume_error(path, e))?;
    Ok(Position {
        beta: beta as usize,
        sweep,
        spins: Some(Vec::new()),
    })
}

/// Measurements chain `b` holds at `at`: every one before it, those of `at.sweep` sweeps
/// in it, none after.
fn measured_at(cfg: &Spin, at: &Position, b: usize) -> u64 {
    match b.cmp(&at.beta) {
        std::cmp::Ordering::Less => cfg.measurements(),
        std::cmp::Ordering::Equal => at.sweep.saturating_sub(cfg.equilibration) / cfg.measure_every,
        std::cmp::Ordering::Greater => 0,
    }
}

/// Refuse a record whose measurements are not those of its position.
fn check_measured(path: &Path, cfg: &Spin, record: &Record, at: &Position) -> Result<()> {
    for (b, energy) in record.energy.iter().enumerate() {
        let want = measured_at(cfg, at, b);
        if energy.len() as u64 != want {
            return Err(resume_error(
                path,
                format!(
                    "spin/measured of beta = {} is {}: expected {want} at beta index {}, sweep {}",
                    cfg.betas[b],
                    energy.len(),
                    at.beta,
                    at.sweep
                ),
            ));
        }
    }
    Ok(())
}

/// The record and position of a checkpoint (rank 0; the spins are read per slab).
fn read_checkpoint(path: &Path, cfg: &Spin, seed: u64) -> Result<(Record, Position)> {
    let bad = |e: hdf5::Error| resume_error(path, e);
    let file = open_to_read(path).map_err(bad)?;
    let group = file
        .group("spin")
        .map_err(|_| resume_error(path, "it is not a tessera spin result (no /spin group)"))?;
    let job: VarLenUnicode = group
        .attr("job")
        .and_then(|a| a.read_scalar())
        .map_err(bad)?;
    let want = cfg.job(seed);
    if job.as_str() != want {
        return Err(resume_error(
            path,
            format!("it holds {job}, but this run is {want}: give another output file, or drop --resume to start over"),
        ));
    }
    let record = read_record(path, &group, cfg)?;
    let complete = group
        .attr("complete")
        .and_then(|a| a.read_scalar::<u64>())
        .map_err(bad)?;
    let at = match group.group("checkpoint") {
        Ok(c) => read_position(path, &c, cfg)?,
        // A finished run: every chain done, nothing to continue.
        Err(_) if complete == 1 => Position {
            beta: cfg.betas.len(),
            ..Position::default()
        },
        Err(_) => {
            return Err(resume_error(
                path,
                "it holds no checkpoint (no /spin/checkpoint)",
            ))
        }
    };
    check_measured(path, cfg, &record, &at)?;
    Ok((record, at))
}
