//! Differential tests of `wloc calc` against hwloc 2.14's `hwloc-calc`: the
//! same arguments over synthetic topologies and the conformance XML cases
//! must print the same standard output, byte for byte.
//!
//! Invocations are a fixed list applied to every topology plus a seeded
//! generator of locations and options, so every run checks the same ones.

use crate::common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// Synthetic topologies: NUMA nodes at several places, caches, dies,
/// groups, and PUs whose OS indexes differ from their logical ones.
pub const SYNTHETIC: &[&str] = &[
    "pack:2 core:4 pu:2",
    "pack:2 [numa] l3:1 core:2 l1i:1 pu:2",
    "numa:2 pack:1 l2:2 core:2 pu:2",
    "group:2 pack:2 core:2 pu:2",
    "pack:2 die:2 core:3 pu:1",
    "pack:2 core:2 pu:2(indexes=0,4,1,5,2,6,3,7)",
];

/// Conformance XML cases (read by both tools from wloc's hwloc 2 export).
pub const XML_CASES: &[&str] = &[
    "16em64t-4s2c2t.xml",
    "24em64t-2n6c2t-pci.xml",
    "192em64t-12gr2n8c2t.xml",
    "fakecpukinds.xml",
    "memorysidecaches.xml",
    "96em64t-4n4d3ca2co-pci.xml",
    "16amd64-8n2c-cpusets.xml",
];

/// A topology both tools read: the `-i`/`--if` arguments and a name.
pub struct Topo {
    pub name: String,
    pub args: Vec<String>,
}

/// The synthetic topologies and the XML cases exported as hwloc 2 XML into `dir`.
pub fn topologies(dir: &Path) -> Vec<Topo> {
    let mut out: Vec<Topo> = SYNTHETIC
        .iter()
        .map(|s| Topo {
            name: s.to_string(),
            args: vec![
                "-i".into(),
                s.to_string(),
                "--if".into(),
                "synthetic".into(),
            ],
        })
        .collect();
    out.extend(export_cases(dir, XML_CASES));
    out
}

/// Runs a program with arguments and optional standard input.
pub fn run(
    prog: &Path,
    sub: Option<&str>,
    args: &[String],
    stdin: Option<&str>,
    keep_stderr: bool,
) -> Output {
    run_command(Command::new(prog), sub, args, stdin, keep_stderr)
}

/// [`run`] with the program given as a command (with its environment).
pub fn run_command(
    mut c: Command,
    sub: Option<&str>,
    args: &[String],
    stdin: Option<&str>,
    keep_stderr: bool,
) -> Output {
    if let Some(s) = sub {
        c.arg(s);
    }
    c.args(args)
        .env("LC_ALL", "C")
        .env_remove("HWLOC_XMLFILE")
        .env_remove("HWLOC_SYNTHETIC")
        .env_remove("HWLOC_FSROOT")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(if keep_stderr {
            Stdio::piped()
        } else {
            Stdio::null()
        });
    let mut child = c.spawn().expect("program runs");
    if let Some(text) = stdin {
        let mut i = child.stdin.take().expect("stdin");
        i.write_all(text.as_bytes()).expect("write stdin");
    }
    // hwloc-calc 2.9 spun for minutes on some ranges (an amount it read as
    // 2^32 - 1): a tool still running after 10 s is stopped, and reported.
    let start = std::time::Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if start.elapsed() > std::time::Duration::from_secs(10) {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    child.wait_with_output().expect("program finishes")
}

/// A small deterministic generator (xorshift64*).
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    pub fn pick<'a>(&mut self, v: &[&'a str]) -> &'a str {
        v[self.below(v.len())]
    }
}

