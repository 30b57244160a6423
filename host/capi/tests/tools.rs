//! Debian's unmodified hwloc 2.9 tools print the same bytes, with the same
//! exit codes, on this library as on libhwloc: lstopo's console, `-v`,
//! XML and synthetic outputs, hwloc-info, hwloc-calc and hwloc-distrib, on
//! every XML topology of the test data (the conformance recordings,
//! written by hwloc 3, are given to both in hwloc 2's form) and on
//! synthetic descriptions.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use wloc_core::topology::TypeFilter;

/// The XML inputs, in hwloc 2's form, written to `dir`.
fn xml_cases(dir: &Path) -> Vec<PathBuf> {
    let files = support::xml_files(&[
        "hwloc-2.9/xml",
        "conformance/xml",
        "conformance/linux",
        "conformance/x86",
    ]);
    let mut out = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let text = std::fs::read_to_string(f).unwrap();
        let v2 = if text.contains("<topology version=\"3.0\">") {
            let mut keep = wloc_core::Topology::new();
            keep.set_all_types_filter(TypeFilter::KeepAll);
            keep.include_disallowed = true;
            match wloc_xml::import_str(&text, keep) {
                Ok(t) => wloc_xml::export_hwloc2(&t),
                Err(_) => continue,
            }
        } else {
            text
        };
        let name = format!("{i:03}-{}", f.file_name().unwrap().to_string_lossy());
        let p = dir.join(name);
        std::fs::write(&p, v2).unwrap();
        out.push(p);
    }
    out
}

const SYNTHETIC: &[&str] = &[
    "pack:2 core:2 pu:2",
    "pack:2 [numa] core:4 pu:2",
    "numa:2 pack:2 l3:1 l2:2 l1:1 core:1 pu:4",
    "pack:4 die:2 core:3 pu:1",
    "node:2(indexes=1,0) pack:1 core:2 pu:2(indexes=3,2,1,0,7,6,5,4)",
];

struct Run {
    status: Option<i32>,
    stdout: Vec<u8>,
}

fn run(tool: &str, args: &[String], lib: Option<&Path>) -> Run {
    let mut c = Command::new(tool);
    c.args(args);
    support::clear_topology_env(&mut c);
    support::use_library(&mut c, lib);
    let o = c.output().unwrap_or_else(|e| panic!("{tool}: {e}"));
    Run {
        status: o.status.code(),
        stdout: o.stdout,
    }
}

/// The tool runs to compare for one input (`-i INPUT` first).
fn runs(input: &str) -> Vec<(&'static str, Vec<String>)> {
    let i = |rest: &[&str]| {
        let mut v = vec!["-i".to_string(), input.to_string()];
        v.extend(rest.iter().map(|s| s.to_string()));
        v
    };
    vec![
        ("lstopo-no-graphics", i(&[])),
        ("lstopo-no-graphics", i(&["-v"])),
        ("lstopo-no-graphics", i(&["--of", "xml"])),
        ("lstopo-no-graphics", i(&["--of", "synthetic"])),
        ("lstopo-no-graphics", i(&["--no-io", "-p"])),
        ("hwloc-info", i(&[])),
        ("hwloc-info", i(&["pu:1", "--ancestors"])),
        ("hwloc-calc", i(&["--number-of", "core", "all"])),
        ("hwloc-calc", i(&["pu:0-3", "--intersect", "core"])),
        ("hwloc-distrib", i(&["5"])),
    ]
}

#[test]
fn hwloc_tools_print_the_same_on_this_library() {
    support::require_c_toolchain();
    let lib = support::library_dir("tools");
    let inputs_dir = lib.join("inputs");
    std::fs::create_dir_all(&inputs_dir).unwrap();
    let mut inputs: Vec<String> = xml_cases(&inputs_dir)
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    inputs.extend(SYNTHETIC.iter().map(|s| s.to_string()));
    let (mut compared, mut differ) = (0, Vec::new());
    for input in &inputs {
        for (tool, args) in runs(input) {
            let theirs = run(tool, &args, None);
            if theirs.status != Some(0) {
                continue; // libhwloc does not read it (hwloc 3 only, ...)
            }
            let ours = run(tool, &args, Some(&lib));
            compared += 1;
            if ours.status != theirs.status || ours.stdout != theirs.stdout {
                let (a, b) = (
                    String::from_utf8_lossy(&theirs.stdout),
                    String::from_utf8_lossy(&ours.stdout),
                );
                let line = a
                    .lines()
                    .zip(b.lines())
                    .position(|(x, y)| x != y)
                    .unwrap_or(0);
                differ.push(format!(
                    "{tool} {}: exit {:?}/{:?}, line {}:\n  libhwloc {:?}\n  wloc     {:?}",
                    args.join(" "),
                    theirs.status,
                    ours.status,
                    line + 1,
                    a.lines().nth(line).unwrap_or(""),
                    b.lines().nth(line).unwrap_or("")
                ));
            }
        }
    }
    eprintln!("{compared} runs compared, {} differ", differ.len());
    assert!(compared >= 300, "only {compared} runs compared");
    assert!(
        differ.is_empty(),
        "{} of {compared} differ:\n{}",
        differ.len(),
        differ.join("\n")
    );
}

