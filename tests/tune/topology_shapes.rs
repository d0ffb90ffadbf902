//! Generated machine shapes (fake /proc + /sys trees: 1, 2, 8 with `nosmt`, 112 with
//! SMT, 256 and 1024 possible CPUs, offline holes, cgroup v1 and v2 cpusets, taskset
//! affinities) run through every command's planning — `cyclic`, `pmq`, `pipe`, `load`,
//! `selftest`, `tune` (check and bootargs) and the `sysinfo` snapshot — by name and
//! as property tests over random shapes. The real cpuset runs are in
//! tests/cli/cpuset_cgroup.rs.

use crate::common::{tune_tree, TempDir};

use clap::Parser;
use proptest::prelude::*;
use rtbench::cli::{Cli, Command};
use rtbench::cpuset::CpuSet;
use rtbench::sys::cpus::CpuTopology;
use rtbench::sys::info::SysInfo;
use rtbench::sys::SysRoot;
use std::path::PathBuf;
use tune_tree::shape::{CpusetAt, Numbering, Shape};

/// A shape written to a temporary tree, removed on drop.
struct Tree {
    dir: TempDir,
}

impl Tree {
    fn new(shape: &Shape) -> Tree {
        // Thousands of small files per shape: in memory where there is a tmpfs.
        let base = Some(PathBuf::from("/dev/shm"))
            .filter(|p| p.is_dir())
            .unwrap_or_else(std::env::temp_dir);
        let dir = TempDir::new_in(&base, "shape");
        shape.write(&dir);
        Tree { dir }
    }
    fn root(&self) -> SysRoot {
        SysRoot::at(&self.dir)
    }
    fn topo(&self) -> CpuTopology {
        CpuTopology::read(&self.root())
    }
}

fn set(s: &str) -> CpuSet {
    CpuSet::parse_list(s, 1 << 12).unwrap()
}

/// What planning decided: the measured CPUs (one per thread or pair, `None`
/// unpinned), the main thread's CPUs, the load's CPUs, the warnings.
#[derive(Debug)]
struct Planned {
    cpus: Vec<Option<usize>>,
    main: Option<CpuSet>,
    load: Option<CpuSet>,
    warnings: Vec<String>,
}

fn plan(argv: &str, topo: &CpuTopology) -> Result<Planned, String> {
    let mut v = vec!["rtbench"];
    v.extend(argv.split_whitespace());
    let cli = Cli::try_parse_from(v).map_err(|e| e.to_string())?;
    let e = |e: rtbench::error::Error| e.to_string();
    Ok(match cli.command {
        Command::Cyclic(a) => {
            let p = rtbench::plan::cyclic::cyclic(&a, topo).map_err(e)?;
            Planned {
                cpus: p.spec.threads.iter().map(|t| t.cpu).collect(),
                main: p.spec.control.main_cpus.clone(),
                load: p.load.map(|l| l.cpus),
                warnings: p.warnings,
            }
        }
        Command::Pmq(a) => pair(rtbench::plan::pair::pmq(&a, topo).map_err(e)?),
        Command::Pipe(a) => pair(rtbench::plan::pair::pipe(&a, topo).map_err(e)?),
        Command::Load(a) => {
            let p = rtbench::plan::load::load_only(&a, topo).map_err(e)?;
            Planned {
                cpus: Vec::new(),
                main: None,
                load: Some(p.spec.cpus),
                warnings: Vec::new(),
            }
        }
        _ => unreachable!("{argv}"),
    })
}

fn pair(p: rtbench::plan::pair::PairPlan) -> Planned {
    Planned {
        cpus: p.spec.pairs.iter().map(|t| t.cpu).collect(),
        main: p.spec.control.main_cpus.clone(),
        load: p.load.map(|l| l.cpus),
        warnings: p.warnings,
    }
}

