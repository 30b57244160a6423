//! Files given to wloc by someone else: a second user racing
//! `wloc gather-topology --keep NAME` (run as root) in a folder both can
//! write, and `wloc patch` fed a wloc diff whose change header holds line
//! numbers near 2^64.

use crate::common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{TempDir, run_wloc};

/// A throwaway user, removed when dropped (also when the test fails).
struct Racer {
    name: String,
    uid: u32,
    gid: u32,
}

impl Racer {
    /// Creates the user, or says why it cannot.
    fn create() -> Result<Racer, String> {
        let name = format!("wlocrace{}", std::process::id());
        let o = Command::new("useradd")
            .args(["--system", "--no-create-home", "--shell", "/bin/sh", &name])
            .output()
            .map_err(|e| format!("useradd cannot run: {e}"))?;
        if !o.status.success() {
            return Err(format!(
                "useradd failed: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            ));
        }
        // Owns the user from here on, so that it is removed whatever happens.
        let mut r = Racer {
            name,
            uid: 0,
            gid: 0,
        };
        let id = |flag: &str| -> Result<u32, String> {
            let o = Command::new("id")
                .args([flag, &r.name])
                .output()
                .map_err(|e| format!("id cannot run: {e}"))?;
            String::from_utf8_lossy(&o.stdout)
                .trim()
                .parse()
                .map_err(|_| format!("id {flag} {} gave no number", r.name))
        };
        let (uid, gid) = (id("-u")?, id("-g")?);
        if uid == 0 {
            return Err(format!("user {} got uid 0", r.name));
        }
        (r.uid, r.gid) = (uid, gid);
        Ok(r)
    }
}

impl Drop for Racer {
    fn drop(&mut self) {
        // userdel refuses while a process of the user runs: the sides are
        // killed before, but give their last commands time to end.
        for _ in 0..20 {
            let done = Command::new("userdel")
                .arg(&self.name)
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if done {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        eprintln!("could not remove the test user {}", self.name);
    }
}

/// The second user's shell, in its own process group, killed with the
/// whole group when dropped (also when the test fails).
struct Side(Option<Child>);

impl Side {
    fn wait(&mut self, limit: Duration) -> Option<Output> {
        let child = self.0.take()?;
        let pid = child.id();
        let out = wait_bounded(child, limit);
        kill_group(pid);
        out
    }
}

impl Drop for Side {
    fn drop(&mut self) {
        if let Some(mut c) = self.0.take() {
            kill_group(c.id());
            let _ = c.wait();
        }
    }
}

/// Kills the process group `pid` leads (one this test started).
fn kill_group(pid: u32) {
    if let Ok(pid) = i32::try_from(pid) {
        // SAFETY: kill only sends a signal, to a group this test created.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
    }
}

/// The second user's side of one try, as a shell loop: it links
/// `NAME.{tar.bz2,xml,output}.partial` to the root-only file, tells it is
/// ready, waits for its trigger, then plants `NAME/proc/meminfo`,
/// `NAME.output` and `NAME.xml` as links to it (`swap` first moves wloc's
/// private folder away and puts its own in its place).
const RACER: &str = r#"
cd "$SHARED" || exit 1
for e in tar.bz2 xml output; do ln -s "$SECRET" "$N.$e.partial"; done
: > "$READY"
staging() { ls -a | grep -q "^\.$N\."; }
case "$MODE" in
  dir|swap) until staging; do [ -e "$STOP" ] && exit 0; done ;;
  tar) until [ -e "$N.tar.bz2" ]; do [ -e "$STOP" ] && exit 0; done ;;
  now) sleep 0.05 ;;
esac
if [ "$MODE" = swap ]; then
  for d in $(ls -a | grep "^\.$N\."); do
    mv "$d" "$d.moved" && mkdir "$d" && ln -s "$SECRET" "$d/$N.tar.bz2" && ln -s "$SECRETDIR" "$d/$N"
  done
fi
mkdir -p "$N/proc" && ln -s "$SECRET" "$N/proc/meminfo"
ln -s "$SECRET" "$N.output"
ln -s "$SECRET" "$N.xml"
: > "$PLANTED"
"#;

/// Waits for `child` at most `limit`; kills it past that.
fn wait_bounded(mut child: Child, limit: Duration) -> Option<Output> {
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => return child.wait_with_output().ok(),
            Ok(None) if start.elapsed() < limit => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
}

fn is_link_to(p: &Path, target: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink())
        && std::fs::read_link(p).is_ok_and(|t| t == target)
}

/// Every entry of `dir`, removed as root between tries.
fn empty(dir: &Path) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        let is_dir = std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_dir());
        let _ = if is_dir {
            std::fs::remove_dir_all(&p)
        } else {
            std::fs::remove_file(&p)
        };
    }
}