/// hwloc's documented export variables act on this library as on
/// libhwloc: `HWLOC_DONT_ADD_VERSION_INFO` (no `hwlocVersion` or
/// `ProcessName` info) and `HWLOC_XML_EXPORT_SUPPORT=0` (no `support`
/// elements); lstopo's XML is the same bytes with each.
#[test]
fn export_variables_act_as_on_libhwloc() {
    support::require_c_toolchain();
    let lib = support::library_dir("tools-env");
    let mut compared = 0;
    for input in SYNTHETIC {
        for (var, value) in [
            ("HWLOC_DONT_ADD_VERSION_INFO", "1"),
            ("HWLOC_XML_EXPORT_SUPPORT", "0"),
            ("HWLOC_XML_EXPORT_SUPPORT", "1"),
        ] {
            let out = |lib: Option<&Path>| {
                let mut c = Command::new("lstopo-no-graphics");
                c.args(["-i", input, "--of", "xml"]);
                support::clear_topology_env(&mut c);
                support::use_library(&mut c, lib);
                c.env(var, value);
                c.output().expect("lstopo runs").stdout
            };
            let (theirs, ours) = (out(None), out(Some(&lib)));
            assert!(!theirs.is_empty());
            assert_eq!(
                String::from_utf8_lossy(&ours),
                String::from_utf8_lossy(&theirs),
                "{var}={value} on {input}"
            );
            compared += 1;
        }
    }
    assert_eq!(compared, SYNTHETIC.len() * 3);
}

/// Debian's unmodified lstopo runs on this library under valgrind with no
/// error, on every XML topology of the test data and on synthetic
/// descriptions: its verbose console on one half, its XML export on the
/// other, two at a time.
#[test]
fn lstopo_runs_clean_under_valgrind_on_every_test_topology() {
    support::require_c_toolchain();
    support::require(&[("/usr/bin/valgrind", "valgrind")]);
    let lib = support::library_dir("tools-valgrind");
    let inputs_dir = lib.join("inputs");
    std::fs::create_dir_all(&inputs_dir).unwrap();
    let supp = support::workspace().join("host/capi/tests/valgrind.supp");
    let mut inputs: Vec<String> = xml_cases(&inputs_dir)
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    inputs.extend(SYNTHETIC.iter().map(|s| s.to_string()));
    let jobs: Vec<(usize, &String)> = inputs.iter().enumerate().collect();
    let start = std::time::Instant::now();
    let bad = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for half in jobs.chunks(jobs.len().div_ceil(2)) {
            let (bad, lib, supp) = (&bad, &lib, &supp);
            scope.spawn(move || {
                for (i, input) in half {
                    let mode: &[&str] = if i % 2 == 0 {
                        &["-v"]
                    } else {
                        &["--of", "xml"]
                    };
                    let mut c = Command::new("valgrind");
                    c.args(["-q", "--error-exitcode=99"])
                        .arg(format!("--suppressions={}", supp.display()))
                        .arg("lstopo-no-graphics")
                        .args(mode)
                        .arg("-i")
                        .arg(input.as_str());
                    support::clear_topology_env(&mut c);
                    support::use_library(&mut c, Some(lib));
                    let o = c.output().expect("valgrind runs");
                    // 99: valgrind found an error; anything else but 0 is
                    // lstopo refusing the input, which libhwloc may too.
                    if o.status.code() == Some(99) || o.status.code().is_none() {
                        let err = String::from_utf8_lossy(&o.stderr);
                        let head: Vec<&str> = err.lines().take(30).collect();
                        bad.lock().unwrap().push(format!(
                            "lstopo-no-graphics {} -i {input}: {:?}\n{}",
                            mode.join(" "),
                            o.status,
                            head.join("\n")
                        ));
                    }
                }
            });
        }
    });
    let bad = bad.into_inner().unwrap();
    eprintln!(
        "{} runs under valgrind in {:?}",
        inputs.len(),
        start.elapsed()
    );
    assert!(inputs.len() >= 60, "only {} inputs", inputs.len());
    assert!(
        bad.is_empty(),
        "{} runs with errors:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

/// With `WLOC_IMAGE` naming an image of this machine (as a launcher
/// publishes it once per node), the tools print on this library exactly
/// what they print when it discovers the machine, without discovering.
#[test]
fn tools_on_a_launchers_image_print_what_discovery_gives() {
    support::require_c_toolchain();
    let lib = support::library_dir("image");
    let image = lib.join("this.img");
    support::this_machine_image(&image);
    for args in [
        &[][..],
        &["-v"],
        &["--of", "xml"],
        &["--of", "synthetic"],
        &["--no-io"],
    ] {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let discovered = run("lstopo-no-graphics", &args, Some(&lib));
        let mut c = Command::new("lstopo-no-graphics");
        c.args(&args)
            .env("LD_LIBRARY_PATH", &lib)
            .env("WLOC_IMAGE", &image);
        let adopted = c.output().unwrap();
        assert_eq!(adopted.status.code(), discovered.status, "{args:?}");
        assert_eq!(
            String::from_utf8_lossy(&adopted.stdout),
            String::from_utf8_lossy(&discovered.stdout),
            "{args:?}"
        );
    }
}

/// The lstopo outputs compared on every recorded Linux machine: a name
/// and the arguments after `-i DIR --if fsroot`.
const FSROOT_FORMATS: &[(&str, &[&str])] = &[
    ("console", &[]),
    ("-v", &["-v"]),
    ("synthetic", &["--of", "synthetic"]),
    ("xml", &["--of", "xml"]),
];

/// A way hwloc 2.9's output of a recording may differ from wloc's without
/// either being wrong; the outputs are compared after allowing for it on
/// both sides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Allowed {
    /// hwloc gives I/O objects their gp indexes in the order `readdir`
    /// returns the entries of /sys/bus/pci/devices, /sys/class/* and
    /// /sys/bus/dax/devices, which depends on the file system the archive
    /// was unpacked on; wloc takes them in name order (on the running
    /// machine's sysfs it knows the kernel's order and matches hwloc).
    /// Compared without the gp indexes of PCI devices, bridges and OS
    /// devices.
    IoReaddirOrder,
    /// hwloc lists OS devices that share a parent in `readdir` order too;
    /// wloc in name order.  Compared as sorted lines, without the logical
    /// indexes (`L#`) of block devices, which follow that order.
    LineOrder,
}

