//! The smaller drop-in gaps with hwloc 2.9's tools, each compared with
//! the installed tool: `wloc ls --top` (processes and threads bound to
//! part of the machine shown on their objects, as `lstopo --top`), the
//! NUMA page types of synthetic topologies, and a shared L2 cache that
//! sysfs lists under some of its cores only.

use std::process::{Child, Command, Output};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::common;
use crate::common::{require_hwloc, run_wloc, wloc};

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Binds the calling thread to one CPU.
fn bind_this_thread(cpu: usize) {
    // SAFETY: cpu_set_t is plain data; 0 is the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        assert_eq!(
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set),
            0
        );
    }
}

/// Starts `sleep 30` bound to one CPU through `wloc bind` and waits until
/// it runs.
// The caller kills and waits for the child; a failing assertion here
// leaves a `sleep 30` behind, which ends by itself.
#[allow(clippy::zombie_processes)]
fn bound_sleep(cpu: usize) -> Child {
    let child = Command::new(wloc())
        .args(["bind", "-p", &format!("pu:{cpu}"), "--", "sleep", "30"])
        .spawn()
        .unwrap();
    let start = Instant::now();
    while std::fs::read_to_string(format!("/proc/{}/comm", child.id()))
        .unwrap_or_default()
        .trim()
        != "sleep"
    {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "sleep did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

/// Runs hwloc 2.14's `TOOL ARGS` and `wloc SUB ARGS`: `None` when both
/// exit alike and print the same, else both outputs under `what`.
fn differs_from_hwloc(tool: &str, sub: &str, args: &[&str], what: &str) -> Option<String> {
    let mut ours = vec![sub];
    ours.extend_from_slice(args);
    let ours = run_wloc(&ours);
    let theirs = common::hwloc_2_14_tool(tool)
        .args(args)
        .env("HWLOC_HIDE_ERRORS", "2")
        .output()
        .unwrap_or_else(|e| panic!("{tool}: {e}"));
    if (ours.status.code(), stdout(&ours)) == (theirs.status.code(), stdout(&theirs)) {
        return None;
    }
    Some(format!(
        "{what}:\nwloc:\n{}\n{tool} 2.14:\n{}",
        stdout(&ours),
        stdout(&theirs)
    ))
}

fn lstopo(args: &[&str]) -> String {
    let o = Command::new("lstopo-no-graphics")
        .args(args)
        .env("HWLOC_HIDE_ERRORS", "2")
        .output()
        .expect("lstopo-no-graphics runs");
    assert!(o.status.success(), "{}", common::show_output(&o));
    stdout(&o)
}

/// `wloc ls ARGS` and `lstopo-no-graphics ARGS` on this machine, taken
/// while the machine's processes stay put: other tests of this binary
/// start and stop bound processes, so lstopo runs before and after wloc
/// and the pair is kept only when both of its runs agree.
fn ls_and_lstopo_steady(wloc_args: &[&str], lstopo_args: &[&str]) -> (String, String) {
    let mut last = (String::new(), String::new());
    for _ in 0..10 {
        let before = lstopo(lstopo_args);
        let o = run_wloc(wloc_args);
        common::assert_success("wloc ls --top", &o);
        let after = lstopo(lstopo_args);
        last = (stdout(&o), after.clone());
        if before == after {
            return last;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    last
}

#[test]
fn ls_top_shows_bound_processes_and_threads_as_lstopo() {
    require_hwloc();
    let cpus = common::allowed_cpus();
    // A process bound to the last CPU, and a thread of this process bound
    // to the first (the other threads are not bound: the process's
    // binding, the union of its threads', is the whole machine).
    let sleeper = (cpus.len() > 1).then(|| bound_sleep(*cpus.last().unwrap()));
    let (stop_tx, stop_rx) = mpsc::channel::<()>();
    let (ready_tx, ready_rx) = mpsc::channel::<()>();
    let first = cpus[0];
    let thread = std::thread::Builder::new()
        .name("wloc-top-test".into())
        .spawn(move || {
            bind_this_thread(first);
            ready_tx.send(()).unwrap();
            let _ = stop_rx.recv();
        })
        .unwrap();
    ready_rx.recv().unwrap();

    let cases: [(&[&str], &[&str]); 3] = [
        (&["ls", "--top", "--no-io"], &["--top", "--no-io"]),
        (&["ls", "--ps", "--no-io", "-p"], &["--ps", "--no-io", "-p"]),
        (
            &["ls", "--top", "--no-io", "--of", "xml"],
            &["--top", "--no-io", "--of", "xml"],
        ),
    ];
    let mut failures = Vec::new();
    for (ours, theirs) in cases {
        let (w, h) = ls_and_lstopo_steady(ours, theirs);
        let (w, h) = if ours.contains(&"xml") {
            // Only the Misc objects: the rest of the XML is compared elsewhere.
            let misc = |x: &str| -> Vec<String> {
                x.lines()
                    .filter(|l| l.contains("type=\"Misc\""))
                    .map(|l| {
                        let at = l.find(" name=").unwrap_or(0);
                        l[at..].trim().to_string()
                    })
                    .collect()
            };
            (misc(&w).join("\n"), misc(&h).join("\n"))
        } else {
            (w, h)
        };
        if w != h {
            failures.push(format!("{ours:?}:\nwloc:\n{w}\nlstopo:\n{h}"));
        }
    }
    let me = std::process::id();
    let (w, _) = ls_and_lstopo_steady(&["ls", "--top", "--no-io"], &["--top", "--no-io"]);
    let _ = stop_tx.send(());
    thread.join().unwrap();
    if let Some(mut s) = sleeper {
        let pid = s.id();
        let _ = s.kill();
        let _ = s.wait();
        assert!(
            w.contains(&format!("Misc(Process) {pid} sleep\n")),
            "the bound sleep is shown:\n{w}"
        );
    }
    assert!(
        w.lines().any(
            |l| l.trim_start().starts_with(&format!("Misc(Process) {me} "))
                && l.ends_with(" wloc-top-test")
        ),
        "the bound thread is shown:\n{w}"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn ls_top_adds_nothing_to_a_topology_of_another_machine() {
    require_hwloc();
    let case = "pack:2 core:2 pu:2";
    let o = run_wloc(["ls", "-i", case, "--top"]);
    common::assert_success("wloc ls -i --top", &o);
    assert_eq!(stdout(&o), lstopo(&["-i", case, "--top"]));
    assert!(!stdout(&o).contains("Misc"));
}

#[test]
fn synthetic_numa_memory_exports_hwlocs_page_type() {
    require_hwloc();
    for desc in [
        "node:2(memory=1GB) pu:2",
        "pack:2 node:2(memory=1GB) pu:2",
        "node:2(memory=1000) pu:2",
        "node:1(memory=4095) pu:1",
        "node:1(memory=3TB) pu:1",
        "pack:2 [numa(memory=1GB)] [numa(memory=2GB)] core:2 pu:1",
        "node:2 pu:2",
        "numa:1(memory=0) pu:1",
    ] {
        let theirs: String = lstopo(&["-i", desc, "--of", "xml", "-"])
            .lines()
            // hwloc's own infos about the tool that wrote the file.
            .filter(|l| !l.contains("\"hwlocVersion\"") && !l.contains("\"ProcessName\""))
            .map(|l| format!("{l}\n"))
            .collect();
        let o = run_wloc(["ls", "-i", desc, "--of", "xml"]);
        common::assert_success("wloc ls --of xml", &o);
        assert_eq!(stdout(&o), theirs, "{desc}");
        if desc.contains("memory=1GB") {
            assert!(theirs.contains("<page_type size=\"4096\" count=\"244140\"/>"));
        }
    }
}

/// `16em64t-4s2c2t` (hwloc's recording) with its L2 folders moved to
/// `index2` and listed under some CPUs only: package 0's CPUs 4 and 12
/// list an L2 shared with CPUs 0 and 8, which do not list it; package 1's
/// first CPU (1) lists an L2 shared by its two cores, which CPUs 5 and 13
/// do not list; the first and last CPUs have no `index2` at all.  hwloc
/// builds a cache from its first CPU only, and looks at every CPU's
/// `index0` to `index9`.
#[test]
fn caches_listed_under_some_cpus_only_are_built_as_hwloc_builds_them() {
    require_hwloc();
    let tmp = common::TempDir::new("partial-l2");
    let tarball = common::workspace().join("tests/data/dropin/16em64t-4s2c2t-partial-l2.tar.bz2");
    let f = std::fs::File::open(&tarball).expect("the recording");
    tar::Archive::new(bzip2::read::BzDecoder::new(f))
        .unpack(&tmp.0)
        .expect("unpacks");
    let root = tmp.0.join("16em64t-4s2c2t-partial-l2");
    for extra in [&["--no-io"][..], &["--no-io", "-v"][..]] {
        let o = Command::new("lstopo-no-graphics")
            .args(extra)
            .env("HWLOC_COMPONENTS", "linux,stop")
            .env("HWLOC_FSROOT", &root)
            .env("HWLOC_HIDE_ERRORS", "2")
            .output()
            .expect("lstopo-no-graphics runs");
        assert!(o.status.success(), "{}", common::show_output(&o));
        let theirs = stdout(&o).replace(" hwlocVersion=2.9.0 ProcessName=lstopo-no-graphics", "");
        let mut args = vec!["ls", "-i", root.to_str().unwrap(), "--if", "fsroot"];
        args.extend_from_slice(extra);
        let o = run_wloc(&args);
        common::assert_success("wloc ls --if fsroot", &o);
        assert_eq!(stdout(&o), theirs, "{extra:?}");
    }
    // What the case is about: package 1's shared L2 holds both its cores,
    // package 0 has none.
    let o = run_wloc([
        "ls",
        "-i",
        root.to_str().unwrap(),
        "--if",
        "fsroot",
        "--no-io",
    ]);
    let text = stdout(&o);
    assert!(
        text.contains("  Package L#1 + L3 L#1 (4096KB) + L2 L#0 (1024KB)\n"),
        "{text}"
    );
    assert!(text.contains("  Package L#0 + L3 L#0 (4096KB)\n"), "{text}");
}

/// A topology image keeps every `<userdata>` element of the XML it was
/// written from: the image's XML is the original document, byte for byte
/// (`tests/data/dropin/userdata.xml` is a fixed point of hwloc 2.9's
/// `lstopo-no-graphics -i F --of xml`), directly and through `WLOC_IMAGE`.
#[test]
fn topology_images_carry_userdata_byte_for_byte() {
    let tmp = common::TempDir::new("image-userdata");
    let src = common::workspace().join("tests/data/dropin/userdata.xml");
    let want = std::fs::read_to_string(&src).unwrap();
    assert!(
        want.matches("<userdata").count() >= 10,
        "the test file changed"
    );
    let img = tmp.0.join("topo.img");
    let o = run_wloc([
        "ls",
        "-i",
        src.to_str().unwrap(),
        "--of",
        "image",
        img.to_str().unwrap(),
    ]);
    common::assert_success("wloc ls --of image", &o);
    let o = run_wloc(["ls", "-i", img.to_str().unwrap(), "--of", "xml"]);
    common::assert_success("wloc ls -i IMAGE --of xml", &o);
    assert!(stdout(&o) == want, "the image's XML:\n{}", stdout(&o));
    let o = Command::new(wloc())
        .args(["ls", "--of", "xml"])
        .env("WLOC_IMAGE", &img)
        .output()
        .unwrap();
    common::assert_success("WLOC_IMAGE=IMAGE wloc ls --of xml", &o);
    assert!(
        stdout(&o) == want,
        "the adopted image's XML:\n{}",
        stdout(&o)
    );
}

/// The options of an hwloc 2.9 manual page: every `\fB-x` or `\fB--xyz`
/// at the start of a `.TP` item of its OPTIONS section.
fn man_options(page: &str) -> Vec<String> {
    let o = Command::new("zcat")
        .arg(format!("/usr/share/man/man1/{page}.1.gz"))
        .output()
        .expect("zcat runs");
    assert!(o.status.success(), "the manual page of {page}");
    let text = String::from_utf8_lossy(&o.stdout).replace("\\-", "-");
    let section = text
        .split("\n.SH OPTIONS")
        .nth(1)
        .and_then(|s| s.split("\n.SH ").next())
        .unwrap_or("");
    let mut opts = Vec::new();
    let mut item = false;
    for line in section.lines() {
        if line.starts_with(".TP") {
            item = true;
            continue;
        }
        if item {
            for part in line.split("\\fB").skip(1) {
                let word: String = part
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                    .collect();
                if word.starts_with('-') && word.len() > 1 && !opts.contains(&word) {
                    opts.push(word);
                }
            }
        }
        item = false;
    }
    opts
}

/// Every option of each hwloc 2.9 tool's manual page is either taken by
/// the wloc command of the same name (its `--help` names it) or listed,
/// with its reason, in the tool's section of docs/hwloc-differences.md.
#[test]
fn every_option_of_hwlocs_manual_pages_is_taken_or_listed() {
    require_hwloc();
    let doc = std::fs::read_to_string(common::workspace().join("docs/hwloc-differences.md"))
        .expect("docs/hwloc-differences.md");
    let section = |cmd: &str| -> String {
        let head = format!("## `wloc {cmd}` ~");
        doc.split("\n## ")
            .find(|s| format!("## {s}").starts_with(&head))
            .unwrap_or_else(|| panic!("no section for wloc {cmd}"))
            .to_string()
    };
    let mut missing = Vec::new();
    for (page, cmd) in [
        ("lstopo", "ls"),
        ("hwloc-calc", "calc"),
        ("hwloc-info", "info"),
        ("hwloc-bind", "bind"),
        ("hwloc-distrib", "distrib"),
        ("hwloc-annotate", "annotate"),
        ("hwloc-diff", "diff"),
        ("hwloc-patch", "patch"),
        ("hwloc-ps", "ps"),
        ("hwloc-gather-cpuid", "gather-cpuid"),
        ("hwloc-compress-dir", "compress-dir"),
        ("hwloc-gather-topology", "gather-topology"),
    ] {
        let opts = man_options(page);
        assert!(
            opts.len() >= 2,
            "{page}: no options found in its manual page"
        );
        let help = stdout(&run_wloc([cmd, "--help"]));
        let listed = section(cmd);
        for opt in opts {
            let in_help = help
                .split(|c: char| c.is_whitespace() || c == ',' || c == '[' || c == '=')
                .any(|w| w.trim_end_matches(['.', ']', ':']) == opt);
            let in_doc = listed.contains(&format!("`{opt}")) || listed.contains(&format!(" {opt}"));
            // `--version` and `-h` are everywhere (see *Everywhere*).
            if !in_help && !in_doc && opt != "--version" && opt != "-h" {
                missing.push(format!("{page} {opt} (wloc {cmd})"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "options neither taken nor listed in docs/hwloc-differences.md:\n{}",
        missing.join("\n")
    );
}

/// `wloc ls --top` and `lstopo --top` on a synthetic topology taken as
/// this machine's (`--thissystem`), where the bindings of this machine's
/// processes need a Group (`pu:N+1`: the real CPUs are some of its PUs)
/// or fit no object (two packages taking the real CPUs in turn): the
/// lines about a `sleep` bound to CPUs 0 and 1 (its Misc object, the
/// objects above it, lstopo's message) are the same.
#[test]
fn ls_top_inserts_groups_and_extends_bindings_as_lstopo() {
    require_hwloc();
    let cpus = common::allowed_cpus();
    let n = cpus.len();
    if n < 2 || cpus != (0..n).collect::<Vec<_>>() {
        println!("skipped: needs CPUs 0 to N-1 (this process may use {cpus:?})");
        return;
    }
    let mut sleeper = Command::new("taskset")
        .args(["-c", "0,1", "sleep", "30"])
        .spawn()
        .expect("taskset runs");
    let pid = sleeper.id();
    let start = Instant::now();
    while std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .unwrap_or_default()
        .trim()
        != "sleep"
    {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "sleep did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let evens_then_odds: Vec<String> = (0..2 * n)
        .step_by(2)
        .chain((1..2 * n).step_by(2))
        .map(|i| i.to_string())
        .collect();
    let descs = [
        format!("pu:{}", n + 1),
        format!("pack:2 pu:{n}(indexes={})", evens_then_odds.join(",")),
    ];
    let mine = format!("{pid} sleep");
    // The lines that do not depend on other processes: no Misc object but
    // this sleep's, no message but about it.
    let keep = |text: &str| -> String {
        text.lines()
            .filter(|l| {
                if l.contains("Misc(") || l.contains("binding 0x") {
                    l.contains(&mine)
                } else {
                    // hwloc's note about the synthetic description.
                    !l.starts_with("Inserting a NUMA level")
                }
            })
            .map(|l| format!("{l}\n"))
            .collect()
    };
    let mut failures = Vec::new();
    for desc in &descs {
        let mut last = String::new();
        let mut same = false;
        for _ in 0..10 {
            let o = Command::new("lstopo-no-graphics")
                .args(["-i", desc, "--thissystem", "--top"])
                .env("HWLOC_HIDE_ERRORS", "2")
                .output()
                .unwrap();
            let theirs = keep(&format!(
                "{}{}",
                stdout(&o),
                String::from_utf8_lossy(&o.stderr)
            ));
            let o = run_wloc(["ls", "-i", desc, "--thissystem", "--top"]);
            let ours = keep(&format!(
                "{}{}",
                stdout(&o),
                String::from_utf8_lossy(&o.stderr)
            ));
            if ours == theirs {
                same = true;
                assert!(ours.contains(&mine), "{desc}: the sleep is shown:\n{ours}");
                if desc.starts_with("pack") {
                    assert!(
                        ours.contains(&format!(
                            "Process `{mine}' binding 0x00000003 doesn't match"
                        )),
                        "{desc}: lstopo's message:\n{ours}"
                    );
                }
                break;
            }
            last = format!("wloc:\n{ours}\nlstopo:\n{theirs}");
            std::thread::sleep(Duration::from_millis(200));
        }
        if !same {
            failures.push(format!("{desc}:\n{last}"));
        }
    }
    let _ = sleeper.kill();
    let _ = sleeper.wait();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// lstopo's console reports and listing filters (`--distances`,
/// `--memattrs`, `--cpukinds`, `--only TYPE`, `--no-smt`, `--ignore PU`,
/// `--filter PU:none`) print what lstopo prints, on every conformance XML
/// case (written as hwloc 2 XML for hwloc to read).
#[test]
fn ls_console_reports_and_pu_hiding_are_lstopos() {
    require_hwloc();
    let tmp = common::TempDir::new("ls-reports");
    let mut cases: Vec<_> = std::fs::read_dir(common::conformance().join("xml"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "xml"))
        .collect();
    cases.sort();
    let opts: [&[&str]; 9] = [
        &["--distances"],
        &["--memattrs"],
        &["--cpukinds"],
        &["--only", "core"],
        &["--only", "numa", "-p"],
        &["--only", "pcidev", "-v"],
        &["--no-smt"],
        &["--ignore", "pu", "-c"],
        &["--filter", "PU:none", "-v"],
    ];
    let mut compared = 0;
    let mut bad = Vec::new();
    for case in &cases {
        let v2 = tmp.0.join(case.file_name().unwrap());
        if !common::export_v2(case, &v2, true).status.success() {
            continue;
        }
        for o in opts {
            let mut args = vec!["-i", v2.to_str().unwrap()];
            args.extend_from_slice(o);
            let what = format!("{} {o:?}", case.display());
            compared += 1;
            bad.extend(differs_from_hwloc("lstopo-no-graphics", "ls", &args, &what));
        }
    }
    common::assert_no_differences("lstopo", compared, &bad, 9 * 15);
    // Pictures do not hide PUs yet: refused rather than drawn otherwise.
    let o = run_wloc(["ls", "-i", "pack:1 pu:2", "--no-smt", "--of", "svg"]);
    assert_eq!(o.status.code(), Some(1), "{}", common::show_output(&o));
}

/// hwloc-info's filters (`--filter TYPE:KIND`, `--no-io`, `--whole-io`,
/// `--no-bridges`, `--no-icaches`) and its level listing of deep
/// topologies: the same output and exit code on every conformance XML
/// case (written with every I/O object, as hwloc 2 XML) and on synthetic
/// topologies of 3 to 14 levels.
#[test]
fn info_filters_and_level_listing_are_hwloc_infos() {
    require_hwloc();
    let tmp = common::TempDir::new("info-filters");
    let mut cases: Vec<_> = std::fs::read_dir(common::conformance().join("xml"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "xml"))
        .collect();
    cases.sort();
    let mut inputs: Vec<String> = Vec::new();
    for case in &cases {
        let v2 = tmp.0.join(case.file_name().unwrap());
        if common::export_v2(case, &v2, true).status.success() {
            inputs.push(v2.to_str().unwrap().to_string());
        }
    }
    let opts: [&[&str]; 10] = [
        &[],
        &["--no-io"],
        &["--whole-io"],
        &["--no-bridges"],
        &["--no-icaches"],
        &["--filter", "cache:none"],
        &["--filter", "l2:none", "core:0"],
        &["--filter", "io:all", "--children", "pack:0"],
        &["--filter", "group:structure"],
        &["--no-io", "--descendants", "core", "pack:1"],
    ];
    let mut compared = 0;
    let mut bad = Vec::new();
    let mut compare = |args: Vec<&str>| {
        compared += 1;
        bad.extend(differs_from_hwloc(
            "hwloc-info",
            "info",
            &args,
            &format!("{args:?}"),
        ));
    };
    for input in &inputs {
        for o in opts {
            let mut args = vec!["-i", input.as_str()];
            args.extend_from_slice(o);
            compare(args);
        }
    }
    for desc in [
        "pack:2 pu:2",
        "pack:2 die:1 l3:1 l2:1 l1d:1 l1i:1 core:1 pu:2",
        "group:2 pack:2 die:1 l3:1 l2:1 l1d:1 l1i:1 core:1 pu:2",
        "group:2 group:2 group:2 group:2 group:2 pack:2 die:1 l3:1 l2:1 l1d:1 l1i:1 core:1 pu:2",
    ] {
        compare(vec!["-i", desc]);
    }
    common::assert_no_differences("hwloc-info", compared, &bad, 10 * 15);
}

/// `wloc gather-cpuid -c IDX DIR|-` gathers one PU as hwloc-gather-cpuid
/// does: the same `puIDX` dump (on standard output with `-`, after the
/// same messages), and exit 1 for a PU that is not there or for `-`
/// without `-c`.
#[cfg(target_arch = "x86_64")]
#[test]
fn gather_cpuid_of_one_pu_is_hwlocs() {
    require_hwloc();
    let cpu = common::allowed_cpus()[0].to_string();
    let theirs = Command::new("hwloc-gather-cpuid")
        .args(["-c", &cpu, "-"])
        .output()
        .expect("hwloc-gather-cpuid runs");
    let ours = run_wloc(["gather-cpuid", "-c", &cpu, "-"]);
    common::assert_success("wloc gather-cpuid -c IDX -", &ours);
    assert_eq!(stdout(&ours), stdout(&theirs));
    let tmp = common::TempDir::new("gather-one");
    let o = run_wloc(["gather-cpuid", "-s", "-c", &cpu, tmp.0.to_str().unwrap()]);
    common::assert_success("wloc gather-cpuid -c IDX DIR", &o);
    let files: Vec<String> = std::fs::read_dir(&tmp.0)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files, [format!("pu{cpu}")]);
    let o = run_wloc(["gather-cpuid", "-c", "100000", "-"]);
    assert_eq!(o.status.code(), Some(1), "{}", common::show_output(&o));
    let o = run_wloc(["gather-cpuid", "-"]);
    assert_eq!(o.status.code(), Some(1), "{}", common::show_output(&o));
}
