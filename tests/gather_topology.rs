//! `wloc gather-topology`: this machine's recording, unpacked, must be read
//! back by wloc as the live machine is discovered, and by hwloc 2.9 as hwloc
//! discovers the live machine.

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

use common::{TempDir, require_hwloc, run_wloc};

fn ok(out: &Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).expect("UTF-8 output")
}

/// Unpacks a `.tar.bz2` into `dest` with the same crates the command writes it with.
fn unpack(tarball: &Path, dest: &Path) {
    let f = std::fs::File::open(tarball).expect("tarball exists");
    let mut ar = tar::Archive::new(bzip2::read::BzDecoder::new(f));
    ar.unpack(dest).expect("tarball unpacks");
}

/// Gathers this machine into `dir/rec*` and unpacks the tarball into `dir/u`.
fn gather(dir: &Path) -> std::path::PathBuf {
    let name = dir.join("rec");
    let name_s = name.to_str().unwrap();
    ok(
        &run_wloc(["gather-topology", "--silent", "--dmi", name_s]),
        "wloc gather-topology",
    );
    for ext in [".tar.bz2", ".output", ".xml"] {
        assert!(
            Path::new(&format!("{name_s}{ext}")).is_file(),
            "{name_s}{ext} was not written"
        );
    }
    let u = dir.join("u");
    unpack(Path::new(&format!("{name_s}.tar.bz2")), &u);
    let top: Vec<String> = std::fs::read_dir(&u)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        top,
        ["rec"],
        "the tarball holds one top directory named rec"
    );
    u.join("rec")
}

#[test]
fn recording_is_read_back_as_the_live_machine() {
    let tmp = TempDir::new("gather-topology");
    let root = gather(&tmp.0);
    let root_s = root.to_str().unwrap();
    for f in [
        "proc/cpuinfo",
        "proc/meminfo",
        "proc/hwloc-nofile-info",
        "sys/devices/system/cpu/online",
    ] {
        assert!(root.join(f).is_file(), "{f} missing from the recording");
    }
    // Links are recorded as links.
    let cpu0 = root.join("sys/bus/cpu/devices/cpu0");
    assert!(
        std::fs::symlink_metadata(&cpu0).is_ok_and(|m| m.file_type().is_symlink()),
        "{} is not a link",
        cpu0.display()
    );
    // Nothing differs between the live machine and its recording: both read
    // the same files, and /proc/hwloc-nofile-info carries the OS names that
    // the live discovery reads from /proc/sys/kernel.  (Were a file to
    // change between the two runs, such as a hot-plugged CPU, the test
    // would rightly fail.)
    for extra in [
        &[][..],
        &["--whole-io", "--disallowed"][..],
        &["--no-io"][..],
    ] {
        // PCI names come from the host's pci.ids, which a recording of
        // /sys and /proc does not hold: compare the discovery itself.
        let mut live_args = vec!["ls", "--of", "xml", "--no-annotate"];
        live_args.extend_from_slice(extra);
        let live = ok(&run_wloc(&live_args), "wloc ls (live)");
        let mut rec_args = vec![
            "ls",
            "-i",
            root_s,
            "--if",
            "fsroot",
            "--of",
            "xml",
            "--no-annotate",
        ];
        rec_args.extend_from_slice(extra);
        let rec = ok(&run_wloc(&rec_args), "wloc ls -i RECORDING");
        // gp_index follows the order a folder is read in, as in hwloc:
        // the kernel's name-hash order live, name order in a recording.
        let (live, rec) = (without_gp_index(&live), without_gp_index(&rec));
        assert!(
            live == rec,
            "live and recorded XML differ with {extra:?}:\n{}",
            first_difference(&live, &rec)
        );
    }
    // NAME.xml is `ls --of xml --whole-io --disallowed` in hwloc 2 XML.
    let xml = std::fs::read_to_string(tmp.0.join("rec.xml")).unwrap();
    let rec = ok(
        &run_wloc([
            "ls",
            "-i",
            root_s,
            "--if",
            "fsroot",
            "--whole-io",
            "--disallowed",
            "--export-xml-flags",
            "2",
            "--of",
            "xml",
        ]),
        "wloc ls -i RECORDING (v2)",
    );
    let (xml, rec) = (without_gp_index(&xml), without_gp_index(&rec));
    assert!(xml == rec, "rec.xml:\n{}", first_difference(&xml, &rec));
    assert!(xml.contains("<topology version=\"2.0\">"));
    // NAME.output is the verbose console listing of the live machine; the
    // recording's adds the line saying it is not this system.
    let output = std::fs::read_to_string(tmp.0.join("rec.output")).unwrap();
    let rec = ok(
        &run_wloc(["ls", "-v", "-i", root_s, "--if", "fsroot"]),
        "wloc ls -v -i RECORDING",
    );
    let rec: String = rec
        .lines()
        .filter(|l| *l != "Topology not from this system")
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(
        output == rec,
        "rec.output:\n{}",
        first_difference(&output, &rec)
    );
}

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
#[test]
fn recording_holds_a_cpuid_dump() {
    let tmp = TempDir::new("gather-topology-cpuid");
    let root = gather(&tmp.0);
    let cpuid = root.join("cpuid");
    assert!(cpuid.join("pu0").is_file() && cpuid.join("hwloc-cpuid-info").is_file());
    let out = run_wloc([
        "ls",
        "-i",
        cpuid.to_str().unwrap(),
        "--if",
        "cpuid",
        "--of",
        "xml",
    ]);
    let xml = ok(&out, "wloc ls -i RECORDING/cpuid");
    assert!(xml.contains("type=\"PU\""));
}

