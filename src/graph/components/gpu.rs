//! The labelling's steps on the rank's GPU (kernels/cc.cu): the local rows, cut edges and
//! ghost plan uploaded once; labels stay on the device between rounds. Every step across
//! ranks runs there too: changed labels are compacted per destination rank, hooks and
//! shortcut queries put into runs by owner (`OwnerBuckets`), and all of them travel GPU to GPU
//! through the exchange layer (NCCL, or staged through MPI); the host sees only counts. A
//! shortcut step asks each distinct remote label once (a hash table of the labels asked,
//! `cc_queries`), as the CPU does, where one query per boundary component went before.

use super::cpu::{OTHER_GIANT, SAME_GIANT};
use super::{most_frequent, Labeller, SAMPLE_VERTICES};
use crate::comm::gpu::{remote_runs, GpuExchange, OwnerBuckets};
use crate::comm::{run_starts, GpuTransport, Op, World};
use crate::device::{grid, memory, Gpu, Kernel};
use crate::error::{Error, Result};
use crate::graph::csr_gpu::DeviceCsr;
use crate::graph::ghosts::{mask_words, LocalRows};
use crate::graph::ghosts_gpu::DeviceRows;
use crate::graph::Block1D;
use cudarc::driver::{CudaSlice, PushKernelArg};
use std::collections::HashMap;

/// Neighbours per vertex linked before the giant component is sampled (Afforest's 2).
const SAMPLE_NEIGHBOURS: u32 = 2;

/// The ghost plan on the device: which own labels go to whom, as what.
struct SendPlan {
    send_local: CudaSlice<u32>,
    targets: CudaSlice<u32>,
    /// Per entry, the label last sent plus one (0: none yet; `NEVER_SENT` in kernels/cc.cu:
    /// never, as nobody reads it).
    sent: CudaSlice<u64>,
    /// The entries some rank reads, per asking rank (`live_counts[s]` of them from where its
    /// run starts), listed by `skip_giants`; the refresh goes through these only.
    live: CudaSlice<u32>,
    live_counts: CudaSlice<u64>,
    live_host: Vec<usize>,
    /// Changed labels, compacted within each rank's run.
    out: CudaSlice<u64>,
    /// Per destination rank, how many of its run changed.
    tails: CudaSlice<u64>,
    incoming: CudaSlice<u64>,
}

/// The giant's skip across ranks (`Labeller::skip_giants`).
struct GiantSkip {
    /// This rank's giant root (u32::MAX: none).
    root: u32,
    /// Per ghost: `SAME_GIANT`, `OTHER_GIANT` or 0 (as on the CPU).
    ghost_giant: CudaSlice<u8>,
    /// Per rank, its giant's label to hand its giant's ghosts, and the label last handed.
    labels: Vec<u64>,
    handed: Vec<u64>,
    /// Whether a ghost's owner has a giant of another class (the giant's edges to it are read).
    any_other: u32,
    /// The cut edges read (all but the giant's, except to a rank whose giant is of another
    /// class), listed by `skip_giants` (`active`: how many, None before).
    active_own: CudaSlice<u32>,
    active_ghost: CudaSlice<u32>,
    active: Option<u64>,
}

/// Which ghosts a rank reads, told to their owners before the rounds as a bitmask per owner
/// (`skip_giants`); the run tables and buffers are made once, with the labeller.
struct ReadMasks {
    /// Per rank (and one more): where its ghosts start among ours, where its mask run starts
    /// among the words we send, where its entries start in the ghost plan, where the mask it
    /// sends us starts among the words received.
    ghost_at: CudaSlice<u64>,
    word_at: CudaSlice<u64>,
    send_at: CudaSlice<u64>,
    in_at: CudaSlice<u64>,
    /// The words sent per rank, and where each run starts (host copies).
    out_counts: Vec<usize>,
    out_starts: Vec<usize>,
    out: CudaSlice<u64>,
    inbox: CudaSlice<u64>,
    /// Per rank, its giant's kind to us (`SAME_GIANT`, `OTHER_GIANT`, 0: none).
    kinds: CudaSlice<u8>,
    /// Per own vertex, whether its root has a cut edge read (`cc_list_reads`).
    flags: CudaSlice<u8>,
}

