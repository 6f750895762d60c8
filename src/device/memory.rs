//! Memory checks, in one place: what a node's host and a GPU have free, and the one-line
//! refusal every workload gives before it allocates (bytes needed, bytes available, the
//! largest size that fits), instead of an allocation failure with a backtrace per rank.

use super::Gpu;
use crate::error::{Error, Result};

/// A number from a `/proc` file's `KEY: value kB` line (e.g. `MemAvailable:`), if present.
pub fn proc_kb(file: &str, key: &str) -> Option<u64> {
    std::fs::read_to_string(file).ok().and_then(|s| {
        s.lines()
            .find(|l| l.starts_with(key))
            .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
    })
}

/// Bytes this node's host has available (`MemAvailable`; unlimited where /proc/meminfo
/// cannot be read).
pub fn host_available() -> u64 {
    proc_kb("/proc/meminfo", "MemAvailable:").map_or(u64::MAX, |kb| kb * 1024)
}

/// The peak resident memory of this process so far, in bytes (0 where unknown).
pub fn peak_rss() -> u64 {
    proc_kb("/proc/self/status", "VmHWM:").map_or(0, |kb| kb * 1024)
}

/// Bytes free on `gpu` now.
pub fn gpu_free(gpu: &Gpu) -> Result<u64> {
    Ok(gpu.memory()?.0 as u64)
}

/// The one-line refusal: `what` needs `needed` bytes of `place` but `available` are there;
/// `advice` (what would fit, or what to do) follows when given.
pub fn refusal(what: &str, needed: u64, available: u64, place: &str, advice: &str) -> Error {
    let advice = if advice.is_empty() {
        String::new()
    } else {
        format!("; {advice}")
    };
    Error::Unavailable(format!(
        "{what} does not fit: it needs about {needed} bytes of {place} but {available} are available{advice}"
    ))
}

/// Where a need must fit.
pub enum Place<'a> {
    /// The host memory of a node, shared by its `ranks` ranks (each needing the same).
    Host {
        ranks: usize,
    },
    Gpu(&'a Gpu),
}

impl Place<'_> {
    /// The bytes available there, and its name for messages.
    fn available(&self) -> Result<(u64, String)> {
        Ok(match self {
            Place::Host { ranks } => (
                host_available(),
                format!("host memory ({ranks} rank(s) on the node; MemAvailable, /proc/meminfo)"),
            ),
            Place::Gpu(gpu) => (
                gpu.memory()?.0 as u64,
                format!("GPU memory ({})", gpu.describe()),
            ),
        })
    }

    fn ranks(&self) -> u64 {
        match self {
            Place::Host { ranks } => *ranks as u64,
            Place::Gpu(_) => 1,
        }
    }
}

/// Refuse `what` unless `bytes` per rank fit in `place`. `fitting(available_per_rank)` says
/// what would fit instead (e.g. "the largest L that fits is 46340"); it is appended to the
/// line.
pub fn check(
    what: &str,
    bytes: u64,
    place: Place,
    fitting: impl FnOnce(u64) -> String,
) -> Result<()> {
    let (available, name) = place.available()?;
    let needed = bytes.saturating_mul(place.ranks());
    if needed <= available {
        return Ok(());
    }
    let advice = fitting(available / place.ranks());
    Err(refusal(what, needed, available, &name, &advice))
}

/// The largest `x` in [lo, hi] with `bytes(x) <= budget` (`bytes` growing with `x`); `None`
/// when not even `lo` fits. For naming the largest size that fits.
pub fn largest_fitting(lo: u64, hi: u64, budget: u64, bytes: impl Fn(u64) -> u64) -> Option<u64> {
    if bytes(lo) > budget {
        return None;
    }
    let (mut ok, mut bad) = (lo, hi.saturating_add(1));
    if bytes(hi) <= budget {
        return Some(hi);
    }
    while bad - ok > 1 {
        let mid = ok + (bad - ok) / 2;
        if bytes(mid) <= budget {
            ok = mid;
        } else {
            bad = mid;
        }
    }
    Some(ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn largest_fitting_is_the_last_size_under_the_budget() {
        let sq = |l: u64| l * l;
        assert_eq!(largest_fitting(1, 1 << 20, 1_000_000, sq), Some(1000));
        assert_eq!(largest_fitting(1, 1 << 20, 999_999, sq), Some(999));
        assert_eq!(largest_fitting(2, 10, 3, sq), None);
        assert_eq!(largest_fitting(1, 10, u64::MAX, sq), Some(10));
    }

    #[test]
    fn a_need_over_the_host_is_refused_with_the_fitting_size() {
        let e = check(
            "a lattice",
            u64::MAX / 4,
            Place::Host { ranks: 2 },
            |avail| format!("{avail} per rank"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("a lattice does not fit: it needs about"),
            "{e}"
        );
        assert!(e.contains("per rank"), "{e}");
    }
}
