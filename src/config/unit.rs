//! `[unit]`: what the factory line calls the unit under test — its label, the station
//! testing it, the order it belongs to. Each key may instead come from the environment
//! the line gives the self-test (a systemd drop-in's `Environment=`, the station's
//! script): `RTBENCH_UNIT_LABEL`, `RTBENCH_STATION`, `RTBENCH_ORDER`, which win over
//! the file (one image, many units). With the hardware's serial number
//! (`crate::sys::serial`) they name the unit in every stored run.

use super::Source;
use crate::error::ConfigError;
use serde::Deserialize;
use toml::Spanned;

/// Longest value of a `[unit]` key, **characters**.
pub const MAX_VALUE_LEN: usize = 64;

/// The environment variable of each key, in the order `label`, `station`, `order`.
pub const ENV: [(&str, &str); 3] = [
    ("label", "RTBENCH_UNIT_LABEL"),
    ("station", "RTBENCH_STATION"),
    ("order", "RTBENCH_ORDER"),
];

/// `[unit]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnitToml {
    label: Option<Spanned<String>>,
    station: Option<Spanned<String>>,
    order: Option<Spanned<String>>,
}

/// `[unit]`, validated (each `None` when not written).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UnitSection {
    /// The unit's label on the line (e.g. its asset tag).
    pub label: Option<String>,
    /// The test station.
    pub station: Option<String>,
    /// The production order.
    pub order: Option<String>,
}

/// Whether `v` may name a unit: 1..=[`MAX_VALUE_LEN`] printable characters
/// ([`crate::error::printable`], the rule every printed string is escaped by; it goes
/// into journal fields, Prometheus labels and JUnit XML).
pub fn valid_value(v: &str) -> bool {
    !v.is_empty() && v.chars().count() <= MAX_VALUE_LEN && crate::error::printable(v)
}

impl UnitToml {
    /// Checks every key.
    pub fn resolve(&self, src: &Source<'_>) -> Result<UnitSection, ConfigError> {
        let key = |v: &Option<Spanned<String>>, name: &str| match v {
            Some(s) if !valid_value(s.get_ref()) => Err(src.value_error(
                s.span(),
                &format!("unit.{name}"),
                format!("expected 1..{MAX_VALUE_LEN} printable characters"),
            )),
            Some(s) => Ok(Some(s.get_ref().clone())),
            None => Ok(None),
        };
        Ok(UnitSection {
            label: key(&self.label, "label")?,
            station: key(&self.station, "station")?,
            order: key(&self.order, "order")?,
        })
    }
}

impl UnitSection {
    /// The section with each key the environment sets (see [`ENV`]) replaced by the
    /// environment's value. Errors: a value that is not [`valid_value`], as one line
    /// naming the variable — the run must not be stored under another unit's label.
    pub fn with_env(&self, env: impl Fn(&str) -> Option<String>) -> Result<UnitSection, String> {
        let mut out = self.clone();
        for (key, var) in ENV {
            let Some(v) = env(var) else { continue };
            if !valid_value(&v) {
                return Err(format!(
                    "{var} = \"{}\": expected 1..{MAX_VALUE_LEN} printable characters",
                    crate::error::echo(&v)
                ));
            }
            let slot = match key {
                "label" => &mut out.label,
                "station" => &mut out.station,
                _ => &mut out.order,
            };
            *slot = Some(v);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn keys_are_checked_and_the_environment_wins() {
        let root = crate::sys::SysRoot::host();
        let c =
            crate::config::parse("[unit]\nlabel = \"L1\"\nstation = \"S\"\n", "t", &root).unwrap();
        assert_eq!(c.unit.label.as_deref(), Some("L1"));
        let env = |k: &str| match k {
            "RTBENCH_UNIT_LABEL" => Some("L2".to_string()),
            "RTBENCH_ORDER" => Some("bad\u{1b}".to_string()),
            _ => None,
        };
        let e = c.unit.with_env(env).unwrap_err();
        assert!(e.starts_with("RTBENCH_ORDER = \"bad"), "{e}");
        let good = |k: &str| (k == "RTBENCH_UNIT_LABEL").then(|| "L2".to_string());
        let u = c.unit.with_env(good).unwrap();
        assert_eq!(u.label.as_deref(), Some("L2"));
        assert_eq!(u.station.as_deref(), Some("S"));
        assert_eq!(u.order, None);
        let e = crate::config::parse("[unit]\norder = \"\"\n", "t", &root).unwrap_err();
        assert_eq!((e.line(), e.key()), (Some(2), Some("unit.order")));
    }
}
