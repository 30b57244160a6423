//! `wloc slurm node` and `wloc k8s nrt` read every kind of input: a
//! recorded `/sys` and `/proc` tree and a CPUID dump give what hwloc's XML
//! of the same machine gives, a synthetic description its counts, an
//! hwloc 1.x XML file and standard input their machine.

use crate::common;

use std::process::{Command, Stdio};

/// `wloc slurm node` and `wloc k8s nrt --of json` with these input
/// arguments and `--name n`.
fn outputs(input: &[&std::ffi::OsStr]) -> (String, String) {
    let run = |cmd: &[&str]| {
        let mut args: Vec<&std::ffi::OsStr> = cmd.iter().map(std::ffi::OsStr::new).collect();
        args.extend_from_slice(input);
        args.extend(["--name", "n"].iter().map(std::ffi::OsStr::new));
        let o = common::run_wloc(&args);
        assert!(
            o.status.success(),
            "wloc {cmd:?} {input:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    (
        run(&["slurm", "node"]),
        run(&["k8s", "nrt", "--of", "json"]),
    )
}

fn zones(nrt_json: &str) -> usize {
    let v: serde_json::Value = serde_json::from_str(nrt_json).expect("JSON");
    v["zones"].as_array().map_or(0, Vec::len)
}

#[test]
fn every_input_kind_gives_a_node_line_and_a_node_resource_topology() {
    let conf = common::conformance();
    let tmp = common::TempDir::new("sched-inputs");

    // A recorded Linux machine, against hwloc's reading of it.
    common::require_hwloc();
    let root = common::unpack("128ia64-17n4s2c", &tmp.0);
    let from_fsroot = outputs(&["-i".as_ref(), root.as_os_str()]);
    let xml = tmp.0.join("hwloc-of-fsroot.xml");
    std::fs::write(&xml, common::hwloc_xml_of_fsroot(&root, &[])).unwrap();
    assert_eq!(from_fsroot, outputs(&["-i".as_ref(), xml.as_os_str()]));
    assert!(
        from_fsroot.0.starts_with("NodeName=n CPUs=128 Boards=17 "),
        "{}",
        from_fsroot.0
    );
    assert_eq!(zones(&from_fsroot.1), 17);

    // A CPUID dump, against hwloc's XML of it.
    let dumps = tmp.0.join("cpuid");
    std::fs::create_dir_all(&dumps).unwrap();
    let st = Command::new("tar")
        .arg("xjf")
        .arg(conf.join("x86/AMD-15h-Bulldozer-4xOpteron-6272.tar.bz2"))
        .arg("-C")
        .arg(&dumps)
        .status()
        .expect("tar runs");
    assert!(st.success());
    let dump = std::fs::read_dir(&dumps)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let from_dump = outputs(&["-i".as_ref(), dump.as_os_str()]);
    let xml = conf.join("x86/AMD-15h-Bulldozer-4xOpteron-6272.xml");
    // hwloc's XML of a dump records the memory of the machine that read
    // it: compare the CPU fields.
    let cpus = |l: &str| l.split(" RealMemory=").next().unwrap().to_string();
    assert_eq!(
        cpus(&from_dump.0),
        cpus(&outputs(&["-i".as_ref(), xml.as_os_str()]).0)
    );
    assert!(
        from_dump.0.starts_with(
            "NodeName=n CPUs=64 Boards=1 SocketsPerBoard=4 CoresPerSocket=16 ThreadsPerCore=1 "
        ),
        "{}",
        from_dump.0
    );

    // A synthetic description.
    let (line, nrt) = outputs(&["-i".as_ref(), "numa:2 pack:1 core:3 pu:2".as_ref()]);
    assert!(
        line.starts_with(
            "NodeName=n CPUs=12 Boards=1 SocketsPerBoard=2 CoresPerSocket=3 ThreadsPerCore=2 "
        ),
        "{line}"
    );
    assert_eq!(zones(&nrt), 2);

    // An hwloc 1.x XML file (a node of the PlaFRIM cluster, hwloc 1.11).
    common::unpack_fabric("plafrim.txz", &tmp.0);
    let v1 = tmp.0.join("plafrim/hwloc/bonobo013.xml");
    let (line, nrt) = outputs(&["-i".as_ref(), v1.as_os_str()]);
    assert!(line.starts_with("NodeName=n CPUs=8 Boards=1 SocketsPerBoard=2 CoresPerSocket=4 ThreadsPerCore=1 RealMemory="), "{line}");
    assert_eq!(zones(&nrt), 1);

    // Standard input.
    let from_stdin = |cmd: &[&str]| {
        let mut c = Command::new(common::wloc())
            .args(cmd)
            .args(["-i", "-", "--name", "n"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("wloc runs");
        std::io::Write::write_all(&mut c.stdin.take().unwrap(), &std::fs::read(&v1).unwrap())
            .unwrap();
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success());
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    assert_eq!(from_stdin(&["slurm", "node"]), line);
    assert_eq!(from_stdin(&["k8s", "nrt", "--of", "json"]), nrt);
}
