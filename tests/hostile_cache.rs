//! A hostile compiled-code cache: another user who can rename entries in
//! the folder above root's cache swaps the cache folder, in a loop, for
//! one of their own holding another component's compiled code under the
//! allowed component's name (with a valid tag under their own key and
//! the digest file the earlier format trusted).  Root's `wloc` must never
//! run that code: it uses a cache only when every folder above it is
//! safe, and otherwise warns once and compiles.  Also: a shared parent
//! that is not sticky, and links planted in the cache.
//!
//! These tests need root (to create a throwaway user and to be the victim);
//! without it they are skipped with a printed reason.

use crate::common;

use std::os::unix::fs::{PermissionsExt, chown, symlink};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{TempDir, wloc};

/// The machine the fallback synthetic discovery describes.
const FALLBACK: &str = "pack:1 pu:3";
/// What the forged code says when it runs.
const FORGED_MARK: &str = "panicked on purpose";
/// The warning of a cache that is not used.
const WARNING: &str = "compiled-code cache";
/// What each artifact's tag is over before its name (see
/// `host/runtime/src/cache.rs`).
const TAG_CONTEXT: &str = "wloc:compiled:v1\\0";
/// Bounds of the racing runs.
const MAX_RUNS: usize = 40;
const MAX_RACE: Duration = Duration::from_secs(90);