/// Recordings whose outputs may differ from hwloc 2.9's in the ways
/// listed, and why; every other recording prints the same bytes in every
/// format of [`FSROOT_FORMATS`].
const FSROOT_ALLOWED: &[(&str, &[Allowed], &str)] = &[
    (
        "32em64t-2n8c+dax+nvme+mic+dimms",
        &[Allowed::IoReaddirOrder, Allowed::LineOrder],
        "NVDIMM block devices (pmem) below the machine and I/O objects in readdir order",
    ),
    (
        "40intel64-2g2n4c+pcilocality",
        &[Allowed::IoReaddirOrder],
        "PCI functions and OS devices numbered in readdir order",
    ),
    (
        "40intel64-4n10c+pci-conflicts",
        &[Allowed::IoReaddirOrder],
        "PCI functions numbered in readdir order",
    ),
    (
        "fakeheteromemtiers",
        &[Allowed::IoReaddirOrder],
        "DAX devices numbered in /sys/bus/dax/devices' readdir order",
    ),
    (
        "fakepcilocalities",
        &[Allowed::IoReaddirOrder],
        "PCI functions and OS devices numbered in readdir order",
    ),
    (
        "nvidiagpunumanodes",
        &[Allowed::IoReaddirOrder],
        "PCI functions numbered in readdir order",
    ),
];

/// (recording, format, why): outputs hwloc 2.9 writes otherwise, which
/// must still differ (an entry that no longer does is reported, to be
/// dropped).
const FSROOT_KNOWN: &[(&str, &str, &str)] = &[(
    "2pa-pcidomain32bits",
    "xml",
    "hwloc 2.9 skips PCI functions of 32-bit domains (its ABI holds 16 bits) before \
         numbering them; wloc's discovery numbers them as hwloc 3 does and this library leaves \
         them out afterwards, so the gp indexes of the I/O objects after them differ",
)];

/// `out` with what `allowed` permits to differ taken out.
fn allow_for(out: &[u8], allowed: &[Allowed]) -> Vec<String> {
    let mut lines: Vec<String> = String::from_utf8_lossy(out)
        .lines()
        .map(String::from)
        .collect();
    if allowed.contains(&Allowed::IoReaddirOrder) {
        for l in &mut lines {
            let t = l.trim_start();
            let io = ["PCIDev", "Bridge", "OSDev"]
                .iter()
                .any(|ty| t.starts_with(&format!("<object type=\"{ty}\"")));
            if let (true, Some(at)) = (io, l.find(" gp_index=\"")) {
                let len = l[at + 11..].find('"').map_or(0, |e| e + 12);
                l.replace_range(at..at + len, "");
            }
        }
    }
    if allowed.contains(&Allowed::LineOrder) {
        for l in &mut lines {
            if let (true, Some(at)) = (l.trim_start().starts_with("Block"), l.find(" L#")) {
                let digits = l[at + 3..].bytes().take_while(u8::is_ascii_digit).count();
                l.replace_range(at..at + 3 + digits, "");
            }
        }
        lines.sort();
    }
    lines
}

/// Every recorded Linux machine of the conformance data, unpacked below
/// `into`, as (name, the folder to give `-i`).  Some archives hold a
/// folder named otherwise than the archive (32em64t-2n8c+dax+nvme+mic+dimms
/// holds 32em64t-2n8c+1mic): each is unpacked into a folder of its own and
/// its one folder is used.
fn unpack_recordings(into: &Path) -> Vec<(String, PathBuf)> {
    let dir = support::workspace().join("tests/data/conformance/linux");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter_map(|n| n.strip_suffix(".tar.bz2").map(str::to_string))
        .collect();
    names.sort();
    let mut out = Vec::new();
    for name in names {
        let unpacked = into.join(&name);
        let _ = std::fs::remove_dir_all(&unpacked);
        std::fs::create_dir_all(&unpacked).unwrap();
        let ok = Command::new("tar")
            .arg("xjf")
            .arg(dir.join(format!("{name}.tar.bz2")))
            .arg("-C")
            .arg(&unpacked)
            .status()
            .is_ok_and(|s| s.success());
        let folders: Vec<_> = std::fs::read_dir(&unpacked)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        assert!(
            ok && folders.len() == 1,
            "{name}: archive not unpacked to one folder"
        );
        out.push((name, folders[0].clone()));
    }
    out
}

