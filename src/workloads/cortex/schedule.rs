//! The settings a run may change between steps (the seed's batch decks): base current,
//! noise, amplitude A, washout τ and the drug factors λ of each cell type, and the boosted
//! fraction; a schedule of (step, key, value) settings from `[[cortex.schedule]]` entries or a
//! `schedule_file` of the seed's `STEP KEY VALUE` lines (`SET_E.BASE_I`, `SET_I.NOISE`,
//! `SET_BOOST_I`, `SET_E.LAMBDA_TAU`, ...), checked whole before the run; and the effective
//! values (eqs. 8.4, 8.5) a step uses.

use serde::{Deserialize, Serialize};

/// `[[cortex.schedule]]`: `{step = 4000, set = "e.lambda_tau", value = 3.0}`.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub step: i64,
    pub set: String,
    pub value: f64,
}

/// A setting: which value of which cell type (0 excitatory, 1 inhibitory).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Key {
    BaseI(usize),
    Noise(usize),
    Amplitude(usize),
    Tau(usize),
    LambdaA(usize),
    LambdaTau(usize),
    LambdaI(usize),
    BoostFraction,
}

/// The names a deck uses (`e.` / `i.` before each per-type one); a schedule file writes them
/// as `SET_` and upper case.
const PER_TYPE: [&str; 7] = [
    "base_i",
    "noise",
    "a",
    "tau",
    "lambda_a",
    "lambda_tau",
    "lambda_i",
];
const BOOST: &str = "boost_i";

impl Key {
    /// The key named `name` (`e.lambda_tau`, `SET_E.LAMBDA_TAU`, `boost_i`, `SET_BOOST_I`).
    pub fn parse(name: &str) -> Option<Key> {
        let lower = name.to_ascii_lowercase();
        let plain = lower.strip_prefix("set_").unwrap_or(&lower);
        if plain == BOOST {
            return Some(Key::BoostFraction);
        }
        let (kind, what) = plain.split_once('.')?;
        let t = ["e", "i"].iter().position(|k| *k == kind)?;
        let keys = [
            Key::BaseI,
            Key::Noise,
            Key::Amplitude,
            Key::Tau,
            Key::LambdaA,
            Key::LambdaTau,
            Key::LambdaI,
        ];
        let at = PER_TYPE.iter().position(|k| *k == what)?;
        Some(keys[at](t))
    }

    pub fn name(self) -> String {
        let (t, what) = match self {
            Key::BaseI(t) => (t, 0),
            Key::Noise(t) => (t, 1),
            Key::Amplitude(t) => (t, 2),
            Key::Tau(t) => (t, 3),
            Key::LambdaA(t) => (t, 4),
            Key::LambdaTau(t) => (t, 5),
            Key::LambdaI(t) => (t, 6),
            Key::BoostFraction => return BOOST.into(),
        };
        format!("{}.{}", ["e", "i"][t], PER_TYPE[what])
    }

    /// Whether `value` is one this key takes; else what it expects.
    pub fn check(self, value: f64) -> Result<(), &'static str> {
        let ok = match self {
            Key::BaseI(_) | Key::Noise(_) | Key::Amplitude(_) => value.is_finite(),
            Key::Tau(_) | Key::LambdaA(_) | Key::LambdaTau(_) => value.is_finite() && value > 0.0,
            Key::LambdaI(_) => value.is_finite(),
            Key::BoostFraction => (0.0..=1.0).contains(&value),
        };
        let expected = match self {
            Key::Tau(_) | Key::LambdaA(_) | Key::LambdaTau(_) => "a finite number > 0",
            Key::BoostFraction => "a fraction from 0 to 1",
            _ => "a finite number",
        };
        if ok {
            Ok(())
        } else {
            Err(expected)
        }
    }
}

/// Every key's name, for messages.
pub fn key_names() -> String {
    let mut names: Vec<String> = ["e", "i"]
        .iter()
        .flat_map(|t| PER_TYPE.iter().map(move |k| format!("{t}.{k}")))
        .collect();
    names.push(BOOST.into());
    names.join(", ")
}

