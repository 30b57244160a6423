//! Components through OCI registries and layout folders (issue 46):
//! `wloc component push/pull/mirror/list --updates/update` against
//! Debian's `docker-registry` on 127.0.0.1 (plain HTTP, and once with
//! TLS and a test CA), with `skopeo` and `wkg` as the other clients, and
//! against a small fake registry for what a real one will not do: answer
//! 500, hang, announce a 2 GB layer, serve a tampered layer or a wrong
//! config media type.  In every failure nothing is installed.

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{TempDir, require_packages, wloc};

const REGISTRY: &str = "/usr/bin/docker-registry";
const SKOPEO: &str = "/usr/bin/skopeo";

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A sandbox: a policy, a user components folder, a key, components.
struct Env {
    dir: TempDir,
}

impl Env {
    fn new(tag: &str) -> Env {
        let dir = TempDir::new(&format!("oci-{tag}"));
        std::fs::write(dir.0.join("policy.toml"), "").unwrap();
        Env { dir }
    }

    fn path(&self, p: &str) -> PathBuf {
        self.dir.0.join(p)
    }

    fn installed_dir(&self) -> PathBuf {
        self.path("data/wloc/components")
    }

    /// The files installed (none when the folder does not exist).
    fn installed(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(self.installed_dir())
            .map(|rd| {
                rd.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    }

    fn run(&self, args: &[&str]) -> Output {
        self.run_with(args, &[])
    }

    fn run_with(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let start = Instant::now();
        let out = Command::new(wloc())
            .args(args)
            // Relative layout folders (`oci:lay:TAG`) are in the sandbox.
            .current_dir(&self.dir.0)
            .envs(env.iter().copied())
            .env("LC_ALL", "C")
            .env("WLOC_POLICY", self.path("policy.toml"))
            .env("XDG_DATA_HOME", self.path("data"))
            .env("XDG_CONFIG_HOME", self.path("config"))
            .env("WLOC_CACHE_DIR", self.path("cache"))
            .env_remove("WLOC_COMPONENTS_PATH")
            .env_remove("WLOC_COMPONENTS")
            .output()
            .expect("wloc runs");
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "wloc {args:?} took {:?}",
            start.elapsed()
        );
        out
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "wloc {args:?} failed: {}",
            text(&out.stderr)
        );
        text(&out.stdout)
    }

    fn fails(&self, args: &[&str]) -> String {
        self.fails_with(args, &[])
    }

    fn fails_with(&self, args: &[&str], env: &[(&str, &str)]) -> String {
        let out = self.run_with(args, env);
        assert!(
            !out.status.success(),
            "wloc {args:?} succeeded: {}",
            text(&out.stdout)
        );
        text(&out.stderr)
    }

    /// A publisher key; its public key.
    fn keygen(&self) -> String {
        let k = self.path("acme");
        self.ok(&["component", "keygen", k.to_str().unwrap()])
            .trim()
            .to_string()
    }

    /// `acme-tool` at `version`, signed with the key of [`Env::keygen`].
    fn component(&self, version: &str) -> PathBuf {
        let src = Path::new(wloc_runtime::test_components_dir()).join("hostile-read-dotdot.wasm");
        let manifest = self.path(&format!("manifest-{version}.toml"));
        std::fs::write(
            &manifest,
            format!(
                "name = \"acme-tool\"\nversion = \"{version}\"\nkind = \"discovery\"\n\n[capabilities]\nfiles = [\"/sys\"]\n"
            ),
        )
        .unwrap();
        let out = self.path(&format!("acme-tool-{version}.wasm"));
        self.ok(&[
            "component",
            "sign",
            src.to_str().unwrap(),
            "--key",
            self.path("acme.key").to_str().unwrap(),
            "--manifest",
            manifest.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ]);
        out
    }

    fn policy(&self, text: &str) {
        std::fs::write(self.path("policy.toml"), text).unwrap();
    }
}

/// A free port on 127.0.0.1.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Debian's docker-registry on 127.0.0.1, stopped by pid when dropped.
struct Registry {
    child: Child,
    host: String,
    _dir: TempDir,
}

