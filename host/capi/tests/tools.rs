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
    let data = support::workspace().join("tests/data");
    let mut files: Vec<PathBuf> = [
        "hwloc-2.9/xml",
        "conformance/xml",
        "conformance/linux",
        "conformance/x86",
    ]
    .iter()
    .flat_map(|d| {
        std::fs::read_dir(data.join(d))
            .into_iter()
            .flatten()
            .flatten()
    })
    .map(|e| e.path())
    .filter(|p| p.extension().is_some_and(|x| x == "xml"))
    .collect();
    files.sort();
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
    for v in [
        "HWLOC_XMLFILE",
        "HWLOC_SYNTHETIC",
        "HWLOC_FSROOT",
        "HWLOC_COMPONENTS",
        "WLOC_IMAGE",
        "HWLOC_THISSYSTEM",
    ] {
        c.env_remove(v);
    }
    match lib {
        Some(l) => c.env("LD_LIBRARY_PATH", l),
        None => c.env_remove("LD_LIBRARY_PATH"),
    };
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

/// With `WLOC_IMAGE` naming an image of this machine (as a launcher
/// publishes it once per node), the tools print on this library exactly
/// what they print when it discovers the machine, without discovering.
#[test]
fn tools_on_a_launchers_image_print_what_discovery_gives() {
    support::require_c_toolchain();
    let lib = support::library_dir("image");
    // This machine's topology as `wloc ls --of image` publishes it: with
    // lstopo's filters (everything, I/O devices that matter), so that
    // objects are numbered as when lstopo discovers, then annotated.
    let mut all = wloc_core::Topology::new();
    all.set_all_types_filter(TypeFilter::KeepAll);
    all.set_io_types_filter(TypeFilter::KeepImportant);
    let source = wloc::input::Source::ThisSystem;
    let mut model = wloc::input::load(&source, all).unwrap();
    wloc::annotations::annotate_discovered_quietly(&source, &mut model);
    let image = lib.join("this.img");
    wloc_image::write(&model, &image).unwrap();
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

/// Recordings hwloc 2.9 shows differently, and why (wloc's Linux
/// discovery follows hwloc 3 there).
const FSROOT_KNOWN: &[(&str, &str)] = &[
    (
        "2pa-pcidomain32bits",
        "hwloc 2.9 ignores PCI devices of 32-bit domains (its ABI holds 16 bits); wloc keeps them",
    ),
    (
        "32em64t-2n8c+1mic",
        "NVDIMM namespaces (pmem) are listed in another order among their siblings",
    ),
];

/// lstopo's console output of every recorded Linux machine (`-i DIR --if
/// fsroot`, discovered by wloc's sandboxed Linux component on this
/// library) is libhwloc's, but for the known differences above.
#[test]
fn recorded_machines_print_the_same() {
    support::require_c_toolchain();
    let lib = support::library_dir("fsroot");
    let dir = support::workspace().join("tests/data/conformance/linux");
    let (mut compared, mut differ) = (0, Vec::new());
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter_map(|n| n.strip_suffix(".tar.bz2").map(str::to_string))
        .collect();
    names.sort();
    for name in names {
        let ok = Command::new("tar")
            .arg("xjf")
            .arg(dir.join(format!("{name}.tar.bz2")))
            .arg("-C")
            .arg(&lib)
            .status()
            .is_ok_and(|s| s.success());
        let root = lib.join(&name);
        if !ok || !root.is_dir() {
            continue;
        }
        let args: Vec<String> = vec![
            "-i".into(),
            root.display().to_string(),
            "--if".into(),
            "fsroot".into(),
        ];
        let theirs = run("lstopo-no-graphics", &args, None);
        if theirs.status != Some(0) {
            continue;
        }
        let ours = run("lstopo-no-graphics", &args, Some(&lib));
        compared += 1;
        let same = ours.status == theirs.status && ours.stdout == theirs.stdout;
        let known = FSROOT_KNOWN.iter().any(|(n, _)| *n == name);
        if same == known {
            differ.push(format!(
                "{name}: {}",
                if known {
                    "now identical: drop it from FSROOT_KNOWN"
                } else {
                    "differs"
                }
            ));
        }
    }
    eprintln!("{compared} recordings compared");
    assert!(compared >= 20, "only {compared} recordings compared");
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
    match lib {
        Some(l) => c.env("LD_LIBRARY_PATH", l),
        None => c.env_remove("LD_LIBRARY_PATH"),
    };
    for v in [
        "HWLOC_XMLFILE",
        "HWLOC_SYNTHETIC",
        "HWLOC_FSROOT",
        "WLOC_IMAGE",
    ] {
        c.env_remove(v);
    }
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
