//! Every worked example of the Intel/LLVM OpenMP thread affinity document
//! (KMP_AFFINITY, GOMP_CPU_AFFINITY, KMP_TOPOLOGY_METHOD, KMP_CPUINFO_FILE)
//! run through `wloc place` on the machines it describes, plus the
//! environment handed to a launched command.
//!
//! The document's machines: two packages with socket ids 0 and 3, two
//! cores each, with or without two hardware threads per core, OS procs
//! numbered across the packages (socket 0 holds procs 0, 2 (, 4, 6)).
//!
//! Comparisons of verbose reports drop the `OMP: Info #N: ` prefix that
//! the document leaves out, the `pid P tid T ` of the binding lines (wloc
//! places threads without running them) and trailing spaces; binding lines
//! are compared by thread number (the runtime prints them as threads
//! start).  The document prints the initial mask `0-3` once as `0,1,2,3`
//! (an older runtime's format): that line is compared as a set.

use crate::common;

use std::process::{Command, Output};

use common::{TempDir, wloc};

/// 2 sockets (ids 0 and 3) x 2 cores x 1 thread; OS procs 0,2 on socket 0.
const NO_HT: &str = "pack:2(indexes=0,3) core:2 pu:1(indexes=0,2,1,3)";
/// 2 sockets (ids 0 and 3) x 2 cores x 2 threads; core 0 of socket 0 holds 0 and 4.
const HT: &str = "pack:2(indexes=0,3) core:2 pu:2(indexes=0,4,2,6,1,5,3,7)";

const OMP_VARS: [&str; 7] = [
    "KMP_AFFINITY",
    "GOMP_CPU_AFFINITY",
    "OMP_PLACES",
    "OMP_PROC_BIND",
    "OMP_NUM_THREADS",
    "KMP_TOPOLOGY_METHOD",
    "KMP_CPUINFO_FILE",
];

fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(wloc());
    c.arg("place").args(args).env("LC_ALL", "C");
    for v in OMP_VARS {
        c.env_remove(v);
    }
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("wloc runs")
}

fn ok(args: &[&str], env: &[(&str, &str)]) -> (String, String) {
    let o = run(args, env);
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    );
    assert!(o.status.success(), "wloc place {args:?} failed: {err}");
    (out, err)
}

/// The OS proc set of each thread, from the plain output.
fn bindings(args: &[&str]) -> Vec<String> {
    let (out, _) = ok(args, &[]);
    out.lines()
        .enumerate()
        .map(|(i, l)| {
            let (n, set) = l.split_once(' ').expect("thread and set");
            assert_eq!(n, i.to_string());
            set.to_string()
        })
        .collect()
}

fn parse_list(s: &str) -> Vec<u32> {
    let mut v = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => v.extend(a.parse::<u32>().unwrap()..=b.parse::<u32>().unwrap()),
            None => v.push(part.parse().unwrap()),
        }
    }
    v.sort_unstable();
    v
}

/// A report line in the document's form.
fn normalize(line: &str) -> String {
    let mut l = line.trim_end().to_string();
    if let Some(rest) = l.strip_prefix("OMP: Info #") {
        l = rest.split_once(": ").map(|x| x.1.to_string()).unwrap_or(l);
    }
    // "pid 41464 tid 41465 thread 1" -> "thread 1"
    if let Some(p) = l.find("pid ")
        && let Some(t) = l[p..].find(" thread ")
    {
        l = format!("{}{}", &l[..p], &l[p + t + 1..]);
    }
    // A typo of the document.
    l.replace("sockects", "sockets")
}

enum Line {
    Initial(Vec<u32>),
    Bound(u32, String),
    Text(String),
}

fn classify(line: &str) -> Line {
    let l = normalize(line);
    if let Some(set) = l.strip_prefix("KMP_AFFINITY: Initial OS proc set respected: ") {
        return Line::Initial(parse_list(set));
    }
    if let Some(rest) = l.strip_prefix("KMP_AFFINITY: thread ")
        && let Some((n, set)) = rest.split_once(" bound to OS proc set ")
    {
        return Line::Bound(n.parse().unwrap(), set.to_string());
    }
    Line::Text(l)
}