impl ReadMasks {
    fn new(gpu: &Gpu, rows: &LocalRows) -> Result<Self> {
        let ghosts = &rows.ghosts;
        let words_of =
            |counts: &[usize]| -> Vec<usize> { counts.iter().map(|&c| mask_words(c)).collect() };
        let (out_counts, in_counts) =
            (words_of(&ghosts.recv_counts), words_of(&ghosts.send_counts));
        let table = |counts: &[usize]| -> Result<CudaSlice<u64>> {
            let mut at: Vec<u64> = run_starts(counts).iter().map(|&s| s as u64).collect();
            at.push(counts.iter().sum::<usize>() as u64);
            gpu.upload("ghost runs", &at)
        };
        Ok(ReadMasks {
            ghost_at: table(&ghosts.recv_counts)?,
            word_at: table(&out_counts)?,
            send_at: table(&ghosts.send_counts)?,
            in_at: table(&in_counts)?,
            out: gpu.zeros("read masks", out_counts.iter().sum())?,
            inbox: gpu.zeros("read masks", in_counts.iter().sum())?,
            out_starts: run_starts(&out_counts),
            out_counts,
            kinds: gpu.zeros("giant kinds", ghosts.recv_counts.len())?,
            flags: gpu.zeros("boundary flags", rows.local_n())?,
        })
    }
}

/// `buffer` made at least `len` long (kept where it is: buffers live across trials).
fn grow<T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits>(
    gpu: &Gpu,
    what: &str,
    buffer: &mut CudaSlice<T>,
    len: usize,
) -> Result<()> {
    if buffer.len() < len {
        *buffer = gpu.zeros(what, len)?;
    }
    Ok(())
}

/// The boundary components (local roots with a cut edge read) and the buffers of their steps
/// (grown as needed, kept across trials).
struct Boundary {
    roots: CudaSlice<u32>,
    count: u64,
    /// The shortcut's remote labels asked, one slot each (`cc_queries`), `table_mask + 1`
    /// slots; per boundary component, the slot it asked through.
    table: CudaSlice<u64>,
    table_mask: u64,
    slots: CudaSlice<u32>,
    /// Per own vertex, for the roots of boundary components: whether the component's label is
    /// a root for the rest of the round's shortcutting (kernels/cc.cu, `chain_end`).
    done: CudaSlice<u8>,
    /// Per boundary component, where its label's chain ends here, in a shortcut step.
    ends: CudaSlice<u64>,
    before: CudaSlice<u64>,
    items: CudaSlice<u64>,
    bucketed: CudaSlice<u64>,
    received: CudaSlice<u64>,
    replies: CudaSlice<u64>,
}

pub struct GpuLabeller<'a> {
    gpu: &'a Gpu,
    exchange: GpuExchange<'a>,
    owners: OwnerBuckets,
    rows: &'a LocalRows,
    ranks: usize,
    n: u32,
    first: u64,
    offsets: CudaSlice<u64>,
    adj: CudaSlice<u32>,
    cut_ghost: CudaSlice<u32>,
    /// Where each own vertex's cut edges start (and one more).
    cut_offsets: CudaSlice<u64>,
    plan: SendPlan,
    parent: CudaSlice<u32>,
    labels: CudaSlice<u64>,
    comp_min: CudaSlice<u64>,
    ghost_labels: CudaSlice<u64>,
    /// Per ghost, whether its label came in this round.
    changed_ghosts: CudaSlice<u8>,
    giants: GiantSkip,
    masks: ReadMasks,
    boundary: Boundary,
    /// A counter the kernels add to (changes, slots), and a second one (the boundary
    /// components listed; whether a label fell in the absorb).
    counter: CudaSlice<u64>,
    listed: CudaSlice<u64>,
    kernels: HashMap<&'static str, Kernel>,
}

/// Slots of the shortcut's table for `count` boundary components: a power of two, at least
/// twice as many (open addressing stays short), so a slot index fits the 32 bits beside a label.
fn table_slots(count: u64) -> u64 {
    (2 * count).next_power_of_two().max(2)
}

/// Device bytes the labelling needs for `rows`, counting the rows themselves where they are
/// to be uploaded (`upload`; not where the split left them on the GPU).
fn bytes_needed(rows: &LocalRows, upload: bool) -> u64 {
    let n = rows.local_n() as u64;
    let cuts = rows.cut_count() as u64;
    // The local edges, and the cut edges' ghosts and row offsets.
    let uploaded = match upload {
        true => DeviceCsr::bytes(n, rows.adj.len() as u64) + 4 * cuts + 8 * (n + 1),
        false => 0,
    };
    // Boundary components: at most one per vertex, with flags and done flags (u8 each), roots
    // and five u64 buffers, and the shortcut's slot (u32) and table (up to four u64 slots per
    // component).
    // The cut edges read (own vertex and ghost). The masks of the ghosts read (a bit each,
    // both ways) counted as a byte.
    uploaded
        + 8 * cuts
        + (4 + 8 + 8) * n
        + (2 + 4 + 5 * 8 + 4 + 4 * 8) * n
        + (4 + 4 + 8 + 8 + 4 + 1) * rows.ghosts.send_local.len() as u64
        + (8 + 8 + 1 + 1 + 1) * rows.ghosts.ids.len() as u64
}