/// Compares the two tools over many invocations; returns the number run
/// and the mismatches, each with the command and both outputs.
pub fn compare_all(
    hwloc_tool: &str,
    sub: &str,
    cases: &[(Vec<String>, Option<String>)],
) -> (usize, Vec<String>) {
    let wloc = common::wloc();
    // hwloc 2.14's own tool is the reference (the release the commands follow).
    let tool_2_14 = || common::hwloc_2_14_tool(hwloc_tool);
    let chunks: Vec<&[(Vec<String>, Option<String>)]> =
        cases.chunks(cases.len().div_ceil(2).max(1)).collect();
    let results: Vec<Vec<String>> = std::thread::scope(|s| {
        let handles: Vec<_> = chunks
            .iter()
            .map(|chunk| {
                let wloc = &wloc;
                s.spawn(move || {
                    let mut bad = Vec::new();
                    for (args, stdin) in chunk.iter() {
                        let h = run_command(tool_2_14(), None, args, stdin.as_deref(), false);
                        if h.status.code().is_none() {
                            println!("skipped (hwloc timed out or crashed): {args:?}");
                            continue;
                        }
                        let w = run(wloc, Some(sub), args, stdin.as_deref(), true);
                        if let Some(miss) = common::stdout_mismatch(hwloc_tool, args, &h, &w) {
                            bad.push(miss);
                        }
                    }
                    bad
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("worker"))
            .collect()
    });
    (cases.len(), results.into_iter().flatten().collect())
}

/// hwloc-calc invocations that every topology gets.
const FIXED: &[&str] = &[
    "all",
    "root",
    "pu:0",
    "pu:all",
    "pu:even",
    "pu:odd",
    "core:1-2",
    "core:2-",
    "core:1:3",
    "core:3:4",
    "pu:3-1",
    "pack:1.core:1.pu:0",
    "pack:0.pu:1-2",
    "numa:0",
    "numa:1",
    "node:all",
    "pack:0.numa:0",
    "l3:0",
    "l2cache:1",
    "l1i:0",
    "group:1",
    "die:1",
    "pack:0 ~pu:1",
    "pack:0 xcore:1-5",
    "pack:0 ^core:0-4",
    "0x5",
    "0x00000003,0x0000000f",
    "1,3",
    "0xf...f",
    "1-3",
    "7",
    "frob:1",
    "core:x",
    "core:99",
    "2:1",
    "--pi pu:4",
    "--pi core:2-5",
    "-p pu:3",
    "-N pu all",
    "-N core pack:0",
    "-N numa all",
    "-N 2 all",
    "-N l3 pu:0",
    "-I pu core:1",
    "-I core pu:3-6",
    "-I numa pu:5",
    "--po -I pu core:1",
    "--sep : -I pu pack:0",
    "-H pack.core pu:3-6",
    "-H core.pu pu:1-6",
    "-H numa.pu pu:3-6",
    "--po -H pack.pu pu:1-2",
    "--largest pu:2-7",
    "--largest pu:1",
    "--largest all",
    "--largest --po pu:2-7",
    "--largest --sep , pu:2-5",
    "--local-memory pu:0",
    "--local-memory all",
    "--local-memory --po pu:3",
    "--single core:1",
    "--no-smt core:1-2",
    "--no-smt=1 all",
    "--taskset all",
    "--taskset pu:1",
    "-n numa:0",
    "--no pack:1",
    "--ni 0x1",
    "--nodeset all",
    "-N core --no all",
    "-N core --ni 0x2",
    "-I numa --no all",
];

/// Generated location words and options for one topology.
fn generated(rng: &mut Rng, count: usize) -> Vec<String> {
    let types = [
        "pu", "core", "pack", "socket", "numa", "node", "l3", "l2", "l1", "die", "group", "machine",
    ];
    let ranges = [
        "0", "1", "2", "3", "0-1", "1-3", "all", "even", "odd", "1:2", "3:3", "5",
    ];
    let ops = ["", "", "", "~", "x", "^"];
    let opts = [
        "",
        "",
        "",
        "-N pu",
        "-N core",
        "-N pack",
        "-I pu",
        "-I core",
        "-I numa",
        "-H pack.pu",
        "-H core.pu",
        "--largest",
        "--local-memory",
        "--single",
        "--no-smt",
        "--taskset",
        "-p",
        "--pi",
        "--po",
        "-n",
        "--no",
        "--sep ;",
    ];
    let mut out = Vec::new();
    for _ in 0..count {
        let mut words: Vec<String> = Vec::new();
        let opt = rng.pick(&opts);
        if !opt.is_empty() {
            words.extend(opt.split(' ').map(String::from));
        }
        for k in 0..1 + rng.below(3) {
            let op = if k == 0 { "" } else { rng.pick(&ops) };
            let w = match rng.below(8) {
                0 => format!("0x{:x}", rng.next_u64() & 0xffff),
                1 => format!(
                    "{}{}:{}.{}:{}",
                    op,
                    rng.pick(&types[2..5]),
                    rng.pick(&["0", "1", "all"]),
                    rng.pick(&types[..2]),
                    rng.pick(&ranges)
                ),
                _ => format!("{}{}:{}", op, rng.pick(&types), rng.pick(&ranges)),
            };
            words.push(w);
        }
        out.push(words.join("\u{1}"));
    }
    out
}

#[test]
fn calc_matches_hwloc_calc() {
    let tmp = common::TempDir::new("calc-diff");
    let topos = topologies(&tmp.0);
    let mut rng = Rng(0x5eed_ca1c);
    let mut cases: Vec<(Vec<String>, Option<String>)> = Vec::new();
    for t in &topos {
        let mut lines: Vec<String> = FIXED.iter().map(|s| s.replace(' ', "\u{1}")).collect();
        lines.extend(generated(&mut rng, 25));
        for l in lines {
            let mut args = t.args.clone();
            args.extend(l.split('\u{1}').map(String::from));
            cases.push((args, None));
        }
    }
    // Topology options, I/O devices and CPU kinds on the cases that have them.
    let by_name = |n: &str| topos.iter().find(|t| t.name == n).expect("topology");
    let extra: &[(&str, &str)] = &[
        ("24em64t-2n6c2t-pci.xml", "os=eth0"),
        ("24em64t-2n6c2t-pci.xml", "os=sda"),
        ("24em64t-2n6c2t-pci.xml", "os=nosuchdev"),
        ("24em64t-2n6c2t-pci.xml", "pci=0000:02:00.0"),
        ("24em64t-2n6c2t-pci.xml", "pci=02:00.1"),
        ("24em64t-2n6c2t-pci.xml", "pci:0"),
        ("24em64t-2n6c2t-pci.xml", "pci:1-2"),
        ("24em64t-2n6c2t-pci.xml", "pci:all"),
        ("24em64t-2n6c2t-pci.xml", "pci[8086:]:0"),
        ("24em64t-2n6c2t-pci.xml", "pci[8086:10c9]:1"),
        ("24em64t-2n6c2t-pci.xml", "pci[:10c9]:all"),
        ("24em64t-2n6c2t-pci.xml", "os:0"),
        ("24em64t-2n6c2t-pci.xml", "-N pci all"),
        ("24em64t-2n6c2t-pci.xml", "-N osdev all"),
        ("24em64t-2n6c2t-pci.xml", "-N net all"),
        ("24em64t-2n6c2t-pci.xml", "-I pci numa:1"),
        ("24em64t-2n6c2t-pci.xml", "-I os all"),
        ("24em64t-2n6c2t-pci.xml", "--po -I bridge all"),
        ("96em64t-4n4d3ca2co-pci.xml", "pci:0"),
        ("96em64t-4n4d3ca2co-pci.xml", "pci:2:3"),
        ("96em64t-4n4d3ca2co-pci.xml", "-I pci pack:1"),
        ("96em64t-4n4d3ca2co-pci.xml", "-N block all"),
        ("fakecpukinds.xml", "--cpukind 0 all"),
        ("fakecpukinds.xml", "--cpukind 1 all"),
        ("fakecpukinds.xml", "--cpukind 7 all"),
        ("fakecpukinds.xml", "--cpukind FrequencyMaxMHz=3000 all"),
        ("16em64t-4s2c2t.xml", "--restrict 0x0000ff00 all"),
        ("16em64t-4s2c2t.xml", "--restrict 0x0000ff00 -N core all"),
        ("16em64t-4s2c2t.xml", "--restrict 0x0000ff00 -I pack all"),
        ("192em64t-12gr2n8c2t.xml", "-N group all"),
        ("192em64t-12gr2n8c2t.xml", "group0:1"),
        ("192em64t-12gr2n8c2t.xml", "group1:1"),
        ("192em64t-12gr2n8c2t.xml", "-H group0.core pu:30-40"),
        ("memorysidecaches.xml", "memcache:0"),
        ("memorysidecaches.xml", "-I memcache all"),
        ("16amd64-8n2c-cpusets.xml", "--disallowed all"),
        ("16amd64-8n2c-cpusets.xml", "--disallowed -N numa all"),
        ("16amd64-8n2c-cpusets.xml", "-I numa all"),
        (
            "pack:2 core:4 pu:2",
            "--restrict 0x000000f0 -H pack.core all",
        ),
        ("pack:2 core:4 pu:2", "--restrict 0x000000f0 --largest all"),
    ];
    for (name, l) in extra {
        let mut args = by_name(name).args.clone();
        args.extend(l.split(' ').map(String::from));
        cases.push((args, None));
    }
    // Locations read from standard input, one expression per line.
    for t in topos.iter().take(3) {
        cases.push((
            t.args.clone(),
            Some("pu:0 pu:2\ncore:1\n\nall ~pack:0\nfrob\n".into()),
        ));
        let mut a = t.args.clone();
        a.extend(["-I".to_string(), "pu".to_string()]);
        cases.push((a, Some("core:0\npack:1\n".into())));
    }
    let (count, bad) = compare_all("hwloc-calc", "calc", &cases);
    common::assert_no_differences("hwloc-calc", count, &bad, 300);
}

/// Exports conformance XML cases as hwloc 2 XML into `dir` (with every
/// I/O object), as inputs of both tools.
pub fn export_cases(dir: &Path, cases: &[&str]) -> Vec<Topo> {
    cases
        .iter()
        .map(|case| {
            let dst = dir.join(case);
            common::export_case_v2(case, &dst, true);
            Topo {
                name: case.to_string(),
                args: vec![
                    "-i".into(),
                    dst.to_string_lossy().into_owned(),
                    "--if".into(),
                    "xml".into(),
                ],
            }
        })
        .collect()
}

/// `--best-memattr` (with `--local-memory-flags`) on the cases with memory
/// attributes, and `--restrict nodeset=...` with its flags everywhere.
#[test]
fn calc_best_memattr_and_nodeset_restriction_match_hwloc_calc() {
    let tmp = common::TempDir::new("calc-memattr");
    let mut topos = export_cases(
        &tmp.0,
        &[
            "8intel64-4n2t-memattrs.xml",
            "64intel64-heteromem.xml",
            "memorysidecaches.xml",
            "16amd64-8n2c-cpusets.xml",
        ],
    );
    for s in [
        "pack:2 [numa] l3:1 core:2 pu:2",
        "numa:2 pack:1 l2:2 core:2 pu:2",
        "pack:2 numa:2 core:2 pu:1",
    ] {
        topos.push(Topo {
            name: s.to_string(),
            args: vec!["-i".into(), s.into(), "--if".into(), "synthetic".into()],
        });
    }
    let memattr: &[&str] = &[
        "--best-memattr bandwidth pu:0",
        "--best-memattr Bandwidth all",
        "--best-memattr bandwidth pu:0-3",
        "--best-memattr bandwidth numa:1",
        "--best-memattr Latency pu:0",
        "--best-memattr latency all",
        "--best-memattr capacity all",
        "--best-memattr capacity pu:0",
        "--best-memattr locality numa:1",
        "--best-memattr locality all",
        "--best-memattr readbandwidth all",
        "--best-memattr foobar pu:0",
        "--best-memattr foobar pu:0-1",
        "--best-memattr foobar -p pu:0",
        "--best-memattr foobar --po pu:4",
        "--best-memattr barnoinit all",
        "--best-memattr coincoin all",
        "--best-memattr nosuchattr pu:0",
        "--best-memattr 2 pu:0",
        "--best-memattr 8 pu:0",
        "--best-memattr 9 all",
        "--best-memattr 10 all",
        "--best-memattr 11 all",
        "--best-memattr 2x all",
        "--best-memattr bandwidth --nodeset pu:0",
        "--best-memattr bandwidth --local-memory-flags all pu:0",
        "--local-memory-flags 7 --best-memattr foobar pu:4",
        "--local-memory-flags 4 --best-memattr foobar pu:0",
        "--local-memory-flags 4 --best-memattr barnoinit pu:0",
        "--local-memory-flags 4 --best-memattr bandwidth pu:0",
        "--local-memory-flags 7 --best-memattr latency pu:0",
        "--local-memory-flags all pu:0",
        "--local-memory-flags smaller pu:0",
        "--local-memory-flags larger$ all",
        "--local-memory-flags larger,smaller pu:0-1",
        "--local-memory-flags bogus all",
    ];
    let restrict: &[&str] = &[
        "nodeset=0x1",
        "nodeset=0x2",
        "nodeset=0x5",
        "nodeset=0x100",
        "nodeset=0x3 --restrict-flags remove_memless",
        "nodeset=0x2 --restrict-flags 24",
        "nodeset=0x2 --restrict-flags 9",
        "nodeset=0x4 --restrict-flags 12",
        "0x3 --restrict-flags 16",
        "0x3 --restrict-flags bynodeset",
        "0x0000000f --restrict-flags cpuless",
    ];
    let queries: &[&str] = &[
        "all",
        "-N pu all",
        "-N numa all",
        "-I numa all",
        "-I core all",
        "--local-memory all",
        "-H pack.core all",
        "--largest all",
        "-n all",
        "-I memcache all",
        "-N group all",
    ];
    let mut cases: Vec<(Vec<String>, Option<String>)> = Vec::new();
    for t in &topos {
        for l in memattr {
            let mut args = t.args.clone();
            args.extend(l.split(' ').map(String::from));
            cases.push((args, None));
        }
        for r in restrict {
            for q in queries {
                let mut args = t.args.clone();
                args.push("--restrict".into());
                args.extend(r.split(' ').map(String::from));
                args.extend(q.split(' ').map(String::from));
                cases.push((args, None));
            }
        }
    }
    let (count, bad) = compare_all("hwloc-calc", "calc", &cases);
    common::assert_no_differences("hwloc-calc", count, &bad, 1000);
}