/// Compares a verbose report with the document's listing.
fn assert_report(report: &str, seed: &str) {
    let mine: Vec<Line> = report
        .lines()
        .filter(|l| l.starts_with("OMP: Info"))
        .map(classify)
        .collect();
    let theirs: Vec<Line> = seed
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(classify)
        .collect();
    let split = |v: Vec<Line>| {
        let (mut initial, mut bound, mut text) = (None, Vec::new(), Vec::new());
        for l in v {
            match l {
                Line::Initial(s) => initial = Some(s),
                Line::Bound(n, s) => bound.push((n, s)),
                Line::Text(t) => text.push(t),
            }
        }
        bound.sort();
        (initial, bound, text)
    };
    let (mi, mb, mt) = split(mine);
    let (ti, tb, tt) = split(theirs);
    assert_eq!(mi, ti, "initial mask\n{report}");
    assert_eq!(mt, tt, "report text\n{report}");
    assert_eq!(mb, tb, "bindings\n{report}");
}

#[test]
fn verbose_scatter_on_dual_core_dual_package_using_hwloc() {
    let seed = "\
KMP_AFFINITY: Initial OS proc set respected: 0,1,2,3
KMP_AFFINITY: affinity capable, using hwloc.
KMP_AFFINITY: 4 available OS procs
KMP_AFFINITY: Uniform topology
KMP_AFFINITY: 2 sockets x 2 cores/socket x 1 threads/core (4 total cores)
KMP_AFFINITY: OS proc to physical thread map:
KMP_AFFINITY: OS proc 0 maps to socket 0 core 0 thread 0
KMP_AFFINITY: OS proc 2 maps to socket 0 core 1 thread 0
KMP_AFFINITY: OS proc 1 maps to socket 3 core 0 thread 0
KMP_AFFINITY: OS proc 3 maps to socket 3 core 1 thread 0
KMP_AFFINITY: pid 79739 tid 79739 thread 0 bound to OS proc set 0
KMP_AFFINITY: pid 79739 tid 79740 thread 2 bound to OS proc set 2
KMP_AFFINITY: pid 79739 tid 79741 thread 3 bound to OS proc set 3
KMP_AFFINITY: pid 79739 tid 79742 thread 1 bound to OS proc set 1";
    let (out, err) = ok(&["-i", NO_HT, "--kmp-affinity", "verbose,scatter"], &[]);
    assert_report(&err, seed);
    assert_eq!(out, "0 0\n1 1\n2 2\n3 3\n");
    // The same from the environment, as a runtime reads it.
    let (out2, err2) = ok(&["-i", NO_HT], &[("KMP_AFFINITY", "verbose,scatter")]);
    assert_eq!((out2, err2), (out, err));
}

const HT_MAP: &str = "\
KMP_AFFINITY: Initial OS proc set respected: 0-7
KMP_AFFINITY: decoding x2APIC ids.
KMP_AFFINITY: 8 available OS procs
KMP_AFFINITY: Uniform topology
KMP_AFFINITY: 2 sockects x 2 cores/socket x 2 threads/core (4 total cores) 
KMP_AFFINITY: OS proc to physical thread map: 
KMP_AFFINITY: OS proc 0 maps to socket 0 core 0 thread 0 
KMP_AFFINITY: OS proc 4 maps to socket 0 core 0 thread 1 
KMP_AFFINITY: OS proc 2 maps to socket 0 core 1 thread 0 
KMP_AFFINITY: OS proc 6 maps to socket 0 core 1 thread 1 
KMP_AFFINITY: OS proc 1 maps to socket 3 core 0 thread 0 
KMP_AFFINITY: OS proc 5 maps to socket 3 core 0 thread 1 
KMP_AFFINITY: OS proc 3 maps to socket 3 core 1 thread 0 
KMP_AFFINITY: OS proc 7 maps to socket 3 core 1 thread 1 
";