const KERNELS: [&str; 24] = [
    "cc_giant_reports",
    "cc_init",
    "cc_link_nth",
    "cc_link_rest",
    "cc_compress",
    "cc_roots_of",
    "cc_label",
    "cc_send_changed",
    "cc_receive_labels",
    "cc_cut_min",
    "cc_list_reads",
    "cc_ghost_kinds",
    "cc_apply_masks",
    "cc_giant_ghosts",
    "cc_relabel",
    "cc_boundary_labels",
    "cc_hooks",
    "cc_apply_hooks",
    "cc_queries",
    "cc_answer",
    "cc_store_answers",
    "cc_take_answers",
    "cc_list_flagged",
    "cc_undone",
];

impl<'a> GpuLabeller<'a> {
    /// Upload `rows` (collective: opens the exchange and checks every rank's memory), unless
    /// the split left them on the GPU (`on_gpu`: taken as they are).
    pub fn new(
        world: &'a World,
        gpu: &'a Gpu,
        transport: GpuTransport,
        rows: &'a LocalRows,
        part: &Block1D,
        on_gpu: Option<DeviceRows>,
    ) -> Result<Self> {
        if world.size() > 1 && part.n > u64::from(u32::MAX) {
            // Labels travel packed beside a 32-bit index in one u64.
            return Err(Error::Unavailable(format!(
                "components across ranks on GPUs take graphs of fewer than 2^32 vertices ({} here): run on the CPU",
                part.n
            )));
        }
        let needed = world.allreduce(bytes_needed(rows, on_gpu.is_none()), Op::Max);
        let free = world.allreduce(memory::gpu_free(gpu)?, Op::Min);
        if needed > free {
            return Err(memory::refusal(
                "the components labelling",
                needed,
                free,
                "GPU memory per rank (the least free over ranks)",
                "run on more GPUs, or on the CPU",
            ));
        }
        let n = rows.local_n();
        let mut kernels = HashMap::new();
        for name in KERNELS {
            kernels.insert(name, gpu.function("cc.cu", name)?);
        }
        let on_gpu = match on_gpu {
            Some(on_gpu) => on_gpu,
            None => DeviceRows {
                offsets: gpu.upload("row offsets", &rows.offsets)?,
                adj: gpu.upload("local edges", &rows.adj)?,
                cut_ghost: gpu.upload("cut edges", &rows.cut_ghost)?,
                cut_offsets: gpu.upload("cut edge offsets", &rows.cut_offsets)?,
            },
        };
        let ghosts = &rows.ghosts;
        let plan = SendPlan {
            send_local: gpu.upload("ghost plan", &ghosts.send_local)?,
            targets: gpu.upload("ghost plan", &ghosts.targets)?,
            sent: gpu.zeros("labels sent", ghosts.send_local.len())?,
            live: gpu.zeros("entries read", ghosts.send_local.len())?,
            live_counts: gpu.zeros("entries read", world.size())?,
            live_host: vec![0; world.size()],
            out: gpu.zeros("labels to send", ghosts.send_local.len())?,
            tails: gpu.zeros("send counts", world.size())?,
            incoming: gpu.zeros("labels received", ghosts.ids.len())?,
        };
        let empty = || gpu.zeros::<u64>("boundary buffers", 1);
        let boundary = Boundary {
            roots: gpu.zeros("boundary roots", n)?,
            count: 0,
            table: empty()?,
            table_mask: 0,
            slots: gpu.zeros("boundary slots", 1)?,
            done: gpu.zeros("boundary done", n.max(1))?,
            ends: empty()?,
            before: empty()?,
            items: empty()?,
            bucketed: empty()?,
            received: empty()?,
            replies: empty()?,
        };
        Ok(GpuLabeller {
            gpu,
            exchange: GpuExchange::open(world, gpu, transport)?,
            owners: OwnerBuckets::new(gpu, world.size(), part.block)?,
            rows,
            ranks: world.size(),
            n: n as u32,
            first: part.first(),
            offsets: on_gpu.offsets,
            adj: on_gpu.adj,
            cut_ghost: on_gpu.cut_ghost,
            cut_offsets: on_gpu.cut_offsets,
            plan,
            parent: gpu.zeros("parents", n)?,
            labels: gpu.zeros("labels", n)?,
            comp_min: gpu.zeros("component labels", n)?,
            ghost_labels: gpu.zeros("ghost labels", ghosts.ids.len())?,
            changed_ghosts: gpu.zeros("changed ghosts", ghosts.ids.len())?,
            giants: GiantSkip {
                root: u32::MAX,
                ghost_giant: gpu.zeros("ghosts in giants", ghosts.ids.len())?,
                labels: Vec::new(),
                handed: Vec::new(),
                any_other: 0,
                active_own: gpu.zeros("cut edges read", rows.cut_count())?,
                active_ghost: gpu.zeros("cut edges read", rows.cut_count())?,
                active: None,
            },
            masks: ReadMasks::new(gpu, rows)?,
            boundary,
            counter: gpu.zeros("counter", 1)?,
            listed: gpu.zeros("listed count", 1)?,
            kernels,
        })
    }

