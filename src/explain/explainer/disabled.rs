//! The flight recorder of a build without the `explain` feature (Cargo.toml): the
//! same surface as the recorder of [`super`], which never starts. Runs, the
//! self-test and the monitor then measure unexplained (`# cannot explain: …`), as on a
//! kernel without tracefs; the trace parser and the analysis are not in the binary.

use super::{ExplainSpec, ExplainSummary, ThreadInfo};
use crate::cpuset::CpuSet;
use crate::explain::recorder::Trap;
use crate::explain::Explanation;
use crate::sys::SysRoot;
use std::convert::Infallible;
use std::sync::Arc;

/// What [`Explainer::start`] answers in this build.
const NOT_BUILT: &str = "this rtbench was built without the explain feature (Cargo.toml)";

/// A recorder that cannot exist: [`Explainer::start`] always fails, so none of the
/// other methods can be called.
pub struct Explainer {
    never: Infallible,
}

impl Explainer {
    /// Always `Err`: the recorder is not built in. The arguments are those of the
    /// recorder of builds with the feature.
    pub fn start(
        _root: &SysRoot,
        _spec: &ExplainSpec,
        _threads: Vec<ThreadInfo>,
        _all_cpus: &CpuSet,
    ) -> Result<Explainer, String> {
        Err(NOT_BUILT.to_string())
    }

    /// Unreachable (no `Explainer` exists).
    pub fn trap(&self) -> Arc<Trap> {
        match self.never {}
    }

    /// Unreachable (no `Explainer` exists).
    pub fn reclaimed(&self) -> &crate::sys::tracefs::Reclaim {
        match self.never {}
    }

    /// Unreachable (no `Explainer` exists).
    pub fn sigcont(&mut self) {
        match self.never {}
    }

    /// Unreachable (no `Explainer` exists).
    pub fn reset_thresholds(&self) {
        match self.never {}
    }

    /// Unreachable (no `Explainer` exists).
    pub fn poll(&mut self, _tids: &[i32]) -> Vec<Explanation> {
        match self.never {}
    }

    /// Unreachable (no `Explainer` exists).
    pub fn finish(self) -> ExplainSummary {
        match self.never {}
    }
}