#[test]
fn verbose_granularity_core_compact_with_hyper_threading() {
    let seed = format!(
        "{HT_MAP}\
KMP_AFFINITY: pid 40880 tid 40880 thread 0 bound to OS proc set 0,4 
KMP_AFFINITY: pid 40880 tid 40881 thread 1 bound to OS proc set 0,4 
KMP_AFFINITY: pid 40880 tid 40882 thread 2 bound to OS proc set 2,6 
KMP_AFFINITY: pid 40880 tid 40883 thread 3 bound to OS proc set 2,6 
KMP_AFFINITY: pid 40880 tid 40884 thread 4 bound to OS proc set 1,5 
KMP_AFFINITY: pid 40880 tid 40885 thread 5 bound to OS proc set 1,5 
KMP_AFFINITY: pid 40880 tid 40886 thread 6 bound to OS proc set 3,7 
KMP_AFFINITY: pid 40880 tid 40887 thread 7 bound to OS proc set 3,7"
    );
    let args = [
        "-i",
        HT,
        "--topology-method",
        "cpuid",
        "--kmp-affinity",
        "verbose,granularity=core,compact",
    ];
    let (_, err) = ok(&args, &[]);
    assert_report(&err, &seed);
}

#[test]
fn verbose_granularity_fine_or_thread_compact() {
    let seed = format!(
        "{HT_MAP}\
KMP_AFFINITY: pid 40895 tid 40895 thread 0 bound to OS proc set 0 
KMP_AFFINITY: pid 40895 tid 40896 thread 1 bound to OS proc set 4 
KMP_AFFINITY: pid 40895 tid 40897 thread 2 bound to OS proc set 2 
KMP_AFFINITY: pid 40895 tid 40898 thread 3 bound to OS proc set 6 
KMP_AFFINITY: pid 40895 tid 40899 thread 4 bound to OS proc set 1 
KMP_AFFINITY: pid 40895 tid 40900 thread 5 bound to OS proc set 5 
KMP_AFFINITY: pid 40895 tid 40901 thread 6 bound to OS proc set 3 
KMP_AFFINITY: pid 40895 tid 40902 thread 7 bound to OS proc set 7"
    );
    for s in [
        "verbose,granularity=fine,compact",
        "verbose,granularity=thread,compact",
    ] {
        let (_, err) = ok(
            &["-i", HT, "--topology-method", "cpuid", "--kmp-affinity", s],
            &[],
        );
        assert_report(&err, &seed);
    }
}

#[test]
fn respect_initial_mask_of_second_thread_contexts() {
    let seed = "\
KMP_AFFINITY: Initial OS proc set respected: 4-7
KMP_AFFINITY: decoding x2APIC ids.
KMP_AFFINITY: 4 available OS procs
KMP_AFFINITY: Uniform topology
KMP_AFFINITY: 2 sockets x 2 cores/socket x 1 threads/core (4 total cores) 
KMP_AFFINITY: OS proc to physical thread map: 
KMP_AFFINITY: OS proc 4 maps to socket 0 core 0 thread 1 
KMP_AFFINITY: OS proc 6 maps to socket 0 core 1 thread 1 
KMP_AFFINITY: OS proc 5 maps to socket 3 core 0 thread 1 
KMP_AFFINITY: OS proc 7 maps to socket 3 core 1 thread 1 
KMP_AFFINITY: pid 41032 tid 41032 thread 0 bound to OS proc set 4 
KMP_AFFINITY: pid 41032 tid 41033 thread 1 bound to OS proc set 6 
KMP_AFFINITY: pid 41032 tid 41034 thread 2 bound to OS proc set 5 
KMP_AFFINITY: pid 41032 tid 41035 thread 3 bound to OS proc set 7 ";
    let base = [
        "-i",
        HT,
        "--topology-method",
        "cpuid",
        "--initial-mask",
        "4-7",
    ];
    let (out, err) = ok(
        &[&base[..], &["--kmp-affinity", "verbose,compact"]].concat(),
        &[],
    );
    // Four thread contexts are available, so four threads by default.
    assert_eq!(out.lines().count(), 4);
    assert_report(&err, seed);
    // With OMP_NUM_THREADS=8 the machine is oversubscribed in the same order.
    let (out, _) = ok(
        &[&base[..], &["--kmp-affinity", "compact"]].concat(),
        &[("OMP_NUM_THREADS", "8")],
    );
    assert_eq!(out, "0 4\n1 6\n2 5\n3 7\n4 4\n5 6\n6 5\n7 7\n");
    // norespect binds to every proc of the machine.
    let (out, err) = ok(
        &[
            &base[..],
            &[
                "--kmp-affinity",
                "verbose,norespect,granularity=fine,compact",
            ],
        ]
        .concat(),
        &[],
    );
    assert_eq!(out.lines().count(), 8);
    assert!(
        err.contains("KMP_AFFINITY: Initial OS proc set not respected: 0-7"),
        "{err}"
    );
}

