//! The unit's serial number where the hardware has one, read through [`SysRoot`] in
//! this order: DMI (`/sys/class/dmi/id/product_serial`, then `board_serial`: the
//! SMBIOS system and baseboard serial numbers, readable by root only — the kernel's
//! drivers/firmware/dmi-id.c), the device tree's `serial-number` property
//! (`/proc/device-tree/serial-number`, a NUL-terminated string the bootloader or the
//! board's .dts sets — devicetree specification §3.2, root node), and the `Serial` line
//! of `/proc/cpuinfo` (arm and arm64 kernels print it from the device tree or ATAGs,
//! e.g. a Raspberry Pi's SoC serial). Placeholders firmware leaves in unset DMI fields
//! ("To Be Filled By O.E.M.", "Default string", all zeros …) are not a serial.

use super::SysRoot;

/// A serial number and where it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Serial {
    /// The serial number as the hardware gives it (trimmed).
    pub value: String,
    /// Where it came from: `dmi product_serial`, `dmi board_serial`, `device-tree
    /// serial-number` or `cpuinfo Serial`.
    pub source: &'static str,
}

/// Longest serial number kept, **bytes** (SMBIOS strings are at most 64 in practice;
/// longer is not a serial number).
pub const MAX_SERIAL_LEN: usize = 64;

/// The first serial number the hardware below `root` has (see the module
/// documentation), `None` when none of the sources has one.
pub fn read(root: &SysRoot) -> Option<Serial> {
    let file = |p: &str| root.read(p).ok();
    let sources: [(&'static str, Option<String>); 4] = [
        (
            "dmi product_serial",
            file("/sys/class/dmi/id/product_serial"),
        ),
        ("dmi board_serial", file("/sys/class/dmi/id/board_serial")),
        (
            "device-tree serial-number",
            file("/proc/device-tree/serial-number"),
        ),
        (
            "cpuinfo Serial",
            file("/proc/cpuinfo").and_then(|t| super::info::cpuinfo_field(&t, "Serial")),
        ),
    ];
    sources.into_iter().find_map(|(source, v)| {
        let value = v?
            .trim_matches(|c: char| c == '\0' || c.is_whitespace())
            .to_string();
        real(&value).then_some(Serial { value, source })
    })
}

/// Whether `v` is a serial number rather than empty, too long, unprintable or a
/// placeholder of unset firmware fields.
fn real(v: &str) -> bool {
    const PLACEHOLDERS: [&str; 9] = [
        "to be filled by o.e.m.",
        "default string",
        "not specified",
        "not applicable",
        "none",
        "system serial number",
        "chassis serial number",
        "0123456789",
        "n/a",
    ];
    !v.is_empty()
        && v.len() <= MAX_SERIAL_LEN
        && v.chars().all(|c| c.is_ascii_graphic() || c == ' ')
        && !v.chars().all(|c| c == '0' || c == ' ')
        && !PLACEHOLDERS.contains(&v.to_ascii_lowercase().as_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    struct Tree(PathBuf);

    impl Tree {
        fn file(&self, rel: &str, content: &str) {
            let p = self.0.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, content).unwrap();
        }
    }

    impl Drop for Tree {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn each_source_in_order_placeholders_skipped() {
        let d = Tree(std::env::temp_dir().join(format!("rtbench-serial-{}", std::process::id())));
        std::fs::create_dir_all(&d.0).unwrap();
        let root = SysRoot::at(&d.0);
        assert_eq!(read(&root), None);
        d.file("proc/cpuinfo", "processor\t: 0\nHardware\t: BCM2835\nSerial\t\t: 10000000abcdef01\nModel\t: Raspberry Pi 4\n");
        assert_eq!(
            read(&root),
            Some(Serial {
                value: "10000000abcdef01".into(),
                source: "cpuinfo Serial"
            })
        );
        d.file("proc/device-tree/serial-number", "RK3588-00042\0");
        assert_eq!(read(&root).unwrap().value, "RK3588-00042");
        assert_eq!(read(&root).unwrap().source, "device-tree serial-number");
        d.file("sys/class/dmi/id/board_serial", "BRD-7\n");
        assert_eq!(read(&root).unwrap().source, "dmi board_serial");
        d.file(
            "sys/class/dmi/id/product_serial",
            "To Be Filled By O.E.M.\n",
        );
        assert_eq!(read(&root).unwrap().value, "BRD-7");
        d.file("sys/class/dmi/id/product_serial", "SN-123 A\n");
        assert_eq!(
            read(&root),
            Some(Serial {
                value: "SN-123 A".into(),
                source: "dmi product_serial"
            })
        );
        d.file("sys/class/dmi/id/product_serial", "0000000000\n");
        d.file("sys/class/dmi/id/board_serial", "\u{1b}[2J\n");
        assert_eq!(read(&root).unwrap().source, "device-tree serial-number");
    }
}
