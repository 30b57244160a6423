//! `wloc slurm`: the node line against Debian's `slurmd -C` (Slurm 22.05,
//! linked with hwloc 2.9) on every conformance XML document, and the
//! gres.conf lines of conformance cases with GPUs and NICs.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// The `Key=Value` fields of a node line, RealMemory left out (slurmd
/// reads the host's memory, not the topology's).
fn fields(line: &str) -> Vec<String> {
    line.split_whitespace()
        .filter(|f| !f.starts_with("RealMemory="))
        .map(str::to_string)
        .collect()
}

/// `slurmd -C` on the hwloc XML file `xml`, with a minimal slurm.conf
/// in `dir` (so that neither /etc/slurm/slurm.conf nor a spool file
/// `hwloc_topo_whole.xml` of a real slurmd is read); its first line.
fn slurmd_line(xml: &Path, dir: &Path) -> Result<String, String> {
    let spool = dir.join("spool");
    std::fs::create_dir_all(&spool).expect("spool dir");
    let conf = dir.join("slurm.conf");
    std::fs::write(
        &conf,
        format!(
            "ClusterName=wloc\nSlurmctldHost=localhost\nSlurmdSpoolDir={}\n",
            spool.display()
        ),
    )
    .expect("slurm.conf");
    let o = Command::new("/usr/sbin/slurmd")
        .arg("-C")
        .env("SLURM_CONF", &conf)
        .env("HWLOC_XMLFILE", xml)
        .env("HWLOC_HIDE_ERRORS", "2")
        .output()
        .expect("slurmd runs");
    let out = String::from_utf8_lossy(&o.stdout);
    match out.lines().next() {
        Some(l) if o.status.success() && l.starts_with("NodeName=") => Ok(l.to_string()),
        _ => Err(format!(
            "slurmd -C failed ({}): {out}{}",
            o.status,
            String::from_utf8_lossy(&o.stderr)
        )),
    }
}