#[test]
fn explicit_proclist_with_float_sets() {
    let seed = "\
KMP_AFFINITY: Initial OS proc set respected: 0,1,2,3 
KMP_AFFINITY: decoding x2APIC ids.
KMP_AFFINITY: 4 available OS procs
KMP_AFFINITY: Uniform topology
KMP_AFFINITY: 2 sockets x 2 cores/socket x 1 threads/core (4 total cores) 
KMP_AFFINITY: OS proc to physical thread map: 
KMP_AFFINITY: OS proc 0 maps to socket 0 core 0 thread 0 
KMP_AFFINITY: OS proc 2 maps to socket 0 core 1 thread 0 
KMP_AFFINITY: OS proc 1 maps to socket 3 core 0 thread 0 
KMP_AFFINITY: OS proc 3 maps to socket 3 core 1 thread 0 
KMP_AFFINITY: pid 41464 tid 41464 thread 0 bound to OS proc set 3 
KMP_AFFINITY: pid 41464 tid 41465 thread 1 bound to OS proc set 0 
KMP_AFFINITY: pid 41464 tid 41466 thread 2 bound to OS proc set 1,2 
KMP_AFFINITY: pid 41464 tid 41467 thread 3 bound to OS proc set 1,2 
KMP_AFFINITY: pid 41464 tid 41468 thread 4 bound to OS proc set 3 
KMP_AFFINITY: pid 41464 tid 41469 thread 5 bound to OS proc set 0";
    let k = "verbose,granularity=fine,proclist=[3,0,{1,2},{1,2}],explicit";
    let (_, err) = ok(
        &[
            "-i",
            NO_HT,
            "--topology-method",
            "cpuid",
            "--threads",
            "6",
            "--kmp-affinity",
            k,
        ],
        &[],
    );
    assert_report(&err, seed);
}

#[test]
fn gomp_cpu_affinity_oversubscribed() {
    // GOMP_CPU_AFFINITY=3,0-2 with six threads: thread n takes entry n mod 4.
    let b = bindings(&[
        "-i",
        NO_HT,
        "--threads",
        "6",
        "--gomp-cpu-affinity",
        "3,0-2",
    ]);
    assert_eq!(b, ["3", "0", "1", "2", "3", "0"]);
    // It is an alias of granularity=fine,proclist=[...],explicit.
    let k = bindings(&[
        "-i",
        NO_HT,
        "--threads",
        "6",
        "--kmp-affinity",
        "granularity=fine,proclist=[3,0-2],explicit",
    ]);
    assert_eq!(b, k);
    // From the environment too.
    let (out, _) = ok(
        &["-i", NO_HT, "--threads", "6"],
        &[("GOMP_CPU_AFFINITY", "3 0-2")],
    );
    assert_eq!(out, "0 3\n1 0\n2 1\n3 2\n4 3\n5 0\n");
    // Without granularity=fine, a proclist entry floats over its core.
    let k = bindings(&[
        "-i",
        HT,
        "--threads",
        "2",
        "--kmp-affinity",
        "proclist=[3,0],explicit",
    ]);
    assert_eq!(k, ["3,7", "0,4"]);
}