#[test]
fn gather_keep_in_a_shared_folder_never_writes_through_planted_links() {
    // SAFETY: geteuid only reads the process's credentials.
    if unsafe { libc::geteuid() } != 0 {
        println!("skipped: this test runs wloc as root against a second user, and is not root");
        return;
    }
    if Command::new("sh").arg("-c").arg("true").status().is_err() {
        println!("skipped: no sh to run the second user's side");
        return;
    }
    let racer = match Racer::create() {
        Ok(r) => r,
        Err(why) => {
            println!("skipped: cannot create a second user: {why}");
            return;
        }
    };
    // The root-only file (and folder) the links lead to.
    let vault = TempDir::new("hostile-gather-vault");
    std::fs::set_permissions(&vault.0, std::fs::Permissions::from_mode(0o700)).unwrap();
    let secret = vault.0.join("secret");
    std::fs::write(&secret, "root only\n").unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
    let secret_meta = std::fs::metadata(&secret).unwrap();
    // The shared folder: anyone may create, rename and delete there.
    let shared_tmp = TempDir::new("hostile-gather-shared");
    let shared = &shared_tmp.0;
    std::fs::set_permissions(shared, std::fs::Permissions::from_mode(0o777)).unwrap();
    // The flags between the two sides live where only root can write.
    let flags = TempDir::new("hostile-gather-flags");
    std::fs::set_permissions(&flags.0, std::fs::Permissions::from_mode(0o755)).unwrap();
    let n = "rec";
    let name = shared.join(n);
    let (mut ok, mut refused) = (0, 0);
    let deadline = Instant::now() + Duration::from_secs(300);
    for (t, mode) in ["dir", "tar", "now", "swap", "dir", "tar", "now", "swap"]
        .iter()
        .enumerate()
    {
        if Instant::now() > deadline {
            println!("stopping after {t} tries: the time bound is reached");
            break;
        }
        empty(shared);
        empty(&flags.0);
        // The racer writes its flags in the shared folder's sibling it owns.
        let own = shared.join(format!(".flags{t}"));
        std::fs::create_dir(&own).unwrap();
        std::os::unix::fs::chown(&own, Some(racer.uid), Some(racer.gid)).unwrap();
        let (ready, planted, stop) = (own.join("ready"), own.join("planted"), flags.0.join("stop"));
        let mut side = Command::new("sh");
        side.arg("-c")
            .arg(RACER)
            .env("SHARED", shared)
            .env("N", n)
            .env("SECRET", &secret)
            .env("SECRETDIR", &vault.0)
            .env("MODE", mode)
            .env("READY", &ready)
            .env("PLANTED", &planted)
            .env("STOP", &stop)
            .uid(racer.uid)
            .gid(racer.gid)
            .process_group(0)
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut side = Side(Some(side.spawn().expect("the second user's side starts")));
        let t0 = Instant::now();
        while !ready.exists() && t0.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(
            ready.exists(),
            "try {t} ({mode}): the second user's side never got ready"
        );
        let wloc = Command::new(common::wloc())
            .args(["gather-topology", "-s", "--keep", "--no-io", "--no-cpuid"])
            .arg(&name)
            .env("LC_ALL", "C")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("wloc runs");
        let out = wait_bounded(wloc, Duration::from_secs(120));
        std::fs::write(&stop, "").unwrap();
        let side_out = side.wait(Duration::from_secs(10));
        let out = out.unwrap_or_else(|| panic!("try {t} ({mode}): wloc did not finish in 120 s"));
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        let did_plant = planted.exists();
        let what = format!(
            "try {t} ({mode}, planted: {did_plant}): wloc {} {err}; second user: {}",
            out.status,
            side_out
                .map(|o| String::from_utf8_lossy(&o.stderr).into_owned())
                .unwrap_or_else(|| "killed".into())
        );
        println!("{what}");

        // The root-only file and its folder are as they were.
        assert_eq!(
            std::fs::read_to_string(&secret).unwrap(),
            "root only\n",
            "{what}"
        );
        let m = std::fs::metadata(&secret).unwrap();
        assert_eq!(
            (
                m.ino(),
                m.size(),
                m.mtime(),
                m.mtime_nsec(),
                m.uid(),
                m.mode()
            ),
            (
                secret_meta.ino(),
                secret_meta.size(),
                secret_meta.mtime(),
                secret_meta.mtime_nsec(),
                secret_meta.uid(),
                secret_meta.mode()
            ),
            "{what}"
        );
        let vault_entries: Vec<_> = std::fs::read_dir(&vault.0)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(vault_entries, ["secret"], "{what}");
        // The second user's links are untouched.
        for e in ["tar.bz2", "xml", "output"] {
            let p = shared.join(format!("{n}.{e}.partial"));
            assert!(is_link_to(&p, &secret), "{what}: {} changed", p.display());
        }
        assert!(!err.contains("panicked"), "{what}");
        match out.status.code() {
            Some(0) => {
                ok += 1;
                // wloc's own files, not links.
                for p in [
                    name.clone(),
                    name.join("proc/meminfo"),
                    shared.join(format!("{n}.tar.bz2")),
                    shared.join(format!("{n}.xml")),
                    shared.join(format!("{n}.output")),
                ] {
                    let m = std::fs::symlink_metadata(&p)
                        .unwrap_or_else(|e| panic!("{what}: {}: {e}", p.display()));
                    assert!(
                        !m.file_type().is_symlink() && m.uid() == 0,
                        "{what}: {} is not wloc's",
                        p.display()
                    );
                }
                let meminfo = std::fs::read_to_string(name.join("proc/meminfo")).unwrap();
                assert!(meminfo.contains("MemTotal"), "{what}");
            }
            Some(1) => {
                refused += 1;
                assert!(
                    err.starts_with("wloc: ")
                        && (err.contains("appeared") || err.contains("exists"))
                        && err.contains(&name.display().to_string()),
                    "{what}: the error does not say which name was taken"
                );
                // What the second user planted is still theirs.
                if did_plant && std::fs::symlink_metadata(&name).is_ok_and(|d| d.uid() == racer.uid)
                {
                    let m = name.join("proc/meminfo");
                    assert!(is_link_to(&m, &secret), "{what}: {} changed", m.display());
                }
            }
            other => panic!("{what}: exit code {other:?}, expected 0 or 1"),
        }
        // Nothing of wloc's private folder is left, unless the second user
        // moved it away (then it is left empty, under their name for it).
        if *mode != "swap" {
            let left: Vec<String> = std::fs::read_dir(shared)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|f| f.starts_with(&format!(".{n}.")))
                .collect();
            assert!(left.is_empty(), "{what}: left behind {left:?}");
        } else {
            for e in std::fs::read_dir(shared).unwrap().flatten() {
                let f = e.file_name().to_string_lossy().into_owned();
                if f.starts_with(&format!(".{n}.")) && f.ends_with(".moved") {
                    let inside = std::fs::read_dir(e.path()).unwrap().count();
                    assert_eq!(inside, 0, "{what}: wloc's moved folder {f} is not empty");
                }
            }
        }
    }
    println!("{ok} tries succeeded with wloc's own files, {refused} were refused clearly");
    assert!(ok + refused > 0, "no try ran");
    empty(shared);
    drop(racer);
}