/// Every conformance XML document that hwloc 2.9 reads once exported as
/// hwloc 2 XML: `wloc slurm node` prints the node line `slurmd -C`
/// prints for it, RealMemory aside.
#[test]
fn slurmd_prints_the_same_node_line_for_every_xml_case() {
    common::wloc();
    common::require_packages(&[("/usr/sbin/slurmd", "slurmd")]).expect("Debian's slurmd");
    let tmp = common::TempDir::new("slurm-node");
    let inputs = common::conformance_xmls();
    let mut failures = Vec::new();
    let mut compared = 0;
    let mut cpu_counts = BTreeSet::new();
    for (i, input) in inputs.iter().enumerate() {
        let name = input.file_name().unwrap().to_string_lossy().to_string();
        let v2 = tmp.0.join(format!("{i}.xml"));
        let e = common::export_v2(input, &v2, false);
        if !e.status.success() {
            failures.push(format!("{name}: wloc cannot export it as hwloc 2 XML"));
            continue;
        }
        // Only what hwloc 2.9 reads (slurmd dies on the others).
        let readable = Command::new("lstopo-no-graphics")
            .arg("-i")
            .arg(&v2)
            .args(["--if", "xml", "--of", "xml", "-f"])
            .arg(tmp.0.join("hwloc-read.xml"))
            .env("HWLOC_HIDE_ERRORS", "2")
            .status()
            .is_ok_and(|s| s.success());
        if !readable {
            continue;
        }
        let theirs = match slurmd_line(&v2, &tmp.0) {
            Ok(l) => l,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        let node = theirs
            .split_whitespace()
            .next()
            .and_then(|f| f.strip_prefix("NodeName="))
            .unwrap_or("")
            .to_string();
        let o = common::run_wloc([
            "slurm".as_ref(),
            "node".as_ref(),
            "-i".as_ref(),
            v2.as_os_str(),
            "--name".as_ref(),
            node.as_ref(),
        ]);
        let ours = String::from_utf8_lossy(&o.stdout).trim_end().to_string();
        if !o.status.success() {
            failures.push(format!(
                "{name}: wloc slurm node failed: {}",
                String::from_utf8_lossy(&o.stderr)
            ));
            continue;
        }
        compared += 1;
        if fields(&ours) != fields(&theirs) {
            failures.push(format!(
                "{name}:\n  slurmd -C: {theirs}\n  wloc:      {ours}"
            ));
        }
        if let Some(c) = theirs.split_whitespace().find(|f| f.starts_with("CPUs=")) {
            cpu_counts.insert(c.to_string());
        }
    }
    eprintln!(
        "slurm node: {compared} documents compared with slurmd -C, CPU counts {cpu_counts:?}"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(compared >= 23, "only {compared} cases compared");
    // slurmd really read each file, not this machine.
    assert!(
        cpu_counts.len() >= 5,
        "slurmd -C printed few distinct CPU counts ({cpu_counts:?}): is HWLOC_XMLFILE read?"
    );
}

/// `wloc slurm node -i DIR` prints one line per `*.xml` file, named
/// after it; `--name` with a folder is refused.
#[test]
fn a_folder_of_topologies_gives_one_line_per_node() {
    let xml = common::conformance().join("xml");
    let tmp = common::TempDir::new("slurm-dir");
    for case in ["16em64t-4s2c2t", "nvidiaDGX2"] {
        std::fs::copy(
            xml.join(format!("{case}.xml")),
            tmp.0.join(format!("{case}.xml")),
        )
        .expect("copy");
    }
    let o = common::run_wloc([
        "slurm".as_ref(),
        "node".as_ref(),
        "-i".as_ref(),
        tmp.0.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<_> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(lines[0].starts_with(
        "NodeName=16em64t-4s2c2t CPUs=16 Boards=1 SocketsPerBoard=4 CoresPerSocket=2 ThreadsPerCore=2 RealMemory="
    ), "{out}");
    assert!(lines[1].starts_with("NodeName=nvidiaDGX2 CPUs=4 "), "{out}");
    let o = common::run_wloc([
        "slurm".as_ref(),
        "node".as_ref(),
        "-i".as_ref(),
        tmp.0.as_os_str(),
        "--name".as_ref(),
        "x".as_ref(),
    ]);
    assert!(!o.status.success());
}

/// `wloc slurm gres` on a conformance case.
fn gres(case: &str) -> Vec<String> {
    let path = common::conformance()
        .join("xml")
        .join(format!("{case}.xml"));
    let o = common::run_wloc([
        "slurm".as_ref(),
        "gres".as_ref(),
        "-i".as_ref(),
        path.as_os_str(),
        "--name".as_ref(),
        "n1".as_ref(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// NVIDIA GPUs with CUDA, OpenCL and NVML devices (one line per PCI
/// device, the file from NVML) and NVML-only GPUs, bound to the cores of
/// their package.
#[test]
fn gres_binds_nvidia_gpus_to_their_local_cores() {
    assert_eq!(
        gres("power8gpudistances"),
        [
            "NodeName=n1 Name=gpu File=/dev/nvidia0 Cores=0-3 # cuda0 opencl0d0 nvml0",
            "NodeName=n1 Name=gpu File=/dev/nvidia1 Cores=0-3 # cuda1 opencl0d1 nvml1",
            "NodeName=n1 Name=gpu File=/dev/nvidia2 Cores=4-7 # cuda2 opencl0d2 nvml2",
            "NodeName=n1 Name=gpu File=/dev/nvidia3 Cores=4-7 # cuda3 opencl0d3 nvml3",
        ]
    );
    let dgx = gres("nvidiaDGX2");
    assert_eq!(dgx.len(), 16, "{dgx:?}");
    assert_eq!(
        dgx[0],
        "NodeName=n1 Name=gpu File=/dev/nvidia0 Cores=0-1 # nvml0"
    );
    assert_eq!(
        dgx[15],
        "NodeName=n1 Name=gpu File=/dev/nvidia15 Cores=2-3 # nvml15"
    );
}

/// NICs (Ethernet, InfiniBand with its OpenFabrics device) have no
/// device file: `Count=1` lines; a display-only DRM card is commented out.
#[test]
fn gres_lists_nics_and_comments_out_gpus_without_a_device_file() {
    assert_eq!(
        gres("24em64t-2n6c2t-pci"),
        [
            "NodeName=n1 Name=nic Count=1 Cores=0-5 # eth0",
            "NodeName=n1 Name=nic Count=1 Cores=0-5 # eth1",
            "NodeName=n1 Name=nic Count=1 Cores=0-5 # eth2 ib0 mlx4_0",
        ]
    );
    let lines = gres("96em64t-4n4d3ca2co-pci");
    assert_eq!(lines.len(), 9, "{lines:?}");
    assert_eq!(
        lines[2],
        "# NodeName=n1 Name=gpu Count=1 Cores=0-23 # card0: no DRM render node (display only?)"
    );
    assert_eq!(lines[8], "NodeName=n1 Name=nic Count=1 Cores=72-95 # eth7");
}