/// lstopo's console, `-v`, synthetic and XML outputs of every recorded
/// Linux machine (`-i DIR --if fsroot`, discovered by wloc's sandboxed
/// Linux component on this library) are libhwloc's, exit code and bytes,
/// but for the known differences above.
#[test]
fn recorded_machines_print_the_same() {
    support::require_c_toolchain();
    let lib = support::library_dir("fsroot");
    let mut differ = Vec::new();
    let mut identical = vec![0; FSROOT_FORMATS.len()];
    let recordings = unpack_recordings(&lib.join("fsroot-recordings"));
    for (name, root) in &recordings {
        let allowed: &[Allowed] = FSROOT_ALLOWED
            .iter()
            .find(|(n, _, _)| n == name)
            .map_or(&[], |(_, a, _)| a);
        for (k, (format, extra)) in FSROOT_FORMATS.iter().enumerate() {
            let mut args: Vec<String> = vec![
                "-i".into(),
                root.display().to_string(),
                "--if".into(),
                "fsroot".into(),
            ];
            args.extend(extra.iter().map(|s| s.to_string()));
            let theirs = run("lstopo-no-graphics", &args, None);
            let ours = run("lstopo-no-graphics", &args, Some(&lib));
            let same = ours.status == theirs.status && ours.stdout == theirs.stdout;
            identical[k] += usize::from(same);
            let known = FSROOT_KNOWN
                .iter()
                .any(|(n, f, _)| n == name && f == format);
            if known {
                if same {
                    differ.push(format!(
                        "{name} [{format}]: now identical: drop it from FSROOT_KNOWN"
                    ));
                }
                continue;
            }
            if !same
                && (ours.status != theirs.status
                    || allow_for(&ours.stdout, allowed) != allow_for(&theirs.stdout, allowed))
            {
                let how = if allowed.is_empty() {
                    String::new()
                } else {
                    format!(" (beyond {allowed:?})")
                };
                differ.push(format!(
                    "{name} [{format}]: differs{how}, exit {:?} vs libhwloc's {:?}",
                    ours.status, theirs.status
                ));
            }
        }
    }
    for ((format, _), n) in FSROOT_FORMATS.iter().zip(&identical) {
        eprintln!(
            "{format}: {n} of {} recordings byte for byte identical",
            recordings.len()
        );
    }
    assert!(
        recordings.len() >= 20,
        "only {} recordings compared",
        recordings.len()
    );
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

/// Runs `tool ARGS` in `dir` and returns its exit code, standard output
/// and the bytes of `out` (the file it writes) if any.
fn run_writing(
    tool: &str,
    args: &[String],
    lib: Option<&Path>,
    dir: &Path,
    out: &str,
) -> (Option<i32>, Vec<u8>, Option<Vec<u8>>) {
    std::fs::create_dir_all(dir).unwrap();
    let _ = std::fs::remove_file(dir.join(out));
    let mut c = Command::new(tool);
    c.args(args).current_dir(dir);
    support::use_library(&mut c, lib);
    support::clear_topology_env(&mut c);
    let o = c.output().unwrap_or_else(|e| panic!("{tool}: {e}"));
    (o.status.code(), o.stdout, std::fs::read(dir.join(out)).ok())
}

/// hwloc-annotate, hwloc-diff and hwloc-bind, which edit objects in place
/// (`--ci` frees each info and the array, `--ri` replaces them), insert
/// Misc objects (numbered after what hwloc allocated while reading) and
/// write files: the same files, output and exit codes on both libraries.
#[test]
fn editing_tools_write_the_same_files() {
    support::require_c_toolchain();
    let lib = support::library_dir("editing");
    let inputs_dir = lib.join("edit-inputs");
    std::fs::create_dir_all(&inputs_dir).unwrap();
    let inputs: Vec<PathBuf> = xml_cases(&inputs_dir)
        .into_iter()
        .filter(|p| {
            run(
                "lstopo-no-graphics",
                &["-i".into(), p.display().to_string()],
                None,
            )
            .status
                == Some(0)
        })
        .collect();
    assert!(inputs.len() >= 20, "only {} inputs", inputs.len());
    let s = |v: &[&str]| -> Vec<String> { v.iter().map(|x| x.to_string()).collect() };
    let (mut compared, mut differ) = (0, Vec::new());
    for input in &inputs {
        let i = input.display().to_string();
        let annotated = lib.join("edit-annotated.xml");
        std::fs::copy(input, &annotated).unwrap();
        let runs: Vec<(&str, Vec<String>)> = vec![
            (
                "hwloc-annotate",
                s(&[&i, "o.xml", "pu:1", "info", "Foo", "Bar"]),
            ),
            (
                "hwloc-annotate",
                s(&[&i, "o.xml", "core:0", "misc", "MyMisc"]),
            ),
            (
                "hwloc-annotate",
                s(&["--ci", &i, "o.xml", "pu:0", "info", "A", "B"]),
            ),
            (
                "hwloc-annotate",
                s(&["--ri", &i, "o.xml", "root", "info", "Backend", "X"]),
            ),
            (
                "hwloc-annotate",
                s(&[&i, "o.xml", "pu:2", "subtype", "Sub"]),
            ),
            (
                "hwloc-annotate",
                s(&[&i, "o.xml", "node:0", "memattr", "Latency", "node:0", "12"]),
            ),
            ("hwloc-diff", s(&[&i, &i, "o.xml"])),
            ("hwloc-bind", s(&["-i", &i, "pu:0", "--get"])),
            (
                "hwloc-calc",
                s(&["-i", &i, "--hierarchical", "package.core", "pu:1"]),
            ),
            ("hwloc-info", s(&["-i", &i, "--support"])),
        ];
        for (tool, args) in runs {
            let theirs = run_writing(tool, &args, None, &lib.join("edit-a"), "o.xml");
            if theirs.0 != Some(0) {
                continue;
            }
            let ours = run_writing(tool, &args, Some(&lib), &lib.join("edit-b"), "o.xml");
            compared += 1;
            if ours != theirs {
                differ.push(format!(
                    "{tool} {}: exit {:?}/{:?}, output {}, file {}",
                    args.join(" "),
                    theirs.0,
                    ours.0,
                    if ours.1 == theirs.1 {
                        "same"
                    } else {
                        "differs"
                    },
                    if ours.2 == theirs.2 {
                        "same"
                    } else {
                        "differs"
                    },
                ));
            }
        }
    }
    eprintln!("{compared} runs compared, {} differ", differ.len());
    assert!(compared >= 150, "only {compared} runs compared");
    assert!(
        differ.is_empty(),
        "{} of {compared} differ:\n{}",
        differ.len(),
        differ.join("\n")
    );
}

/// Every file under `dir`, by path relative to it, with its bytes.
fn files_under(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else if let Ok(bytes) = std::fs::read(&p) {
                let rel = p.strip_prefix(dir).unwrap_or(&p).display().to_string();
                out.insert(rel, bytes);
            }
        }
    }
    out
}

