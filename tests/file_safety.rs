//! What the commands guarantee about files (docs/trust-model.md, "Files"):
//! every file a command writes is the old one or the complete new one,
//! whether the disk fills or the command is killed while it writes, and no
//! temporary stays behind; the policy file keeps every concurrent edit;
//! compress-dir and uncompress-dir check what an earlier run left; and a
//! file argument that is not a regular file (a FIFO, `/dev/zero`) is
//! refused at once, with an error naming it.
//!
//! A full disk is a file-size limit (RLIMIT_FSIZE) with SIGXFSZ ignored:
//! writes past it fail with EFBIG.  A kill while writing is the same limit
//! with SIGXFSZ at its default action: the kernel kills the command at the
//! write that passes it, at a chosen point of the output.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::{TempDir, conformance, show_output, wloc};

/// A topology of about 100 KB: its exports are larger than the limits.
fn input_xml() -> PathBuf {
    conformance().join("xml/96em64t-4n4d3ca2co-pci.xml")
}

/// `wloc ARGS` in `dir`, with a cache and home of its own.
fn cmd(dir: &Path, args: &[OsString]) -> Command {
    let mut c = Command::new(wloc());
    c.args(args)
        .current_dir(dir)
        .env("LC_ALL", "C")
        .env("HOME", dir)
        .env("WLOC_CACHE_DIR", dir.join(".cache-not-checked"))
        .env_remove("WLOC_POLICY")
        .stdin(Stdio::null());
    c
}

/// Limits the files the command writes to `limit` bytes; `die`: SIGXFSZ
/// kills it at the write that passes (else that write fails with EFBIG).
fn limit_files(c: &mut Command, limit: u64, die: bool) {
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        c.pre_exec(move || {
            let fsize = libc::rlimit {
                rlim_cur: limit,
                rlim_max: limit,
            };
            let core = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::setrlimit(libc::RLIMIT_FSIZE, &fsize);
            libc::setrlimit(libc::RLIMIT_CORE, &core);
            libc::signal(
                libc::SIGXFSZ,
                if die { libc::SIG_DFL } else { libc::SIG_IGN },
            );
            Ok(())
        });
    }
}

fn os(args: &[&str]) -> Vec<OsString> {
    args.iter().map(OsString::from).collect()
}

