//! The results model every persistent output shares: what a self-test run measured and
//! how it was judged ([`summary`], [`verdict`]), where runs are kept ([`store`]: the
//! results store and this boot's fallback copy), which kept run `rtbench report` shows
//! as this boot's and why ([`select`]), the monitor's windows ([`window`]), and the
//! readers of stored and foreign results — stored runs, rt-tests JSON, cyclictest `-h`
//! dumps — into histograms per thread ([`read`], for `rtbench plot` and `rtbench compare`).
//!
//! Everything here is data and the rules over it; nothing prints. The formats that
//! show it (the journal entries, the results file's JSON, the Prometheus textfile, the
//! report table, the plot) are in `report/` and `plot/`.

pub mod attempt;
pub mod outcome;
pub mod read;
pub mod select;
pub mod store;
pub mod summary;
pub mod unit;
pub mod verdict;
#[cfg(feature = "monitor")]
pub mod window;