/// What one run of a tool left: exit code, standard output and every
/// file in its (fresh) working folder.
#[derive(Debug, PartialEq)]
struct Outcome {
    status: Option<i32>,
    stdout: Vec<u8>,
    files: std::collections::BTreeMap<String, Vec<u8>>,
}

/// Runs `tool ARGS` in a fresh folder `dir` holding copies of `inputs`
/// (name, source), with `stdin` as its standard input, on the library in
/// `lib` (Debian's when `None`).
fn run_in(
    tool: &str,
    args: &[String],
    lib: Option<&Path>,
    dir: &Path,
    inputs: &[(&str, &Path)],
    stdin: Option<&Path>,
) -> Outcome {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    for (name, src) in inputs {
        std::fs::copy(src, dir.join(name)).unwrap();
    }
    let mut c = Command::new(tool);
    c.args(args).current_dir(dir);
    match stdin {
        Some(f) => c.stdin(std::fs::File::open(f).unwrap()),
        None => c.stdin(std::process::Stdio::null()),
    };
    support::use_library(&mut c, lib);
    support::clear_topology_env(&mut c);
    let o = c.output().unwrap_or_else(|e| panic!("{tool}: {e}"));
    Outcome {
        status: o.status.code(),
        stdout: o.stdout,
        files: files_under(dir),
    }
}

/// One line saying how two outcomes differ.
fn difference(what: &str, theirs: &Outcome, ours: &Outcome) -> String {
    let files: Vec<&String> = theirs
        .files
        .keys()
        .chain(ours.files.keys())
        .filter(|k| theirs.files.get(*k) != ours.files.get(*k))
        .collect();
    format!(
        "{what}: exit {:?}/{:?}, output {}, files differing {files:?}\n  libhwloc {:?}\n  wloc     {:?}",
        theirs.status,
        ours.status,
        if theirs.stdout == ours.stdout {
            "same"
        } else {
            "differs"
        },
        String::from_utf8_lossy(&theirs.stdout),
        String::from_utf8_lossy(&ours.stdout),
    )
}

/// `text` with the value of its first `<info .../>` changed to `value`
/// (`None` when it has no info).
fn with_first_info_value(text: &str, value: &str) -> Option<String> {
    let at = text.find("<info name=\"")?;
    let v = at + text[at..].find(" value=\"")? + " value=\"".len();
    let end = v + text[v..].find('"')?;
    Some(format!("{}{value}{}", &text[..v], &text[end..]))
}