#[test]
fn compact_and_scatter_figures() {
    let fine = |k: &str| bindings(&["-i", HT, "--kmp-affinity", k]);
    // granularity=fine,compact: thread n+1 next to thread n.
    assert_eq!(
        fine("granularity=fine,compact"),
        ["0", "4", "2", "6", "1", "5", "3", "7"]
    );
    // granularity=fine,scatter: leaves of the map most significant.
    assert_eq!(
        fine("granularity=fine,scatter"),
        ["0", "1", "2", "3", "4", "5", "6", "7"]
    );
    // compact,0,5: start at the sixth thread context.
    assert_eq!(
        fine("granularity=fine,compact,0,5"),
        ["5", "3", "7", "0", "4", "2", "6", "1"]
    );
    // compact,1,0: consecutive threads on different cores first.
    let b = fine("granularity=fine,compact,1,0");
    assert_eq!(b, ["0", "2", "1", "3", "4", "6", "5", "7"]);
    let core_of = |p: &str| p.parse::<u32>().unwrap() % 4;
    for w in b[..4].windows(2) {
        assert_ne!(core_of(&w[0]), core_of(&w[1]));
    }
    // A single integer is a permute value.
    assert_eq!(fine("granularity=fine,compact,1"), b);
}

#[test]
fn logical_and_physical_equivalences() {
    let fine = |i: &str, k: &str| bindings(&["-i", i, "--kmp-affinity", k]);
    for n in ["0", "1", "3"] {
        assert_eq!(
            fine(HT, &format!("logical,{n}")),
            fine(HT, &format!("compact,0,{n}"))
        );
        assert_eq!(
            fine(HT, &format!("granularity=fine,logical,{n}")),
            fine(HT, &format!("granularity=fine,compact,0,{n}"))
        );
        assert_eq!(
            fine(HT, &format!("granularity=fine,physical,{n}")),
            fine(HT, &format!("granularity=fine,compact,1,{n}"))
        );
        // Without hyper-threading, physical is logical.
        assert_eq!(
            fine(NO_HT, &format!("physical,{n}")),
            fine(NO_HT, &format!("logical,{n}"))
        );
    }
    // They take no permute value.
    let o = run(&["-i", HT, "--kmp-affinity", "physical,1,2"], &[]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("\"2\""));
}

#[test]
fn modifiers_defaults_and_conflicts() {
    // The defaults are noverbose, respect and granularity=core.
    assert_eq!(
        bindings(&["-i", HT, "--kmp-affinity", "compact"]),
        bindings(&[
            "-i",
            HT,
            "--kmp-affinity",
            "noverbose,respect,granularity=core,compact"
        ])
    );
    // verbose,noverbose,scatter is verbose,scatter: the later conflicting modifier is ignored.
    let (o1, e1) = ok(
        &["-i", HT, "--kmp-affinity", "verbose,noverbose,scatter"],
        &[],
    );
    let (o2, e2) = ok(&["-i", HT, "--kmp-affinity", "verbose,scatter"], &[]);
    assert_eq!(o1, o2);
    let info = |e: &str| {
        e.lines()
            .filter(|l| l.starts_with("OMP: Info"))
            .map(String::from)
            .collect::<Vec<_>>()
    };
    assert!(!info(&e1).is_empty());
    assert_eq!(info(&e1), info(&e2));
    // verbose,none lists the map without bindings; threads are not bound.
    let (out, err) = ok(&["-i", HT, "--kmp-affinity", "verbose,none"], &[]);
    assert!(err.contains("OS proc to physical thread map"));
    assert!(!err.contains("bound to OS proc set"));
    assert!(out.lines().all(|l| l.ends_with(" 0-7")));
    // disabled: no report, threads keep the initial mask.
    let (out, err) = ok(
        &[
            "-i",
            HT,
            "--initial-mask",
            "0-5",
            "--kmp-affinity",
            "verbose,disabled",
        ],
        &[],
    );
    assert!(!err.contains("OMP: Info"));
    assert!(out.lines().all(|l| l.ends_with(" 0-5")));
    // nowarnings silences warnings.
    let (_, err) = ok(
        &["-i", HT, "--kmp-affinity", "proclist=[0,99],explicit"],
        &[],
    );
    assert!(err.contains("Ignoring invalid OS proc ID 99"), "{err}");
    let (_, err) = ok(
        &[
            "-i",
            HT,
            "--kmp-affinity",
            "nowarnings,proclist=[0,99],explicit",
        ],
        &[],
    );
    assert!(err.is_empty(), "{err}");
}

