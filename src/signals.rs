//! SIGTERM and SIGINT (a preemptible queue ending the job, or Ctrl-C) caught into a flag that
//! long loops poll, so a workload can save what it can resume from before the job ends.

use crate::error::{Error, Result};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Exit status of a job ended by a signal (128 + SIGTERM).
pub const INTERRUPTED: i32 = 143;

/// The signal flag; the handlers are removed when it is dropped.
pub struct Interrupt {
    flag: Arc<AtomicBool>,
    ids: Vec<signal_hook::SigId>,
}

impl Interrupt {
    pub fn watch() -> Result<Self> {
        let flag = Arc::new(AtomicBool::new(false));
        let mut ids = Vec::new();
        for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
            let id = signal_hook::flag::register(signal, Arc::clone(&flag)).map_err(|e| {
                Error::Unavailable(format!("cannot watch for signal {signal}: {e}"))
            })?;
            ids.push(id);
        }
        Ok(Interrupt { flag, ids })
    }

    /// True once this rank caught SIGTERM or SIGINT.
    pub fn raised(&self) -> bool {
        self.flag.load(Ordering::Relaxed)
    }
}

impl Drop for Interrupt {
    fn drop(&mut self) {
        for id in self.ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}