/// The variant of an hwloc XML topology that hwloc's diffs can express:
/// the first info's value changed, the first NUMA node's memory grown by
/// 4 KiB and the first named object renamed. `None` when it has none of
/// these.
fn patchable_variant(text: &str) -> Option<String> {
    let mut t = with_first_info_value(text, "wloc-patched").unwrap_or_else(|| text.to_string());
    if let Some(at) = t.find(" local_memory=\"") {
        let v = at + " local_memory=\"".len();
        if let Some(len) = t[v..].find('"')
            && let Ok(n) = t[v..v + len].parse::<u64>()
        {
            t = format!("{}{}{}", &t[..v], n + 4096, &t[v + len..]);
        }
    }
    // A name attribute of an object (infos have names too).
    let mut from = 0;
    while let Some(o) = t[from..].find("<object ").map(|o| from + o) {
        let end = o + t[o..].find('>').unwrap_or(t.len() - o);
        if let Some(n) = t[o..end].find(" name=\"") {
            let v = o + n + " name=\"".len();
            t = format!("{}wloc-{}", &t[..v], &t[v..]);
            break;
        }
        from = end;
    }
    (t != text).then_some(t)
}

/// Topologies whose variant hwloc-diff does not diff alike on both
/// libraries, and why.
const PATCH_KNOWN: &[(&str, &str)] = &[
    (
        "cxlmem+dax.v2",
        "renaming the OS device dax0.0 changes its type for wloc (hwloc 3's OS device types, \
         which wloc infers from the name when it reads hwloc 2 XML, as hwloc 3 does): \
         too complex for a diff on wloc, a name change on libhwloc",
    ),
    (
        "cxlmem+dax.v3",
        "the same topology in hwloc 3's XML, given as hwloc 2's",
    ),
];

/// hwloc-patch applies diffs hwloc-diff wrote, forwards and backwards
/// (`-R`, `--reverse`), in place, from standard input and against the
/// diff's own reference name, and refuses diffs that do not apply (the
/// wrong direction, another topology, a too-complex entry), with the same
/// files, output and exit codes on both libraries; hwloc-diff writes the
/// same diffs.
#[test]
fn hwloc_patch_applies_and_refuses_diffs_as_on_libhwloc() {
    support::require_c_toolchain();
    let lib = support::library_dir("patch");
    let inputs_dir = lib.join("patch-inputs");
    std::fs::create_dir_all(&inputs_dir).unwrap();
    let s = |v: &[&str]| -> Vec<String> { v.iter().map(|x| x.to_string()).collect() };
    let (mut compared, mut applied, mut refused, mut differ) = (0, 0, 0, Vec::new());
    for input in xml_cases(&inputs_dir) {
        let text = std::fs::read_to_string(&input).unwrap();
        let Some(new) = patchable_variant(&text) else {
            continue;
        };
        let stem = input.file_stem().unwrap().to_string_lossy().into_owned();
        let new_path = inputs_dir.join(format!("{stem}.new"));
        std::fs::write(&new_path, &new).unwrap();
        // Another topology, whose first info the diff does not expect.
        let other = with_first_info_value(&text, "wloc-other").unwrap_or_else(|| new.clone());
        let other_path = inputs_dir.join(format!("{stem}.other"));
        std::fs::write(&other_path, other).unwrap();
        // The diff, as libhwloc's hwloc-diff writes it (the reference
        // name it records is the first argument, "old.xml").
        let files: [(&str, &Path); 3] = [
            ("old.xml", &input),
            ("new.xml", &new_path),
            ("other.xml", &other_path),
        ];
        let diff_args = s(&["old.xml", "new.xml", "d.xml"]);
        let theirs = run_in(
            "hwloc-diff",
            &diff_args,
            None,
            &lib.join("pa"),
            &files,
            None,
        );
        let ours = run_in(
            "hwloc-diff",
            &diff_args,
            Some(&lib),
            &lib.join("pb"),
            &files,
            None,
        );
        if theirs.status != Some(0) {
            // libhwloc does not read it, or the change is too complex
            // for a diff (then both must say so alike).
            if theirs.status != Some(255) {
                compared += 1;
                if ours != theirs {
                    differ.push(difference(&format!("{stem}: hwloc-diff"), &theirs, &ours));
                }
            }
            continue;
        }
        compared += 1;
        let known = PATCH_KNOWN.iter().any(|(n, _)| stem.ends_with(n));
        if (ours != theirs) != known {
            differ.push(if known {
                format!("{stem}: hwloc-diff now the same: drop it from PATCH_KNOWN")
            } else {
                difference(&format!("{stem}: hwloc-diff"), &theirs, &ours)
            });
        }
        // hwloc-patch is compared on libhwloc's diff either way.
        let diff = theirs.files["d.xml"].clone();
        let diff_path = inputs_dir.join(format!("{stem}.diff"));
        std::fs::write(&diff_path, &diff).unwrap();
        // The same diff with a too-complex entry after its changes.
        let complex = String::from_utf8_lossy(&diff).replacen(
            "</topologydiff>",
            "  <diff type=\"1\" obj_depth=\"0\" obj_index=\"0\"/>\n</topologydiff>",
            1,
        );
        let complex_path = inputs_dir.join(format!("{stem}.complex"));
        std::fs::write(&complex_path, complex).unwrap();
        let files: [(&str, &Path); 5] = [
            ("old.xml", &input),
            ("new.xml", &new_path),
            ("other.xml", &other_path),
            ("d.xml", &diff_path),
            ("complex.xml", &complex_path),
        ];
        let runs: Vec<(Vec<String>, Option<&Path>)> = vec![
            (s(&["old.xml", "d.xml", "o.xml"]), None),
            (s(&["-R", "new.xml", "d.xml", "o.xml"]), None),
            (s(&["--reverse", "new.xml", "d.xml", "o.xml"]), None),
            // In place (no output named: the input is rewritten).
            (s(&["old.xml", "d.xml"]), None),
            // The diff's reference name ("old.xml") as the input.
            (s(&["refname", "d.xml", "o.xml"]), None),
            (s(&["old.xml", "-", "o.xml"]), Some(&diff_path)),
            // Refused: wrong direction, another topology, too complex.
            (s(&["new.xml", "d.xml", "o.xml"]), None),
            (s(&["-R", "old.xml", "d.xml", "o.xml"]), None),
            (s(&["other.xml", "d.xml", "o.xml"]), None),
            (s(&["old.xml", "complex.xml", "o.xml"]), None),
            (s(&["old.xml", "missing.xml", "o.xml"]), None),
        ];
        for (args, stdin) in runs {
            let theirs = run_in("hwloc-patch", &args, None, &lib.join("pa"), &files, stdin);
            let ours = run_in(
                "hwloc-patch",
                &args,
                Some(&lib),
                &lib.join("pb"),
                &files,
                stdin,
            );
            compared += 1;
            if theirs.status == Some(0) {
                applied += 1;
            } else {
                refused += 1;
            }
            if ours != theirs {
                differ.push(difference(
                    &format!("{stem}: hwloc-patch {}", args.join(" ")),
                    &theirs,
                    &ours,
                ));
            }
        }
    }
    eprintln!(
        "{compared} runs compared (libhwloc applied {applied} patches, refused {refused}), {} differ",
        differ.len()
    );
    assert!(applied >= 40, "libhwloc applied only {applied} patches");
    assert!(refused >= 40, "libhwloc refused only {refused} patches");
    assert!(
        differ.is_empty(),
        "{} of {compared} differ:\n{}",
        differ.len(),
        differ.join("\n")
    );
}