#[test]
fn granularities_let_threads_float() {
    let b = |k: &str| bindings(&["-i", HT, "--threads", "4", "--kmp-affinity", k]);
    // granularity=socket: threads move between the thread contexts of their socket.
    assert_eq!(
        b("granularity=socket,scatter"),
        ["0,2,4,6", "1,3,5,7", "0,2,4,6", "1,3,5,7"]
    );
    assert_eq!(b("granularity=node,scatter"), ["0-7"; 4]);
    // Levels the machine does not have fall back to the next finer one.
    assert_eq!(b("granularity=tile,compact"), b("granularity=core,compact"));
    assert_eq!(
        b("granularity=l1_cache,compact"),
        b("granularity=core,compact")
    );
    // core_type needs a hybrid machine; elsewhere it is core, with a warning.
    let (out, err) = ok(
        &[
            "-i",
            HT,
            "--threads",
            "4",
            "--kmp-affinity",
            "granularity=core_type,compact",
        ],
        &[],
    );
    assert!(err.contains("hybrid"), "{err}");
    assert_eq!(out, "0 0,4\n1 0,4\n2 2,6\n3 2,6\n");
}

#[test]
fn balanced_on_a_single_socket() {
    let one = "pack:1 core:4 pu:2";
    let b = |n: &str, k: &str| bindings(&["-i", one, "--threads", n, "--kmp-affinity", k]);
    // Separate cores until every core has a thread...
    assert_eq!(b("4", "granularity=fine,balanced"), ["0", "2", "4", "6"]);
    // ...then neighbouring thread numbers share a core, unlike scatter.
    assert_eq!(
        b("6", "granularity=fine,balanced"),
        ["0", "1", "2", "3", "4", "6"]
    );
    assert_eq!(
        b("6", "granularity=fine,scatter"),
        ["0", "2", "4", "6", "1", "3"]
    );
}

#[test]
fn package_level_always_modelled_and_flat_method() {
    let (_, err) = ok(
        &["-i", "core:2 pu:2", "--kmp-affinity", "verbose,compact"],
        &[],
    );
    assert!(
        err.contains("KMP_AFFINITY: 1 sockets x 2 cores/socket x 2 threads/core (2 total cores)"),
        "{err}"
    );
    // Flat: OS proc N is package N.
    let (out, err) = ok(
        &[
            "-i",
            HT,
            "--topology-method",
            "flat",
            "--kmp-affinity",
            "verbose,scatter",
        ],
        &[],
    );
    assert!(err.contains("using default \"flat\" topology"), "{err}");
    assert!(
        err.contains("KMP_AFFINITY: 8 sockets x 1 cores/socket x 1 threads/core (8 total cores)"),
        "{err}"
    );
    assert!(
        err.contains("KMP_AFFINITY: OS proc 5 maps to socket 5 core 0 thread 0"),
        "{err}"
    );
    assert_eq!(out.lines().nth(5), Some("5 5"));
}

/// The hyper-threaded machine as a cpuinfo file, as the document's fields spell it.
fn seed_cpuinfo(with_thread_ids: bool) -> String {
    let mut s = String::new();
    for p in 0..8u32 {
        let (pkg, core, thread) = (if p % 2 == 0 { 0 } else { 3 }, (p / 2) % 2, p / 4);
        s.push_str(&format!("processor\t: {p}\nvendor_id\t: GenuineIntel\nphysical id\t: {pkg}\nsiblings\t: 4\ncore id\t\t: {core}\n"));
        if with_thread_ids {
            s.push_str(&format!("thread id\t: {thread}\n"));
        }
        s.push('\n');
    }
    s
}