    /// One thread per own vertex: `cc_compress`, or `cc_init` (no other arguments).
    fn per_vertex(&mut self, name: &str) -> Result<()> {
        let (gpu, n) = (self.gpu, self.n);
        gpu.launch(&self.kernels[name], grid(n.into()), |b| {
            b.arg(&n).arg(&mut self.parent);
        })
    }

    /// The root most sampled vertices have (the giant component's, on the graphs CC is
    /// run on; any root is correct, only slower).
    fn giant_root(&mut self) -> Result<u32> {
        let n = u64::from(self.n);
        let sample: Vec<u32> = (0..SAMPLE_VERTICES.min(n))
            .map(|i| (i * 2_654_435_761 % n) as u32)
            .collect();
        Ok(most_frequent(self.roots_of(&sample)?).unwrap_or(0))
    }

    /// List the cut edges read from now on (all but those of the giant, except to a rank
    /// whose giant is of another class) and the boundary components (the roots of their own
    /// ends), size the latter's buffers; the ghosts they read set their bits in `masks.out`.
    fn list_reads(&mut self) -> Result<()> {
        let (gpu, n, ranks) = (self.gpu, self.n, self.ranks as u32);
        let m = &mut self.masks;
        gpu.clear("the boundary flags", &mut m.flags)?;
        gpu.clear("the read masks", &mut m.out)?;
        let k = &mut self.giants;
        gpu.launch(&self.kernels["cc_list_reads"], grid(n.into()), |a| {
            a.arg(&self.cut_offsets)
                .arg(&self.cut_ghost)
                .arg(&n)
                .arg(&m.kinds)
                .arg(&m.ghost_at)
                .arg(&m.word_at)
                .arg(&ranks)
                .arg(&k.root)
                .arg(&k.any_other)
                .arg(&self.parent)
                .arg(&mut m.flags)
                .arg(&mut m.out)
                .arg(&mut k.active_own)
                .arg(&mut k.active_ghost)
                .arg(&mut self.counter);
        })?;
        gpu.launch(&self.kernels["cc_list_flagged"], grid(n.into()), |a| {
            a.arg(&m.flags)
                .arg(&n)
                .arg(&mut self.boundary.roots)
                .arg(&mut self.listed);
        })?;
        self.giants.active = Some(self.take_counter()?);
        let count = gpu.download("boundary count", &self.listed, 1)?[0];
        gpu.clear("the listed count", &mut self.listed)?;
        let b = &mut self.boundary;
        b.count = count;
        let len = count as usize;
        grow(gpu, "boundary labels", &mut b.before, len)?;
        grow(gpu, "boundary messages", &mut b.items, len)?;
        grow(gpu, "boundary messages", &mut b.bucketed, len)?;
        grow(gpu, "boundary replies", &mut b.replies, len)?;
        let slots = table_slots(count);
        if slots > 1 << 31 {
            // An answer carries its slot in 31 bits (kernels/cc.cu, FINAL_ANSWER).
            return Err(Error::Unavailable(format!(
                "{count} boundary components on one GPU exceed the shortcut's 2^30: run on more GPUs"
            )));
        }
        grow(gpu, "shortcut labels asked", &mut b.table, slots as usize)?;
        b.table_mask = slots - 1;
        grow(gpu, "boundary chain ends", &mut b.ends, len)?;
        grow(gpu, "shortcut slots", &mut b.slots, len)
    }

