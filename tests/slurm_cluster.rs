//! wloc with a real Slurm (Debian's slurmctld and slurmd 22.05 on this
//! machine, see `common::slurm_cluster`): the controller accepts the node
//! line `wloc slurm node` writes and reports the node as wloc described
//! it; a `topology.conf` loads and `scontrol show topology` shows its
//! switches; `srun wloc ls` gathers the node's topology into a folder,
//! from which `wloc slurm node` writes the node line again.

use crate::common;
use crate::common::slurm_cluster::{ClusterConfig, SlurmCluster};

use std::collections::BTreeMap;

/// The `Key=Value` words of Slurm's output.
fn fields(text: &str) -> BTreeMap<String, String> {
    text.split_whitespace()
        .filter_map(|w| w.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Starts a cluster, or says why the test does not run: Slurm's node
/// daemon needs root.
fn start(config: &ClusterConfig) -> Option<SlurmCluster> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: a real Slurm cluster needs root");
        return None;
    }
    Some(SlurmCluster::start(config).unwrap_or_else(|e| panic!("{e}")))
}

/// slurmctld takes wloc's node line (the node would not become idle
/// otherwise: the cluster waits for that), and `scontrol show node`
/// reports the CPUs, boards, sockets, cores, threads and memory wloc wrote.
#[test]
fn slurm_accepts_and_reports_wlocs_node_line() {
    let Some(c) = start(&ClusterConfig::default()) else {
        return;
    };
    let ours = fields(&c.node_line);
    let shown = c.scontrol(&["show", "node", &c.node]).unwrap();
    let theirs = fields(&shown);
    assert_eq!(theirs.get("NodeName"), ours.get("NodeName"), "{shown}");
    assert_eq!(
        theirs.get("State").map(String::as_str),
        Some("IDLE"),
        "{shown}"
    );
    let sockets =
        ours["SocketsPerBoard"].parse::<u32>().unwrap() * ours["Boards"].parse::<u32>().unwrap();
    for (slurm, wloc) in [
        ("CPUTot", ours["CPUs"].clone()),
        ("Boards", ours["Boards"].clone()),
        ("Sockets", sockets.to_string()),
        ("CoresPerSocket", ours["CoresPerSocket"].clone()),
        ("ThreadsPerCore", ours["ThreadsPerCore"].clone()),
        ("RealMemory", ours["RealMemory"].clone()),
    ] {
        assert_eq!(
            theirs.get(slurm),
            Some(&wloc),
            "{slurm} in:\n{shown}\nwloc: {}",
            c.node_line
        );
    }
}

/// The switches and nodes `scontrol show topology` prints, by switch
/// name: (level, nodes, switches).
fn topology(text: &str) -> BTreeMap<String, (String, String, String)> {
    text.lines()
        .map(fields)
        .filter_map(|f| {
            Some((
                f.get("SwitchName")?.clone(),
                (
                    f.get("Level").cloned().unwrap_or_default(),
                    f.get("Nodes").cloned().unwrap_or_default(),
                    f.get("Switches").cloned().unwrap_or_default(),
                ),
            ))
        })
        .collect()
}

/// A topology.conf with this node and two more under a tree of switches
/// loads, and slurmctld shows the tree as written (nodes gathered up the
/// tree, levels counted from the leaves).
#[test]
fn slurmctld_loads_a_tree_topology_with_this_node() {
    let node = common::slurm_cluster::short_hostname();
    let conf = format!(
        "# written by the test\n\
         SwitchName=leaf1 Nodes={node}\n\
         SwitchName=leaf2 Nodes=peer[1-2]\n\
         SwitchName=spine Switches=leaf[1-2]\n"
    );
    let Some(c) = start(&ClusterConfig {
        topology_conf: Some(conf),
        extra_nodes: vec!["NodeName=peer[1-2] CPUs=1 State=FUTURE".into()],
        ..ClusterConfig::default()
    }) else {
        return;
    };
    let shown = c.scontrol(&["show", "topology"]).unwrap();
    let t = topology(&shown);
    let want: BTreeMap<String, (String, String, String)> = [
        ("leaf1", ("0", node.as_str(), "")),
        ("leaf2", ("0", "peer[1-2]", "")),
        (
            "spine",
            ("1", &format!("{node},peer[1-2]") as &str, "leaf[1-2]"),
        ),
    ]
    .into_iter()
    .map(|(s, (l, n, w))| (s.to_string(), (l.to_string(), n.to_string(), w.to_string())))
    .collect();
    // Slurm may order the spine's nodes its own way: compare them as sets.
    let norm = |m: &BTreeMap<String, (String, String, String)>| -> BTreeMap<String, (String, Vec<String>, String)> {
        m.iter()
            .map(|(k, (l, n, s))| {
                let mut nodes: Vec<String> = n.split(',').map(str::to_string).collect();
                nodes.sort();
                (k.clone(), (l.clone(), nodes, s.clone()))
            })
            .collect()
    };
    assert_eq!(norm(&t), norm(&want), "scontrol show topology:\n{shown}");
}