#[test]
fn cpuinfo_file_method() {
    let dir = TempDir::new("omp-cpuinfo");
    for ids in [true, false] {
        let f = dir.0.join(format!("cpuinfo-{ids}"));
        std::fs::write(&f, seed_cpuinfo(ids)).unwrap();
        let f = f.to_str().unwrap();
        let (out, err) = ok(
            &[
                "--topology-method",
                "cpuinfo",
                "--cpuinfo-file",
                f,
                "--kmp-affinity",
                "verbose,granularity=fine,compact",
            ],
            &[],
        );
        assert!(
            err.contains("KMP_AFFINITY: affinity capable, using cpuinfo file"),
            "{err}"
        );
        // The same map as the document's x2APIC listing.
        let map: Vec<String> = err
            .lines()
            .filter(|l| l.contains("maps to"))
            .map(normalize)
            .collect();
        let seed: Vec<String> = HT_MAP
            .lines()
            .filter(|l| l.contains("maps to"))
            .map(normalize)
            .collect();
        assert_eq!(map, seed);
        assert_eq!(out, "0 0\n1 4\n2 2\n3 6\n4 1\n5 5\n6 3\n7 7\n");
        // KMP_TOPOLOGY_METHOD and KMP_CPUINFO_FILE from the environment.
        let (out2, _) = ok(
            &["--kmp-affinity", "granularity=fine,compact"],
            &[("KMP_TOPOLOGY_METHOD", "cpuinfo"), ("KMP_CPUINFO_FILE", f)],
        );
        assert_eq!(out2, out);
    }
    // node_n id levels: node_0 groups packages, node_1 groups node_0s.
    let mut s = String::new();
    for p in 0..8u32 {
        s.push_str(&format!(
            "processor : {p}\nnode_1 id : 0\nnode_0 id : {}\nphysical id : {}\ncore id : 0\n\n",
            p / 4,
            p / 2
        ));
    }
    let f = dir.0.join("nodes");
    std::fs::write(&f, s).unwrap();
    let f = f.to_str().unwrap();
    let (out, err) = ok(
        &[
            "--topology-method",
            "cpuinfo",
            "--cpuinfo-file",
            f,
            "--threads",
            "2",
            "--kmp-affinity",
            "verbose,granularity=node,scatter",
        ],
        &[],
    );
    assert!(err.contains("KMP_AFFINITY: 2 NUMA domains x 2 sockets/NUMA domain x 1 cores/socket x 2 threads/core (4 total cores)"), "{err}");
    assert_eq!(out, "0 0-3\n1 4-7\n");
    // Thread ids given but not unique: the flat model, with the runtime's warning.
    let f = dir.0.join("dups");
    std::fs::write(&f, "processor : 0\nphysical id : 0\nthread id : 0\n\nprocessor : 1\nphysical id : 0\nthread id : 0\n").unwrap();
    let (out, err) = ok(
        &[
            "--topology-method",
            "cpuinfo",
            "--cpuinfo-file",
            f.to_str().unwrap(),
            "--kmp-affinity",
            "scatter",
        ],
        &[],
    );
    assert!(
        err.contains("Physical node/pkg/core/thread ids not unique"),
        "{err}"
    );
    assert_eq!(out, "0 0\n1 1\n");
    // Unreadable or malformed files are errors that say so.
    let o = run(
        &[
            "--topology-method",
            "cpuinfo",
            "--cpuinfo-file",
            "/nonexistent/cpuinfo",
        ],
        &[],
    );
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent/cpuinfo"));
    let f = dir.0.join("bad");
    std::fs::write(&f, "processor : zero\nphysical id : 0\n").unwrap();
    let o = run(
        &[
            "--topology-method",
            "cpuinfo",
            "--cpuinfo-file",
            f.to_str().unwrap(),
        ],
        &[],
    );
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("\"processor\" at line 1"));
}