impl Registry {
    /// Started with its storage in a temporary folder; with TLS when
    /// given a certificate and key.
    fn start(tls: Option<(&Path, &Path)>) -> Registry {
        require_packages(&[(REGISTRY, "docker-registry"), (SKOPEO, "skopeo")]).unwrap();
        let dir = TempDir::new("oci-registry");
        let port = free_port();
        let host = format!("127.0.0.1:{port}");
        let tls = tls
            .map(|(c, k)| {
                format!(
                    "  tls:\n    certificate: {}\n    key: {}\n",
                    c.display(),
                    k.display()
                )
            })
            .unwrap_or_default();
        let config = dir.0.join("config.yml");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: {host}\n{tls}",
                dir.0.join("storage").display()
            ),
        )
        .unwrap();
        let child = Command::new(REGISTRY)
            .arg("serve")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("docker-registry starts");
        let r = Registry {
            child,
            host,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(&r.host).is_err() {
            assert!(Instant::now() < deadline, "docker-registry did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        r
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs a tool the tests use beside wloc, failing the test (with the
/// command and what it printed) when it fails.
fn run_tool(mut c: Command) {
    let out = c
        .output()
        .unwrap_or_else(|e| panic!("{c:?} does not run: {e}"));
    assert!(out.status.success(), "{c:?}: {}", text(&out.stderr));
}

fn skopeo(args: &[&str]) {
    let mut c = Command::new(SKOPEO);
    c.args(["--insecure-policy"]).args(args);
    run_tool(c);
}

fn policy_for(public: &str, extra: &str) -> String {
    format!(
        "[[publisher]]\nname = \"acme\"\nkey = \"{public}\"\n[[allow]]\npublisher = \"acme\"\nname = \"acme-tool\"\nfiles = [\"/sys\"]\n{extra}"
    )
}

#[test]
fn registry_round_trips_with_skopeo_layouts_and_versions() {
    let reg = Registry::start(None);
    let env = Env::new("rt");
    let public = env.keygen();
    let v1 = env.component("1.0.0");
    let r = format!("{}/acme/tool", reg.host);
    // Pushed over plain HTTP: a loopback registry without TLS.
    let out = env.ok(&[
        "component",
        "push",
        v1.to_str().unwrap(),
        &format!("{r}:1.0.0"),
    ]);
    assert!(out.contains("pushed to"), "{out}");
    // Refused by the (empty) policy: nothing installed.
    let err = env.fails(&["component", "pull", &format!("{r}:1.0.0")]);
    assert!(
        err.contains("not a trusted [[publisher]]") && err.contains("nothing installed"),
        "{err}"
    );
    assert!(env.installed().is_empty(), "{:?}", env.installed());
    // Allowed: installed, byte for byte, with its origin.
    env.policy(&policy_for(&public, ""));
    let out = env.ok(&["component", "pull", &format!("{r}:1.0.0")]);
    assert!(out.contains("installed acme-tool 1.0.0"), "{out}");
    assert_eq!(
        env.installed(),
        ["acme-tool.wasm", "acme-tool.wasm.origin.json"]
    );
    assert_eq!(
        std::fs::read(env.installed_dir().join("acme-tool.wasm")).unwrap(),
        std::fs::read(&v1).unwrap()
    );

    // What wloc pushed, skopeo copies into a layout; wloc installs from it.
    let layout = env.path("skopeo-layout");
    skopeo(&[
        "copy",
        "--src-tls-verify=false",
        &format!("docker://{r}:1.0.0"),
        &format!("oci:{}:1.0.0", layout.display()),
    ]);
    let other = Env::new("rt-layout");
    std::fs::copy(env.path("policy.toml"), other.path("policy.toml")).unwrap();
    other.ok(&[
        "component",
        "pull",
        &format!("oci:{}:1.0.0", layout.display()),
    ]);
    assert_eq!(
        std::fs::read(other.installed_dir().join("acme-tool.wasm")).unwrap(),
        std::fs::read(&v1).unwrap()
    );
    // wloc mirrors into a layout; skopeo pushes that to the registry;
    // wloc pulls what skopeo pushed.
    let mirror = env.path("mirror");
    env.ok(&[
        "component",
        "mirror",
        &format!("{r}:1.0.0"),
        &format!("oci:{}", mirror.display()),
    ]);
    skopeo(&[
        "copy",
        "--dest-tls-verify=false",
        &format!("oci:{}:1.0.0", mirror.display()),
        &format!("docker://{}/acme/copied:1.0.0", reg.host),
    ]);
    let third = Env::new("rt-copied");
    std::fs::copy(env.path("policy.toml"), third.path("policy.toml")).unwrap();
    third.ok(&[
        "component",
        "pull",
        &format!("{}/acme/copied:1.0.0", reg.host),
    ]);
    // And mirrors a layout back into the registry.
    env.ok(&[
        "component",
        "mirror",
        &format!("oci:{}:1.0.0", mirror.display()),
        &format!("{}/acme/back:1.0.0", reg.host),
    ]);
    third.ok(&[
        "component",
        "pull",
        &format!("{}/acme/back:1.0.0", reg.host),
    ]);

    // Versions: 1.1.0 and 2.0.0 published; the policy pins "<2".
    for v in ["1.1.0", "2.0.0"] {
        let f = env.component(v);
        env.ok(&[
            "component",
            "push",
            f.to_str().unwrap(),
            &format!("{r}:{v}"),
        ]);
    }
    env.policy(&policy_for(&public, "version = \"<2\"\n"));
    let out = env.ok(&["component", "list", "--updates"]);
    assert!(out.contains("acme-tool 1.0.0"), "{out}");
    assert!(out.contains("1.1.0: allowed"), "{out}");
    assert!(out.contains("2.0.0: refused"), "{out}");
    let out = env.ok(&["component", "update", "acme-tool"]);
    assert!(out.contains("updated acme-tool to 1.1.0"), "{out}");
    assert_eq!(
        std::fs::read(env.installed_dir().join("acme-tool.wasm")).unwrap(),
        std::fs::read(env.path("acme-tool-1.1.0.wasm")).unwrap()
    );
    // Nothing newer is allowed: the update fails and 1.1.0 stays.
    let err = env.fails(&["component", "update", "acme-tool"]);
    assert!(err.contains("2.0.0") && err.contains("stays"), "{err}");
    assert_eq!(
        std::fs::read(env.installed_dir().join("acme-tool.wasm")).unwrap(),
        std::fs::read(env.path("acme-tool-1.1.0.wasm")).unwrap()
    );
}

/// A test CA and a certificate for 127.0.0.1 it signed (openssl CLI).
fn test_ca(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let ca_key = dir.join("ca.key");
    let ca = dir.join("ca.pem");
    let key = dir.join("server.key");
    let csr = dir.join("server.csr");
    let cert = dir.join("server.pem");
    let ext = dir.join("ext.cnf");
    std::fs::write(
        &ext,
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    let p = |p: &Path| p.to_str().unwrap().to_string();
    let runs: Vec<Vec<String>> = vec![
        vec![
            "req".into(),
            "-x509".into(),
            "-newkey".into(),
            "ec".into(),
            "-pkeyopt".into(),
            "ec_paramgen_curve:P-256".into(),
            "-nodes".into(),
            "-keyout".into(),
            p(&ca_key),
            "-out".into(),
            p(&ca),
            "-days".into(),
            "2".into(),
            "-subj".into(),
            "/CN=wloc test CA".into(),
        ],
        vec![
            "req".into(),
            "-newkey".into(),
            "ec".into(),
            "-pkeyopt".into(),
            "ec_paramgen_curve:P-256".into(),
            "-nodes".into(),
            "-keyout".into(),
            p(&key),
            "-out".into(),
            p(&csr),
            "-subj".into(),
            "/CN=127.0.0.1".into(),
        ],
        vec![
            "x509".into(),
            "-req".into(),
            "-in".into(),
            p(&csr),
            "-CA".into(),
            p(&ca),
            "-CAkey".into(),
            p(&ca_key),
            "-CAcreateserial".into(),
            "-out".into(),
            p(&cert),
            "-days".into(),
            "2".into(),
            "-extfile".into(),
            p(&ext),
        ],
    ];
    for args in runs {
        let mut c = Command::new("openssl");
        c.args(&args);
        run_tool(c);
    }
    (ca, cert, key)
}

#[test]
fn registry_with_tls_and_a_test_ca() {
    require_packages(&[("/usr/bin/openssl", "openssl")]).unwrap();
    let env = Env::new("tls");
    let (ca, cert, key) = test_ca(&env.dir.0);
    let reg = Registry::start(Some((&cert, &key)));
    let public = env.keygen();
    let v1 = env.component("1.0.0");
    env.policy(&policy_for(&public, ""));
    let r = format!("{}/acme/tool:1.0.0", reg.host);
    let ca = ca.to_str().unwrap();
    // Without the CA, the server is not trusted (and never spoken to in
    // plain HTTP): nothing installed.
    let err = env.fails(&["component", "push", v1.to_str().unwrap(), &r]);
    assert!(
        err.to_lowercase().contains("certificate") || err.contains("issuer"),
        "{err}"
    );
    env.ok(&[
        "component",
        "push",
        v1.to_str().unwrap(),
        &r,
        "--ca-file",
        ca,
    ]);
    let err = env.fails(&["component", "pull", &r]);
    assert!(
        err.to_lowercase().contains("certificate") || err.contains("issuer"),
        "{err}"
    );
    assert!(env.installed().is_empty());
    env.ok(&["component", "pull", &r, "--ca-file", ca]);
    assert_eq!(
        std::fs::read(env.installed_dir().join("acme-tool.wasm")).unwrap(),
        std::fs::read(&v1).unwrap()
    );
}

/// What the fake registry does.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Fault {
    /// None: a sound artifact.
    Sound,
    /// Every answer is 500.
    Error500,
    /// Reads the request and never answers.
    Hang,
    /// The layer is announced as 2 GB.
    Huge,
    /// The layer's bytes are not those of its digest.
    Tampered,
    /// The config has an image's media type, not Wasm's.
    WrongConfig,
    /// Sound, but every request without basic credentials gets 401.
    NeedsBasic,
}

/// A registry in a thread of the test, serving one artifact with a
/// fault; it records the paths asked for and stops when dropped (or
/// after a minute).
struct Fake {
    host: String,
    stop: Arc<AtomicBool>,
    asked: Arc<Mutex<Vec<String>>>,
    /// The Authorization headers received.
    authorizations: Arc<Mutex<Vec<String>>>,
}

impl Fake {
    fn start(fault: Fault, component: &[u8]) -> Fake {
        Fake::start_with(fault, component, None)
    }

    /// With a Sigstore bundle by `key` listed by its referrers API (none
    /// given: the API answers 404, as where there is none).
    fn start_with(
        fault: Fault,
        component: &[u8],
        key: Option<&wloc_trust::cosign::RegistrySigningKey>,
    ) -> Fake {
        let a = wloc_oci::artifact::Artifact::build(component, Some("1.0.0"), None, 0).unwrap();
        let mut manifest: serde_json::Value = serde_json::from_slice(&a.manifest).unwrap();
        let mut layer = a.layer.clone();
        match fault {
            Fault::Huge => manifest["layers"][0]["size"] = serde_json::json!(2_u64 << 30),
            Fault::Tampered => {
                let n = layer.len() / 2;
                layer[n] ^= 0x20;
            }
            Fault::WrongConfig => {
                manifest["config"]["mediaType"] =
                    serde_json::json!("application/vnd.oci.image.config.v1+json")
            }
            _ => {}
        }
        let manifest = serde_json::to_vec(&manifest).unwrap();
        let config = a.config.clone();
        let layer_digest = wloc_oci::digest_of(&a.layer);
        let config_digest = wloc_oci::digest_of(&config);
        let bundle = key.map(|k| wloc_trust::bundle::make_bundle(&manifest, "fake/acme/tool", k));
        let referrers = bundle.as_ref().map(|b| {
            serde_json::to_vec(&serde_json::json!({
                "schemaVersion": 2,
                "mediaType": wloc_oci::types::INDEX,
                "manifests": [{
                    "mediaType": wloc_oci::types::MANIFEST,
                    "digest": wloc_oci::digest_of(&b.manifest),
                    "size": b.manifest.len(),
                    "artifactType": wloc_trust::bundle::BUNDLE_MEDIA_TYPE,
                }],
            }))
            .unwrap()
        });
        // Bundle parts by the path suffix they are asked for with.
        let bundle_parts: Vec<(String, Vec<u8>, &str)> = bundle
            .iter()
            .flat_map(|b| {
                [
                    (b.manifest.clone(), wloc_oci::types::MANIFEST),
                    (b.config.clone(), "application/octet-stream"),
                    (b.bundle.clone(), "application/octet-stream"),
                ]
            })
            .map(|(bytes, t)| (wloc_oci::digest_of(&bytes), bytes, t))
            .collect();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let host = listener.local_addr().unwrap().to_string();
        let stop = Arc::new(AtomicBool::new(false));
        let asked = Arc::new(Mutex::new(Vec::new()));
        let authorizations = Arc::new(Mutex::new(Vec::new()));
        let (stop2, asked2, auth2) = (stop.clone(), asked.clone(), authorizations.clone());
        std::thread::spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(60);
            while !stop2.load(Ordering::Relaxed) && Instant::now() < deadline {
                let Ok((mut s, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(10));
                    continue;
                };
                let _ = s.set_nonblocking(false);
                let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
                let mut r = BufReader::new(s.try_clone().unwrap());
                let mut line = String::new();
                if r.read_line(&mut line).is_err() {
                    continue;
                }
                // The headers (no request has a body here).
                let mut authorization = None;
                loop {
                    let mut h = String::new();
                    if r.read_line(&mut h).map_or(true, |n| n == 0) || h == "\r\n" {
                        break;
                    }
                    if let Some((k, v)) = h.split_once(':')
                        && k.eq_ignore_ascii_case("authorization")
                    {
                        authorization = Some(v.trim().to_string());
                    }
                }
                if let Some(a) = &authorization {
                    auth2.lock().unwrap().push(a.clone());
                }
                let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
                asked2.lock().unwrap().push(path.clone());
                let respond = |s: &mut TcpStream, status: &str, ctype: &str, body: &[u8]| {
                    let _ = write!(
                        s,
                        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        body.len()
                    );
                    let _ = s.write_all(body);
                };
                match fault {
                    Fault::Hang => {
                        while !stop2.load(Ordering::Relaxed) && Instant::now() < deadline {
                            std::thread::sleep(Duration::from_millis(20));
                        }
                    }
                    Fault::NeedsBasic if authorization.is_none() => {
                        let _ = write!(
                            s,
                            "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"fake\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                        );
                    }
                    Fault::Error500 => respond(
                        &mut s,
                        "500 Internal Server Error",
                        "application/json",
                        br#"{"errors":[{"code":"UNKNOWN","message":"storage on fire"}]}"#,
                    ),
                    _ if path == "/v2/" => respond(&mut s, "200 OK", "application/json", b"{}"),
                    _ if path.contains("/referrers/") => match &referrers {
                        Some(index) => respond(&mut s, "200 OK", wloc_oci::types::INDEX, index),
                        None => respond(&mut s, "404 Not Found", "application/json", b"{}"),
                    },
                    _ if bundle_parts
                        .iter()
                        .any(|(d, _, _)| path.ends_with(d.as_str())) =>
                    {
                        let (_, bytes, t) = bundle_parts
                            .iter()
                            .find(|(d, _, _)| path.ends_with(d.as_str()))
                            .unwrap();
                        respond(&mut s, "200 OK", t, bytes)
                    }
                    _ if path.contains("/manifests/sha256-") => {
                        respond(&mut s, "404 Not Found", "application/json", b"{}")
                    }
                    _ if path.contains("/manifests/") => {
                        respond(&mut s, "200 OK", wloc_oci::types::MANIFEST, &manifest)
                    }
                    _ if path.ends_with(&config_digest) => {
                        respond(&mut s, "200 OK", "application/octet-stream", &config)
                    }
                    _ if path.ends_with(&layer_digest) => {
                        respond(&mut s, "200 OK", "application/octet-stream", &layer)
                    }
                    _ => respond(&mut s, "404 Not Found", "application/json", b"{}"),
                }
                drop(s);
                let _ = r.read(&mut [0u8; 1]);
            }
        });
        Fake {
            host,
            stop,
            asked,
            authorizations,
        }
    }
}

impl Drop for Fake {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

#[test]
fn faulty_registries_install_nothing() {
    let env = Env::new("faults");
    let public = env.keygen();
    let v1 = env.component("1.0.0");
    env.policy(&policy_for(&public, ""));
    let bytes = std::fs::read(&v1).unwrap();
    let cases: [(Fault, &[&str]); 5] = [
        (Fault::Error500, &["500", "storage on fire"]),
        (Fault::Hang, &["not responding"]),
        (Fault::Huge, &["2147483648 bytes", "announced"]),
        (Fault::Tampered, &["digest mismatch"]),
        (
            Fault::WrongConfig,
            &["config media type", "not a Wasm artifact"],
        ),
    ];
    for (fault, words) in cases {
        let fake = Fake::start(fault, &bytes);
        let start = Instant::now();
        let err = env.fails(&[
            "component",
            "pull",
            &format!("{}/acme/tool:1.0.0", fake.host),
            "--plain-http",
            "--timeout",
            "1",
        ]);
        let took = start.elapsed();
        for w in words {
            assert!(err.contains(w), "{fault:?}: {err}");
        }
        assert!(took < Duration::from_secs(8), "{fault:?} took {took:?}");
        assert!(
            env.installed().is_empty(),
            "{fault:?}: {:?}",
            env.installed()
        );
        if fault == Fault::Huge {
            let asked = fake.asked.lock().unwrap().clone();
            assert!(
                !asked.iter().any(|p| p.contains("/blobs/")),
                "a blob was downloaded: {asked:?}"
            );
        }
    }
    // The same fake registry without a fault: installed (the cases above
    // failed for their fault, not for the fake).
    let sound = Fake::start(Fault::Sound, &bytes);
    env.ok(&[
        "component",
        "pull",
        &format!("{}/acme/tool:1.0.0", sound.host),
        "--plain-http",
    ]);
    assert_eq!(
        env.installed(),
        ["acme-tool.wasm", "acme-tool.wasm.origin.json"]
    );
}

/// `wkg` (crates.io), installed once under the target folder
/// (`TARGET/tools/bin/wkg`), serialised by a lock file.  It is built
/// without optimisation (`--debug`): the tests push and pull a few
/// kilobytes with it, and a cold debug install takes about 6 minutes on
/// the 2-core machine where an optimised one took an hour under load.
/// Its build folder is removed once it is installed.
fn wkg() -> PathBuf {
    let target = wloc()
        .parent()
        .and_then(Path::parent)
        .expect("the target folder")
        .to_path_buf();
    let root = target.join("tools");
    let bin = root.join("bin/wkg");
    if bin.is_file() {
        return bin;
    }
    std::fs::create_dir_all(&root).unwrap();
    let lock = std::fs::File::create(root.join("install.lock")).unwrap();
    lock.lock().unwrap();
    if !bin.is_file() {
        let start = Instant::now();
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let out = Command::new(cargo)
            .args([
                "install",
                "--debug",
                "--locked",
                "wkg",
                "--version",
                "0.16.1",
                "--root",
            ])
            .arg(&root)
            // Its own build folder: not the one of the tests' build.
            .env("CARGO_TARGET_DIR", target.join("tools-build"))
            .output()
            .expect("cargo runs");
        assert!(
            out.status.success(),
            "cargo install wkg: {}",
            text(&out.stderr)
        );
        common::timing("cargo install --debug wkg", start);
        let _ = std::fs::remove_dir_all(target.join("tools-build"));
    }
    bin
}

#[test]
fn wkg_pushes_what_wloc_pulls_and_gets_what_wloc_pushes() {
    let wkg = wkg();
    let reg = Registry::start(None);
    let env = Env::new("wkg");
    let public = env.keygen();
    env.policy(&policy_for(&public, ""));
    let v1 = env.component("1.0.0");
    let v2 = env.component("1.1.0");
    // wkg's configuration: namespace acme in the local registry, over HTTP.
    let config = env.path("config/wasm-pkg/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(
        &config,
        format!(
            "[namespace_registries]\nacme = \"{0}\"\n[registry.\"{0}\".oci]\nprotocol = \"http\"\n",
            reg.host
        ),
    )
    .unwrap();
    let wkg_run = |args: &[&str], config_args: bool| {
        let mut c = Command::new(&wkg);
        c.args(args);
        if config_args {
            c.arg("--config")
                .arg(&config)
                .arg("--cache")
                .arg(env.path("wkg-cache"));
        }
        let out = c
            .env("XDG_CONFIG_HOME", env.path("config"))
            .env("XDG_CACHE_HOME", env.path("cache"))
            .output()
            .expect("wkg runs");
        assert!(out.status.success(), "wkg {args:?}: {}", text(&out.stderr));
    };
    // wkg pushes (`wkg oci push`: `wkg publish` 0.16.1 reads the version
    // from the component's WIT package before `--package` overrides it,
    // and a component's world package has none); wloc pulls it by its
    // wkg name (wkg's configuration read from
    // $XDG_CONFIG_HOME/wasm-pkg/config.toml).
    wkg_run(
        &[
            "oci",
            "push",
            "--insecure",
            &reg.host,
            &format!("{}/acme/tool:1.0.0", reg.host),
            v1.to_str().unwrap(),
        ],
        false,
    );
    let out = env.ok(&["component", "pull", "acme:tool@1.0.0"]);
    assert!(
        out.contains(&format!("{}/acme/tool:1.0.0", reg.host)),
        "{out}"
    );
    assert_eq!(
        std::fs::read(env.installed_dir().join("acme-tool.wasm")).unwrap(),
        std::fs::read(&v1).unwrap()
    );
    // wloc pushes by the wkg name; wkg gets it, byte for byte.
    env.ok(&["component", "push", v2.to_str().unwrap(), "acme:tool@1.1.0"]);
    let got = env.path("got.wasm");
    wkg_run(
        &["get", "acme:tool@1.1.0", "-o", got.to_str().unwrap()],
        true,
    );
    assert_eq!(std::fs::read(&got).unwrap(), std::fs::read(&v2).unwrap());
    let pulled = env.path("pulled.wasm");
    wkg_run(
        &[
            "oci",
            "pull",
            "--insecure",
            &reg.host,
            &format!("{}/acme/tool:1.1.0", reg.host),
            "-o",
            pulled.to_str().unwrap(),
        ],
        false,
    );
    assert_eq!(std::fs::read(&pulled).unwrap(), std::fs::read(&v2).unwrap());
    // And wloc sees 1.1.0 as an update of what wkg published.
    let out = env.ok(&["component", "list", "--updates"]);
    assert!(out.contains("1.1.0: allowed"), "{out}");
}

/// The README's vendor path, run as written: its `sh` block after the
/// heading "A vendor's component, from registry to nodes", by bash with
/// `-e`, `wloc` on the PATH, against docker-registry.
#[test]
fn the_readme_vendor_path_runs_as_written() {
    let readme = std::fs::read_to_string(common::workspace().join("README.md")).unwrap();
    let section = readme
        .split("## A vendor's component, from registry to nodes")
        .nth(1)
        .expect("the README has the vendor's path");
    let script = section
        .split("```sh\n")
        .nth(1)
        .and_then(|s| s.split("```").next())
        .expect("a sh block");
    assert!(script.lines().count() <= 20, "{script}");
    let reg = Registry::start(None);
    let env = Env::new("readme");
    // The components' build folder of this build: the build step finds
    // example-vendor built (with the same flags) and only checks it.
    let built = Path::new(wloc_runtime::test_components_dir())
        .parent()
        .unwrap()
        .join("wasm-target");
    let path = format!(
        "{}:{}",
        wloc().parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let start = Instant::now();
    let out = Command::new("bash")
        .args(["-e", "-x", "-c", script])
        .current_dir(common::workspace())
        .env("TMPDIR", &env.dir.0)
        .env("PATH", path)
        .env("REGISTRY", &reg.host)
        .env("CARGO_TARGET_DIR", &built)
        .env("CARGO_ENCODED_RUSTFLAGS", "-Ctarget-feature=+simd128")
        .env("LC_ALL", "C")
        .env("WLOC_POLICY", env.path("policy.toml"))
        .env("XDG_DATA_HOME", env.path("data"))
        .env("WLOC_CACHE_DIR", env.path("cache"))
        .env_remove("WLOC_COMPONENTS_PATH")
        .env_remove("WLOC_COMPONENTS")
        .output()
        .unwrap();
    common::timing("the README's vendor path", start);
    let log = format!("{}\n{}", text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{log}");
    assert!(log.contains("updated example-vendor to 0.1.1"), "{log}");
    // The vendor's folder (mktemp -d, under TMPDIR).
    let work = std::fs::read_dir(&env.dir.0)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.join("v2.wasm").is_file())
        .expect("the vendor's folder");
    assert_eq!(
        std::fs::read(env.installed_dir().join("example-vendor.wasm")).unwrap(),
        std::fs::read(work.join("v2.wasm")).unwrap()
    );
    // The revoked version is refused, the fix allowed.
    let err = env.fails(&[
        "component",
        "verify",
        work.join("v1.wasm").to_str().unwrap(),
    ]);
    assert!(err.contains("[[deny]]"), "{err}");
    env.ok(&[
        "component",
        "verify",
        work.join("v2.wasm").to_str().unwrap(),
    ]);
}

/// A component without an embedded signature, pushed with `--sign`: its
/// cosign signature in the registry is what admits it (the publisher's
/// key in the policy); under another key it is refused, as it is once
/// its digest is denied, and nothing is installed either time.
#[test]
fn registry_signatures_admit_what_the_file_does_not_sign() {
    let reg = Registry::start(None);
    let env = Env::new("cosign");
    let public = env.keygen();
    let unsigned = unsigned_component(&env);
    let r = format!("{}/acme/tool:1.0.0", reg.host);
    let out = env.ok(&[
        "component",
        "push",
        unsigned.to_str().unwrap(),
        &r,
        "--sign",
        env.path("acme.key").to_str().unwrap(),
    ]);
    assert!(out.contains("signed in cosign's format"), "{out}");
    // Another publisher's key only: the registry signature is refused.
    let other = Env::new("cosign-other");
    let other_public = other.keygen();
    env.policy(&policy_for(&other_public, ""));
    let err = env.fails(&["component", "pull", &r]);
    assert!(
        err.contains("nothing installed") && err.contains("registry signatures refused"),
        "{err}"
    );
    assert!(env.installed().is_empty());
    // The vendor's key: admitted by its registry signature alone.
    env.policy(&policy_for(&public, ""));
    let out = env.ok(&["component", "pull", &r]);
    assert!(out.contains("installed acme-tool 1.0.0"), "{out}");
    assert_eq!(
        std::fs::read(env.installed_dir().join("acme-tool.wasm")).unwrap(),
        std::fs::read(&unsigned).unwrap()
    );
    // Its digest denied: refused whoever signed it.
    std::fs::remove_dir_all(env.installed_dir()).unwrap();
    let digest = wloc_runtime::cache::component_digest(&std::fs::read(&unsigned).unwrap());
    env.policy(&policy_for(
        &public,
        &format!("[[deny]]\ndigest = \"{digest}\"\n"),
    ));
    let err = env.fails(&["component", "pull", &r]);
    assert!(err.contains("nothing installed"), "{err}");
    assert!(env.installed().is_empty());
}

/// Runs `openssl` with `args` in `dir`, failing the test on an error.
fn openssl(dir: &Path, args: &[&str]) {
    let mut c = Command::new("openssl");
    c.current_dir(dir).args(args);
    run_tool(c);
}

/// The vendor of [`vendor_with_openssl_keys`].
struct Vendor {
    /// `HOST/acme/tool`.
    repo: String,
    /// `HOST/acme/tool:1.0.0`.
    r: String,
    /// The artifact manifest, as skopeo reads it from the registry.
    artifact_manifest: Vec<u8>,
    /// Its digest.
    digest: String,
    /// `vendor.key`, `vendor.pub`, `stranger.key`, `stranger.pub`.
    keys: PathBuf,
    /// The component pushed (no embedded signature).
    unsigned: PathBuf,
}

/// `acme-tool` with its manifest embedded and no signature.
fn unsigned_component(env: &Env) -> PathBuf {
    let unsigned = env.path("acme-tool.wasm");
    let src = Path::new(wloc_runtime::test_components_dir()).join("hostile-read-dotdot.wasm");
    let manifest = env.path("manifest.toml");
    std::fs::write(
        &manifest,
        "name = \"acme-tool\"\nversion = \"1.0.0\"\nkind = \"discovery\"\n\n[capabilities]\nfiles = [\"/sys\"]\n",
    )
    .unwrap();
    env.ok(&[
        "component",
        "embed",
        src.to_str().unwrap(),
        "--manifest",
        manifest.to_str().unwrap(),
        "-o",
        unsigned.to_str().unwrap(),
    ]);
    unsigned
}

/// `acme-tool` without an embedded signature, pushed as
/// `acme/tool:1.0.0`, and two P-256 key pairs made by `openssl ec`
/// (cosign's `cosign.pub` is the same PEM SubjectPublicKeyInfo): the
/// vendor's and a stranger's.
fn vendor_with_openssl_keys(reg: &Registry, env: &Env) -> Vendor {
    require_packages(&[("/usr/bin/openssl", "openssl")]).unwrap();
    let unsigned = unsigned_component(env);
    let repo = format!("{}/acme/tool", reg.host);
    let r = format!("{repo}:1.0.0");
    env.ok(&["component", "push", unsigned.to_str().unwrap(), &r]);
    // The artifact's manifest digest, as skopeo reads it.
    let raw = Command::new(SKOPEO)
        .args(["inspect", "--raw", "--tls-verify=false"])
        .arg(format!("docker://{r}"))
        .output()
        .expect("skopeo runs");
    assert!(raw.status.success(), "{}", text(&raw.stderr));
    let digest = wloc_oci::digest_of(&raw.stdout);
    let keys = env.path("keys");
    std::fs::create_dir_all(&keys).unwrap();
    for k in ["vendor", "stranger"] {
        openssl(
            &keys,
            &[
                "ecparam",
                "-name",
                "prime256v1",
                "-genkey",
                "-noout",
                "-out",
                &format!("{k}.key"),
            ],
        );
        openssl(
            &keys,
            &[
                "ec",
                "-in",
                &format!("{k}.key"),
                "-pubout",
                "-out",
                &format!("{k}.pub"),
            ],
        );
    }
    Vendor {
        repo,
        r,
        artifact_manifest: raw.stdout,
        digest,
        keys,
        unsigned,
    }
}

/// `file` in `keys` signed by `vendor.key` (`openssl dgst -sha256
/// -sign`: ASN.1 DER ECDSA over its SHA-256, as cosign signs with a
/// P-256 key), in base64.
fn openssl_sign(keys: &Path, file: &str) -> String {
    openssl(
        keys,
        &[
            "dgst",
            "-sha256",
            "-sign",
            "vendor.key",
            "-out",
            "sig.der",
            file,
        ],
    );
    openssl_base64(keys, "sig.der")
}

/// `file` in `keys` in base64 (`openssl base64 -A`).
fn openssl_base64(keys: &Path, file: &str) -> String {
    openssl(keys, &["base64", "-A", "-in", file, "-out", "out.b64"]);
    std::fs::read_to_string(keys.join("out.b64"))
        .unwrap()
        .trim()
        .to_string()
}

/// The policy trusting the cosign key `keys/key` for `acme-tool`.
fn cosign_key_policy(keys: &Path, key: &str) -> String {
    format!(
        "[[publisher]]\nname = \"acme\"\ncosign_keys = [\"{}\"]\n[[allow]]\npublisher = \"acme\"\nname = \"acme-tool\"\nfiles = [\"/sys\"]\n",
        keys.join(key).display()
    )
}

/// An OCI layout folder written by hand, for skopeo to read.
struct HandLayout {
    dir: PathBuf,
    names: Vec<String>,
}

impl HandLayout {
    fn new(dir: PathBuf) -> HandLayout {
        std::fs::create_dir_all(dir.join("blobs/sha256")).unwrap();
        std::fs::write(dir.join("oci-layout"), r#"{"imageLayoutVersion":"1.0.0"}"#).unwrap();
        HandLayout {
            dir,
            names: Vec::new(),
        }
    }

    /// Stores a blob; its digest.
    fn put(&self, bytes: &[u8]) -> String {
        let d = wloc_oci::digest_of(bytes);
        let file = self.dir.join("blobs/sha256").join(&d[7..]);
        std::fs::write(file, bytes).unwrap();
        d
    }

    /// Stores an image manifest and names it `name` in `index.json`.
    fn name(&mut self, name: &str, manifest: &[u8]) -> String {
        let d = self.put(manifest);
        self.names.push(format!(
            r#"{{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"{d}","size":{},"annotations":{{"org.opencontainers.image.ref.name":"{name}"}}}}"#,
            manifest.len()
        ));
        std::fs::write(
            self.dir.join("index.json"),
            format!(
                r#"{{"schemaVersion":2,"manifests":[{}]}}"#,
                self.names.join(",")
            ),
        )
        .unwrap();
        d
    }

    /// `oci:DIR:NAME`.
    fn reference(&self, name: &str) -> String {
        format!("oci:{}:{name}", self.dir.display())
    }
}

/// cosign's key format and signature made by other tools: a P-256 key
/// pair from `openssl ec`, the simple-signing payload signed by `openssl
/// dgst -sha256 -sign` (cosign documents this path: its signatures are
/// ASN.1 DER ECDSA over the payload's SHA-256), the signature manifest
/// pushed under `sha256-HEX.sig` by `skopeo` from a layout folder the
/// test writes in cosign's storage format.  cosign itself is not run:
/// Debian 12 does not package it and its releases are on a host these
/// machines cannot reach (docs/testing.md).
#[test]
fn cosign_signatures_made_with_openssl_and_pushed_by_skopeo_admit_a_pull() {
    let reg = Registry::start(None);
    let env = Env::new("openssl-cosign");
    let v = vendor_with_openssl_keys(&reg, &env);
    let payload = format!(
        r#"{{"critical":{{"identity":{{"docker-reference":"{}"}},"image":{{"docker-manifest-digest":"{}"}},"type":"cosign container image signature"}},"optional":null}}"#,
        v.repo, v.digest
    );
    std::fs::write(v.keys.join("payload.json"), &payload).unwrap();
    let signature = openssl_sign(&v.keys, "payload.json");

    // cosign's storage format, as an OCI layout folder for skopeo.
    let mut layout = HandLayout::new(env.path("sig-layout"));
    let config = br#"{"architecture":"","config":{},"created":"0001-01-01T00:00:00Z","history":[{"created":"0001-01-01T00:00:00Z"}],"os":"","rootfs":{"type":"layers","diff_ids":[]}}"#;
    let config_digest = layout.put(config);
    let payload_digest = layout.put(payload.as_bytes());
    let sig_manifest = format!(
        r#"{{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{{"mediaType":"application/vnd.oci.image.config.v1+json","size":{},"digest":"{config_digest}"}},"layers":[{{"mediaType":"application/vnd.dev.cosign.simplesigning.v1+json","size":{},"digest":"{payload_digest}","annotations":{{"dev.cosignproject.cosign/signature":"{signature}"}}}}]}}"#,
        config.len(),
        payload.len()
    );
    layout.name("sig", sig_manifest.as_bytes());
    let sig_tag = format!("sha256-{}.sig", &v.digest[7..]);
    skopeo(&[
        "copy",
        "--preserve-digests",
        "--dest-tls-verify=false",
        &layout.reference("sig"),
        &format!("docker://{}:{sig_tag}", v.repo),
    ]);

    // A stranger's key in the policy: the vendor's signature is refused.
    env.policy(&cosign_key_policy(&v.keys, "stranger.pub"));
    let err = env.fails(&["component", "pull", &v.r]);
    assert!(
        err.contains("nothing installed") && err.contains("registry signatures refused"),
        "{err}"
    );
    assert!(env.installed().is_empty());
    // The vendor's openssl-made key: admitted by the signature alone.
    env.policy(&cosign_key_policy(&v.keys, "vendor.pub"));
    let out = env.ok(&["component", "pull", &v.r]);
    assert!(out.contains("installed acme-tool 1.0.0"), "{out}");
    assert_eq!(
        std::fs::read(env.installed_dir().join("acme-tool.wasm")).unwrap(),
        std::fs::read(&v.unsigned).unwrap()
    );
}

/// PUTs a manifest into a plain-HTTP registry by hand (HTTP/1.1 over a
/// socket), as cosign and oras write a referrers index: skopeo 1.9
/// re-encodes an index without its entries' `artifactType`, and refuses
/// `--preserve-digests` for one.
fn put_manifest(host: &str, path: &str, media_type: &str, body: &[u8]) {
    let mut s = TcpStream::connect(host).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(
        s,
        "PUT {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: {media_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .unwrap();
    s.write_all(body).unwrap();
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 201"), "PUT {path}: {answer}");
}

/// cosign v3's signature format made by other tools: a Sigstore bundle
/// (v0.3) whose DSSE envelope holds an in-toto statement naming the
/// artifact manifest's sha256 with cosign's sign predicate, signed over
/// DSSE's PAE by `openssl dgst -sha256 -sign` with the vendor's P-256
/// key; the bundle manifest (subject: the artifact manifest) pushed by
/// `skopeo` from a layout folder the test writes, and the referrers
/// index (docker-registry 2.8 has no referrers API) under the tag
/// `sha256-HEX`.  A stranger's key refuses it; the vendor's admits it;
/// a mirror to a layout folder carries it, and a pull from there is
/// admitted again.
#[test]
fn cosign_v3_bundles_made_with_openssl_admit_a_pull_and_follow_a_mirror() {
    let reg = Registry::start(None);
    let env = Env::new("openssl-bundle");
    let v = vendor_with_openssl_keys(&reg, &env);
    let hex = &v.digest[7..];
    let statement = format!(
        r#"{{"_type":"https://in-toto.io/Statement/v1","subject":[{{"name":"{}","digest":{{"sha256":"{hex}"}}}}],"predicateType":"https://sigstore.dev/cosign/sign/v1","predicate":{{}}}}"#,
        v.repo
    );
    let payload_type = "application/vnd.in-toto+json";
    let pae = format!(
        "DSSEv1 {} {payload_type} {} {statement}",
        payload_type.len(),
        statement.len()
    );
    std::fs::write(v.keys.join("statement.json"), &statement).unwrap();
    std::fs::write(v.keys.join("pae.bin"), &pae).unwrap();
    let signature = openssl_sign(&v.keys, "pae.bin");
    let payload = openssl_base64(&v.keys, "statement.json");
    let bundle_type = "application/vnd.dev.sigstore.bundle.v0.3+json";
    let bundle = format!(
        r#"{{"mediaType":"{bundle_type}","verificationMaterial":{{"publicKey":{{"hint":"vendor"}},"tlogEntries":[]}},"dsseEnvelope":{{"payload":"{payload}","payloadType":"{payload_type}","signatures":[{{"sig":"{signature}","keyid":""}}]}}}}"#
    );

    // cosign v3's storage format, as a layout folder for skopeo.
    let mut layout = HandLayout::new(env.path("bundle-layout"));
    let empty = layout.put(b"{}");
    let bundle_digest = layout.put(bundle.as_bytes());
    let bundle_manifest = format!(
        r#"{{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","artifactType":"{bundle_type}","config":{{"mediaType":"application/vnd.oci.empty.v1+json","digest":"{empty}","size":2}},"layers":[{{"mediaType":"{bundle_type}","digest":"{bundle_digest}","size":{},"annotations":{{"org.opencontainers.image.title":"sigstore.bundle.json"}}}}],"subject":{{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"{}","size":{}}}}}"#,
        bundle.len(),
        v.digest,
        v.artifact_manifest.len()
    );
    let bundle_manifest_digest = layout.name("bundle", bundle_manifest.as_bytes());
    skopeo(&[
        "copy",
        "--preserve-digests",
        "--dest-tls-verify=false",
        &layout.reference("bundle"),
        &format!("docker://{}:bundle-upload", v.repo),
    ]);
    let index = format!(
        r#"{{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"{bundle_manifest_digest}","size":{},"artifactType":"{bundle_type}"}}]}}"#,
        bundle_manifest.len()
    );
    let repository = v.repo.split_once('/').unwrap().1;
    put_manifest(
        &reg.host,
        &format!("/v2/{repository}/manifests/sha256-{hex}"),
        "application/vnd.oci.image.index.v1+json",
        index.as_bytes(),
    );

    // A stranger's key in the policy: the bundle is refused.
    env.policy(&cosign_key_policy(&v.keys, "stranger.pub"));
    let err = env.fails(&["component", "pull", &v.r]);
    assert!(
        err.contains("nothing installed")
            && err.contains("registry signatures refused")
            && err.contains("no trusted key verifies"),
        "{err}"
    );
    assert!(env.installed().is_empty());
    // The vendor's key: admitted by the bundle alone.
    env.policy(&cosign_key_policy(&v.keys, "vendor.pub"));
    let out = env.ok(&["component", "pull", &v.r]);
    assert!(
        out.contains("installed acme-tool 1.0.0") && out.contains("1 Sigstore bundle(s)"),
        "{out}"
    );
    assert_eq!(
        std::fs::read(env.installed_dir().join("acme-tool.wasm")).unwrap(),
        std::fs::read(&v.unsigned).unwrap()
    );

    // Mirrored to a layout folder: the bundle manifest byte for byte
    // and the referrers index under `sha256-HEX`; pulled from there, it
    // is admitted again.
    std::fs::remove_dir_all(env.installed_dir()).unwrap();
    let mirror = env.path("mirror");
    let out = env.ok(&[
        "component",
        "mirror",
        &v.r,
        &format!("oci:{}", mirror.display()),
    ]);
    assert!(out.contains("1 Sigstore bundle(s)"), "{out}");
    assert_eq!(
        std::fs::read(
            mirror
                .join("blobs/sha256")
                .join(&bundle_manifest_digest[7..])
        )
        .unwrap(),
        bundle_manifest.as_bytes()
    );
    let names = std::fs::read_to_string(mirror.join("index.json")).unwrap();
    assert!(names.contains(&format!("\"sha256-{hex}\"")), "{names}");
    let from_mirror = format!("oci:{}:1.0.0", mirror.display());
    let out = env.ok(&["component", "pull", &from_mirror]);
    assert!(out.contains("installed acme-tool 1.0.0"), "{out}");
    // And the stranger's key refuses it there too.
    std::fs::remove_dir_all(env.installed_dir()).unwrap();
    env.policy(&cosign_key_policy(&v.keys, "stranger.pub"));
    let err = env.fails(&["component", "pull", &from_mirror]);
    assert!(err.contains("nothing installed"), "{err}");
    assert!(env.installed().is_empty());
}

/// A registry with the referrers API: the Sigstore bundle it lists for
/// the artifact admits the pull (the referrers tag is then not asked
/// for), and one without it (404) is read through the referrers tag.
#[test]
fn the_referrers_api_lists_bundles_and_its_404_falls_back_to_the_tag() {
    let env = Env::new("referrers");
    let wasm = std::fs::read(unsigned_component(&env)).unwrap();
    let key = wloc_trust::cosign::RegistrySigningKey::generate_p256().unwrap();
    let keys = env.path("keys");
    std::fs::create_dir_all(&keys).unwrap();
    std::fs::write(keys.join("vendor.pub"), key.public().to_pem()).unwrap();
    let stranger = wloc_trust::cosign::RegistrySigningKey::generate_p256().unwrap();
    std::fs::write(keys.join("stranger.pub"), stranger.public().to_pem()).unwrap();
    let pull = |fake: &Fake| {
        env.run(&[
            "component",
            "pull",
            &format!("{}/acme/tool:1.0.0", fake.host),
            "--plain-http",
        ])
    };
    env.policy(&cosign_key_policy(&keys, "stranger.pub"));
    let fake = Fake::start_with(Fault::Sound, &wasm, Some(&key));
    let out = pull(&fake);
    assert!(!out.status.success() && env.installed().is_empty());
    assert!(
        text(&out.stderr).contains("no trusted key verifies"),
        "{}",
        text(&out.stderr)
    );
    env.policy(&cosign_key_policy(&keys, "vendor.pub"));
    let out = pull(&fake);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("1 Sigstore bundle(s)"));
    let asked = fake.asked.lock().unwrap().clone();
    assert!(
        asked.iter().any(|p| p.contains("/referrers/sha256:")),
        "{asked:?}"
    );
    assert!(
        !asked
            .iter()
            .any(|p| p.contains("/manifests/sha256-") && !p.ends_with(".sig")),
        "the referrers tag was asked for: {asked:?}"
    );
    // No referrers API (404): the tag is asked for, and nothing admits.
    std::fs::remove_dir_all(env.installed_dir()).unwrap();
    let plain = Fake::start(Fault::Sound, &wasm);
    let out = pull(&plain);
    assert!(!out.status.success() && env.installed().is_empty());
    let asked = plain.asked.lock().unwrap().clone();
    assert!(
        asked
            .iter()
            .any(|p| p.contains("/manifests/sha256-") && !p.ends_with(".sig")),
        "{asked:?}"
    );
}

/// Referrers that are not what they say are refused, naming what is
/// wrong, and a component only they would admit is not installed: a bundle manifest whose subject is another
/// artifact, more than 32 bundles, a bundle manifest whose bytes are not
/// its digest's, a referrers tag that is not an index.  The sound bundle
/// then admits the same component.
#[test]
fn hostile_referrers_admit_nothing() {
    use wloc_oci::layout::Layout;
    use wloc_oci::types::{BUNDLE_MEDIA_TYPE, Descriptor, INDEX, MANIFEST};
    let env = Env::new("hostile-referrers");
    let wasm = unsigned_component(&env);
    let dir = env.path("layout");
    let reference = format!("oci:{}:1.0.0", dir.display());
    env.ok(&["component", "push", wasm.to_str().unwrap(), &reference]);
    let layout = Layout::open(&dir).unwrap();
    let artifact = layout.resolve(Some("1.0.0")).unwrap();
    let manifest = layout.read_blob(&artifact, 1 << 20).unwrap();
    let key = wloc_trust::cosign::RegistrySigningKey::generate_p256().unwrap();
    std::fs::write(env.path("vendor.pub"), key.public().to_pem()).unwrap();
    env.policy(&cosign_key_policy(&env.dir.0, "vendor.pub"));
    let descriptor = |media_type: &str, bytes: &[u8], artifact_type: Option<&str>| Descriptor {
        media_type: media_type.into(),
        digest: wloc_oci::digest_of(bytes),
        size: bytes.len() as u64,
        artifact_type: artifact_type.map(str::to_string),
        annotations: Default::default(),
    };
    // A bundle stored in the layout; its descriptor in a referrers index.
    // (ECDSA signatures are deterministic: another name, another bundle.)
    let store = |subject: &[u8], name: &str| {
        let made = wloc_trust::bundle::make_bundle(subject, name, &key);
        for b in [&made.config, &made.bundle, &made.manifest] {
            layout.write_blob(b).unwrap();
        }
        descriptor(MANIFEST, &made.manifest, Some(BUNDLE_MEDIA_TYPE))
    };
    let tag = format!("sha256-{}", &artifact.digest[7..]);
    let refer = |entries: &[Descriptor]| {
        let index = serde_json::to_vec(&serde_json::json!({
            "schemaVersion": 2,
            "mediaType": INDEX,
            "manifests": entries,
        }))
        .unwrap();
        layout.write_blob(&index).unwrap();
        layout.tag(&tag, descriptor(INDEX, &index, None)).unwrap();
    };
    let refused = |words: &[&str]| {
        let err = env.fails(&["component", "pull", &reference]);
        for w in words {
            assert!(err.contains(w), "{words:?}: {err}");
        }
        assert!(env.installed().is_empty());
    };
    refer(&[store(b"another artifact manifest", "acme/tool")]);
    refused(&["its subject is not", &artifact.digest]);
    let good = store(&manifest, "acme/tool");
    let many: Vec<Descriptor> = std::iter::repeat_n(good.clone(), 33).collect();
    refer(&many);
    refused(&["33 Sigstore bundles (at most 32)"]);
    let tampered = store(&manifest, "acme/tampered");
    let file = dir.join("blobs/sha256").join(&tampered.digest[7..]);
    let mut bytes = std::fs::read(&file).unwrap();
    bytes[10] ^= 1;
    std::fs::write(&file, bytes).unwrap();
    refer(&[tampered]);
    refused(&["digest mismatch"]);
    layout.tag(&tag, artifact.clone()).unwrap();
    refused(&["not an OCI image index"]);
    refer(&[good]);
    let out = env.ok(&["component", "pull", &reference]);
    assert!(
        out.contains("installed acme-tool 1.0.0") && out.contains("1 Sigstore bundle(s)"),
        "{out}"
    );
}

/// Edits the layout folder `lay`'s `index.json` with `edit`.
fn edit_index(lay: &Path, edit: impl FnOnce(&mut serde_json::Value)) {
    let path = lay.join("index.json");
    let mut index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    edit(&mut index);
    std::fs::write(&path, serde_json::to_vec(&index).unwrap()).unwrap();
}

/// The index entry of `lay` named `name`.
fn index_entry(lay: &Path, name: &str) -> serde_json::Value {
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(lay.join("index.json")).unwrap()).unwrap();
    index["manifests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["annotations"]["org.opencontainers.image.ref.name"] == name)
        .unwrap_or_else(|| panic!("{name} in {index}"))
        .clone()
}

/// A registry or mirror that re-tags an older signed build as a higher
/// version cannot roll an update back: the component must say it is the
/// version its tag names.  A signature layer nobody can fetch refuses
/// that signature only, never a component the policy allows otherwise.
/// A relative layout folder is recorded as an absolute origin.
#[test]
fn update_never_rolls_back_and_a_bad_signature_layer_refuses_nothing() {
    let env = Env::new("rollback");
    let public = env.keygen();
    env.policy(&policy_for(&public, ""));
    let key = env.path("acme.key");
    for v in ["0.5.0", "1.0.0"] {
        let c = env.component(v);
        env.ok(&[
            "component",
            "push",
            c.to_str().unwrap(),
            &format!("oci:lay:{v}"),
            "--sign",
            key.to_str().unwrap(),
        ]);
    }
    env.ok(&["component", "pull", "oci:lay:1.0.0"]);
    let origin =
        std::fs::read_to_string(env.installed_dir().join("acme-tool.wasm.origin.json")).unwrap();
    let lay = env.path("lay");
    assert!(
        origin.contains(&format!("oci:{}", lay.display())),
        "{origin}"
    );
    // 0.5.0's manifest re-tagged 9.9.9 (and 99.0.0-rc.1, a pre-release).
    let old = index_entry(&lay, "0.5.0");
    edit_index(&lay, |index| {
        for tag in ["9.9.9", "99.0.0-rc.1"] {
            let mut e = old.clone();
            e["annotations"]["org.opencontainers.image.ref.name"] = tag.into();
            index["manifests"].as_array_mut().unwrap().push(e);
        }
    });
    let installed = std::fs::read(env.installed_dir().join("acme-tool.wasm")).unwrap();
    let err = env.fails(&["component", "update", "acme-tool"]);
    assert!(
        err.contains("9.9.9") && err.contains("component it holds is version \"0.5.0\""),
        "{err}"
    );
    assert!(!err.contains("99.0.0-rc.1"), "{err}");
    assert_eq!(
        std::fs::read(env.installed_dir().join("acme-tool.wasm")).unwrap(),
        installed
    );
    let listed = env.ok(&["component", "list", "--updates"]);
    assert!(listed.contains("9.9.9: refused"), "{listed}");
    // A real 2.0.0 is installed past the bad tag.
    let v2 = env.component("2.0.0");
    env.ok(&["component", "push", v2.to_str().unwrap(), "oci:lay:2.0.0"]);
    let out = env.ok(&["component", "update", "acme-tool"]);
    assert!(out.contains("updated acme-tool to 2.0.0"), "{out}");

    // 1.0.0's signature manifest gains a layer announced at 2 MiB.
    let sig_name = format!(
        "sha256-{}.sig",
        index_entry(&lay, "1.0.0")["digest"]
            .as_str()
            .unwrap()
            .trim_start_matches("sha256:")
    );
    let sig = index_entry(&lay, &sig_name);
    let blob = |d: &serde_json::Value| {
        lay.join("blobs/sha256")
            .join(d.as_str().unwrap().trim_start_matches("sha256:"))
    };
    let mut m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(blob(&sig["digest"])).unwrap()).unwrap();
    m["layers"].as_array_mut().unwrap().push(serde_json::json!({
        "mediaType": "application/vnd.dev.cosign.simplesigning.v1+json",
        "digest": format!("sha256:{}", "0".repeat(64)),
        "size": 2 << 20,
        "annotations": {"dev.cosignproject.cosign/signature": "AAAA"}
    }));
    let bytes = serde_json::to_vec(&m).unwrap();
    let digest = wloc_oci::digest_of(&bytes);
    std::fs::write(
        lay.join("blobs/sha256")
            .join(digest.trim_start_matches("sha256:")),
        &bytes,
    )
    .unwrap();
    edit_index(&lay, |index| {
        for e in index["manifests"].as_array_mut().unwrap() {
            if e["annotations"]["org.opencontainers.image.ref.name"] == sig_name.as_str() {
                e["digest"] = digest.clone().into();
                e["size"] = bytes.len().into();
            }
        }
    });
    let fresh = Env::new("rollback-fresh");
    std::fs::copy(env.path("policy.toml"), fresh.path("policy.toml")).unwrap();
    let lay_arg = format!("oci:{}:1.0.0", lay.display());
    let out = fresh.ok(&["component", "pull", &lay_arg]);
    assert!(out.contains("installed acme-tool 1.0.0"), "{out}");
}

/// `mirror` from a wkg name whose host wkg's configuration marks
/// `protocol = "http"` to another registry: plain HTTP is that host's
/// only, the other registry is spoken to in HTTPS (192.0.2.1 is a
/// documentation address: nothing answers, the error names the URL).
#[test]
fn mirror_grants_plain_http_per_host() {
    let env = Env::new("per-host");
    env.keygen();
    let v1 = env.component("1.0.0");
    let fake = Fake::start(Fault::Sound, &std::fs::read(&v1).unwrap());
    let config = env.path("config/wasm-pkg/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(
        &config,
        format!(
            "[namespace_registries]\nacme = \"{0}\"\n[registry.\"{0}\".oci]\nprotocol = \"http\"\n",
            fake.host
        ),
    )
    .unwrap();
    let err = env.fails(&[
        "component",
        "mirror",
        "acme:tool@1.0.0",
        "192.0.2.1:9/acme/tool:1.0.0",
        "--timeout",
        "1",
    ]);
    assert!(err.contains("https://192.0.2.1:9/v2/"), "{err}");
    assert!(!err.contains("http://192.0.2.1"), "{err}");
    // The source was read (over plain HTTP, as configured).
    let asked = fake.asked.lock().unwrap().clone();
    assert!(asked.iter().any(|p| p.contains("/blobs/")), "{asked:?}");
}

/// `--username` goes to one registry: `mirror`'s destination when it is
/// a registry (the source gets it only if it is the same registry),
/// else the source's.
#[test]
fn mirror_sends_credentials_to_one_end() {
    let env = Env::new("mirror-creds");
    env.keygen();
    let v1 = env.component("1.0.0");
    let fake = Fake::start(Fault::NeedsBasic, &std::fs::read(&v1).unwrap());
    let from = format!("{}/acme/tool:1.0.0", fake.host);
    let password = [("WLOC_REGISTRY_PASSWORD", "s3cret")];
    // To another registry: the source gets no credentials (and fails
    // saying whose they are).
    let err = env.fails_with(
        &[
            "component",
            "mirror",
            &from,
            "192.0.2.1:9/acme/tool:1.0.0",
            "--username",
            "acme",
            "--plain-http",
            "--timeout",
            "1",
        ],
        &password,
    );
    assert!(
        err.contains("those given are for 192.0.2.1:9 only"),
        "{err}"
    );
    assert!(fake.authorizations.lock().unwrap().is_empty());
    // To a layout folder: the credentials are the source's.
    let dir = env.path("mirror");
    let out = env.run_with(
        &[
            "component",
            "mirror",
            &from,
            &format!("oci:{}", dir.display()),
            "--username",
            "acme",
            "--plain-http",
        ],
        &password,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let seen = fake.authorizations.lock().unwrap().clone();
    assert!(
        !seen.is_empty() && seen.iter().all(|a| a.starts_with("Basic ")),
        "{seen:?}"
    );
}