/// `srun wloc ls --of xml DIR/%h.xml` writes this node's topology named
/// after it; `wloc slurm node -i DIR` gives back the node line.
#[test]
fn srun_gathers_the_node_topology_into_a_folder() {
    let Some(c) = start(&ClusterConfig::default()) else {
        return;
    };
    let dir = c.dir.join("gathered");
    std::fs::create_dir_all(&dir).unwrap();
    let target = dir.join("%h.xml");
    let out = c
        .srun(&[
            "-N1".as_ref(),
            common::wloc().as_os_str(),
            "ls".as_ref(),
            "--of".as_ref(),
            "xml".as_ref(),
            target.as_os_str(),
        ])
        .unwrap_or_else(|e| panic!("{e}\n{}", c.logs()));
    assert!(out.is_empty(), "{out}");
    let file = dir.join(format!("{}.xml", c.node));
    assert!(file.is_file(), "srun wrote no {}", file.display());
    // Slurm's own way: srun writes each node's standard output to %N.
    let out = c
        .srun(&[
            "-N1".as_ref(),
            format!("--output={}/%N-stdout.xml", dir.display()).as_ref(),
            common::wloc().as_os_str(),
            "ls".as_ref(),
            "--of".as_ref(),
            "xml".as_ref(),
            "-".as_ref(),
        ])
        .unwrap_or_else(|e| panic!("{e}\n{}", c.logs()));
    assert!(out.is_empty(), "{out}");
    let second = dir.join(format!("{}-stdout.xml", c.node));
    assert!(second.is_file(), "srun wrote no {}", second.display());
    std::fs::remove_file(&second).unwrap();
    let o = common::run_wloc([
        "slurm".as_ref(),
        "node".as_ref(),
        "-i".as_ref(),
        dir.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), c.node_line);
}

/// The check is real: a node line promising more memory than this
/// machine has leaves the node invalid, and the cluster does not start.
#[test]
fn slurm_refuses_a_node_line_with_too_much_memory() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: a real Slurm cluster needs root");
        return;
    }
    let o = common::run_wloc(["slurm", "node"]);
    let line = String::from_utf8_lossy(&o.stdout).trim().to_string();
    let (head, mem) = line
        .rsplit_once(" RealMemory=")
        .expect("a RealMemory field");
    let more = mem.parse::<u64>().unwrap() * 100 + 1024;
    let wrong = format!("{head} RealMemory={more}");
    let err = match SlurmCluster::start(&ClusterConfig {
        node_line: Some(wrong),
        ..ClusterConfig::default()
    }) {
        Ok(_) => panic!("slurmctld took a node line with RealMemory={more}"),
        Err(e) => e,
    };
    assert!(err.contains("not idle"), "{err}");
    assert!(err.to_lowercase().contains("memory"), "{err}");
}

/// The names a hostlist expression of `scontrol show topology` stands for.
fn hostnames(c: &SlurmCluster, list: &str) -> Vec<String> {
    if list.is_empty() {
        return Vec::new();
    }
    let mut v: Vec<String> = c
        .scontrol(&["show", "hostnames", list])
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    v.sort();
    v
}