#[test]
fn omp_places_and_proc_bind() {
    let b = |p: &str, bind: &str, n: &str| {
        bindings(&[
            "-i",
            HT,
            "--threads",
            n,
            "--omp-places",
            p,
            "--omp-proc-bind",
            bind,
        ])
    };
    assert_eq!(b("cores", "spread", "2"), ["0,4", "1,5"]);
    assert_eq!(b("cores", "close", "2"), ["0,4", "2,6"]);
    assert_eq!(b("sockets", "close", "2"), ["0,2,4,6", "1,3,5,7"]);
    assert_eq!(b("threads(2)", "primary", "3"), ["0", "0", "0"]);
    assert_eq!(b("{0:2}:4:2", "spread", "2"), ["0-1", "4-5"]);
    // Excluding every place leaves nothing to bind to: an error.
    let o = run(
        &[
            "-i",
            HT,
            "--omp-places",
            "{0:4},!{0:4}",
            "--omp-proc-bind",
            "close",
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("OMP_PLACES"));
    // From the environment, with the policy defaulting to binding.
    let (out, _) = ok(&["-i", HT, "--threads", "2"], &[("OMP_PLACES", "sockets")]);
    assert_eq!(out, "0 0,2,4,6\n1 1,3,5,7\n");
}

#[test]
fn launched_command_gets_an_explicit_environment() {
    let env_of = |args: &[&str], env: &[(&str, &str)]| -> Vec<String> {
        let (out, _) = ok(&[args, &["--", "env"]].concat(), env);
        out.lines()
            .filter(|l| l.starts_with("OMP_") || l.starts_with("GOMP_") || l.starts_with("KMP_"))
            .map(String::from)
            .collect()
    };
    let mut e = env_of(
        &[
            "-i",
            HT,
            "--threads",
            "4",
            "--kmp-affinity",
            "granularity=fine,compact",
        ],
        &[("OMP_PLACES", "sockets")],
    );
    e.sort();
    assert_eq!(
        e,
        [
            "GOMP_CPU_AFFINITY=0,4,2,6",
            "OMP_NUM_THREADS=4",
            "OMP_PLACES={0},{4},{2},{6}",
            "OMP_PROC_BIND=true"
        ]
    );
    // Places of several procs: no GOMP_CPU_AFFINITY, and the caller's is removed.
    let mut e = env_of(
        &[
            "-i",
            HT,
            "--threads",
            "2",
            "--kmp-affinity",
            "granularity=socket,scatter",
        ],
        &[("GOMP_CPU_AFFINITY", "0"), ("KMP_AFFINITY", "compact")],
    );
    e.sort();
    assert_eq!(
        e,
        [
            "OMP_NUM_THREADS=2",
            "OMP_PLACES={0,2,4,6},{1,3,5,7}",
            "OMP_PROC_BIND=true"
        ]
    );
    // Unbound threads.
    let mut e = env_of(&["-i", HT, "--threads", "2", "--kmp-affinity", "none"], &[]);
    e.sort();
    assert_eq!(e, ["OMP_NUM_THREADS=2", "OMP_PROC_BIND=false"]);
    // The command's exit status is passed on.
    let o = run(
        &[
            "-i",
            HT,
            "--kmp-affinity",
            "compact",
            "--",
            "sh",
            "-c",
            "exit 7",
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(7));
}

#[test]
fn bad_settings_are_named() {
    for (args, env, needle) in [
        (
            vec!["--kmp-affinity", "verbose,compactt"],
            vec![],
            "\"compactt\"",
        ),
        (
            vec!["--kmp-affinity", "granularity=cor,compact"],
            vec![],
            "\"granularity=cor\"",
        ),
        (
            vec!["--kmp-affinity", "proclist=[0,{1],explicit"],
            vec![],
            "unbalanced",
        ),
        (vec!["--kmp-affinity", "explicit"], vec![], "proclist"),
        (vec!["--gomp-cpu-affinity", "4-2"], vec![], "\"4-2\""),
        (vec!["--omp-places", "{0,x}"], vec![], "\"x\""),
        (vec!["--omp-proc-bind", "sprd"], vec![], "\"sprd\""),
        (vec!["--topology-method", "magic"], vec![], "magic"),
        (vec!["--initial-mask", "zz"], vec![], "zz"),
        (vec![], vec![("KMP_AFFINITY", "scater")], "KMP_AFFINITY"),
        (vec![], vec![("OMP_NUM_THREADS", "many")], "OMP_NUM_THREADS"),
        (
            vec!["--kmp-affinity", "compact", "--initial-mask", "100"],
            vec![],
            "initial affinity mask",
        ),
        (vec!["--threads", "0"], vec![], "at least 1"),
        (
            vec!["--kmp-affinity", "compact", "--", "/nonexistent/cmd"],
            vec![],
            "/nonexistent/cmd",
        ),
    ] {
        let o = run(&[&["-i", HT][..], &args].concat(), &env);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?} {env:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    // Conflicting placement options are refused by the parser.
    let o = run(
        &[
            "-i",
            HT,
            "--kmp-affinity",
            "compact",
            "--omp-places",
            "cores",
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(2));
}
