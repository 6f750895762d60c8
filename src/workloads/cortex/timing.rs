//! Per-phase timing of the steps (`timing = true`), summed over each block of 512 steps and
//! stored as `/cortex/timing`: phase 1 (`neurons`), phase 2 on the inner core (`inner`), the
//! border rows' exchange (`exchange`), phase 2 on the border with the synapses' deposit
//! (`border`) and the whole step (`step`).
//!
//! On the GPU each phase is its own time on its stream, by CUDA events: the exchange runs on
//! the run's stream while the inner core runs on the side stream, so the step is about
//! `neurons + max(inner, exchange + border)`. On the CPU the exchange travels during the
//! inner core's rayon pass and only the wait after it can be timed: there `exchange` is the
//! part the inner core did not hide. Either way `exposed` (the step less its compute) is
//! the exchange time that the inner core did not hide.

use crate::device::gpu_error;
use crate::error::Result;
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaEvent, CudaStream};

/// Seconds of each phase, summed over steps.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PhaseTimes {
    pub neurons: f64,
    pub inner: f64,
    pub exchange: f64,
    /// The part of the exchange the inner core did not hide.
    pub exposed: f64,
    pub border: f64,
    pub step: f64,
}

/// The phases' names, in `as_array`'s order (the datasets of `/cortex/timing`).
pub const PHASES: [&str; 6] = ["neurons", "inner", "exchange", "exposed", "border", "step"];

impl PhaseTimes {
    pub fn as_array(&self) -> [f64; 6] {
        [
            self.neurons,
            self.inner,
            self.exchange,
            self.exposed,
            self.border,
            self.step,
        ]
    }

    pub fn from_array(a: [f64; 6]) -> PhaseTimes {
        PhaseTimes {
            neurons: a[0],
            inner: a[1],
            exchange: a[2],
            exposed: a[3],
            border: a[4],
            step: a[5],
        }
    }

    pub fn add(&mut self, other: &PhaseTimes) {
        let (a, b) = (self.as_array(), other.as_array());
        *self = PhaseTimes::from_array(std::array::from_fn(|i| a[i] + b[i]));
    }
}

/// Where a GPU step's events stand: before phase 1, after it, after the inner core (side
/// stream), after the exchange, after the border, after the streams joined.
pub const MARKS: usize = 6;

/// The CUDA events of the block's steps, read once the block's work is done.
#[derive(Default)]
pub struct StepEvents {
    steps: Vec<Vec<CudaEvent>>,
}

impl StepEvents {
    /// Mark the current point of `stream` in the step being recorded (`first` starts one).
    pub fn mark(&mut self, stream: &CudaStream, first: bool) -> Result<()> {
        let event = stream
            .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(|e| gpu_error("record a timing event", e))?;
        if first {
            self.steps.push(Vec::with_capacity(MARKS));
        }
        self.steps
            .last_mut()
            .expect("a step's first mark opens it")
            .push(event);
        Ok(())
    }

    /// The phases' seconds over the recorded steps (their work must be done); cleared.
    pub fn take(&mut self) -> Result<PhaseTimes> {
        let mut sum = PhaseTimes::default();
        for e in self.steps.drain(..) {
            let ms = |a: usize, b: usize| {
                e[a].elapsed_ms(&e[b])
                    .map(|ms| f64::from(ms) / 1e3)
                    .map_err(|err| gpu_error("read a timing event", err))
            };
            let (neurons, inner, border, step) = (ms(0, 1)?, ms(1, 2)?, ms(3, 4)?, ms(0, 5)?);
            sum.add(&PhaseTimes {
                neurons,
                inner,
                exchange: ms(1, 3)?,
                // The inner core and the border overlap but for the exchange's wait.
                exposed: (step - neurons - inner.max(border)).max(0.0),
                border,
                step,
            });
        }
        Ok(sum)
    }
}