/// The paths under `dir` (but the cache), relative to it, sorted: folders
/// are walked, so litter beside an output in a subfolder is seen.
fn listing(dir: &Path) -> BTreeSet<OsString> {
    fn walk(root: &Path, rel: &Path, out: &mut BTreeSet<OsString>) {
        for e in std::fs::read_dir(root.join(rel)).unwrap() {
            let e = e.unwrap();
            let name = rel.join(e.file_name());
            if name.as_os_str() == ".cache-not-checked" {
                continue;
            }
            out.insert(name.clone().into_os_string());
            if e.file_type().unwrap().is_dir() {
                walk(root, &name, out);
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(dir, Path::new(""), &mut out);
    out
}

fn run_ok(dir: &Path, args: &[&str]) {
    let o = cmd(dir, &os(args)).output().unwrap();
    assert!(o.status.success(), "wloc {args:?}: {}", show_output(&o));
}

/// One command that writes `target` (relative to the folder), which holds
/// `old` before (restored before every run).
struct Writer {
    name: &'static str,
    args: Vec<OsString>,
    target: String,
    old: Vec<u8>,
    /// A limit below the new file's size.
    limit: u64,
    /// A file the command leaves by design (the policy's lock file).
    also: Option<&'static str>,
}

/// The folder every writer runs in: `in.xml`, an annotated `b.xml`, the
/// diff `d.xml` between them and the store `s.wstore` of both.
fn workspace() -> (TempDir, Vec<Writer>) {
    let t = TempDir::new("file-safety");
    let d = &t.0;
    let input = std::fs::read(input_xml()).unwrap();
    std::fs::write(d.join("in.xml"), &input).unwrap();
    run_ok(
        d,
        &["annotate", "in.xml", "b.xml", "root", "info", "k", "v"],
    );
    run_ok(d, &["diff", "in.xml", "b.xml", "d.xml"]);
    run_ok(d, &["store", "pack", "-o", "s.wstore", "in.xml", "b.xml"]);
    // A component, a key pair and a manifest for the component commands,
    // a fabric file for `fabric export`.
    let wasm = std::fs::read(
        Path::new(wloc_runtime::test_components_dir()).join("hostile-read-dotdot.wasm"),
    )
    .unwrap();
    std::fs::write(d.join("x.wasm"), &wasm).unwrap();
    run_ok(d, &["component", "keygen", "k"]);
    std::fs::write(
        d.join("m.toml"),
        "name = \"file-safety\"\nversion = \"1.0.0\"\nkind = \"discovery\"\n[capabilities]\nfiles = [\"/sys\"]\n",
    )
    .unwrap();
    std::fs::copy(
        crate::common::workspace().join("tests/data/fabric/handwritten-topology.txt"),
        d.join("fabric.txt"),
    )
    .unwrap();
    let old = b"OLD\n".to_vec();
    let w = |name, args: &[&str], target: &str, old: &[u8], limit| Writer {
        name,
        args: os(args),
        target: target.to_string(),
        old: old.to_vec(),
        limit,
        also: None,
    };
    let writers = vec![
        w(
            "annotate in place",
            &["annotate", "t.xml", "t.xml", "root", "info", "k", "v"],
            "t.xml",
            &input,
            // Only writes pass a limit: the old file may be above it.
            input.len() as u64 / 2,
        ),
        w(
            "patch in place",
            &["patch", "t.xml", "d.xml"],
            "t.xml",
            &input,
            input.len() as u64 / 2,
        ),
        w(
            "annotate",
            &["annotate", "in.xml", "t.out", "root", "info", "k", "v"],
            "t.out",
            &old,
            1024,
        ),
        w(
            "ls --of xml",
            &["ls", "-f", "-i", "in.xml", "--of", "xml", "t.out"],
            "t.out",
            &old,
            1024,
        ),
        w(
            "ls --of image",
            &["ls", "-f", "-i", "in.xml", "--of", "image", "t.out"],
            "t.out",
            &old,
            1024,
        ),
        w(
            "ls --of svg",
            &["ls", "-f", "-i", "in.xml", "--of", "svg", "t.out"],
            "t.out",
            &old,
            1024,
        ),
        w(
            "ls --of json",
            &["ls", "-f", "-i", "in.xml", "--of", "json", "t.out"],
            "t.out",
            &old,
            1024,
        ),
        w(
            "diff",
            &["diff", "in.xml", "b.xml", "t.out"],
            "t.out",
            &old,
            64,
        ),
        w(
            "store pack",
            &["store", "pack", "-o", "t.out", "in.xml", "b.xml"],
            "t.out",
            &old,
            1024,
        ),
        w(
            "store get",
            &["store", "get", "s.wstore", "in", "-o", "t.out"],
            "t.out",
            &old,
            1024,
        ),
        w(
            "graph",
            &["graph", "-i", "in.xml", "--of", "dot", "t.out"],
            "t.out",
            &old,
            1024,
        ),
        w(
            "component sign",
            &[
                "component",
                "sign",
                "x.wasm",
                "--key",
                "k.key",
                "-o",
                "t.out",
            ],
            "t.out",
            &old,
            1024,
        ),
        w(
            "component embed",
            &[
                "component",
                "embed",
                "x.wasm",
                "--manifest",
                "m.toml",
                "-o",
                "t.out",
            ],
            "t.out",
            &old,
            1024,
        ),
        w(
            "component sign in place",
            &[
                "component",
                "sign",
                "t.wasm",
                "--key",
                "k.key",
                "--manifest",
                "m.toml",
            ],
            "t.wasm",
            &wasm,
            1024,
        ),
        w(
            "component add",
            &["component", "add", "x.wasm"],
            ".local/share/wloc/components/hostile-read-dotdot.wasm",
            &old,
            1024,
        ),
        w("manual", &["manual", "man"], "man/wloc.1", &old, 256),
        w(
            "fabric export",
            &["fabric", "export", "--of", "json", "fabric.txt", "t.out"],
            "t.out",
            &old,
            256,
        ),
        Writer {
            also: Some("t.out.lock"),
            ..w(
                "component allow (policy)",
                &[
                    "component",
                    "--policy",
                    "t.out",
                    "allow",
                    "x.wasm",
                    "--files",
                    "/sys",
                ],
                "t.out",
                b"# p\n",
                8,
            )
        },
        Writer {
            also: Some("t.out.lock"),
            ..w(
                "component deny (policy)",
                &["component", "--policy", "t.out", "deny", "somecomponent"],
                "t.out",
                b"# p\n",
                8,
            )
        },
    ];
    let mut writers = writers;
    writers.push(w(
        "gather-topology -f",
        &["gather-topology", "-f", "-s", "--no-io", "--no-cpuid", "g"],
        "g.tar.bz2",
        &old,
        1024,
    ));
    if cfg!(target_arch = "x86_64") {
        writers.push(w(
            "gather-cpuid -f",
            &["gather-cpuid", "-f", "-s", "cpuid"],
            "cpuid/pu0",
            &old,
            256,
        ));
    }
    (t, writers)
}

/// Puts the old file of `w` back and removes anything a run left.
fn restore(d: &Path, w: &Writer, before: &BTreeSet<OsString>) {
    // Deepest first, so a folder is empty when its turn comes.
    let extra: Vec<OsString> = listing(d).difference(before).cloned().collect();
    for n in extra.iter().rev() {
        let p = d.join(n);
        if p.is_dir() {
            let _ = std::fs::remove_dir(&p);
        } else {
            let _ = std::fs::remove_file(&p);
        }
    }
    let target = d.join(&w.target);
    let _ = std::fs::remove_file(&target);
    std::fs::create_dir_all(target.parent().unwrap()).unwrap();
    std::fs::write(&target, &w.old).unwrap();
}

/// `path` and every folder above it (up to `dir`), as [`listing`] names them.
fn with_folders(path: &str) -> Vec<OsString> {
    Path::new(path)
        .ancestors()
        .filter(|a| !a.as_os_str().is_empty())
        .map(|a| a.as_os_str().to_owned())
        .collect()
}

/// Whether what a killed run of `w` left (`left` beyond `before`) is gone
/// after the next run: no handler runs on a kill, so a private folder may
/// stay until then (`gather-topology`'s), but never longer.
fn next_run_removes(
    d: &Path,
    w: &Writer,
    left: &BTreeSet<OsString>,
    before: &BTreeSet<OsString>,
) -> bool {
    let litter: Vec<&OsString> = left.difference(before).collect();
    let o = cmd(d, &w.args).output().unwrap();
    let after = listing(d);
    let gone = o.status.success() && litter.iter().all(|l| !after.contains(*l));
    restore(d, w, before);
    // The old file is back for the checks that follow.
    gone
}

/// Runs every writer under its limit (`die`: killed at the write that
/// passes it) and checks the old file and nothing else is left.
fn every_writer_keeps_the_old_file(die: bool) {
    let (t, writers) = workspace();
    let d = &t.0;
    let mut bad = Vec::new();
    for w in &writers {
        let before: BTreeSet<OsString> = listing(d)
            .into_iter()
            .chain(with_folders(&w.target))
            .chain(w.also.map(OsString::from))
            .collect();
        // The command does write its target when it may.
        restore(d, w, &before);
        let o = cmd(d, &w.args).output().unwrap();
        let new = std::fs::read(d.join(&w.target)).unwrap();
        assert!(
            o.status.success() && new != w.old && new.len() as u64 > w.limit,
            "{}: without a limit it writes a file larger than the limit: {}",
            w.name,
            show_output(&o)
        );
        restore(d, w, &before);
        let mut c = cmd(d, &w.args);
        limit_files(&mut c, w.limit, die);
        let o = c.output().unwrap();
        let now = std::fs::read(d.join(&w.target)).unwrap_or_default();
        let left = listing(d);
        let stderr = String::from_utf8_lossy(&o.stderr);
        if o.status.success() {
            bad.push(format!("{}: succeeded past the limit", w.name));
        } else if now != w.old {
            bad.push(format!(
                "{}: the old file was lost ({} bytes now, {} before)",
                w.name,
                now.len(),
                w.old.len()
            ));
        } else if left != before && !(die && next_run_removes(d, w, &left, &before)) {
            bad.push(format!(
                "{}: left {:?}",
                w.name,
                left.difference(&before).collect::<Vec<_>>()
            ));
        } else if die && o.status.signal() != Some(libc::SIGXFSZ) {
            bad.push(format!(
                "{}: not killed while writing: {}",
                w.name,
                show_output(&o)
            ));
        } else if !die && !stderr.contains(w.target.as_str()) {
            bad.push(format!(
                "{}: the error does not name {}: {stderr}",
                w.name, w.target
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// `/dev/stdout` as the output, standard output redirected to a file (as
/// `> file` does): the XML reaches the file through the descriptor, and
/// `/dev/stdout`, the system's link, is left as it is (it was replaced by
/// a regular file, which broke it for every program).
#[test]
fn dev_stdout_redirected_to_a_file_is_written_through() {
    let t = TempDir::new("dev-stdout");
    let out = std::fs::File::create(t.0.join("redirected.xml")).unwrap();
    let o = cmd(
        &t.0,
        &os(&[
            "ls",
            "-i",
            "pack:2 pu:2",
            "--of",
            "xml",
            "-f",
            "/dev/stdout",
        ]),
    )
    .stdout(out)
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", show_output(&o));
    let xml = std::fs::read_to_string(t.0.join("redirected.xml")).unwrap();
    assert!(xml.contains("<topology"), "{xml}");
    assert!(
        std::fs::symlink_metadata("/dev/stdout")
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

/// `component keygen` writes two new files: a full disk or a kill at
/// either leaves neither (a rerun then works, as it does not when a
/// partial key is left under the name).
#[test]
fn keygen_cut_short_leaves_no_key() {
    let t = TempDir::new("keygen-cut");
    let d = &t.0;
    for (die, limit) in [(false, 8), (true, 8), (false, 80), (true, 80)] {
        let before = listing(d);
        let mut c = cmd(d, &os(&["component", "keygen", "k"]));
        limit_files(&mut c, limit, die);
        let o = c.output().unwrap();
        assert!(!o.status.success(), "keygen passed a {limit}-byte limit");
        assert_eq!(
            listing(d),
            before,
            "die={die} limit={limit}: {}",
            show_output(&o)
        );
        if !die {
            assert!(
                String::from_utf8_lossy(&o.stderr).contains("k."),
                "the error names no key file: {}",
                show_output(&o)
            );
        }
    }
    run_ok(d, &["component", "keygen", "k"]);
    assert!(d.join("k.key").is_file() && d.join("k.pub").is_file());
    // Either name taken: refused before anything is written.
    for taken in ["j.pub", "i.key"] {
        std::fs::write(d.join(taken), "mine\n").unwrap();
        let before = listing(d);
        let prefix = &taken[..1];
        let o = cmd(d, &os(&["component", "keygen", prefix]))
            .output()
            .unwrap();
        assert!(
            !o.status.success(),
            "keygen over {taken}: {}",
            show_output(&o)
        );
        assert_eq!(listing(d), before, "keygen over {taken} left a file");
        assert_eq!(std::fs::read(d.join(taken)).unwrap(), b"mine\n");
    }
}

/// A small file-size limit (`ulimit -f`) stops only writes of files: the
/// components' memories were set up through a memfd, a file write, so
/// discovery died of SIGXFSZ with nothing written to any file.
#[test]
fn a_file_size_limit_does_not_stop_discovery() {
    let t = TempDir::new("fsize-discovery");
    for args in [
        &["ls", "--of", "xml", "-"][..],
        &["fabric", "export", "--of", "json", "f.txt"][..],
    ] {
        std::fs::copy(
            crate::common::workspace().join("tests/data/fabric/handwritten-topology.txt"),
            t.0.join("f.txt"),
        )
        .unwrap();
        let mut c = cmd(&t.0, &os(args));
        limit_files(&mut c, 1024, true);
        let o = c.output().unwrap();
        assert!(
            o.status.success(),
            "{args:?} under a 1 KiB file-size limit: {}",
            show_output(&o)
        );
        assert!(!o.stdout.is_empty());
    }
}

#[test]
fn a_full_disk_leaves_every_old_file_whole() {
    every_writer_keeps_the_old_file(false);
}

#[test]
fn a_kill_while_writing_leaves_every_old_file_whole() {
    every_writer_keeps_the_old_file(true);
}

#[test]
fn killed_at_any_time_a_writer_leaves_the_old_file_or_the_new() {
    let (t, writers) = workspace();
    let d = &t.0;
    for w in writers
        .iter()
        .filter(|w| ["annotate in place", "ls --of xml", "store pack"].contains(&w.name))
    {
        let before: BTreeSet<OsString> = listing(d)
            .into_iter()
            .chain(with_folders(&w.target))
            .collect();
        restore(d, w, &before);
        let start = Instant::now();
        let o = cmd(d, &w.args).output().unwrap();
        assert!(o.status.success(), "{}: {}", w.name, show_output(&o));
        let took = start.elapsed();
        let new = std::fs::read(d.join(&w.target)).unwrap();
        for i in 0..12u32 {
            restore(d, w, &before);
            let mut child = cmd(d, &w.args)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            std::thread::sleep(took * i / 10);
            let _ = child.kill();
            let _ = child.wait();
            let now = std::fs::read(d.join(&w.target)).unwrap();
            assert!(
                now == w.old || now == new,
                "{}: killed after {:?}, the file is neither the old nor the new ({} bytes)",
                w.name,
                took * i / 10,
                now.len()
            );
            // The one name a kill may leave (docs/trust-model.md): a
            // complete new file under a hidden `.wl*` name, if the kill
            // falls between naming the file and renaming it; it is
            // removed here so that later rounds see only their own.
            let mut left = listing(d);
            let hidden: Vec<OsString> = left
                .iter()
                .filter(|n| n.as_bytes().starts_with(b".wl") && !before.contains(*n))
                .cloned()
                .collect();
            for h in &hidden {
                assert_eq!(
                    std::fs::read(d.join(h)).unwrap(),
                    new,
                    "{}: a partial hidden file was left",
                    w.name
                );
                std::fs::remove_file(d.join(h)).unwrap();
                left.remove(h);
            }
            assert_eq!(
                left,
                before,
                "{}: killed after {:?}, litter left",
                w.name,
                took * i / 10
            );
        }
    }
}

#[test]
fn concurrent_policy_edits_all_land() {
    let t = TempDir::new("policy-concurrent");
    let d = &t.0;
    let children: Vec<_> = (0..16)
        .map(|i| {
            cmd(
                d,
                &os(&[
                    "component",
                    "--policy",
                    "p.toml",
                    "deny",
                    &format!("comp{i}"),
                ]),
            )
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", show_output(&o));
    }
    let text = std::fs::read_to_string(d.join("p.toml")).unwrap();
    let lost: Vec<_> = (0..16)
        .filter(|i| !text.contains(&format!("\"comp{i}\"")))
        .collect();
    assert!(lost.is_empty(), "denies lost: {lost:?}\n{text}");
    // The lock file stays (removing it would let two edits lock two files);
    // nothing else does.
    let names: BTreeSet<String> = listing(d)
        .into_iter()
        .map(|n| n.to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        BTreeSet::from(["p.toml".to_string(), "p.toml.lock".to_string()])
    );
}

/// Whether `path` is a topology wloc loads.
fn loads(dir: &Path, path: &Path) -> bool {
    cmd(
        dir,
        &[
            OsString::from("ls"),
            "-i".into(),
            path.into(),
            "--of".into(),
            "synthetic".into(),
        ],
    )
    .output()
    .unwrap()
    .status
    .success()
        && std::fs::metadata(path).is_ok_and(|m| m.len() > 0)
}

#[test]
fn compress_dir_and_uncompress_dir_check_what_a_run_left() {
    let t = TempDir::new("compress-rerun");
    let d = &t.0;
    let inp = d.join("in");
    std::fs::create_dir(&inp).unwrap();
    std::fs::copy(input_xml(), inp.join("a.xml")).unwrap();
    run_ok(
        d,
        &["annotate", "in/a.xml", "in/b.xml", "root", "info", "k", "v"],
    );
    run_ok(
        d,
        &["annotate", "in/a.xml", "in/c.xml", "root", "info", "k", "w"],
    );
    // A full disk stops the first run: what it leaves is whole or absent.
    let mut c = cmd(d, &os(&["compress-dir", "in", "out"]));
    limit_files(&mut c, 4096, false);
    let o = c.output().unwrap();
    assert!(!o.status.success(), "{}", show_output(&o));
    for n in listing(&d.join("out")) {
        let p = d.join("out").join(&n);
        let text = std::fs::read_to_string(&p).unwrap_or_default();
        assert!(!text.is_empty(), "{n:?} left empty by a full disk");
    }
    // An older run's empty and cut files are made again, not trusted.
    std::fs::write(d.join("out/c.diff.xml"), b"").unwrap();
    let o = cmd(d, &os(&["compress-dir", "in", "out"]))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", show_output(&o));
    let o = cmd(d, &os(&["uncompress-dir", "out", "back"]))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", show_output(&o));
    for n in ["a.xml", "b.xml", "c.xml"] {
        assert!(
            loads(d, &d.join("back").join(n)),
            "back/{n} is not a whole topology"
        );
    }
    std::fs::write(d.join("back/b.xml"), b"<topology").unwrap();
    let o = cmd(d, &os(&["uncompress-dir", "out", "back"]))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", show_output(&o));
    assert!(
        loads(d, &d.join("back/b.xml")),
        "a cut back/b.xml was trusted"
    );
}

#[test]
fn gather_topology_interrupted_leaves_no_private_folder() {
    let t = TempDir::new("gather-signal");
    let d = &t.0;
    for sig in [libc::SIGTERM, libc::SIGINT] {
        let mut child = cmd(d, &os(&["gather-topology", "g"]))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // The private folder `.g.*` is made first, before gathering.
        let start = Instant::now();
        while !listing(d).iter().any(|n| n.as_bytes().starts_with(b".g.")) {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "no private folder appeared"
            );
            if child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        // SAFETY: signalling our own child.
        unsafe { libc::kill(child.id() as libc::pid_t, sig) };
        let st = child.wait().unwrap();
        let left: Vec<_> = listing(d).into_iter().collect();
        assert!(
            left.iter().all(|n| !n.as_bytes().starts_with(b".g.")),
            "signal {sig}: left {left:?} ({st:?})"
        );
        for n in &left {
            let _ = std::fs::remove_file(d.join(n));
        }
    }
}

/// Runs `c`, killing it after `limit`: its output, and whether it ended
/// by itself in time.
fn run_bounded(mut c: Command, limit: Duration) -> (Output, bool) {
    let mut child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let ended = loop {
        if child.try_wait().unwrap().is_some() {
            break true;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            break false;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    (child.wait_with_output().unwrap(), ended)
}

#[test]
fn fifos_and_devices_are_refused_at_once_for_every_file_argument() {
    let t = TempDir::new("fifo-args");
    let d = &t.0;
    std::fs::copy(input_xml(), d.join("in.xml")).unwrap();
    run_ok(
        d,
        &["annotate", "in.xml", "b.xml", "root", "info", "k", "v"],
    );
    run_ok(d, &["diff", "in.xml", "b.xml", "d.xml"]);
    run_ok(d, &["store", "pack", "-o", "s.wstore", "in.xml"]);
    let fifo = d.join("fifo");
    let c = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
    // SAFETY: `c` is a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    // Each command line names the file F.
    let cases: &[&[&str]] = &[
        &["annotate", "F", "o.xml", "root", "info", "k", "v"],
        &["annotate", "in.xml", "o.xml", "root", "distances", "F"],
        &["patch", "in.xml", "F", "o.xml"],
        &["patch", "F", "d.xml", "o.xml"],
        &["store", "list", "F"],
        &["store", "get", "F", "in"],
        &["component", "inspect", "F"],
        &["component", "verify", "F"],
        &["component", "--policy", "p.toml", "allow", "F"],
        &["component", "add", "F"],
        &["component", "--policy", "p.toml", "deny", "F"],
        &["component", "sign", "x.wasm", "--key", "F"],
        &["component", "embed", "x.wasm", "--manifest", "F"],
        &["component", "--policy", "F", "list"],
        &["ls", "-i", "in.xml", "--component", "F"],
        &["ls", "-i", "F"],
        &["diff", "F", "in.xml"],
        &["graph", "-i", "F", "--of", "dot"],
        &[
            "place",
            "--topology-method",
            "cpuinfo",
            "--cpuinfo-file",
            "F",
        ],
        &["fabric", "summary", "F"],
    ];
    let mut bad = Vec::new();
    for file in [fifo.clone(), PathBuf::from("/dev/zero")] {
        for case in cases {
            let args: Vec<OsString> = case
                .iter()
                .map(|a| {
                    if *a == "F" {
                        file.clone().into_os_string()
                    } else {
                        OsString::from(a)
                    }
                })
                .collect();
            let start = Instant::now();
            let (o, ended) = run_bounded(cmd(d, &args), Duration::from_secs(5));
            let stderr = String::from_utf8_lossy(&o.stderr);
            let shown = file.to_string_lossy();
            if !ended {
                bad.push(format!("{case:?} with {shown}: still running after 5 s"));
            } else if o.status.success() {
                bad.push(format!("{case:?} with {shown}: succeeded"));
            } else if !stderr.contains(&*shown) || !stderr.contains("regular file") {
                bad.push(format!("{case:?} with {shown}: {stderr}"));
            } else if start.elapsed() > Duration::from_secs(3) {
                bad.push(format!("{case:?} with {shown}: took {:?}", start.elapsed()));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn names_that_are_long_or_not_utf8() {
    let t = TempDir::new("names");
    let d = &t.0;
    std::fs::copy(input_xml(), d.join("in.xml")).unwrap();
    // A 250-byte output name: the temporary's name is short.
    let long = "x".repeat(250);
    run_ok(d, &["ls", "-i", "in.xml", "--of", "image", &long]);
    run_ok(d, &["ls", "-f", "-i", "in.xml", "--of", "image", &long]);
    let policy = "p".repeat(250);
    run_ok(d, &["component", "--policy", &policy[..245], "deny", "foo"]);
    run_ok(d, &["component", "--policy", &policy, "deny", "bar"]);
    run_ok(d, &["component", "--policy", &policy, "deny", "baz"]);
    // An argument that must be text and is not: which one is said.
    let bad = OsString::from_vec(b"o\xff.xml".to_vec());
    let o = cmd(
        d,
        &[
            OsString::from("annotate"),
            "in.xml".into(),
            bad,
            "root".into(),
            "none".into(),
        ],
    )
    .output()
    .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr.contains("argument 3 ('o\u{fffd}.xml')"), "{stderr}");
    // compress-dir keeps such a name as it is, byte for byte.
    let inp = d.join("in-dir");
    std::fs::create_dir(&inp).unwrap();
    let odd = OsString::from_vec(b"n\xfe.xml".to_vec());
    std::fs::copy(input_xml(), inp.join(&odd)).unwrap();
    run_ok(d, &["compress-dir", "in-dir", "out"]);
    run_ok(d, &["uncompress-dir", "out", "back"]);
    assert_eq!(listing(&d.join("back")), BTreeSet::from([odd.clone()]));
    // A store's names are text: such a file is skipped, and said so.
    std::fs::copy(input_xml(), inp.join("plain.xml")).unwrap();
    let o = cmd(d, &os(&["store", "pack", "-o", "s.wstore", "in-dir"]))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", show_output(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("not UTF-8"),
        "{}",
        show_output(&o)
    );
    let o = cmd(d, &os(&["store", "list", "s.wstore"]))
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).lines().count(),
        1,
        "{}",
        show_output(&o)
    );
}

#[test]
fn a_relative_home_is_named_as_such() {
    let t = TempDir::new("home");
    let mut c = cmd(&t.0, &os(&["component", "add", "missing.wasm"]));
    c.env("HOME", "relative/home").env_remove("XDG_DATA_HOME");
    let o = c.output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        stderr.contains("not an absolute path") && !stderr.contains("not set"),
        "{stderr}"
    );
}
