//! `rtbench compare` at scale: a generated stored result of 300 tests (2 CPUs each)
//! and one of 128 CPUs × 20 conditions, each compared with a copy shifted 1 ms up, by
//! the binary cargo built (`cargo bench --bench compare_scale`; `RTBENCH_COMPARE_THIS`
//! names another, e.g. target/release/rtbench under `cargo test --bench compare_scale`)
//! and, when `RTBENCH_COMPARE_WITH` names another rtbench binary, by that one too (an
//! older build, for before/after). Prints the median wall time of 3 runs of each; asserts
//! nothing about time (benches/README.md has the figures).

#[path = "../tests/common/generated.rs"]
mod generated;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn median_run(exe: &str, a: &Path, b: &Path) -> (Duration, Option<i32>) {
    let mut times = Vec::new();
    let mut code = None;
    for _ in 0..3 {
        let t = Instant::now();
        let o = Command::new(exe)
            .arg("compare")
            .args([a, b])
            .output()
            .expect("run rtbench");
        times.push(t.elapsed());
        code = o.status.code();
    }
    times.sort();
    (times[1], code)
}

fn main() {
    let dir = std::env::temp_dir().join(format!("rtbench-compare-scale-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temporary directory");
    let this = std::env::var("RTBENCH_COMPARE_THIS")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_rtbench").to_string());
    let mut exes = vec![("this build", this)];
    if let Ok(other) = std::env::var("RTBENCH_COMPARE_WITH") {
        exes.push(("RTBENCH_COMPARE_WITH", other));
    }
    for (what, tests, conditions, cpus) in [
        ("300 tests x 2 CPUs", 300, 0, 2),
        ("128 CPUs x 20 conditions", 1, 20, 128),
    ] {
        let a = dir.join("a.json");
        let b = dir.join("b.json");
        std::fs::write(&a, generated::stored_result(tests, conditions, cpus, 30, 0)).unwrap();
        std::fs::write(
            &b,
            generated::stored_result(tests, conditions, cpus, 30, 1_000_000),
        )
        .unwrap();
        let size = std::fs::metadata(&a).map_or(0, |m| m.len());
        for (who, exe) in &exes {
            let (t, code) = median_run(exe, &a, &b);
            println!(
                "{what} ({size} B each): {who}: {:.3} s (exit {code:?})",
                t.as_secs_f64()
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