/// The rules every plan must keep on every shape: measured, main and load CPUs are
/// online and allowed (or followed from the affinity); with a free core the main thread
/// and the load stay off the measured cores, else a warning says which CPUs share.
fn check_rules(what: &str, topo: &CpuTopology, p: &Planned) {
    let allowed = &topo.allowed;
    let pinned: Option<CpuSet> = p.cpus.iter().copied().collect();
    for c in p.cpus.iter().flatten() {
        assert!(
            allowed.contains(*c),
            "{what}: CPU {c} not allowed ({allowed})"
        );
    }
    let base = topo.run_default();
    let Some(measured) = pinned else {
        assert_eq!(p.main, None, "{what}: main pinned beside unpinned threads");
        return;
    };
    let busy = topo.cores_of(&measured);
    let free_core = !base.difference(&busy).is_empty();
    // Explicit places (--mainaffinity, --load-cpus) are the user's choice.
    let main = p.main.as_ref().filter(|_| !what.contains("--mainaffinity"));
    if let Some(main) = main {
        assert_eq!(main.len(), 1, "{what}");
        assert!(main.is_subset(&base), "{what}: main {main} outside {base}");
        if free_core {
            assert!(
                main.intersection(&busy).is_empty(),
                "{what}: main {main} on a measured core ({busy})"
            );
            assert!(
                !p.warnings.iter().any(|w| w.starts_with("# main thread")),
                "{what}: {:?}",
                p.warnings
            );
        } else {
            let w = p
                .warnings
                .iter()
                .find(|w| w.starts_with("# main thread"))
                .unwrap_or_else(|| panic!("{what}: no warning for main {main} ({:?})", p.warnings));
            assert!(w.contains(&format!("CPU {main}")), "{what}: {w}");
        }
    }
    let load = p.load.as_ref().filter(|_| !what.contains("--load-cpus"));
    if let Some(load) = load {
        assert!(load.is_subset(&base), "{what}: load {load} outside {base}");
        if free_core {
            assert_eq!(load, &base.difference(&busy), "{what}");
        } else {
            assert!(
                p.warnings.iter().any(|w| w.starts_with("# load")),
                "{what}: {:?}",
                p.warnings
            );
        }
    }
}