fn component(name: &str) -> PathBuf {
    let p = Path::new(wloc_runtime::test_components_dir()).join(format!("hostile-{name}.wasm"));
    assert!(p.is_file(), "{} was not built", p.display());
    p
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// A user made for one test, removed when dropped (also when the test
/// fails).
struct ThrowawayUser {
    name: String,
    uid: u32,
    gid: u32,
}

impl ThrowawayUser {
    fn new(tag: &str) -> Result<ThrowawayUser, String> {
        let name = format!("wlocx{tag}{}", std::process::id() % 100_000);
        let out = Command::new("useradd")
            .args([
                "--system",
                "--no-create-home",
                "--shell",
                "/usr/sbin/nologin",
            ])
            .args(["--user-group", name.as_str()])
            .output()
            .map_err(|e| format!("useradd: {e}"))?;
        if !out.status.success() {
            return Err(format!("useradd {name}: {}", text(&out.stderr)));
        }
        // Made first, so that it is removed whatever fails next.
        let mut user = ThrowawayUser {
            name,
            uid: 0,
            gid: 0,
        };
        user.uid = id_of(&user.name, "-u")?;
        user.gid = id_of(&user.name, "-g")?;
        Ok(user)
    }

    fn own(&self, p: &Path) {
        chown(p, Some(self.uid), Some(self.gid)).unwrap();
    }
}

impl Drop for ThrowawayUser {
    fn drop(&mut self) {
        let _ = Command::new("userdel").arg(&self.name).output();
        let _ = Command::new("groupdel").arg(&self.name).output();
    }
}

/// The user or group id of a user (`id -u` or `id -g`).
fn id_of(name: &str, flag: &str) -> Result<u32, String> {
    let o = Command::new("id")
        .args([flag, name])
        .output()
        .map_err(|e| format!("id: {e}"))?;
    text(&o.stdout)
        .trim()
        .parse()
        .map_err(|_| format!("id {flag} {name}: {}", text(&o.stderr)))
}

/// A racing process, stopped (and waited for) when dropped.
struct Racer {
    child: Option<Child>,
    stop: PathBuf,
}

impl Racer {
    /// As `user`, exchanges `a` and `b` (`renameat2(RENAME_EXCHANGE)`) in
    /// a loop until told to stop or `MAX_RACE` has passed.
    fn start(user: &ThrowawayUser, a: &Path, b: &Path, stop: PathBuf) -> Racer {
        let script = r#"
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
a, b, stop = sys.argv[1].encode(), sys.argv[2].encode(), sys.argv[3]
deadline = time.time() + float(sys.argv[4])
tries = swaps = 0
while time.time() < deadline and not os.path.exists(stop):
    if libc.renameat2(-100, a, -100, b, 2) == 0:
        swaps += 1
    tries += 1
print(tries, swaps)
"#;
        let child = Command::new("/usr/bin/python3")
            .args(["-c", script])
            .arg(a)
            .arg(b)
            .arg(&stop)
            .arg(MAX_RACE.as_secs().to_string())
            .uid(user.uid)
            .gid(user.gid)
            .current_dir("/")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("python3 runs the racer");
        Racer {
            child: Some(child),
            stop,
        }
    }

    /// Stops the racer and returns how many exchanges it tried and made.
    fn finish(mut self) -> (u64, u64) {
        std::fs::write(&self.stop, "").unwrap();
        let out = self.child.take().unwrap().wait_with_output().unwrap();
        let s = text(&out.stdout);
        let mut it = s.split_whitespace().map(|n| n.parse::<u64>().unwrap_or(0));
        let counts = (it.next().unwrap_or(0), it.next().unwrap_or(0));
        assert!(
            out.status.success() && counts.0 > 0,
            "the racer failed: {s} {}",
            text(&out.stderr)
        );
        counts
    }
}

impl Drop for Racer {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = std::fs::write(&self.stop, "");
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// A test's folder, policy and commands.
struct Env {
    dir: TempDir,
}

impl Env {
    fn new(tag: &str) -> Env {
        let dir = TempDir::new(&format!("hostile-cache-{tag}"));
        std::fs::set_permissions(&dir.0, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(dir.0.join("policy.toml"), "# allowed below\n").unwrap();
        Env { dir }
    }

    fn path(&self, p: &str) -> PathBuf {
        self.dir.0.join(p)
    }

    fn run(&self, cache: &Path, args: &[&str]) -> Output {
        let start = Instant::now();
        let out = Command::new(wloc())
            .env("LC_ALL", "C")
            .env("WLOC_POLICY", self.path("policy.toml"))
            .env("WLOC_CACHE_DIR", cache)
            .env("XDG_DATA_HOME", self.path("data"))
            .env_remove("WLOC_COMPONENTS_PATH")
            .env_remove("WLOC_COMPONENTS")
            .args(args)
            .output()
            .expect("wloc runs");
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "wloc {args:?} took {:?}",
            start.elapsed()
        );
        assert!(
            out.status.code().is_some(),
            "wloc {args:?} was killed: {out:?}"
        );
        out
    }

    fn allow(&self, file: &Path) {
        let out = self.run(
            Path::new(""),
            &[
                "component",
                "allow",
                file.to_str().unwrap(),
                "--files",
                "/sys",
            ],
        );
        assert!(out.status.success(), "allow: {}", text(&out.stderr));
    }

    /// `wloc ls --component FILE` over the fallback machine.
    fn ls(&self, cache: &Path, file: &Path) -> Output {
        self.run(
            cache,
            &[
                "ls",
                "-i",
                FALLBACK,
                "--component",
                file.to_str().unwrap(),
                "--of",
                "synthetic",
            ],
        )
    }
}

/// The compiled artifact of the component `file` in a cache folder.
fn artifact_of(dir: &Path, file: &Path) -> PathBuf {
    let digest = wloc_runtime::cache::component_digest(&std::fs::read(file).unwrap());
    let found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.starts_with(&digest) && n.ends_with(".cwasm")
        })
        .collect();
    assert_eq!(found.len(), 1, "artifacts of {}: {found:?}", file.display());
    found[0].clone()
}

/// HMAC-SHA256 of `parts` under `key`, and the sha256 of `data`, by
/// Python's standard library (what an attacker would use).
fn python_digests(key: &Path, name: &str, code: &Path, out: &Path) {
    let script = r#"
import hashlib, hmac, sys
key = open(sys.argv[1], "rb").read()
name = sys.argv[2].encode()
code = open(sys.argv[3], "rb").read()
ctx = sys.argv[5].encode().decode("unicode_escape").encode()
tag = hmac.new(key, ctx + name + b"\0" + code, "sha256").digest()
open(sys.argv[4], "wb").write(code + tag)
open(sys.argv[4] + ".sha256", "w").write(hashlib.sha256(code + tag).hexdigest())
"#;
    let o = Command::new("/usr/bin/python3")
        .args(["-c", script])
        .arg(key)
        .arg(name)
        .arg(code)
        .arg(out)
        .arg(TAG_CONTEXT)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
}

/// What the attack needs: the allowed component's artifact name, a
/// private cache holding its real artifact, and a folder of forged code
/// (the panicking component's code, tagged under a key of the folder,
/// under the allowed component's name).
struct Forgery {
    allowed: PathBuf,
    /// The allowed component's output, compiled without a cache.
    expected: String,
    /// A good cache's files (the secret and the allowed artifact).
    good: PathBuf,
    /// The forged folder's files.
    forged: PathBuf,
}