/// The values in force.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settings {
    pub base_i: [f64; 2],
    pub noise: [f64; 2],
    pub amplitude: [f64; 2],
    pub tau: [f64; 2],
    pub lambda_a: [f64; 2],
    pub lambda_tau: [f64; 2],
    pub lambda_i: [f64; 2],
    pub boost_fraction: f64,
}

/// The current of a boosted neuron, added for the steps its fraction is drawn.
pub const BOOST_CURRENT: f64 = 10.0;

impl Default for Settings {
    /// The seed's test deck's currents and noise, its A and τ, no drug, no boost.
    fn default() -> Self {
        Settings {
            base_i: [3.0, 2.0],
            noise: [4.5, 3.0],
            amplitude: [0.25, -0.5],
            tau: [10.0, 10.0],
            lambda_a: [1.0; 2],
            lambda_tau: [1.0; 2],
            lambda_i: [1.0; 2],
            boost_fraction: 0.0,
        }
    }
}

impl Settings {
    pub fn set(&mut self, key: Key, value: f64) {
        match key {
            Key::BaseI(t) => self.base_i[t] = value,
            Key::Noise(t) => self.noise[t] = value,
            Key::Amplitude(t) => self.amplitude[t] = value,
            Key::Tau(t) => self.tau[t] = value,
            Key::LambdaA(t) => self.lambda_a[t] = value,
            Key::LambdaTau(t) => self.lambda_tau[t] = value,
            Key::LambdaI(t) => self.lambda_i[t] = value,
            Key::BoostFraction => self.boost_fraction = value,
        }
    }

    /// The effective values of eqs. 8.4 (excitatory: A/λ_A, τ/λ_τ, I − λ_I + 1) and 8.5
    /// (inhibitory: A·λ_A, τ·λ_τ, I + λ_I − 1).
    pub fn effective(&self) -> Effective {
        Effective {
            base_i: [
                self.base_i[0] - self.lambda_i[0] + 1.0,
                self.base_i[1] + self.lambda_i[1] - 1.0,
            ],
            noise: self.noise,
            amplitude: [
                self.amplitude[0] / self.lambda_a[0],
                self.amplitude[1] * self.lambda_a[1],
            ],
            tau: [
                self.tau[0] / self.lambda_tau[0],
                self.tau[1] * self.lambda_tau[1],
            ],
            boost_fraction: self.boost_fraction,
        }
    }
}

/// What a step uses.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Effective {
    pub base_i: [f64; 2],
    pub noise: [f64; 2],
    pub amplitude: [f64; 2],
    pub tau: [f64; 2],
    pub boost_fraction: f64,
}

impl Effective {
    /// e^(−1/τ) of each type: the trace's decay per step.
    pub fn decay(&self) -> [f64; 2] {
        [(-1.0 / self.tau[0]).exp(), (-1.0 / self.tau[1]).exp()]
    }
}

/// One setting of the schedule, checked.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Setting {
    pub step: u64,
    pub key: Key,
    pub value: f64,
}

/// A schedule problem: its place ("line 7" of a file, "entry 3" of the deck) and what is wrong.
pub type Problem = (String, String);

/// Check one (step, key, value) against the run's `steps` and the previous step.
fn setting(step: i64, name: &str, value: f64, steps: u64, last: u64) -> Result<Setting, String> {
    let step = u64::try_from(step).map_err(|_| format!("step {step}: expected a step >= 0"))?;
    let key = Key::parse(name)
        .ok_or_else(|| format!("unknown setting {name:?}: expected one of {}", key_names()))?;
    key.check(value)
        .map_err(|e| format!("{} = {value} is out of range: expected {e}", key.name()))?;
    if step < last {
        return Err(format!(
            "step {step} comes after step {last}: the steps must be in order"
        ));
    }
    if step >= steps {
        return Err(format!(
            "step {step} is past the run's last step {}",
            steps.saturating_sub(1)
        ));
    }
    Ok(Setting { step, key, value })
}