/// Runs every command's planning on `topo` and checks the rules; returns the `-S` plan.
fn every_command(name: &str, t: &Tree) -> Planned {
    let topo = t.topo();
    let base = topo.run_default();
    let first = base.first().unwrap();
    let last = base.last().unwrap();
    let mut smp = None;
    for argv in [
        "cyclic -S".to_string(),
        "cyclic -t".into(),
        "cyclic -a".into(),
        "cyclic -a all -t 2".into(),
        format!("cyclic -a {last} --load cpu:1"),
        format!("cyclic -a {first} --load cpu:1"),
        "cyclic -S --load cpu:1".into(),
        "cyclic -t 3 --load cpu:1".into(),
        "cyclic -a N".into(),
        format!(
            "cyclic -a {} --mainaffinity {first}",
            base.to_compact_list()
        ),
        "pmq -S --load cpu:1".into(),
        "pmq -t -a".into(),
        format!("pipe -a {last} --load cpu:1"),
        "pipe -t 2".into(),
        "load --load cpu:1".into(),
        "load --load cpu:1 --load-cpus all".into(),
    ] {
        let p = plan(&argv, &topo).unwrap_or_else(|e| panic!("{name}: {argv}: {e}"));
        check_rules(&format!("{name}: {argv}"), &topo, &p);
        if argv == "cyclic -S" {
            let cpus: CpuSet = p.cpus.iter().flatten().copied().collect();
            assert_eq!(cpus, base, "{name}: -S measures every default CPU");
            smp = Some(p);
        } else if argv == "load --load cpu:1" {
            assert_eq!(p.load.as_ref(), Some(&base), "{name}: {argv}");
        } else if argv.ends_with("--load-cpus all") {
            assert_eq!(p.load.as_ref(), Some(&topo.allowed), "{name}: {argv}");
        }
    }
    // `all` and `N` mean the allowed CPUs everywhere a command says where to run.
    let a_all = plan("cyclic -a all -t", &topo).unwrap();
    let cpus: CpuSet = a_all.cpus.iter().flatten().copied().collect();
    assert_eq!(cpus, topo.allowed, "{name}");
    let n = plan("cyclic -a N", &topo).unwrap();
    assert_eq!(n.cpus, vec![topo.allowed.last()], "{name}");
    // A CPU that is not online, or not in the cpuset: one line naming why.
    let not_online = CpuSet::first_n(topo.nr_cpu_ids).difference(&topo.online);
    if let Some(c) = not_online.first() {
        let e = plan(&format!("cyclic -a {c}"), &topo).unwrap_err();
        assert!(e.contains(&format!("CPU {c} is not online")), "{name}: {e}");
    }
    let outside = topo.online.difference(&topo.allowed);
    if let Some(c) = outside.first() {
        for argv in [
            format!("cyclic -a {c}"),
            format!("pmq -a {c}"),
            format!("cyclic -S --mainaffinity {c}"),
            format!("pipe --load cpu:1 --load-cpus {c}"),
        ] {
            let e = plan(&argv, &topo).unwrap_err();
            let file = &topo.cpuset.as_ref().unwrap().file;
            assert!(
                e.contains(&format!("CPU {c} is not allowed by this process's cgroup"))
                    && e.contains(file.as_str())
                    && !e.contains('\n'),
                "{name}: {argv}: {e}"
            );
        }
    }
    // The self-test: configuration against the tree, default CPUs, placement.
    let root = t.root();
    let cfg = rtbench::config::parse("[load]\nspec = \"cpu:1\"\n", "t.toml", &root)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(cfg.cyclic_cpus, base, "{name}");
    let located = rtbench::config::Located {
        path: "t.toml".into(),
        text: Some(String::new()),
        config: cfg,
    };
    let st = rtbench::selftest::plan(&located, &topo);
    let st_planned = Planned {
        cpus: st.conditions[0].tests[0]
            .threads()
            .iter()
            .map(|t| t.cpu)
            .collect(),
        main: st.conditions[0].tests[0].control().main_cpus.clone(),
        load: st.conditions[0].load.as_ref().map(|l| l.cpus.clone()),
        warnings: st.conditions[0].sharing.iter().map(|s| s.line()).collect(),
    };
    check_rules(&format!("{name}: selftest"), &topo, &st_planned);
    if let Some(c) = outside.first() {
        let e = rtbench::config::parse(&format!("[cyclic]\ncpus = \"{c}\"\n"), "t.toml", &root)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("t.toml:2: cyclic.cpus") && e.contains("is not allowed"),
            "{name}: {e}"
        );
    }
    // The snapshot records the sets.
    let info = SysInfo::read(&root);
    assert_eq!(info.cpus_online, topo.online.to_list(), "{name}");
    assert_eq!(info.cpus_allowed, topo.allowed.to_list(), "{name}");
    assert_eq!(
        info.cpus_possible,
        CpuSet::first_n(topo.nr_cpu_ids).to_list(),
        "{name}"
    );
    assert_eq!(
        info.cpuset.as_ref().map(|c| c.file.clone()),
        topo.cpuset.as_ref().map(|c| c.file.clone())
    );
    smp.unwrap()
}

#[test]
fn one_cpu() {
    let t = Tree::new(&Shape::plain(1));
    let p = every_command("1 CPU", &t);
    assert_eq!(p.cpus, vec![Some(0)]);
    assert_eq!(
        p.warnings,
        ["# main thread runs on measured CPU 0 (every allowed CPU, 0, is measured)"]
    );
}

#[test]
fn two_cpus_with_isolation_and_taskset() {
    let mut s = Shape::plain(2);
    s.isolated = set("1");
    // The affinity init hands down under isolcpus=1: not followed.
    s.affinity = Some(set("0"));
    let t = Tree::new(&s);
    let p = every_command("2 CPUs, isolcpus=1", &t);
    assert_eq!(p.cpus, vec![Some(0), Some(1)]);
    let a1 = plan("cyclic -a 1 --load cpu:1", &t.topo()).unwrap();
    assert_eq!(a1.main, Some(set("0")));
    assert_eq!(a1.load, Some(set("0")));
    assert!(a1.warnings.is_empty(), "{:?}", a1.warnings);
    // taskset -c 1: followed, as cyclictest follows it.
    s.affinity = Some(set("1"));
    let t = Tree::new(&s);
    let p = every_command("2 CPUs, taskset -c 1", &t);
    assert_eq!(p.cpus, vec![Some(1)]);
}