/// `wloc slurm topology` of both recorded InfiniBand clusters loads in
/// slurmctld, and `scontrol show topology` shows every switch wloc wrote
/// with the same nodes (leaves) and the same switches below it.
#[test]
fn slurmctld_loads_wlocs_topology_of_the_recorded_fabrics() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: a real Slurm cluster needs root");
        return;
    }
    let all = crate::fabric::clusters();
    for (name, dir) in all.iter().filter(|(a, _)| !a.ends_with("xmlv2")) {
        let out = common::run_wloc(["slurm", "topology", dir.to_str().unwrap()]);
        assert!(out.status.success(), "{name}: {out:?}");
        let conf = String::from_utf8(out.stdout).unwrap();
        // What wloc meant: switch -> (nodes, switches).
        let mut meant: BTreeMap<String, (Vec<String>, Vec<String>)> = BTreeMap::new();
        for l in conf.lines().filter(|l| !l.starts_with('#')) {
            let f = fields(l);
            let list = |k: &str| -> Vec<String> {
                let mut v: Vec<String> = f
                    .get(k)
                    .map(|v| v.split(',').map(str::to_string).collect())
                    .unwrap_or_default();
                v.sort();
                v
            };
            meant.insert(f["SwitchName"].clone(), (list("Nodes"), list("Switches")));
        }
        let hosts: Vec<String> = meant.values().flat_map(|(n, _)| n.clone()).collect();
        assert!(hosts.len() > 10, "{name}: {conf}");
        let Some(c) = start(&ClusterConfig {
            topology_conf: Some(conf.clone()),
            extra_nodes: vec![format!("NodeName={} CPUs=1 State=FUTURE", hosts.join(","))],
            ..ClusterConfig::default()
        }) else {
            return;
        };
        let shown = c.scontrol(&["show", "topology"]).unwrap();
        let t = topology(&shown);
        assert_eq!(
            t.keys().collect::<Vec<_>>(),
            meant.keys().collect::<Vec<_>>(),
            "{name}: switches\n{shown}"
        );
        for (sw, (nodes, subs)) in &meant {
            let (level, shown_nodes, shown_subs) = &t[sw];
            assert_eq!(&hostnames(&c, shown_subs), subs, "{name}: {sw}");
            if subs.is_empty() {
                assert_eq!(level, "0", "{name}: {sw} is a leaf");
                assert_eq!(&hostnames(&c, shown_nodes), nodes, "{name}: {sw}");
            }
        }
    }
}

/// The CPU masks two tasks of a `--cpu-bind=cores` step get, as `taskset`
/// prints them inside the job, sorted.
fn core_bindings(c: &SlurmCluster) -> Vec<String> {
    let out = c
        .srun(&[
            "-n".as_ref(),
            "2".as_ref(),
            "--cpu-bind=cores".as_ref(),
            "sh".as_ref(),
            "-c".as_ref(),
            "taskset -p $$ | sed 's/.*: //'".as_ref(),
        ])
        .unwrap_or_else(|e| panic!("{e}\n{}", c.logs()));
    let mut masks: Vec<String> = out.lines().map(|l| l.trim().to_string()).collect();
    masks.sort();
    masks
}