/// The deck's entries, checked; a problem names the entry (from 1).
pub fn from_entries(entries: &[Entry], steps: u64) -> Result<Vec<Setting>, Problem> {
    let mut out: Vec<Setting> = Vec::with_capacity(entries.len());
    for (n, e) in entries.iter().enumerate() {
        let last = out.last().map_or(0, |s| s.step);
        let s = setting(e.step, &e.set, e.value, steps, last)
            .map_err(|m| (format!("entry {}", n + 1), m))?;
        out.push(s);
    }
    Ok(out)
}

/// A schedule file's lines (`STEP KEY VALUE`; blank lines and `#` comments skipped), checked;
/// a problem names the line (from 1).
pub fn from_file_text(text: &str, steps: u64) -> Result<Vec<Setting>, Problem> {
    let mut out: Vec<Setting> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let at = || format!("line {} ({})", n + 1, line.trim());
        let body = line.split('#').next().unwrap_or("").trim();
        if body.is_empty() {
            continue;
        }
        let words: Vec<&str> = body.split_whitespace().collect();
        let [step, key, value] = words[..] else {
            return Err((
                at(),
                "expected STEP KEY VALUE (e.g. 4000 SET_E.LAMBDA_TAU 3.0)".into(),
            ));
        };
        let step: i64 = step
            .parse()
            .map_err(|_| (at(), format!("step {step:?} is not an integer")))?;
        let value: f64 = value
            .parse()
            .map_err(|_| (at(), format!("value {value:?} is not a number")))?;
        let last = out.last().map_or(0, |s| s.step);
        out.push(setting(step, key, value, steps, last).map_err(|m| (at(), m))?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEED_DECK: &str = "0 SET_E.BASE_I 3.0\n0 SET_I.BASE_I 2.0\n0 SET_E.NOISE 4.5\n0 SET_I.NOISE 3.0\n\
        50 SET_BOOST_I 0.1\n100 SET_BOOST_I 0.0\n4000 SET_E.LAMBDA_TAU 3.0\n5000 SET_E.LAMBDA_TAU 1.0\n";

    #[test]
    fn the_seeds_schedule_file_reads_as_its_settings() {
        let s = from_file_text(SEED_DECK, 10_000).unwrap();
        assert_eq!(s.len(), 8);
        assert_eq!(
            s[6],
            Setting {
                step: 4000,
                key: Key::LambdaTau(0),
                value: 3.0
            }
        );
        assert_eq!(s[4].key, Key::BoostFraction);
        let mut set = Settings::default();
        set.set(s[6].key, s[6].value);
        assert_eq!(set.effective().tau, [10.0 / 3.0, 10.0]);
    }

    #[test]
    fn bad_schedules_name_the_line_and_the_problem() {
        let err = |text: &str| from_file_text(text, 1000).unwrap_err();
        let (at, msg) = err("0 SET_E.NOISE 1\n5 SET_E.LAMDA_TAU 2\n");
        assert!(
            at.starts_with("line 2") && msg.contains("unknown setting"),
            "{at}: {msg}"
        );
        let (at, msg) = err("9 SET_E.NOISE 1\n5 SET_I.NOISE 2\n");
        assert!(
            at.starts_with("line 2") && msg.contains("in order"),
            "{at}: {msg}"
        );
        let (at, msg) = err("# drug\n1000 SET_E.NOISE 1\n");
        assert!(
            at.starts_with("line 2") && msg.contains("past the run"),
            "{at}: {msg}"
        );
        let (_, msg) = err("3 SET_E.TAU 0\n");
        assert!(msg.contains("e.tau = 0 is out of range"), "{msg}");
        let (_, msg) = err("3 SET_E.TAU\n");
        assert!(msg.contains("STEP KEY VALUE"), "{msg}");
        let entries = [Entry {
            step: 4,
            set: "x.noise".into(),
            value: 1.0,
        }];
        let (at, _) = from_entries(&entries, 10).unwrap_err();
        assert_eq!(at, "entry 1");
    }
}