/// Processes a test started: killed by their pid when dropped, so also
/// when an assertion fails.
struct Started(Vec<std::process::Child>);

impl Drop for Started {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Started {
    fn pids(&self) -> Vec<u32> {
        self.0.iter().map(|c| c.id()).collect()
    }
}

/// The CPUs a task may run on, as Linux lists them (`0-1`, `1`).
fn cpus_allowed(pid: u32, tid: u32) -> Option<String> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .map(|v| v.trim().to_string())
}

/// hwloc-ps's lines about `pids`: a process line (which starts with its
/// pid) and the thread lines under it (`-t`, indented).
fn ps_lines_of(out: &[u8], pids: &[u32]) -> Vec<String> {
    let mut keep = false;
    let mut lines = Vec::new();
    for l in String::from_utf8_lossy(out).lines() {
        if !l.starts_with(' ') {
            keep = l
                .split('\t')
                .next()
                .and_then(|p| p.parse::<u32>().ok())
                .is_some_and(|p| pids.contains(&p));
        }
        if keep {
            lines.push(l.to_string());
        }
    }
    lines
}

/// hwloc-ps on this machine lists processes bound with hwloc-bind and
/// taskset (one with a thread bound elsewhere than its main thread) as on
/// libhwloc, with every option that changes how bindings are shown: the
/// lines about those processes and the exit codes are the same.
#[test]
fn hwloc_ps_lists_bound_processes_as_on_libhwloc() {
    support::require_c_toolchain();
    support::require(&[("/usr/bin/taskset", "util-linux")]);
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        eprintln!("skipped: binding to distinct PUs needs 2 CPUs");
        return;
    }
    let lib = support::library_dir("ps");
    // A process whose second thread binds itself to CPU 1.
    let threads = lib.join("two_threads");
    let src = lib.join("two_threads.c");
    std::fs::write(
        &src,
        "#define _GNU_SOURCE\n#include <pthread.h>\n#include <sched.h>\n#include <unistd.h>\n\
         static void *run(void *a) { cpu_set_t s; CPU_ZERO(&s); CPU_SET(1, &s);\n\
         pthread_setaffinity_np(pthread_self(), sizeof s, &s); pause(); return a; }\n\
         int main(void) { pthread_t t; pthread_create(&t, 0, run, 0); pause(); return 0; }\n",
    )
    .unwrap();
    let o = Command::new("gcc")
        .args(["-O1", "-pthread", "-o"])
        .arg(&threads)
        .arg(&src)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let threads = threads.display().to_string();
    let spawn = |argv: &[&str]| {
        Command::new(argv[0])
            .args(&argv[1..])
            .env_remove("LD_LIBRARY_PATH")
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{argv:?}: {e}"))
    };
    let mut started = Started(Vec::new());
    for argv in [
        &["hwloc-bind", "pu:0", "--", &threads][..],
        &["hwloc-bind", "pu:1", "--", "sleep", "600"],
        &["taskset", "-c", "1", "sleep", "600"],
        &["taskset", "-c", "0,1", "sleep", "600"],
    ] {
        started.0.push(spawn(argv));
    }
    let pids = started.pids();
    // Wait until every binding is in place (the thread binds itself).
    let want: [&[&str]; 4] = [&["0", "1"], &["1"], &["1"], &["0-1"]];
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let now: Vec<Vec<String>> = pids
            .iter()
            .map(|&p| {
                let mut tids: Vec<u32> = std::fs::read_dir(format!("/proc/{p}/task"))
                    .into_iter()
                    .flatten()
                    .flatten()
                    .filter_map(|e| e.file_name().to_str()?.parse().ok())
                    .collect();
                tids.sort();
                tids.iter().filter_map(|&t| cpus_allowed(p, t)).collect()
            })
            .collect();
        if now.iter().zip(want).all(|(n, w)| n == w) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "bindings not in place: {now:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let mut runs: Vec<Vec<String>> = [
        &[][..],
        &["-a"],
        &["-t"],
        &["-c"],
        &["-p"],
        &["-l"],
        &["-a", "-c"],
        &["-a", "-p"],
        &["-t", "-c"],
        &["-t", "-p"],
        &["-e"],
        &["-t", "-e"],
        &["--single-ancestor"],
        &["--short-name", "-t"],
        &["--pid-cmd", "echo"],
        &["--name", "sleep"],
        &["--name", "two_threads", "-t"],
        &["--disallowed"],
        &["--uid", "all"],
    ]
    .iter()
    .map(|a| a.iter().map(|s| s.to_string()).collect())
    .collect();
    for p in &pids {
        for extra in [&[][..], &["-t"], &["-c"], &["-a"]] {
            let mut a = vec!["--pid".to_string(), p.to_string()];
            a.extend(extra.iter().map(|s| s.to_string()));
            runs.push(a);
        }
    }
    let (mut compared, mut differ) = (0, Vec::new());
    for args in &runs {
        let theirs = run("hwloc-ps", args, None);
        let ours = run("hwloc-ps", args, Some(&lib));
        let (a, b) = (
            ps_lines_of(&theirs.stdout, &pids),
            ps_lines_of(&ours.stdout, &pids),
        );
        compared += 1;
        assert_eq!(theirs.status, Some(0), "libhwloc's hwloc-ps {args:?}");
        if (ours.status, &b) != (theirs.status, &a) {
            differ.push(format!(
                "hwloc-ps {}: exit {:?}/{:?}\n  libhwloc {a:?}\n  wloc     {b:?}",
                args.join(" "),
                theirs.status,
                ours.status
            ));
        }
    }
    // The listing is not trivially equal: the bound processes are there.
    let all = ps_lines_of(&run("hwloc-ps", &["-a".to_string()], None).stdout, &pids);
    assert_eq!(all.len(), pids.len(), "{all:?}");
    drop(started);
    eprintln!("{compared} runs compared, {} differ", differ.len());
    assert!(
        differ.is_empty(),
        "{} of {compared} differ:\n{}",
        differ.len(),
        differ.join("\n")
    );
}