/// `slurmd -C` on wloc's library with `WLOC_IMAGE` naming this machine's
/// image (`wloc ls --of image`) prints the node line it prints when
/// discovering (and libhwloc's), and discovers nothing: under strace, no
/// sysfs discovery, the image read instead; the control run without the
/// image discovers.
#[test]
fn slurmd_on_a_launchers_image_prints_the_node_line_without_discovering() {
    common::require_packages(&[
        ("/usr/sbin/slurmd", "slurmd"),
        ("/usr/bin/strace", "strace"),
    ])
    .unwrap();
    let lib = common::wloc_libhwloc_dir("slurm");
    let image = lib.join("this.img");
    let o = common::run_wloc([
        "ls".as_ref(),
        "--of".as_ref(),
        "image".as_ref(),
        image.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let node_line = |ours: bool, img: bool, trace: Option<&std::path::Path>| {
        let mut cmd = match trace {
            Some(t) => {
                let mut c = std::process::Command::new("strace");
                c.args(["-f", "-qq", "-e", "trace=open,openat,openat2", "-o"])
                    .arg(t)
                    .arg("/usr/sbin/slurmd");
                c
            }
            None => std::process::Command::new("/usr/sbin/slurmd"),
        };
        cmd.arg("-C")
            .env_remove("HWLOC_XMLFILE")
            .env_remove("WLOC_IMAGE")
            .env_remove("LD_LIBRARY_PATH");
        if ours {
            cmd.env("LD_LIBRARY_PATH", &lib);
        }
        if img {
            cmd.env("WLOC_IMAGE", &image);
        }
        let o = cmd.output().unwrap();
        let text = String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter(|l| !l.starts_with("UpTime="))
            .collect::<Vec<_>>()
            .join("\n");
        (o.status.code(), text)
    };
    let theirs = node_line(false, false, None);
    assert_eq!(theirs.0, Some(0), "{theirs:?}");
    assert!(theirs.1.starts_with("NodeName="), "{theirs:?}");
    assert_eq!(node_line(true, false, None), theirs, "discovering");
    assert_eq!(node_line(true, true, None), theirs, "on the image");
    let (with, without) = (lib.join("with-image.trace"), lib.join("discovering.trace"));
    assert_eq!(node_line(true, true, Some(&with)), theirs);
    assert_eq!(node_line(true, false, Some(&without)), theirs);
    assert!(
        common::discoveries(&without) >= 1,
        "the control run discovered nothing: the count is blind"
    );
    assert_eq!(
        common::discoveries(&with),
        0,
        "slurmd -C discovered with WLOC_IMAGE set"
    );
    let log = std::fs::read_to_string(&with).unwrap();
    assert!(
        log.contains(&format!("\"{}\"", image.display())),
        "slurmd -C did not read the image"
    );
    let _ = std::fs::remove_dir_all(&lib);
}

/// Debian's unmodified slurmd on wloc's libhwloc.so.15: `slurmd -C` prints
/// the node line it prints on libhwloc (this machine, and every hwloc 2.9
/// test topology through HWLOC_XMLFILE); a slurmd started on it registers
/// with slurmctld, and `srun --cpu-bind=cores` binds tasks as on libhwloc.
#[test]
fn slurmd_runs_on_wlocs_libhwloc() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: a real Slurm cluster needs root");
        return;
    }
    let lib = common::wloc_libhwloc_dir("slurm");
    common::require_packages(&[("/usr/sbin/slurmd", "slurmd")]).unwrap();
    let node_line = |xml: Option<&std::path::Path>, ours: bool| {
        let mut cmd = std::process::Command::new("/usr/sbin/slurmd");
        cmd.arg("-C").env_remove("HWLOC_XMLFILE");
        if let Some(x) = xml {
            cmd.env("HWLOC_XMLFILE", x);
        }
        if ours {
            cmd.env("LD_LIBRARY_PATH", &lib);
        }
        let o = cmd.output().unwrap();
        // The uptime line changes between the two runs.
        let text = String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter(|l| !l.starts_with("UpTime="))
            .collect::<Vec<_>>()
            .join("\n");
        (
            o.status.code(),
            text,
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let xml_dir = common::workspace().join("tests/data/hwloc-2.9/xml");
    let mut inputs: Vec<Option<std::path::PathBuf>> = vec![None];
    inputs.extend(
        std::fs::read_dir(&xml_dir)
            .unwrap()
            .flatten()
            .map(|e| Some(e.path())),
    );
    for input in &inputs {
        let theirs = node_line(input.as_deref(), false);
        let ours = node_line(input.as_deref(), true);
        assert_eq!(ours, theirs, "slurmd -C on {input:?}");
    }
    // A launcher's image of this machine, for the third slurmd.
    let image = lib.join("this.img");
    let o = common::run_wloc([
        "ls".as_ref(),
        "--of".as_ref(),
        "image".as_ref(),
        image.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // libhwloc, wloc's library discovering, wloc's library on the image:
    // the node as slurmctld shows it and the task bindings.
    let mut seen = Vec::new();
    for (ours, img) in [(false, false), (true, false), (true, true)] {
        let Some(c) = start(&ClusterConfig {
            task_affinity: true,
            slurmd_library_path: ours.then(|| lib.clone()),
            slurmd_image: img.then(|| image.clone()),
            ..ClusterConfig::default()
        }) else {
            return;
        };
        if ours {
            let pid = c.pid("slurmd").expect("slurmd runs");
            let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap_or_default();
            let ours_loaded = maps
                .lines()
                .any(|l| l.contains("libhwloc.so") && !l.contains("/usr/lib"));
            assert!(ours_loaded, "slurmd did not load wloc's library:\n{maps}");
            // The library loads its discovery module only to discover.
            let module = maps.lines().any(|l| l.contains("libwloc_discover.so"));
            assert_eq!(
                module,
                !img,
                "slurmd {} the discovery module{}:\n{maps}",
                if module { "mapped" } else { "did not map" },
                if img { " with WLOC_IMAGE set" } else { "" }
            );
        }
        let node = fields(&c.scontrol(&["show", "node", &c.node]).unwrap());
        let shown: Vec<Option<String>> = [
            "CPUTot",
            "Boards",
            "Sockets",
            "CoresPerSocket",
            "ThreadsPerCore",
            "RealMemory",
        ]
        .iter()
        .map(|k| node.get(*k).cloned())
        .collect();
        seen.push((shown, core_bindings(&c)));
    }
    assert_eq!(
        seen[1], seen[0],
        "node and task bindings: wloc's library, then libhwloc's"
    );
    assert_eq!(
        seen[2], seen[0],
        "node and task bindings: wloc's library on the image, then libhwloc's"
    );
    assert_eq!(seen[0].1.len(), 2, "{:?}", seen[0]);
}