#[test]
fn eight_possible_with_nosmt() {
    // 4 cores × 2 threads, siblings n and n+4; nosmt took 4-7 offline.
    let s = Shape {
        online: set("0-3"),
        threads: 2,
        smt_control: "off",
        ..Shape::plain(8)
    };
    let t = Tree::new(&s);
    let topo = t.topo();
    assert!(!topo.smt_active());
    assert_eq!(topo.smt_control.as_deref(), Some("off"));
    every_command("8 possible, nosmt", &t);
    // Boot parameters name possible CPUs: an offline sibling can be isolated.
    let cfg = "[tuning]\nisolated = \"2-3,6-N\"\n[tuning.boot]\nisolcpus = [\"domain\"]\nirqaffinity = true\n";
    let spec = rtbench::config::parse(cfg, "t.toml", &t.root())
        .unwrap()
        .tuning;
    assert_eq!(spec.isolated.to_list(), "2-3,6-7");
    let r = rtbench::tune::check(&t.root(), &spec);
    assert_eq!(
        r.bootargs.as_deref(),
        Some("isolcpus=domain,2-3,6-7 irqaffinity=0-1")
    );
}

#[test]
fn one_hundred_twelve_with_smt() {
    // 56 cores × 2 (x86 numbering: siblings n and n+56), CPUs 1-55 and their
    // siblings isolated.
    let s = Shape {
        threads: 2,
        smt_control: "on",
        isolated: set("1-55,57-111"),
        ..Shape::plain(112)
    };
    let t = Tree::new(&s);
    let topo = t.topo();
    assert_eq!(topo.cores.len(), 56);
    assert_eq!(topo.siblings(57).to_list(), "1,57");
    let p = every_command("112 SMT", &t);
    assert_eq!(p.cpus.len(), 112);
    // Measuring one thread of each isolated core: main and load on core 0.
    let m = plan("cyclic -t -a 1-55 --load cpu:1", &topo).unwrap();
    assert_eq!((m.main, m.load), (Some(set("0")), Some(set("0,56"))));
    assert!(m.warnings.is_empty());
    // Measuring CPU 0 too: every core busy; the siblings remain, said with both CPUs.
    let m = plan("cyclic -t -a 0-55 --load cpu:1", &topo).unwrap();
    assert_eq!(m.main, Some(set("56")));
    assert_eq!(
        m.warnings[0],
        "# main thread on CPU 56 shares a core with measured CPU 0 (SMT siblings; no core without a measured CPU is allowed)"
    );
    assert_eq!(m.load, Some(set("56-111")));
    // The bootargs are the kernel's short form, not 110 numbers.
    let cfg = "[tuning]\nisolated = \"1-55,57-111\"\n[tuning.boot]\nisolcpus = [\"domain\", \"managed_irq\"]\nirqaffinity = true\n";
    let spec = rtbench::config::parse(cfg, "t.toml", &t.root())
        .unwrap()
        .tuning;
    let r = rtbench::tune::check(&t.root(), &spec);
    assert_eq!(
        r.bootargs.as_deref(),
        Some("isolcpus=domain,managed_irq,1-55,57-111 irqaffinity=0,56")
    );
}

