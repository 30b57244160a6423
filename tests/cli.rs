//! End-to-end behaviour of the `wloc` command line: inputs, outputs and errors.

use crate::common;

use common::run_wloc;

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn synthetic_input_prints_a_console_listing() {
    let o = run_wloc(["ls", "-i", "pack:2 core:2 pu:2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("Package L#1"), "{text}");
    assert!(text.contains("PU L#7 (P#7)"), "{text}");
}

#[test]
fn output_formats_and_files() {
    let tmp = common::TempDir::new("cli-out");
    let xml = tmp.0.join("t.xml");
    let o = run_wloc(["ls", "-i", "pack:2 pu:2", xml.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = std::fs::read_to_string(&xml).unwrap();
    // hwloc 2.x XML by default: what every released hwloc reads.
    assert!(doc.contains("<topology version=\"2.0\">"), "{doc}");
    // Refuses to overwrite without -f.
    let o = run_wloc(["ls", "-i", "pack:2 pu:2", xml.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("exists"), "{}", stderr(&o));
    // Reads back its own XML, and writes v3 on request.
    let o = run_wloc([
        "ls",
        "-i",
        xml.to_str().unwrap(),
        "--of",
        "xml",
        "--xml-version",
        "3",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("<topology version=\"3.0\">"));
    let o = run_wloc(["ls", "-i", "pack:2 pu:2", "--of", "synthetic"]);
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        "[NUMANode(memory=1073741824)] Package:2 PU:2"
    );
    let o = run_wloc(["ls", "-i", "pack:2 pu:2", "--of", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("valid JSON");
    assert_eq!(v["root"]["type"], "Machine");
}

#[test]
fn bad_inputs_give_clear_errors_not_panics() {
    let tmp = common::TempDir::new("cli-bad");
    let bad = tmp.0.join("bad.xml");
    std::fs::write(&bad, "<topology version=\"2.0\"><object type=\"Nope\"").unwrap();
    let cases: Vec<Vec<String>> = vec![
        vec!["ls".into(), "-i".into(), bad.to_string_lossy().into()],
        vec!["ls".into(), "-i".into(), "pack:0 pu:2".into()],
        vec!["ls".into(), "-i".into(), "pack:2 (".into()],
        vec!["ls".into(), "-i".into(), "/nonexistent/file.xml".into()],
        vec![
            "ls".into(),
            "-i".into(),
            "pack:2 pu:2".into(),
            "--filter".into(),
            "bogus:all".into(),
        ],
        vec![
            "ls".into(),
            "-i".into(),
            "pack:2 pu:2".into(),
            "--filter".into(),
            "core:sometimes".into(),
        ],
        vec![
            "ls".into(),
            "-i".into(),
            "pack:2 pu:2".into(),
            "out.unknownext".into(),
        ],
    ];
    for args in cases {
        let o = run_wloc(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(e.starts_with("wloc: "), "{args:?}: {e}");
        assert!(!e.contains("panicked"), "{args:?}: {e}");
    }
    // Unknown options and formats are usage errors (exit 2).
    let o = run_wloc(["ls", "--if", "floppy", "-i", "x"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn environment_selects_the_input() {
    let o = std::process::Command::new(common::wloc())
        .args(["ls", "--of", "synthetic"])
        .env("WLOC_SYNTHETIC", "node:2 pu:3")
        .env_remove("HWLOC_SYNTHETIC")
        .env_remove("HWLOC_XMLFILE")
        .env_remove("WLOC_XMLFILE")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("PU:3"));
}

/// `ls --restrict` (PUs, `nodeset=`, `binding`, with `--restrict-flags`)
/// prints what lstopo prints, a restriction that fails included (it is
/// reported and the whole topology kept).
#[test]
fn restrict_matches_lstopo() {
    common::require_hwloc();
    let tmp = common::TempDir::new("cli-restrict");
    let xml = tmp.0.join("case.xml");
    common::export_case_v2("16amd64-8n2c-cpusets.xml", &xml, true);
    let inputs = ["pack:2 [numa] l3:2 core:2 pu:2", xml.to_str().unwrap()];
    let cases: &[&[&str]] = &[
        &["--restrict", "0x3"],
        &["--restrict", "0x5"],
        &["--restrict", "nodeset=0x2"],
        &[
            "--restrict",
            "nodeset=0x1",
            "--restrict-flags",
            "bynodeset,remove_memless",
        ],
        &["--restrict", "0x1", "--restrict-flags", "remove_cpuless"],
        &["--restrict", "0xf00000"],
        &["--restrict", "garbage"],
        &["--restrict", "binding"],
        &["--restrict", "0x3", "--of", "xml"],
    ];
    for input in inputs {
        for case in cases {
            let mut args = vec!["-i", input];
            args.extend_from_slice(case);
            let mut w = vec!["ls"];
            w.extend_from_slice(&args);
            let ours = run_wloc(&w);
            let theirs = common::hwloc_2_14_tool("lstopo-no-graphics")
                .args(&args)
                .arg("-")
                .env("LC_ALL", "C")
                .output()
                .unwrap();
            assert_eq!(ours.status.success(), theirs.status.success(), "{args:?}");
            let keep = |o: &std::process::Output| {
                String::from_utf8_lossy(&o.stdout)
                    .lines()
                    .filter(|l| !l.contains("hwlocVersion") && !l.contains("ProcessName"))
                    .map(|l| format!("{l}\n"))
                    .collect::<String>()
            };
            if case.contains(&"xml") {
                // Documents differ in version (wloc writes 3.0); compare
                // what they describe through the console listing instead.
                let doc = tmp.0.join("r.xml");
                std::fs::write(&doc, &ours.stdout).unwrap();
                let back = run_wloc(["ls", "-i", doc.to_str().unwrap()]);
                let mut plain = vec!["ls"];
                plain.extend_from_slice(&args[..args.len() - 2]);
                assert_eq!(keep(&back), keep(&run_wloc(&plain)), "{args:?}");
            } else {
                assert_eq!(keep(&ours), keep(&theirs), "{args:?}");
            }
        }
    }
}

/// lstopo's options that change the topology or its listing: `--allow`,
/// `--flags`, `--cpuset-output-format`, export flags given by name, and
/// output names: `-.EXT` (standard output in format EXT) and a file whose
/// extension picks the format (`.ascii`).  wloc prints (and writes) what
/// hwloc 2.14's lstopo prints, and fails where it fails.
#[test]
fn allow_flags_cof_and_output_names_match_lstopo() {
    common::require_hwloc();
    let tmp = common::TempDir::new("cli-allow-flags");
    let xml = tmp.0.join("case.xml");
    common::export_case_v2("16amd64-8n2c-cpusets.xml", &xml, true);
    let inputs = [
        "pa:1 no:2 co:1 l2:2 2",
        "node:4 pu:4",
        xml.to_str().unwrap(),
    ];
    let cases: &[&[&str]] = &[
        &["-", "--cof", "list", "-v"],
        &["-", "--cpuset-output-format", "taskset", "-c"],
        &["-", "-C", "--cof", "list"],
        &["-", "--allow", "0x30", "--allow", "nodeset=0x2", "-v"],
        &["-", "--allow", "0xf", "--flags", "disallowed", "-v"],
        &["-", "--allow", "0x30", "--allow", "all", "-v"],
        &["-", "--allow", "0x1000000"],
        &["-", "--flags", "no_distances,no_cpukinds", "-v"],
        &["-", "--flags", "is_thissystem", "-v"],
        &["-", "--flags", "nonsense"],
        &["-.xml", "--allow", "0x30", "--allow", "nodeset=0x2"],
        &["-.xml", "--export-xml-flags", "v1"],
        &[
            "-.synthetic",
            "--export-synthetic-flags",
            "extended,attrs,v1",
        ],
        &["-.ascii", "--no-legend"],
    ];
    let keep = |o: &[u8]| {
        String::from_utf8_lossy(o)
            .lines()
            .filter(|l| !l.contains("hwlocVersion") && !l.contains("ProcessName"))
            .map(|l| format!("{l}\n"))
            .collect::<String>()
    };
    for input in inputs {
        for case in cases {
            let mut args = vec!["-i", input];
            args.extend_from_slice(case);
            let ours = std::process::Command::new(common::wloc())
                .arg("ls")
                .args(&args)
                .env("LC_ALL", "C")
                .env("WLOC_HWLOC_COMPAT", "2")
                .output()
                .unwrap();
            let theirs = common::hwloc_2_14_tool("lstopo-no-graphics")
                .args(&args)
                .env("LC_ALL", "C")
                .env("HWLOC_DONT_ADD_VERSION_INFO", "1")
                .output()
                .unwrap();
            assert_eq!(
                ours.status.success(),
                theirs.status.success(),
                "{args:?}: {}",
                stderr(&ours)
            );
            assert_eq!(keep(&ours.stdout), keep(&theirs.stdout), "{args:?}");
        }
    }
    // A file whose extension is a picture format is written in it.
    let ours = tmp.0.join("ours.ascii");
    let theirs = tmp.0.join("theirs.ascii");
    let o = run_wloc([
        "ls",
        "-i",
        "pack:2 core:2 pu:1",
        "--no-legend",
        ours.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let h = common::hwloc_2_14_tool("lstopo-no-graphics")
        .args([
            "-i",
            "pack:2 core:2 pu:1",
            "--no-legend",
            theirs.to_str().unwrap(),
        ])
        .env("LC_ALL", "C")
        .output()
        .unwrap();
    assert!(h.status.success());
    assert_eq!(
        std::fs::read_to_string(&ours).unwrap(),
        std::fs::read_to_string(&theirs).unwrap()
    );
}

/// An admin may withhold CPUID from the built-in Linux component: it still
/// describes this machine (without CPUID's cache inclusiveness), while a
/// component importing CPUID without asking for it stays refused (see
/// `tests/hostile.rs`).
#[test]
fn linux_discovery_runs_with_cpuid_withheld() {
    let tmp = common::TempDir::new("cli-no-cpuid");
    let policy = tmp.0.join("policy.toml");
    std::fs::write(&policy, "[builtin.linux]\ncpuid = false\n").unwrap();
    let o = run_wloc([
        "ls",
        "--policy",
        policy.to_str().unwrap(),
        "--of",
        "xml",
        "-",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = String::from_utf8_lossy(&o.stdout);
    assert!(doc.contains("type=\"PU\""), "{doc}");
    assert!(!doc.contains("cache_inclusive"), "CPUID was asked: {doc}");
    let o = run_wloc(["component", "list", "--policy", policy.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&o.stdout);
    let linux = text
        .split("\nlinux ")
        .nth(1)
        .and_then(|t| t.lines().nth(2))
        .unwrap_or_default();
    assert!(
        linux.contains("granted") && !linux.contains("cpuid"),
        "{text}"
    );
}

/// The README stays a page a newcomer reads in minutes; the rest of the
/// documentation lives under `docs/` and `bench/`.
#[test]
fn readme_is_short() {
    let readme = common::workspace().join("README.md");
    let text = std::fs::read_to_string(&readme).expect("README.md is readable");
    let lines = text.lines().count();
    assert!(
        lines <= 200,
        "README.md has {lines} lines, at most 200 are allowed: move details to docs/"
    );
}

/// Every relative link of the README and of the pages under `docs/` (and
/// of `bench/README.md`) names a file that exists, and its `#anchor`, if
/// any, a heading of that file (as GitHub names headings).
#[test]
fn documentation_links_point_at_existing_files() {
    let root = common::workspace();
    let mut pages = vec![root.join("README.md"), root.join("bench/README.md")];
    let mut dirs = vec![root.join("docs")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("docs/ is readable") {
            let path = entry.expect("docs/ entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                pages.push(path);
            }
        }
    }
    assert!(
        pages.len() > 20,
        "expected the manual pages under docs/manual: {pages:?}"
    );
    let mut bad = Vec::new();
    for page in &pages {
        let text = std::fs::read_to_string(page).expect("page is readable");
        for target in markdown_links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (file, anchor) = match target.split_once('#') {
                Some((f, a)) => (f, Some(a)),
                None => (target.as_str(), None),
            };
            let dest = if file.is_empty() {
                page.clone()
            } else {
                page.parent().expect("page has a folder").join(file)
            };
            if !dest.exists() {
                bad.push(format!("{}: {target}: no such file", page.display()));
                continue;
            }
            if let Some(anchor) = anchor {
                let is_md = dest.extension().is_some_and(|e| e == "md");
                let heads = if is_md {
                    headings(&std::fs::read_to_string(&dest).unwrap_or_default())
                } else {
                    Vec::new()
                };
                if is_md && !heads.iter().any(|h| h == anchor) {
                    bad.push(format!(
                        "{}: {target}: no heading #{anchor}",
                        page.display()
                    ));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "broken documentation links:\n{}",
        bad.join("\n")
    );
}

/// The targets of `[text](target)` links outside fenced code blocks.
fn markdown_links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut rest = line;
        while let Some(i) = rest.find("](") {
            rest = &rest[i + 2..];
            let end = rest.find(')').unwrap_or(rest.len());
            let target = rest[..end].trim();
            if !target.is_empty() && !target.contains(' ') {
                out.push(target.to_string());
            }
            rest = &rest[end..];
        }
    }
    out
}

/// The anchors GitHub gives the headings of a Markdown page: lower case,
/// letters, digits, `-` and `_` kept, spaces made `-`, the rest dropped.
fn headings(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced || !line.starts_with('#') {
            continue;
        }
        let title = line.trim_start_matches('#').trim();
        let slug: String = title
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        out.push(slug);
    }
    out
}