    /// Tell each owner which of its vertices this rank reads (`masks.out`, a bitmask per
    /// owner's run), and never send the own labels no asking rank reads, nor those of the own
    /// giant (collective; the ghosts not read take no giant label either). Returns the bytes
    /// sent.
    fn ask_owners(&mut self) -> Result<u64> {
        let (gpu, ranks) = (self.gpu, self.ranks as u32);
        let m = &mut self.masks;
        let ghosts = self.rows.ghosts.ids.len() as u64;
        gpu.launch(&self.kernels["cc_ghost_kinds"], grid(ghosts), |a| {
            a.arg(&m.out)
                .arg(&m.kinds)
                .arg(&m.ghost_at)
                .arg(&m.word_at)
                .arg(&ranks)
                .arg(&ghosts)
                .arg(&mut self.giants.ghost_giant);
        })?;
        self.exchange
            .alltoallv_runs(&m.out, (&m.out_starts, &m.out_counts), &mut m.inbox)?;
        let sends = self.rows.ghosts.send_local.len() as u64;
        gpu.clear("the counts of entries read", &mut self.plan.live_counts)?;
        gpu.launch(&self.kernels["cc_apply_masks"], grid(sends), |a| {
            a.arg(&m.inbox)
                .arg(&m.send_at)
                .arg(&m.in_at)
                .arg(&ranks)
                .arg(&sends)
                .arg(&self.plan.send_local)
                .arg(&self.parent)
                .arg(&self.giants.root)
                .arg(&mut self.plan.sent)
                .arg(&mut self.plan.live)
                .arg(&mut self.plan.live_counts);
        })?;
        let p = &mut self.plan;
        let counts = gpu.download("counts of entries read", &p.live_counts, self.ranks)?;
        p.live_host = counts.into_iter().map(|c| c as usize).collect();
        Ok(8 * m.out_counts.iter().sum::<usize>() as u64)
    }

    /// Hand the ghosts in giants their owners' giant labels where these changed.
    fn hand_giant_labels(&mut self) -> Result<()> {
        let at = run_starts(&self.rows.ghosts.recv_counts);
        let k = &mut self.giants;
        for (s, (&from, &count)) in at.iter().zip(&self.rows.ghosts.recv_counts).enumerate() {
            let label = k.labels.get(s).copied().unwrap_or(u64::MAX);
            if label == u64::MAX || k.handed[s] == label || count == 0 {
                continue;
            }
            k.handed[s] = label;
            let (from, to) = (from as u64, (from + count) as u64);
            self.gpu
                .launch(&self.kernels["cc_giant_ghosts"], grid(count as u64), |a| {
                    a.arg(&k.ghost_giant)
                        .arg(&from)
                        .arg(&to)
                        .arg(&label)
                        .arg(&mut self.ghost_labels)
                        .arg(&mut self.changed_ghosts);
                })?;
        }
        Ok(())
    }

    /// Put the first `count` of `boundary.items` (all for other ranks) into runs by owner and
    /// send them; returns how many went to each rank and how many came from each (in
    /// `boundary.received`).
    fn route_items(&mut self, count: u64) -> Result<(Vec<usize>, Vec<usize>)> {
        let b = &mut self.boundary;
        let me = self.exchange.rank();
        let (moved, counts) = remote_runs(
            self.gpu,
            &mut self.owners,
            (&b.items, count),
            &mut b.bucketed,
            (me, self.ranks),
        )?;
        let send = if moved { &b.bucketed } else { &b.items };
        let at = run_starts(&counts);
        let got = self
            .exchange
            .alltoallv_runs(send, (&at, &counts), &mut b.received)?;
        Ok((counts, got))
    }

    /// The end of a shortcut step: each boundary component takes its chain's end found here,
    /// or the answer to its query (`cc_take_answers`).
    fn take_ends(&mut self) -> Result<()> {
        let b = &mut self.boundary;
        self.gpu
            .launch(&self.kernels["cc_take_answers"], grid(b.count), |a| {
                a.arg(&b.slots)
                    .arg(&b.count)
                    .arg(&b.roots)
                    .arg(&b.ends)
                    .arg(&b.table)
                    .arg(&mut self.comp_min)
                    .arg(&mut b.done);
            })
    }

    /// The counter, which is then reset (every use starts from zero).
    fn take_counter(&mut self) -> Result<u64> {
        let value = self.gpu.download("counter", &self.counter, 1)?[0];
        self.gpu.clear("the counter", &mut self.counter)?;
        Ok(value)
    }
}

