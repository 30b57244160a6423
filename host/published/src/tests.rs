use super::*;
use std::os::unix::fs::PermissionsExt;

/// A folder of its own below the system's temporary folder (root's,
/// sticky), mode 0755, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!("wloc-published-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
        Scratch(d)
    }

    fn file(&self, name: &str, mode: u32) -> PathBuf {
        let p = self.0.join(name);
        std::fs::write(&p, b"not checked here").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        p
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn chown(p: &Path, uid: u32) {
    std::os::unix::fs::lchown(p, Some(uid), None).unwrap();
}

const ROOT: Caller = Caller {
    uid: 0,
    privileged: true,
};
const USER: Caller = Caller {
    uid: 4242,
    privileged: false,
};

fn why(r: Result<File, NotAdopted>) -> String {
    match r {
        Ok(_) => "trusted".into(),
        Err(e) => e.to_string(),
    }
}

/// The tests change owners: they run as root (as the test command does).
fn as_root() -> bool {
    // SAFETY: reads the process's credentials.
    unsafe { libc::geteuid() == 0 }
}

#[test]
fn owners_and_modes_decide_trust() {
    assert!(as_root(), "these tests run as root");
    let s = Scratch::new("owners");
    let good = s.file("good.img", 0o644);
    assert_eq!(why(open_trusted(&good, &ROOT)), "trusted");
    assert_eq!(why(open_trusted(&good, &USER)), "trusted");

    let writable = s.file("writable.img", 0o666);
    assert!(why(open_trusted(&writable, &ROOT)).contains("written by others"));

    // A user's own image: trusted by that user alone, never by root or a
    // setuid program.
    let users = s.file("users.img", 0o644);
    chown(&users, USER.uid);
    assert_eq!(why(open_trusted(&users, &USER)), "trusted");
    assert!(why(open_trusted(&users, &ROOT)).contains("belongs to user 4242"));
    let setuid = Caller {
        uid: USER.uid,
        privileged: true,
    };
    assert!(why(open_trusted(&users, &setuid)).contains("belongs to user 4242"));
    let other = Caller {
        uid: 5151,
        privileged: false,
    };
    assert!(why(open_trusted(&users, &other)).contains("belongs to user 4242"));
}

#[test]
fn links_fifos_and_folders_others_write_are_refused() {
    let s = Scratch::new("shapes");
    let good = s.file("good.img", 0o644);
    let link = s.0.join("link.img");
    std::os::unix::fs::symlink(&good, &link).unwrap();
    assert!(why(open_trusted(&link, &ROOT)).contains("cannot open it"));

    let fifo = s.0.join("fifo.img");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let start = std::time::Instant::now();
    assert!(why(open_trusted(&fifo, &ROOT)).contains("not a regular file"));
    assert!(start.elapsed() < std::time::Duration::from_secs(5));

    assert!(matches!(
        open_trusted(&s.0.join("absent.img"), &ROOT),
        Err(NotAdopted::Absent(_))
    ));
    assert!(why(open_trusted(Path::new("relative.img"), &ROOT)).contains("absolute"));

    // The image's own folder writable by others, even sticky.
    for mode in [0o777, 0o1777, 0o775] {
        std::fs::set_permissions(&s.0, std::fs::Permissions::from_mode(mode)).unwrap();
        assert!(
            why(open_trusted(&good, &ROOT)).contains("may be written by others"),
            "{mode:o}"
        );
    }
    std::fs::set_permissions(&s.0, std::fs::Permissions::from_mode(0o755)).unwrap();

    // A folder above it that others may write and is not sticky.
    let inner = s.0.join("inner");
    std::fs::create_dir(&inner).unwrap();
    std::fs::set_permissions(&inner, std::fs::Permissions::from_mode(0o755)).unwrap();
    let deep = inner.join("deep.img");
    std::fs::write(&deep, b"x").unwrap();
    std::fs::set_permissions(&deep, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert_eq!(why(open_trusted(&deep, &ROOT)), "trusted");
    std::fs::set_permissions(&s.0, std::fs::Permissions::from_mode(0o777)).unwrap();
    assert!(why(open_trusted(&deep, &ROOT)).contains("may be written by others"));
    std::fs::set_permissions(&s.0, std::fs::Permissions::from_mode(0o1777)).unwrap();
    assert_eq!(why(open_trusted(&deep, &ROOT)), "trusted");
    // ... and a folder above it that another user owns.
    std::fs::set_permissions(&s.0, std::fs::Permissions::from_mode(0o755)).unwrap();
    chown(&s.0, USER.uid);
    assert!(why(open_trusted(&deep, &ROOT)).contains("belongs to user 4242"));
    chown(&s.0, 0);

    // A folder on the way that is a link.
    let via = s.0.join("via");
    std::os::unix::fs::symlink(&inner, &via).unwrap();
    assert!(why(open_trusted(&via.join("deep.img"), &ROOT)).contains("symbolic link"));
}

/// A synthetic machine kept whole (every type, disallowed objects).
fn machine() -> Topology {
    let mut t = Topology::new();
    t.set_all_types_filter(wloc_core::TypeFilter::KeepAll);
    t.include_disallowed = true;
    wloc_core::synthetic::parse("pack:2 [numa] l3:1 core:2 l1i:1 pu:2")
        .unwrap()
        .build(t)
        .unwrap()
}

/// The topology a caller gets keeps its own filters: caches it ignores
/// are gone as they are from a discovery with that filter.
#[test]
fn the_callers_filters_apply() {
    let s = Scratch::new("filters");
    let path = s.0.join("t.img");
    wloc_image::write(&machine(), &path).unwrap();
    let img = wloc_image::adopt(&path).unwrap();
    // (This process's cgroup decides which of the 8 PUs are allowed:
    // disallowed ones are kept here.)
    let mut base = Topology::new();
    base.include_disallowed = true;
    base.set_icache_types_filter(wloc_core::TypeFilter::KeepNone);
    let t = topology_for(&img, base, None).unwrap();
    assert!(t.objs_by_type(wloc_core::ObjType::L1ICache).is_empty());
    assert_eq!(t.objs_by_type(wloc_core::ObjType::PU).len(), 8);
    assert!(t.is_thissystem);
    let mut base = Topology::new();
    base.include_disallowed = true;
    base.set_all_types_filter(wloc_core::TypeFilter::KeepAll);
    let whole = topology_for(&img, base, None).unwrap();
    assert_eq!(whole.objs_by_type(wloc_core::ObjType::L1ICache).len(), 4);
}

/// The allowed CPUs are the calling process's (its cgroup's), whatever the
/// image holds; without the disallowed objects, only allowed PUs remain.
#[test]
fn the_callers_allowed_cpus_apply() {
    let s = Scratch::new("allowed");
    let path = s.0.join("t.img");
    wloc_image::write(&machine(), &path).unwrap();
    let img = wloc_image::adopt(&path).unwrap();
    let mine = wloc_linux::allowed_resources(&wloc_linux::NativeFs::new("/"));
    let t = topology_for(&img, Topology::new(), None).unwrap();
    let pus: Vec<u32> = t
        .objs_by_type(wloc_core::ObjType::PU)
        .into_iter()
        .filter_map(|p| t.obj(p).os_index)
        .collect();
    match mine {
        Some(a) => {
            let want = &a.cpuset & t.complete_cpuset();
            assert_eq!(t.allowed_cpuset, want);
            assert_eq!(pus.len() as u32, want.weight().unwrap_or(0));
            let root = t.obj(t.root());
            assert!(
                root.infos
                    .iter()
                    .any(|i| i.name == "LinuxCgroup" && i.value == a.cgroup)
            );
        }
        None => assert_eq!(pus.len(), 8),
    }
}

/// The stamp of this machine now.
fn current_stamp() -> wloc_image::Publication {
    let line = |p: &str| {
        std::fs::read_to_string(p)
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    };
    wloc_image::Publication {
        boot_id: line(BOOT_ID),
        generation: 1,
        cpus_online: line(CPUS_ONLINE),
        nodes_online: line(NODES_ONLINE),
    }
}

/// An image is current only when its stamp names this boot and the CPUs
/// and NUMA nodes online now; an image without a stamp is not the
/// service's.
#[test]
fn only_a_current_stamp_is_adopted() {
    let s = Scratch::new("stamps");
    let path = s.0.join("t.img");
    let check = |p: Option<wloc_image::Publication>| {
        match &p {
            Some(p) => wloc_image::write_published(&machine(), &path, p).unwrap(),
            None => wloc_image::write(&machine(), &path).unwrap(),
        }
        check_current(&path, &wloc_image::adopt(&path).unwrap())
    };
    check(Some(current_stamp())).unwrap();
    assert!(matches!(check(None), Err(NotAdopted::Unstamped(_))));
    let other_boot = wloc_image::Publication {
        boot_id: "00000000-0000-0000-0000-000000000000".into(),
        ..current_stamp()
    };
    assert!(matches!(
        check(Some(other_boot)),
        Err(NotAdopted::OtherBoot(_))
    ));
    let cpus = wloc_image::Publication {
        cpus_online: "0-4095".into(),
        ..current_stamp()
    };
    let e = check(Some(cpus)).unwrap_err();
    assert!(matches!(e, NotAdopted::CpusChanged { .. }), "{e}");
    assert!(e.to_string().contains("0-4095"), "{e}");
    let nodes = wloc_image::Publication {
        nodes_online: "0-63".into(),
        ..current_stamp()
    };
    assert!(matches!(
        check(Some(nodes)),
        Err(NotAdopted::NodesChanged { .. })
    ));
}

/// A published image cut short or with a byte changed is refused by the
/// image checker, with the file named.
#[test]
fn truncated_or_tampered_images_are_refused() {
    let s = Scratch::new("tampered");
    let path = s.0.join("t.img");
    wloc_image::write_published(&machine(), &path, &current_stamp()).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let cut = s.0.join("cut.img");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let f = open_trusted(&cut, &ROOT).unwrap();
    assert!(wloc_image::adopt_file(&f).is_err());
    let mut changed = bytes.clone();
    let at = changed.len() - 9;
    changed[at] ^= 0x55;
    let bad = s.0.join("bad.img");
    std::fs::write(&bad, &changed).unwrap();
    let f = open_trusted(&bad, &ROOT).unwrap();
    assert!(wloc_image::adopt_file(&f).is_err());
}

/// The service and adopters share the folder rules: a folder on the way
/// that is a link, or that a user owns, is refused for root.
#[test]
fn folder_chains_refuse_links_and_users_folders() {
    let s = Scratch::new("chain");
    let own = s.0.join("own");
    std::fs::create_dir(&own).unwrap();
    set(&own, 0o755);
    assert_eq!(check_folder_chain(&own, &super::ROOT), Ok(()));
    let link = s.0.join("link");
    std::os::unix::fs::symlink(&own, &link).unwrap();
    assert!(matches!(
        check_folder_chain(&link, &super::ROOT),
        Err(FolderProblem::Untrusted(w)) if w.contains("symbolic link")
    ));
    chown(&s.0, USER.uid);
    assert!(matches!(
        check_folder_chain(&own, &super::ROOT),
        Err(FolderProblem::Untrusted(w)) if w.contains("belongs to user 4242")
    ));
    chown(&s.0, 0);
    assert_eq!(
        check_folder_chain(&s.0.join("absent"), &super::ROOT),
        Err(FolderProblem::Absent)
    );
}

fn set(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}