/// hwloc-gather-cpuid (x86: it binds itself to each PU in turn and runs
/// CPUID there) writes the same dump files, output and exit codes on
/// both libraries, and the same files twice on each.
#[test]
fn hwloc_gather_cpuid_writes_the_same_dumps() {
    support::require_c_toolchain();
    if !cfg!(target_arch = "x86_64") {
        eprintln!("skipped: hwloc-gather-cpuid reads x86 CPUID");
        return;
    }
    let lib = support::library_dir("cpuid");
    let s = |v: &[&str]| -> Vec<String> { v.iter().map(|x| x.to_string()).collect() };
    let runs = [
        s(&[]), // into ./cpuid
        s(&["dump"]),
        s(&["-s", "dump"]),
        s(&["-c", "0", "dump"]),
        s(&["-c", "1", "dump"]),
        s(&["-c", "0", "-"]),
        s(&["-c", "4096", "dump"]),
    ];
    let mut differ = Vec::new();
    for (k, args) in runs.iter().enumerate() {
        let mut outcomes = Vec::new();
        for (name, l) in [("a", None), ("b", Some(lib.as_path()))] {
            for round in 0..2 {
                let dir = lib.join(format!("gather-{k}-{name}{round}"));
                outcomes.push(run_in("hwloc-gather-cpuid", args, l, &dir, &[], None));
            }
        }
        let theirs = &outcomes[0];
        if k < 3 {
            assert_eq!(theirs.status, Some(0), "libhwloc: {args:?}");
            assert!(
                theirs.files.keys().any(|f| f.ends_with("pu0"))
                    && theirs.files.keys().any(|f| f.ends_with("hwloc-cpuid-info")),
                "libhwloc wrote {:?}",
                theirs.files.keys()
            );
        }
        assert_eq!(
            outcomes[1], outcomes[0],
            "libhwloc's two runs of {args:?} differ"
        );
        for ours in &outcomes[2..] {
            if ours != theirs {
                differ.push(difference(
                    &format!("hwloc-gather-cpuid {}", args.join(" ")),
                    theirs,
                    ours,
                ));
            }
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}