fn patch(dir: &Path, diff: &str, extra: &[&str]) -> Output {
    std::fs::write(dir.join("d.diff"), diff).unwrap();
    let mut args: Vec<PathBuf> = vec!["patch".into()];
    args.extend(extra.iter().map(PathBuf::from));
    args.extend([dir.join("old.xml"), dir.join("d.diff"), dir.join("out.xml")]);
    run_wloc(args)
}

#[test]
fn patch_refuses_line_numbers_near_2_pow_64() {
    let tmp = TempDir::new("hostile-patch");
    let dir = &tmp.0;
    let o = run_wloc([
        "ls",
        "-i",
        "pack:1 pu:2",
        "--if",
        "synthetic",
        "--of",
        "xml",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::write(dir.join("old.xml"), &o.stdout).unwrap();
    let max = u64::MAX;
    for (diff, extra, want) in [
        // The crash of issue 35: the change's end wrapped past 2^64.
        (
            format!("wloc-topology-diff 1\n@@ -{max},2 +1,1 @@\n-a\n-b\n+c\n"),
            &[][..],
            "goes past the largest line number",
        ),
        (
            format!("wloc-topology-diff 1\n@@ -1,1 +{max},2 @@\n-a\n+b\n+c\n"),
            &["-R"][..],
            "goes past the largest line number",
        ),
        (
            "wloc-topology-diff 1\n@@ -18446744073709551616,1 +1,1 @@\n-a\n+b\n".to_string(),
            &[][..],
            "is larger than",
        ),
        (
            "wloc-topology-diff 1\n@@ --1,1 +1,1 @@\n-a\n+b\n".to_string(),
            &[][..],
            "is not a number",
        ),
        (
            "wloc-topology-diff 1\n@@ -1,1\n".to_string(),
            &[][..],
            "expected `+START,COUNT`",
        ),
        // Numbers that fit: read, then refused where they point.
        (
            format!("wloc-topology-diff 1\n@@ -{max},1 +1,1 @@\n-a\n+b\n"),
            &[][..],
            "does not apply",
        ),
        (
            format!("wloc-topology-diff 1\n@@ -1,1 +{max},1 @@\n-a\n+b\n"),
            &["-R"][..],
            "does not apply",
        ),
    ] {
        let _ = std::fs::remove_file(dir.join("out.xml"));
        let o = patch(dir, &diff, extra);
        let err = String::from_utf8_lossy(&o.stderr);
        let what = format!("{diff:?} {extra:?}: {} {err}", o.status);
        assert_eq!(o.status.code(), Some(1), "{what}");
        assert!(
            err.starts_with("wloc: ") && err.contains(want) && !err.contains("panicked"),
            "{what}: expected an error naming '{want}'"
        );
        assert!(!dir.join("out.xml").exists(), "{what}: wrote an output");
    }
}
