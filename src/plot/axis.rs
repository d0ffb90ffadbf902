//! The latency axis: linear from 0 (OSADL's plot, cyclictest's `-h US` range) or
//! logarithmic (body and tail of a histogram without a chosen range on one axis).
//! Why each is the default where it is: docs/PLOT.md.

use super::labels::nice_step;
use crate::results::read::Curve;

/// How the latency axis maps **µs** to the plot's width.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scale {
    /// From 0 to `max` µs; ticks every `step` µs.
    Linear {
        /// End of the axis, µs.
        max: f64,
        /// Tick spacing, µs.
        step: f64,
    },
    /// log10 from `min` to `max` µs (both 1, 2 or 5 × 10^k); ticks at 1, 2 and 5 × 10^k.
    Log {
        /// Start of the axis, µs (> 0).
        min: f64,
        /// End of the axis, µs.
        max: f64,
    },
}

/// The latency axis placed on the page: `left` px and `width` px.
#[derive(Debug, Clone, Copy)]
pub struct XAxis {
    /// The scale.
    pub scale: Scale,
    /// Left edge of the plot area, px.
    pub left: f64,
    /// Width of the plot area, px.
    pub width: f64,
}

impl XAxis {
    /// The axis end in **µs**.
    pub fn max(&self) -> f64 {
        match self.scale {
            Scale::Linear { max, .. } | Scale::Log { max, .. } => max,
        }
    }

    /// Whether the scale is logarithmic.
    pub fn is_log(&self) -> bool {
        matches!(self.scale, Scale::Log { .. })
    }

    /// The x position (px) of `us` µs; on a log axis, values below its start are drawn
    /// at the start.
    pub fn px(&self, us: f64) -> f64 {
        let f = match self.scale {
            Scale::Linear { max, .. } => us / max,
            Scale::Log { min, max } => (us.max(min) / min).log10() / (max / min).log10(),
        };
        self.left + f * self.width
    }

    /// Where a bucket starting at `lo_ns` is drawn, **µs**: its lower bound on a linear
    /// axis (as cyclictest names it), its centre on a log axis (the 0-µs bucket has no
    /// place at its lower bound there).
    pub fn bucket_us(&self, lo_ns: u64, bucket_ns: u64) -> f64 {
        let lo = lo_ns as f64 / 1000.0;
        if self.is_log() {
            lo + bucket_ns as f64 / 2000.0
        } else {
            lo
        }
    }

    /// The ticks as `(value µs, label)`, left to right (at most about 100).
    pub fn ticks(&self) -> Vec<(f64, String)> {
        match self.scale {
            Scale::Linear { max, step } => {
                // step ≥ 1.25e-4 µs (max ≥ 1 ns): at most 4 decimals, about 8 ticks.
                let decimals = if step >= 1.0 {
                    0
                } else {
                    ((-step.log10().floor()) as usize).min(9)
                };
                let n = ((max / step + 1e-9).floor() as usize).min(100);
                (0..=n)
                    .map(|i| {
                        let v = i as f64 * step;
                        (v, format!("{v:.decimals$}"))
                    })
                    .collect()
            }
            Scale::Log { min, max } => {
                let mut v = Vec::new();
                let mut k = min.log10().floor() as i32;
                while v.len() < 100 {
                    let e = 10f64.powi(k);
                    for m in [1.0, 2.0, 5.0] {
                        let x = m * e;
                        if x >= min * (1.0 - 1e-9) && x <= max * (1.0 + 1e-9) {
                            let decimals = (-k).max(0) as usize;
                            v.push((x, format!("{x:.decimals$}")));
                        }
                    }
                    if e * 10.0 > max * (1.0 + 1e-9) {
                        break;
                    }
                    k += 1;
                }
                v
            }
        }
    }
}

/// Where the latency axis must reach for `c`, in ns: its last bucket, and its maximum
/// unless that lies among the overflows (then the histogram's range).
pub fn axis_end_ns(c: &Curve) -> u64 {
    let data_end = c.buckets.last().map_or(0, |b| c.bucket_end(b.0));
    if c.overflows > 0 && c.max_ns >= data_end {
        c.range_ns.unwrap_or(data_end).max(data_end)
    } else {
        c.max_ns.max(data_end)
    }
}

/// The largest of 1, 2 and 5 × 10^k not above `v` (> 0).
fn nice_floor(v: f64) -> f64 {
    let e = 10f64.powf(v.log10().floor());
    let f = v / e;
    let m = if f >= 5.0 {
        5.0
    } else if f >= 2.0 {
        2.0
    } else {
        1.0
    };
    m * e
}

/// Where the data ends, **µs**: every curve's [`axis_end_ns`].
fn data_end_us(curves: &[Curve]) -> f64 {
    curves.iter().map(axis_end_ns).max().unwrap_or(1000).max(1) as f64 / 1000.0
}

/// The default linear axis for `curves`: from 0 to their [`axis_end_ns`], or to `x_max`
/// µs when given.
pub fn linear(curves: &[Curve], x_max: Option<f64>) -> Scale {
    match x_max {
        Some(x) => Scale::Linear {
            max: x,
            step: nice_step(x / 8.0),
        },
        None => {
            let data = data_end_us(curves);
            let step = nice_step(data / 8.0);
            Scale::Linear {
                max: (data / step).ceil() * step,
                step,
            }
        }
    }
}

/// The default log axis for `curves`: from the first drawn point (half a bucket below
/// the first bucket's centre) down to a 1-2-5 value, to the largest maximum or bucket
/// end (or `x_max` µs) up to one. `limits_ns` within ten times the data's end extend
/// the axis (a decade at most): a limit just beyond the largest maximum belongs in the
/// picture, a loose one (10 s) would squeeze it.
pub fn log(curves: &[Curve], limits_ns: &[u64], x_max: Option<f64>) -> Scale {
    let first = curves
        .iter()
        .filter_map(|c| c.buckets.first().map(|b| (b.0, c.bucket_ns)))
        .map(|(lo, w)| (lo as f64 - w as f64 / 2.0).max(w as f64 / 2.0) / 1000.0)
        .fold(f64::INFINITY, f64::min);
    let data = data_end_us(curves);
    let end = limits_ns
        .iter()
        .map(|l| *l as f64 / 1000.0)
        .filter(|l| *l <= data * 10.0)
        .fold(data, f64::max);
    let max = x_max.unwrap_or_else(|| nice_step(end));
    let min = nice_floor(if first.is_finite() { first } else { 1.0 }).min(max / 10.0);
    Scale::Log { min, max }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_ticks_are_1_2_5_per_decade() {
        let a = XAxis {
            scale: Scale::Log {
                min: 0.5,
                max: 5000.0,
            },
            left: 0.0,
            width: 400.0,
        };
        let v: Vec<f64> = a.ticks().iter().map(|t| t.0).collect();
        assert_eq!(v.first(), Some(&0.5));
        assert_eq!(v.last(), Some(&5000.0));
        assert_eq!(v.len(), 13);
        assert!((a.px(50.0) - 200.0).abs() < 1e-9);
        assert_eq!(a.ticks()[0].1, "0.5");
        assert_eq!(nice_floor(0.7), 0.5);
        assert_eq!(nice_floor(30.0), 20.0);
    }
}