#[test]
fn two_fifty_six_in_a_v1_cpuset() {
    let s = Shape {
        threads: 2,
        numbering: Numbering::Adjacent,
        smt_control: "on",
        cpuset: CpusetAt::V1(set("128-255")),
        // The kernel resets the affinity to the cpuset's CPUs when the task joins.
        affinity: Some(set("128-255")),
        ..Shape::plain(256)
    };
    let t = Tree::new(&s);
    let topo = t.topo();
    assert_eq!(topo.allowed.to_list(), "128-255");
    assert_eq!(topo.siblings(129).to_list(), "128-129");
    let p = every_command("256 v1 cpuset", &t);
    assert_eq!(p.cpus.len(), 128);
    let e = plan("cyclic -a 0", &topo).unwrap_err();
    assert_eq!(
        e,
        "-a 0: CPU 0 is not allowed by this process's cgroup v1 cpuset /sys/fs/cgroup/cpuset/rt/cpuset.effective_cpus = 128-255; expected CPUs within 128-255"
    );
}

#[test]
fn one_thousand_twenty_four_with_holes_in_a_nested_v2_cpuset() {
    // 1024 possible, only 0-511 and 1000 online; the service's parent slice has the
    // cpuset 256-767,1000.
    let s = Shape {
        online: set("0-511,1000"),
        cpuset: CpusetAt::V2 {
            cpus: set("256-767,1000"),
            nested: true,
        },
        ..Shape::plain(1024)
    };
    let t = Tree::new(&s);
    let topo = t.topo();
    assert_eq!(topo.allowed.to_list(), "256-511,1000");
    assert_eq!(
        topo.cpuset.as_ref().unwrap().file,
        "/sys/fs/cgroup/rt.slice/cpuset.cpus.effective"
    );
    let p = every_command("1024 holes v2", &t);
    assert_eq!(p.cpus.len(), 257);
    assert!(plan("cyclic -a 600", &topo)
        .unwrap_err()
        .contains("not online"));
    // isolcpus= may name offline CPUs; N is the last possible CPU.
    let cfg = "[tuning]\nisolated = \"256-N\"\n[tuning.boot]\nisolcpus = [\"domain\"]\nnohz_full = true\n";
    let spec = rtbench::config::parse(cfg, "t.toml", &t.root())
        .unwrap()
        .tuning;
    assert_eq!(spec.isolated.to_list(), "256-1023");
    let r = rtbench::tune::check(&t.root(), &spec);
    // No nohz_full file in this tree: the kernel lacks CONFIG_NO_HZ_FULL.
    assert_eq!(r.bootargs.as_deref(), Some("isolcpus=domain,256-1023"));
    assert!(
        r.bootargs_notes
            .iter()
            .any(|n| n.starts_with("nohz_full= left out")),
        "{:?}",
        r.bootargs_notes
    );
}

