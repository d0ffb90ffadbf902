//! Which unit a stored run measured, for factory records: the hardware's serial number
//! (`crate::sys::serial`) and the line's names for it (`[unit]` and the environment,
//! `crate::config::unit`). The results file, the journal summary, `rtbench report`,
//! the Prometheus textfile and the JUnit export carry it.

use crate::config::unit::UnitSection;
use crate::sys::SysRoot;
use serde::{Deserialize, Serialize};

/// The unit of a run; every field absent when not known.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnitRecord {
    /// The hardware's serial number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial: Option<String>,
    /// Where the serial number was read (`dmi product_serial`, `device-tree
    /// serial-number`, `cpuinfo Serial`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial_source: Option<String>,
    /// `[unit] label` or `RTBENCH_UNIT_LABEL`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// `[unit] station` or `RTBENCH_STATION`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub station: Option<String>,
    /// `[unit] order` or `RTBENCH_ORDER`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<String>,
}

impl UnitRecord {
    /// The unit below `root` as `section` (already with the environment's values)
    /// names it; `None` when neither the hardware nor the line names it (a run's
    /// record then has no `unit`, as before factory records existed).
    pub fn gather(root: &SysRoot, section: &UnitSection) -> Option<UnitRecord> {
        let serial = crate::sys::serial::read(root);
        let r = UnitRecord {
            serial: serial.as_ref().map(|s| s.value.clone()),
            serial_source: serial.map(|s| s.source.to_string()),
            label: section.label.clone(),
            station: section.station.clone(),
            order: section.order.clone(),
        };
        (r != UnitRecord::default()).then_some(r)
    }

    /// The named parts as `(name, value)`: `serial`, `label`, `station`, `order`, in
    /// that order, the absent ones left out.
    pub fn parts(&self) -> Vec<(&'static str, &str)> {
        [
            ("serial", &self.serial),
            ("label", &self.label),
            ("station", &self.station),
            ("order", &self.order),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.as_deref().map(|v| (k, v)))
        .collect()
    }

    /// For people: `serial SN-1 (dmi product_serial), label A7, station S3, order
    /// 4711`.
    pub fn text(&self) -> String {
        self.parts()
            .into_iter()
            .map(|(k, v)| match (k, &self.serial_source) {
                ("serial", Some(src)) => format!("serial {v} ({src})"),
                _ => format!("{k} {v}"),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}