/// Lines of hwloc's XML that depend on how it ran rather than on the
/// machine: binding support exists only for the live system, and hwloc's
/// x86 backend (kept out of the live run) would add CPUID infos.
fn hwloc_machine_lines(xml: &str) -> Vec<&str> {
    xml.lines()
        .filter(|l| !l.trim_start().starts_with("<support name="))
        .collect()
}

#[test]
fn hwloc_reads_the_recording_as_it_discovers_the_live_machine() {
    require_hwloc();
    let tmp = TempDir::new("gather-topology-hwloc");
    let root = gather(&tmp.0);
    let run = |args: &[&str]| -> String {
        let mut cmd = Command::new("lstopo-no-graphics");
        cmd.args(args).env("LC_ALL", "C");
        // A recording is not this system, so hwloc runs only its Linux
        // backend there; the live run must do the same.
        if !args.contains(&"fsroot") {
            cmd.env("HWLOC_COMPONENTS", "-x86");
        }
        let out = cmd.output().expect("lstopo-no-graphics runs");
        ok(&out, &format!("lstopo-no-graphics {args:?}"))
    };
    let live = run(&["--of", "xml"]);
    let rec = run(&[
        "-i",
        root.to_str().unwrap(),
        "--if",
        "fsroot",
        "--of",
        "xml",
    ]);
    let (l, r) = (hwloc_machine_lines(&live), hwloc_machine_lines(&rec));
    assert!(
        l == r,
        "hwloc reads the recording differently from the live machine:\n{}",
        first_difference(&l.join("\n"), &r.join("\n"))
    );
}

#[test]
fn refuses_to_overwrite_and_bad_names() {
    let tmp = TempDir::new("gather-topology-errors");
    let name = tmp.0.join("x");
    std::fs::write(tmp.0.join("x.xml"), "keep me").unwrap();
    let out = run_wloc(["gather-topology", "-s", "--no-io", name.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("x.xml' exists; use -f"), "{err}");
    assert_eq!(
        std::fs::read_to_string(tmp.0.join("x.xml")).unwrap(),
        "keep me"
    );
    // An empty name is refused by the argument parser, the others by the command.
    for (bad, says) in [
        ("/", "invalid recording name"),
        ("..", "invalid recording name"),
        ("", "a value is required"),
    ] {
        let out = run_wloc(["gather-topology", "-s", bad]);
        assert!(!out.status.success(), "name {bad:?} accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{bad:?}: {err}");
        assert!(!err.contains("panicked"));
    }
    // With -f the outputs are replaced, and --keep leaves the tree unpacked.
    let out = run_wloc([
        "gather-topology",
        "-s",
        "-f",
        "--no-io",
        "--keep",
        name.to_str().unwrap(),
    ]);
    ok(&out, "wloc gather-topology -f --keep");
    assert!(
        std::fs::read_to_string(tmp.0.join("x.xml"))
            .unwrap()
            .contains("<topology")
    );
    assert!(name.join("proc/cpuinfo").is_file());
    let live = ok(
        &run_wloc(["ls", "--no-io", "--of", "xml"]),
        "wloc ls --no-io",
    );
    let kept = ok(
        &run_wloc([
            "ls",
            "--no-io",
            "-i",
            name.to_str().unwrap(),
            "--if",
            "fsroot",
            "--of",
            "xml",
        ]),
        "wloc ls -i KEPT",
    );
    assert!(live == kept, "{}", first_difference(&live, &kept));
}

/// The first differing line of two texts, for failure messages.
fn first_difference(a: &str, b: &str) -> String {
    let (la, lb): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    for i in 0..la.len().max(lb.len()) {
        let (x, y) = (la.get(i), lb.get(i));
        if x != y {
            return format!("line {}:\n- {x:?}\n+ {y:?}", i + 1);
        }
    }
    "no line differs".into()
}

/// `xml` without the objects' `gp_index` attributes.
fn without_gp_index(xml: &str) -> String {
    let mut out = String::with_capacity(xml.len());
    let mut rest = xml;
    while let Some(i) = rest.find(" gp_index=\"") {
        out.push_str(&rest[..i]);
        let after = &rest[i + " gp_index=\"".len()..];
        rest = after.find('"').map_or("", |j| &after[j + 1..]);
    }
    out.push_str(rest);
    out
}
