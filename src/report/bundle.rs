//! The diagnostics bundle (`rtbench diagnose -o FILE.tar.gz`) as a gzip-compressed tar
//! archive: every file under one top directory, in the order given (the summary first,
//! so `tar -tzf` and `tar -xzOf … */SUMMARY.txt` show it at once), mode 0644, owned by
//! root, all with the collection time as mtime. Written through [`super::output`]:
//! atomically to a file, or to standard output with `-o -`.
//!
//! Source: the POSIX ustar/GNU tar header via the `tar` crate; gzip (RFC 1952) via
//! flate2.

use super::Sink;
use std::io::Write;

/// One file of the bundle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleFile {
    /// Path below the bundle's top directory, e.g. `system/interrupts.txt`.
    pub name: String,
    /// The content.
    pub bytes: Vec<u8>,
}

/// A diagnostics bundle.
#[derive(Debug, Clone, Default)]
pub struct Bundle {
    /// The top directory, e.g. `rtbench-diagnose-board7-20261130T101500Z`.
    pub top: String,
    /// Collection time, seconds since the epoch (every file's mtime).
    pub mtime: i64,
    /// The files, in archive order.
    pub files: Vec<BundleFile>,
}

impl Bundle {
    /// Adds a file.
    pub fn add(&mut self, name: impl Into<String>, bytes: impl Into<Vec<u8>>) {
        self.files.push(BundleFile {
            name: name.into(),
            bytes: bytes.into(),
        });
    }
}

/// The bundle as `.tar.gz`.
pub struct TarGz;

impl Sink<Bundle> for TarGz {
    fn write(&self, b: &Bundle, out: &mut dyn Write) -> std::io::Result<()> {
        let gz = flate2::write::GzEncoder::new(out, flate2::Compression::default());
        let mut tar = tar::Builder::new(gz);
        for f in &b.files {
            let mut h = tar::Header::new_gnu();
            h.set_size(f.bytes.len() as u64);
            h.set_mode(crate::sys::atomic::FILE_MODE);
            h.set_uid(0);
            h.set_gid(0);
            h.set_mtime(b.mtime.max(0) as u64);
            h.set_entry_type(tar::EntryType::Regular);
            tar.append_data(&mut h, format!("{}/{}", b.top, f.name), &f.bytes[..])?;
        }
        tar.into_inner()?.finish()?.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn files_come_back_in_order_with_their_content() {
        let mut b = Bundle {
            top: "rtbench-diagnose-x".into(),
            mtime: 1_800_000_000,
            files: vec![],
        };
        b.add("SUMMARY.txt", "all good\n");
        b.add("system/interrupts.txt", vec![b'x'; 100_000]);
        let mut bytes = Vec::new();
        TarGz.write(&b, &mut bytes).unwrap();
        assert!(bytes.len() < 2_000, "compressed: {}", bytes.len());
        let mut a = tar::Archive::new(flate2::read::GzDecoder::new(&bytes[..]));
        let mut names = vec![];
        for e in a.entries().unwrap() {
            let mut e = e.unwrap();
            let h = e.header().clone();
            assert_eq!(h.mode().unwrap(), 0o644);
            assert_eq!(h.mtime().unwrap(), 1_800_000_000);
            let mut content = Vec::new();
            e.read_to_end(&mut content).unwrap();
            names.push((e.path().unwrap().display().to_string(), content.len()));
        }
        assert_eq!(
            names,
            vec![
                ("rtbench-diagnose-x/SUMMARY.txt".to_string(), 9),
                (
                    "rtbench-diagnose-x/system/interrupts.txt".to_string(),
                    100_000
                )
            ]
        );
    }
}