fn forge(env: &Env) -> Forgery {
    let allowed = component("read-dotdot");
    let other = component("panic");
    env.allow(&allowed);
    env.allow(&other);
    let expected = env.ls(Path::new(""), &allowed);
    assert!(expected.status.success(), "{}", text(&expected.stderr));
    let expected = text(&expected.stdout);

    // Compile the other component into a scratch cache, then the allowed one.
    let scratch = env.path("scratch-cache");
    let out = env.ls(&scratch, &other);
    assert!(
        text(&out.stderr).contains(FORGED_MARK),
        "{}",
        text(&out.stderr)
    );
    let other_art = artifact_of(&scratch, &other);
    let out = env.ls(&scratch, &allowed);
    assert_eq!(text(&out.stdout), expected);
    let allowed_art = artifact_of(&scratch, &allowed);
    let name = allowed_art
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();

    let good = env.path("good");
    std::fs::create_dir(&good).unwrap();
    std::fs::copy(&allowed_art, good.join(&name)).unwrap();
    std::fs::copy(scratch.join("hmac-key"), good.join("hmac-key")).unwrap();

    // The forged folder: its own key, the other component's code.
    let forged = env.path("forged");
    std::fs::create_dir(&forged).unwrap();
    std::fs::write(forged.join("hmac-key"), [0x5a; 32]).unwrap();
    let other_bytes = std::fs::read(&other_art).unwrap();
    let code = env.path("other-code");
    std::fs::write(&code, &other_bytes[..other_bytes.len() - 32]).unwrap();
    python_digests(&forged.join("hmac-key"), &name, &code, &forged.join(&name));
    Forgery {
        allowed,
        expected,
        good,
        forged,
    }
}

/// Copies the files of `from` into a new folder `to` with `mode`, owned
/// by `owner` (uid, gid), files mode 0600.
fn fill(from: &Path, to: &Path, mode: u32, owner: Option<(u32, u32)>) {
    std::fs::create_dir(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        std::fs::copy(e.path(), &dst).unwrap();
        std::fs::set_permissions(&dst, std::fs::Permissions::from_mode(0o600)).unwrap();
        if let Some((u, g)) = owner {
            chown(&dst, Some(u), Some(g)).unwrap();
        }
    }
    std::fs::set_permissions(to, std::fs::Permissions::from_mode(mode)).unwrap();
    if let Some((u, g)) = owner {
        chown(to, Some(u), Some(g)).unwrap();
    }
}

/// Runs the allowed component while the racer swaps; checks every run.
/// Returns how many runs warned.
fn runs_under_race(env: &Env, f: &Forgery, cache: &Path) -> usize {
    let start = Instant::now();
    let mut warned = 0;
    for run in 0..MAX_RUNS {
        if start.elapsed() > MAX_RACE / 2 {
            break;
        }
        let out = env.ls(cache, &f.allowed);
        let err = text(&out.stderr);
        assert!(
            !err.contains(FORGED_MARK),
            "run {run}: the forged code ran: {err}"
        );
        assert!(out.status.success(), "run {run}: {err}");
        assert_eq!(text(&out.stdout), f.expected, "run {run}: {err}");
        let warnings = err.matches(WARNING).count();
        assert!(warnings <= 1, "run {run}: {err}");
        warned += warnings;
    }
    warned
}

