//! The `/dev/cpu_dma_latency` holder (PM QoS CPU latency request).
//!
//! Source: Documentation/admin-guide/pm/cpuidle.rst ("Power Management Quality of
//! Service for CPUs"): a process writes a 32-bit latency limit in **µs** and the request
//! lasts as long as the file stays open. cyclictest `--latency=PM_QOS` does the same.

use super::SysRoot;
use std::fs::File;
use std::io::Write;

/// Device path of the PM QoS CPU latency interface.
pub const CPU_DMA_LATENCY: &str = "/dev/cpu_dma_latency";

/// An open `/dev/cpu_dma_latency` request; dropping it closes the file and so
/// withdraws the request.
#[derive(Debug)]
pub struct PmQosHolder {
    _file: File,
    /// The limit requested, in **µs**.
    pub latency_us: i32,
}

impl PmQosHolder {
    /// Opens the device below `root` and writes `latency_us` as a binary s32.
    /// Errors (missing device, EACCES) are returned for the caller to report.
    pub fn hold(root: &SysRoot, latency_us: i32) -> std::io::Result<PmQosHolder> {
        let mut f = root.open_rw(CPU_DMA_LATENCY)?;
        f.write_all(&latency_us.to_ne_bytes())?;
        Ok(PmQosHolder {
            _file: f,
            latency_us,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn holds_the_request_while_open() {
        let root = SysRoot::host();
        if !root.exists(CPU_DMA_LATENCY) || !nix::unistd::geteuid().is_root() {
            return; // the device is absent in some containers; nothing to test there
        }
        let h = PmQosHolder::hold(&root, 0).unwrap();
        let mut v = [0u8; 4];
        File::open(CPU_DMA_LATENCY)
            .unwrap()
            .read_exact(&mut v)
            .unwrap();
        assert_eq!(i32::from_ne_bytes(v), 0);
        drop(h);
    }
}