impl Labeller for GpuLabeller<'_> {
    fn link_local(&mut self) -> Result<()> {
        if self.n == 0 {
            return Ok(());
        }
        let (gpu, n, first) = (self.gpu, self.n, self.first);
        self.per_vertex("cc_init")?;
        for k in 0..SAMPLE_NEIGHBOURS {
            gpu.launch(&self.kernels["cc_link_nth"], grid(n.into()), |b| {
                b.arg(&self.offsets)
                    .arg(&self.adj)
                    .arg(&n)
                    .arg(&k)
                    .arg(&mut self.parent);
            })?;
        }
        self.per_vertex("cc_compress")?;
        let giant = self.giant_root()?;
        gpu.launch(&self.kernels["cc_link_rest"], grid(n.into()), |b| {
            b.arg(&self.offsets)
                .arg(&self.adj)
                .arg(&n)
                .arg(&SAMPLE_NEIGHBOURS)
                .arg(&giant)
                .arg(&mut self.parent);
        })?;
        self.per_vertex("cc_compress")?;
        gpu.launch(&self.kernels["cc_label"], grid(n.into()), |b| {
            b.arg(&n)
                .arg(&first)
                .arg(&self.parent)
                .arg(&mut self.labels)
                .arg(&mut self.comp_min);
        })?;
        // `plan.sent` and `giants.ghost_giant` are set for every entry by `skip_giants` on
        // several ranks (unread on one).
        let k = &mut self.giants;
        (k.root, k.active, self.boundary.count) = (u32::MAX, None, 0);
        k.labels.clear();
        gpu.sync("cc local labelling")
    }

    fn refresh_ghosts(&mut self, _: &World) -> Result<(u64, u64)> {
        if self.ranks == 1 {
            return Ok((0, 0));
        }
        let gpu = self.gpu;
        let ghosts = &self.rows.ghosts;
        let p = &mut self.plan;
        let at = run_starts(&ghosts.send_counts);
        gpu.clear("the send counts", &mut p.tails)?;
        for (dest, (&from, &count)) in at.iter().zip(&p.live_host).enumerate() {
            let (from, to, dest) = (from as u64, (from + count) as u64, dest as u32);
            if count > 0 {
                gpu.launch(&self.kernels["cc_send_changed"], grid(count as u64), |a| {
                    a.arg(&p.send_local)
                        .arg(&p.targets)
                        .arg(&p.live)
                        .arg(&from)
                        .arg(&to)
                        .arg(&dest)
                        .arg(&self.labels)
                        .arg(&mut p.sent)
                        .arg(&mut p.out)
                        .arg(&mut p.tails);
                })?;
            }
        }
        let counts: Vec<usize> = gpu
            .download("send counts", &p.tails, self.ranks)?
            .into_iter()
            .map(|c| c as usize)
            .collect();
        let received = self
            .exchange
            .alltoallv_runs(&p.out, (&at, &counts), &mut p.incoming)?;
        let total = received.iter().sum::<usize>() as u64;
        gpu.clear("the changed ghosts", &mut self.changed_ghosts)?;
        self.hand_giant_labels()?;
        let p = &self.plan;
        gpu.launch(&self.kernels["cc_receive_labels"], grid(total), |a| {
            a.arg(&p.incoming)
                .arg(&total)
                .arg(&mut self.ghost_labels)
                .arg(&mut self.changed_ghosts)
                .arg(&mut self.giants.ghost_giant);
        })?;
        let sent = counts.iter().sum::<usize>() as u64;
        Ok((sent, 8 * sent))
    }

    fn absorb_cut_edges(&mut self) -> Result<bool> {
        let gpu = self.gpu;
        let cuts = self.rows.cut_count() as u64;
        if cuts == 0 {
            return Ok(false);
        }
        // On several ranks `skip_giants` listed the cut edges read.
        let Some(active) = self.giants.active else {
            return Ok(false);
        };
        let k = &self.giants;
        gpu.launch(&self.kernels["cc_cut_min"], grid(active), |a| {
            a.arg(&k.active_own)
                .arg(&k.active_ghost)
                .arg(&active)
                .arg(&self.changed_ghosts)
                .arg(&self.parent)
                .arg(&self.ghost_labels)
                .arg(&mut self.comp_min)
                .arg(&mut self.listed);
        })?;
        // Before the absorb: the roots' vertex labels, which only `relabel` changes.
        let b = &mut self.boundary;
        gpu.launch(&self.kernels["cc_boundary_labels"], grid(b.count), |a| {
            a.arg(&b.roots)
                .arg(&b.count)
                .arg(&self.labels)
                .arg(&mut b.before);
        })?;
        let fell = gpu.download("labels fallen", &self.listed, 1)?[0];
        gpu.clear("the labels fallen", &mut self.listed)?;
        Ok(fell != 0)
    }

    fn hook_trees(&mut self, _: &World, _: &Block1D) -> Result<u64> {
        if self.ranks == 1 {
            return Ok(0);
        }
        let (gpu, first, local_n) = (self.gpu, self.first, u64::from(self.n));
        let b = &mut self.boundary;
        gpu.launch(&self.kernels["cc_undone"], grid(b.count), |a| {
            a.arg(&b.roots).arg(&b.count).arg(&mut b.done);
        })?;
        gpu.launch(&self.kernels["cc_hooks"], grid(b.count), |a| {
            a.arg(&b.roots)
                .arg(&b.count)
                .arg(&b.before)
                .arg(&first)
                .arg(&local_n)
                .arg(&self.parent)
                .arg(&mut self.comp_min)
                .arg(&mut b.items)
                .arg(&mut self.counter);
        })?;
        let hooks = self.take_counter()?;
        let total = self.route_items(hooks)?.1.iter().sum::<usize>() as u64;
        let b = &self.boundary;
        gpu.launch(&self.kernels["cc_apply_hooks"], grid(total), |a| {
            a.arg(&b.received)
                .arg(&total)
                .arg(&first)
                .arg(&self.parent)
                .arg(&mut self.comp_min);
        })?;
        Ok(8 * hooks)
    }

    fn shortcut(&mut self, _: &World, _: &Block1D) -> Result<(bool, u64)> {
        if self.ranks == 1 {
            return Ok((false, 0));
        }
        let (gpu, first, local_n) = (self.gpu, self.first, u64::from(self.n));
        let b = &mut self.boundary;
        let slots = (b.table_mask + 1) as usize;
        gpu.stream
            .memset_zeros(&mut b.table.slice_mut(0..slots))
            .map_err(|e| crate::device::gpu_error("clear the shortcut labels asked", e))?;
        gpu.launch(&self.kernels["cc_queries"], grid(b.count), |a| {
            a.arg(&b.roots)
                .arg(&b.count)
                .arg(&first)
                .arg(&local_n)
                .arg(&self.parent)
                .arg(&self.comp_min)
                .arg(&b.done)
                .arg(&mut b.ends)
                .arg(&mut b.table)
                .arg(&b.table_mask)
                .arg(&mut b.slots)
                .arg(&mut b.items)
                .arg(&mut self.counter);
        })?;
        let asked = self.take_counter()?;
        let (sent, from) = self.route_items(asked)?;
        // The queries' counts were gathered from every rank: none asked, the shortcutting is
        // over (no collective of its own for the verdict) once the ends found here are taken.
        if !self.exchange.last_moved() {
            self.take_ends()?;
            return Ok((false, 0));
        }
        let total = from.iter().sum::<usize>() as u64;
        let b = &mut self.boundary;
        gpu.launch(&self.kernels["cc_answer"], grid(total), |a| {
            a.arg(&mut b.received)
                .arg(&total)
                .arg(&first)
                .arg(&local_n)
                .arg(&self.parent)
                .arg(&self.comp_min)
                .arg(&b.done);
        })?;
        self.exchange
            .reply_runs(&b.received, &from, &sent, &mut b.replies)?;
        gpu.launch(&self.kernels["cc_store_answers"], grid(asked), |a| {
            a.arg(&b.replies).arg(&asked).arg(&mut b.table);
        })?;
        self.take_ends()?;
        Ok((true, 8 * (asked + total)))
    }

    fn relabel(&mut self) -> Result<u64> {
        if self.n == 0 {
            return Ok(0);
        }
        let (gpu, n) = (self.gpu, self.n);
        gpu.launch(&self.kernels["cc_relabel"], grid(n.into()), |b| {
            b.arg(&n)
                .arg(&self.parent)
                .arg(&self.comp_min)
                .arg(&mut self.labels)
                .arg(&mut self.counter);
        })?;
        self.take_counter()
    }

    fn labels(&self) -> Result<Vec<u64>> {
        self.gpu.download("labels", &self.labels, self.n as usize)
    }

    fn rows(&self) -> &LocalRows {
        self.rows
    }

    /// Both from the GPU, where the rows are (the host keeps no cut offsets): each pick's own
    /// vertex by a binary search of the cut offsets (`split_cut_edges`, kernels/ghosts.cu).
    fn cut_edges(&mut self, picks: &[usize]) -> Result<Vec<(u32, u32)>> {
        if picks.is_empty() {
            return Ok(Vec::new());
        }
        let gpu = self.gpu;
        let count = picks.len() as u64;
        let at: Vec<u64> = picks.iter().map(|&i| i as u64).collect();
        let at = gpu.upload("cut edges picked", &at)?;
        let mut own = gpu.zeros::<u32>("the picks' own vertices", picks.len())?;
        let mut ghost = gpu.zeros::<u32>("the picks' ghosts", picks.len())?;
        let kernel = gpu.function("ghosts.cu", "split_cut_edges")?;
        gpu.launch(&kernel, grid(count), |a| {
            a.arg(&at)
                .arg(&count)
                .arg(&self.cut_offsets)
                .arg(&self.n)
                .arg(&self.cut_ghost)
                .arg(&mut own)
                .arg(&mut ghost);
        })?;
        let own = gpu.download("the picks' own vertices", &own, picks.len())?;
        let ghost = gpu.download("the picks' ghosts", &ghost, picks.len())?;
        Ok(own.into_iter().zip(ghost).collect())
    }

    fn roots_of(&mut self, vertices: &[u32]) -> Result<Vec<u32>> {
        if vertices.is_empty() {
            return Ok(Vec::new());
        }
        let gpu = self.gpu;
        let count = vertices.len() as u64;
        let asked = gpu.upload("vertices", vertices)?;
        let mut out = gpu.zeros::<u32>("roots", vertices.len())?;
        gpu.launch(&self.kernels["cc_roots_of"], grid(count), |a| {
            a.arg(&asked).arg(&count).arg(&self.parent).arg(&mut out);
        })?;
        gpu.download("roots", &out, vertices.len())
    }

    fn giant(&mut self) -> Result<Option<u32>> {
        match self.n {
            0 => Ok(None),
            _ => self.giant_root().map(Some),
        }
    }

    fn lower_component(&mut self, root: u32, label: u64) -> Result<()> {
        let at = root as usize;
        self.gpu
            .stream
            .memcpy_htod(&[label], &mut self.comp_min.slice_mut(at..at + 1))
            .map_err(|e| crate::device::gpu_error("lower a component label", e))
    }

    fn root_label(&mut self, root: u32) -> Result<u64> {
        let at = root as usize;
        let mut out = [0u64];
        self.gpu
            .stream
            .memcpy_dtoh(&self.comp_min.slice(at..at + 1), &mut out)
            .map_err(|e| crate::device::gpu_error("read a component label", e))?;
        self.gpu.sync("cc giant label")?;
        Ok(out[0])
    }

    fn skip_giants(
        &mut self,
        _: &World,
        root: Option<u32>,
        joined: &[bool],
        labels: &[u64],
    ) -> Result<u64> {
        let k = &mut self.giants;
        k.root = root.unwrap_or(u32::MAX);
        let recv = &self.rows.ghosts.recv_counts;
        let kinds: Vec<u8> = (0..self.ranks)
            .map(|s| match (labels[s], joined[s]) {
                _ if recv[s] == 0 => 0,
                (u64::MAX, _) => 0,
                (_, true) => SAME_GIANT,
                (_, false) => OTHER_GIANT,
            })
            .collect();
        k.any_other = u32::from(kinds.contains(&OTHER_GIANT));
        k.labels = labels.to_vec();
        k.handed = vec![u64::MAX; labels.len()];
        self.gpu
            .stream
            .memcpy_htod(&kinds, &mut self.masks.kinds)
            .map_err(|e| crate::device::gpu_error("upload the giant kinds", e))?;
        let started = std::time::Instant::now();
        self.list_reads()?;
        let listed = std::time::Instant::now();
        let bytes = self.ask_owners()?;
        self.gpu.sync("cc read masks")?;
        log::debug!(
            "cc: skip on rank {}: listing {:.6} s, masks {:.6} s",
            self.exchange.rank(),
            (listed - started).as_secs_f64(),
            listed.elapsed().as_secs_f64()
        );
        Ok(bytes)
    }

    fn giant_labels(&mut self, labels: &[u64]) {
        self.giants.labels = labels.to_vec();
    }

    fn giant_reports(&mut self) -> Result<Vec<u64>> {
        let (gpu, ranks) = (self.gpu, self.ranks);
        let none = vec![u64::MAX; ranks];
        let Some(active) = self.giants.active else {
            return Ok(none);
        };
        let mut reports = gpu.upload("giant reports", &none)?;
        let (k, ranks32) = (&self.giants, ranks as u32);
        let ghost_at = &self.masks.ghost_at;
        gpu.launch(&self.kernels["cc_giant_reports"], grid(active), |a| {
            a.arg(&k.active_own)
                .arg(&k.active_ghost)
                .arg(&active)
                .arg(&k.ghost_giant)
                .arg(ghost_at)
                .arg(&ranks32)
                .arg(&self.parent)
                .arg(&self.comp_min)
                .arg(&self.ghost_labels)
                .arg(&mut reports);
        })?;
        gpu.download("giant reports", &reports, ranks)
    }
}