#[test]
fn a_swapped_cache_folder_never_runs_forged_code() {
    if !is_root() {
        eprintln!("skipped: the hostile cache test needs root (a second user, root as the victim)");
        return;
    }
    let user = match ThrowawayUser::new("c") {
        Ok(u) => u,
        Err(e) => {
            eprintln!("skipped: cannot create a throwaway user: {e}");
            return;
        }
    };
    let env = Env::new("swap");
    let f = forge(&env);

    // The control: the forged folder, were it root's own, would run the
    // other component's code.  So the attack below is live.
    let control = env.path("control");
    fill(&f.forged, &control, 0o700, None);
    let out = env.ls(&control, &f.allowed);
    assert!(
        text(&out.stderr).contains(FORGED_MARK),
        "the forged artifact is not loaded even from a trusted folder: {}",
        text(&out.stderr)
    );

    // The attacker's folder, with root's cache in it and the forged one
    // beside it, swapped in a loop.
    let theirs = env.path("theirs");
    std::fs::create_dir(&theirs).unwrap();
    std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o755)).unwrap();
    user.own(&theirs);
    fill(&f.good, &theirs.join("cache"), 0o700, None);
    fill(
        &f.forged,
        &theirs.join("planted"),
        0o755,
        Some((user.uid, user.gid)),
    );
    let racer = Racer::start(
        &user,
        &theirs.join("cache"),
        &theirs.join("planted"),
        env.path("stop-1"),
    );
    let warned = runs_under_race(&env, &f, &theirs.join("cache"));
    let (tries, swaps) = racer.finish();
    assert!(swaps > 0, "the racer never swapped ({tries} tries)");
    // The folder above belongs to another user: never used, one warning
    // a run.
    assert!(warned > 0, "no run warned that the cache was not used");

    // A sticky shared folder (as /tmp): the other user cannot rename
    // root's cache folder, so it is used.
    let sticky = env.path("sticky");
    std::fs::create_dir(&sticky).unwrap();
    std::fs::set_permissions(&sticky, std::fs::Permissions::from_mode(0o1777)).unwrap();
    fill(&f.good, &sticky.join("cache"), 0o700, None);
    fill(
        &f.forged,
        &sticky.join("planted"),
        0o755,
        Some((user.uid, user.gid)),
    );
    let racer = Racer::start(
        &user,
        &sticky.join("cache"),
        &sticky.join("planted"),
        env.path("stop-2"),
    );
    let warned = runs_under_race(&env, &f, &sticky.join("cache"));
    let (tries, swaps) = racer.finish();
    assert_eq!(
        swaps, 0,
        "a sticky folder let another user swap ({tries} tries)"
    );
    assert_eq!(warned, 0, "a safe cache under a sticky folder was not used");
}

#[test]
fn a_shared_parent_means_no_cache_and_one_warning() {
    if !is_root() {
        eprintln!("skipped: needs root for a parent folder of another mode and owner");
        return;
    }
    let env = Env::new("shared");
    let allowed = component("read-dotdot");
    env.allow(&allowed);
    for mode in [0o777, 0o775, 0o757] {
        let shared = env.path(&format!("shared-{mode:o}"));
        std::fs::create_dir(&shared).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(mode)).unwrap();
        let out = env.ls(&shared.join("cache"), &allowed);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let err = text(&out.stderr);
        assert_eq!(err.matches(WARNING).count(), 1, "mode {mode:o}: {err}");
        assert!(err.contains("not sticky"), "{err}");
        assert!(
            !shared.join("cache").exists(),
            "mode {mode:o}: a cache was made"
        );
    }
    // A trailing '/' is refused too (it once passed the check on links).
    let out = env.ls(&env.path("cache/"), &allowed);
    assert_eq!(text(&out.stderr).matches(WARNING).count(), 1);
    assert!(!env.path("cache").exists());
}

#[test]
fn links_planted_in_the_cache_are_never_followed() {
    if !is_root() {
        eprintln!("skipped: the planted-link test runs as root, the user it protects");
        return;
    }
    let env = Env::new("links");
    let allowed = component("read-dotdot");
    env.allow(&allowed);
    let cache = env.path("cache");
    let out = env.ls(&cache, &allowed);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let art = artifact_of(&cache, &allowed);
    let victim = env.path("victim");
    std::fs::write(&victim, "precious\n").unwrap();

    // A link at the artifact's name: replaced, not written through.
    std::fs::remove_file(&art).unwrap();
    symlink(&victim, &art).unwrap();
    let out = env.ls(&cache, &allowed);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    assert!(!std::fs::symlink_metadata(&art).unwrap().is_symlink());

    // A link at the secret's name: not read, the cache not used.
    std::fs::remove_file(cache.join("hmac-key")).unwrap();
    symlink(&victim, cache.join("hmac-key")).unwrap();
    let out = env.ls(&cache, &allowed);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr).matches(WARNING).count(), 1);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");

    // The cache folder itself a link.
    let link = env.path("cache-link");
    std::fs::remove_file(cache.join("hmac-key")).unwrap();
    symlink(&cache, &link).unwrap();
    let out = env.ls(&link, &allowed);
    let err = text(&out.stderr);
    assert!(
        err.contains(WARNING) && err.contains("symbolic link"),
        "{err}"
    );
}
