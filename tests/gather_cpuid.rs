//! `wloc gather-cpuid` on this machine: the dump it writes is the one
//! hwloc-gather-cpuid writes, wloc reads it back, and so does hwloc's x86
//! backend, with the same result.

use crate::common;

use std::process::Command;

use common::{TempDir, run_wloc};

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// PUs the test process may run on and that are online: what both
/// gatherers visit.
fn pu_count() -> usize {
    let o = Command::new("nproc").output().expect("nproc runs");
    String::from_utf8_lossy(&o.stdout).trim().parse().unwrap()
}

#[test]
fn gathers_this_machine_like_hwloc() {
    if !cfg!(all(target_os = "linux", target_arch = "x86_64")) {
        let tmp = TempDir::new("gather-unsupported");
        let o = run_wloc(["gather-cpuid".as_ref(), tmp.0.join("d").as_os_str()]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        return;
    }
    let tmp = TempDir::new("gather");
    let dir = tmp.0.join("cpuid");
    let o = run_wloc(["gather-cpuid".as_ref(), "-s".as_ref(), dir.as_os_str()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stdout.is_empty(), "-s prints nothing");
    let n = pu_count();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    let mut expected: Vec<String> = (0..n).map(|i| format!("pu{i}")).collect();
    expected.push("hwloc-cpuid-info".into());
    expected.sort();
    assert_eq!(names, expected);
    assert_eq!(
        std::fs::read_to_string(dir.join("hwloc-cpuid-info")).unwrap(),
        "Architecture: x86\n"
    );
    for i in 0..n {
        let text = std::fs::read_to_string(dir.join(format!("pu{i}"))).unwrap();
        assert!(
            text.starts_with("# mask e[abcd]x => e[abcd]x\n1 0 0 0 0 => "),
            "{text}"
        );
        assert!(text.contains("\n1 80000000 0 0 0 => "), "{text}");
    }

    // An existing, non-empty directory is kept unless -f is given.
    let o = run_wloc(["gather-cpuid".as_ref(), dir.as_os_str()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("-f"), "{}", stderr(&o));
    std::fs::write(dir.join("pu999"), "stale").unwrap();
    std::fs::write(dir.join("notes.txt"), "mine").unwrap();
    let o = run_wloc(["gather-cpuid".as_ref(), "-f".as_ref(), dir.as_os_str()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("Gathering CPUID of PU P#0"));
    assert!(!dir.join("pu999").exists(), "stale dump files are removed");
    assert!(dir.join("notes.txt").exists(), "other files are kept");
    std::fs::remove_file(dir.join("notes.txt")).unwrap();

    // wloc reads it back.
    let o = run_wloc([
        "ls".as_ref(),
        "-i".as_ref(),
        dir.as_os_str(),
        "--if".as_ref(),
        "cpuid".as_ref(),
        "--of".as_ref(),
        "xml".as_ref(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let ours = tmp.0.join("wloc.xml");
    std::fs::write(&ours, &o.stdout).unwrap();
    let doc = String::from_utf8_lossy(&o.stdout);
    assert_eq!(doc.matches("type=\"PU\"").count(), n, "{doc}");

    // hwloc's x86 backend reads the same dump into the same machine.
    common::require_hwloc();
    let h = Command::new("lstopo-no-graphics")
        .args(["--of", "xml", "-"])
        .env("HWLOC_COMPONENTS", "x86,stop")
        .env("HWLOC_CPUID_PATH", &dir)
        .env("LC_ALL", "C")
        .output()
        .expect("lstopo-no-graphics runs");
    assert!(h.status.success(), "{}", stderr(&h));
    let theirs = tmp.0.join("hwloc.xml");
    std::fs::write(&theirs, &h.stdout).unwrap();
    if let Err(e) = common::compare_full(&theirs, &ours) {
        panic!("hwloc and wloc read the dump differently: {e}");
    }

    // hwloc-gather-cpuid writes the same lines (a later hwloc may add
    // leaves, so ours must hold every line of theirs, in order).
    let hw = tmp.0.join("hwloc-dump");
    let g = Command::new("hwloc-gather-cpuid")
        .arg("-s")
        .arg(&hw)
        .output()
        .expect("hwloc-gather-cpuid runs");
    assert!(g.status.success(), "{}", stderr(&g));
    for i in 0..n {
        let name = format!("pu{i}");
        let theirs = std::fs::read_to_string(hw.join(&name)).unwrap();
        let ours = std::fs::read_to_string(dir.join(&name)).unwrap();
        let mut it = ours.lines();
        for l in theirs.lines() {
            assert!(
                it.any(|o| o == l),
                "{name}: hwloc-gather-cpuid line {l:?} missing from ours:\n{ours}"
            );
        }
    }
}

/// `wloc ls --if cpuid` without `-i` decodes this machine's CPUID in the
/// x86 component, as reading a dump gathered here does.
#[test]
fn this_machine_from_cpuid_equals_its_dump() {
    if !cfg!(all(target_os = "linux", target_arch = "x86_64")) {
        return;
    }
    let tmp = TempDir::new("cpuid-live");
    let dir = tmp.0.join("cpuid");
    let o = run_wloc(["gather-cpuid".as_ref(), "-s".as_ref(), dir.as_os_str()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let live = run_wloc(["ls", "--if", "cpuid", "--of", "synthetic"]);
    assert!(live.status.success(), "{}", stderr(&live));
    let dumped = run_wloc([
        "ls".as_ref(),
        "-i".as_ref(),
        dir.as_os_str(),
        "--if".as_ref(),
        "cpuid".as_ref(),
        "--of".as_ref(),
        "synthetic".as_ref(),
    ]);
    assert!(dumped.status.success(), "{}", stderr(&dumped));
    assert_eq!(
        String::from_utf8_lossy(&live.stdout),
        String::from_utf8_lossy(&dumped.stdout)
    );
    assert!(!live.stdout.is_empty());
}