/// A random shape: possible from the sizes of the named shapes above (1 to 1024), offline holes (CPU 0 stays
/// online), SMT on or off in either numbering, isolation, a cpuset (top, v1, v2,
/// nested v2) and an affinity (none, inherited, or narrowed).
fn shapes() -> impl Strategy<Value = Shape> {
    (
        prop::sample::select(vec![1usize, 2, 8, 112, 256, 1024]),
        prop::sample::select(vec![1usize, 2, 4]),
        any::<bool>(),
        any::<u64>(),
        0usize..4,
        0usize..3,
    )
        .prop_map(|(possible, threads, adjacent, seed, cpuset, affinity)| {
            // A small deterministic generator, so proptest shrinks on the knobs above.
            let mut x = seed | 1;
            let mut rnd = move |n: usize| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x % n.max(1) as u64) as usize
            };
            let threads = if possible % threads == 0 { threads } else { 1 };
            let mut online = CpuSet::first_n(possible);
            for _ in 0..rnd(possible / 4 + 1) {
                let c = rnd(possible);
                if c != 0 {
                    online.remove(c);
                }
            }
            let isolated: CpuSet = online.iter().filter(|&c| c != 0 && rnd(3) == 0).collect();
            let pick = |rnd: &mut dyn FnMut(usize) -> usize| -> CpuSet {
                let mut s: CpuSet = online.iter().filter(|_| rnd(2) == 0).collect();
                if s.is_empty() {
                    s.insert(online.last().unwrap());
                }
                s
            };
            let cpuset = match cpuset {
                0 => CpusetAt::Top,
                1 => CpusetAt::V1(pick(&mut rnd)),
                n => CpusetAt::V2 {
                    cpus: pick(&mut rnd),
                    nested: n == 3,
                },
            };
            let allowed = match &cpuset {
                CpusetAt::Top => online.clone(),
                CpusetAt::V1(c) | CpusetAt::V2 { cpus: c, .. } => c.clone(),
            };
            let affinity = match affinity {
                0 => None,
                1 => Some(allowed.difference(&isolated)).filter(|s| !s.is_empty()),
                _ => Some(pick(&mut rnd).intersection(&allowed)).filter(|s| !s.is_empty()),
            };
            Shape {
                possible,
                online,
                threads,
                numbering: if adjacent {
                    Numbering::Adjacent
                } else {
                    Numbering::Split
                },
                smt_control: if threads > 1 { "on" } else { "notsupported" },
                isolated,
                cpuset,
                affinity,
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn every_command_keeps_the_rules_on_random_shapes(s in shapes()) {
        let t = Tree::new(&s);
        let topo = t.topo();
        // The model reads back what the tree says.
        prop_assert_eq!(&topo.online, &s.online);
        let want_allowed = match s.cpuset_cpus() {
            Some(c) => c.intersection(&s.online),
            None => s.online.clone(),
        };
        prop_assert_eq!(&topo.allowed, &want_allowed);
        for core in &topo.cores {
            let c = core.first().unwrap();
            prop_assert_eq!(core, &s.core(c).intersection(&s.online));
        }
        every_command(&format!("{s:?}"), &t);
    }
}

#[test]
fn conditions_plan_their_own_cpus_and_load_on_an_isolated_shape() {
    // 4 CPUs, 2-3 isolated: the vendors' third condition measures the isolated CPUs
    // while the load runs on the housekeeping ones.
    let mut s = Shape::plain(4);
    s.isolated = set("2-3");
    let t = Tree::new(&s);
    let topo = t.topo();
    let text = "[limits]\nmax_us = 100\n\
                [[condition]]\nname = \"idle\"\n\
                [[condition]]\nname = \"stress\"\n[condition.load]\nspec = \"cpu:2\"\n\
                [[condition]]\nname = \"isolated\"\n[condition.cyclic]\ncpus = \"2-3\"\n\
                [condition.load]\nspec = \"cpu:2\"\n[condition.limits]\nmax_us = 50\n";
    let cfg = rtbench::config::parse(text, "t.toml", &t.root()).unwrap();
    let located = rtbench::config::Located {
        path: "t.toml".into(),
        text: Some(text.into()),
        config: cfg,
    };
    let st = rtbench::selftest::plan(&located, &topo);
    let names: Vec<_> = st.conditions.iter().map(|c| c.name.as_deref()).collect();
    assert_eq!(names, [Some("idle"), Some("stress"), Some("isolated")]);
    let cpus = |i: usize| -> Vec<Option<usize>> {
        st.conditions[i].tests[0]
            .threads()
            .iter()
            .map(|t| t.cpu)
            .collect()
    };
    // Every CPU, isolated ones included, idle and under load.
    assert_eq!(cpus(0), [Some(0), Some(1), Some(2), Some(3)]);
    assert!(st.conditions[0].load.is_none());
    assert_eq!(cpus(1), cpus(0));
    assert!(st.conditions[1].load.is_some());
    // The isolated CPUs alone, the load and the main thread on the housekeeping CPUs.
    let iso = &st.conditions[2];
    assert_eq!(cpus(2), [Some(2), Some(3)]);
    assert_eq!(iso.load.as_ref().map(|l| l.cpus.clone()), Some(set("0-1")));
    let main = iso.tests[0].control().main_cpus.clone().unwrap();
    assert!(main.intersection(&set("2-3")).is_empty(), "{main}");
    assert!(iso.sharing.is_empty(), "{:?}", iso.sharing);
    // Each judged against its own limits; the hwlat gate covers them all.
    assert_eq!(st.conditions[0].limits.default.max_us, Some(100));
    assert_eq!(iso.limits.default.max_us, Some(50));
    assert_eq!(st.measured_cpus, set("0-3"));
}
