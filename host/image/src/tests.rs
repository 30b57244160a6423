//! Unit tests: round trips, the view against the model, refusals, files
//! changed under a reader, and property tests.

use super::*;
use proptest::prelude::*;
use wloc_core::synthetic;
use wloc_core::topology::TypeDepth;
use wloc_core::{ObjType, TypeFilter};

pub(crate) fn synth(desc: &str) -> Topology {
    let mut t = Topology::new();
    t.set_all_types_filter(TypeFilter::KeepAll);
    synthetic::parse(desc).unwrap().build(t).unwrap()
}

fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "wloc-image-{tag}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The view answers what the model answers.
fn same_as_model(img: &AdoptedTopology, t: &Topology) {
    assert_eq!(img.depth(), t.depth());
    for d in 0..t.depth() {
        let lv = img.level(Depth::Normal(d));
        let tl = t.level(Depth::Normal(d));
        assert_eq!(lv.len(), tl.len());
        for (o, &id) in lv.iter().zip(tl) {
            let m = t.obj(id);
            assert_eq!(o.obj_type(), m.obj_type);
            assert_eq!(o.os_index(), m.os_index);
            assert_eq!(o.logical_index(), m.logical_index());
            assert_eq!(o.sibling_rank(), m.sibling_rank());
            assert_eq!(o.memory_children().len(), m.memory_children().len());
            assert_eq!(o.io_children().len(), m.io_children().len());
            assert_eq!(o.misc_children().len(), m.misc_children().len());
            for c in o.memory_children() {
                assert_eq!(c.parent(), Some(*o));
            }
            assert_eq!(o.total_memory(), m.total_memory);
            assert_eq!(o.symmetric_subtree(), m.symmetric_subtree());
            assert_eq!(o.cpuset(), m.cpuset);
            assert_eq!(o.nodeset(), m.nodeset);
            assert_eq!(o.complete_cpuset(), m.complete_cpuset);
            assert_eq!(o.attr(), m.attr);
            assert_eq!(o.arity(), m.arity());
            assert_eq!(o.depth(), m.depth());
            assert_eq!(
                o.parent().map(|p| p.gp_index()),
                m.parent().map(|p| t.obj(p).gp_index)
            );
            assert_eq!(o.infos().count(), m.infos.len());
        }
    }
    for &ty in &ObjType::ALL {
        assert_eq!(img.type_depth(ty), t.type_depth(ty), "{ty}");
        assert_eq!(img.objs_by_type(ty).len(), t.objs_by_type(ty).len());
    }
    for sd in SPECIAL_DEPTHS {
        assert_eq!(img.nbobjs_at_depth(sd), t.level(sd).len());
    }
    assert_eq!(img.cpuset(), *t.cpuset());
    assert_eq!(img.nodeset(), *t.nodeset());
    assert_eq!(img.allowed_cpuset(), t.allowed_cpuset);
    assert_eq!(img.distances().count(), t.distances.len());
    for (d, m) in img.distances().zip(&t.distances) {
        assert_eq!(d.nbobjs(), m.nbobjs());
        for i in 0..m.nbobjs() {
            for j in 0..m.nbobjs() {
                assert_eq!(d.value(i, j), m.value(i, j));
            }
        }
    }
}

#[test]
fn round_trip_and_view() {
    for desc in [
        "pack:2 core:2 pu:2",
        "numa:2 pack:2 l3:1 core:4 l1:1 pu:2",
        "pack:1 [numa(memory=1GB)] core:3 pu:1",
        "pack:2 l2:2 core:2 pu:1 {distances=4*2:10,20,20,10,10,20,20,10}",
    ] {
        let t = match synthetic::parse(desc) {
            Ok(d) => {
                let mut base = Topology::new();
                base.set_all_types_filter(TypeFilter::KeepAll);
                match d.build(base) {
                    Ok(t) => t,
                    Err(_) => continue,
                }
            }
            Err(_) => continue,
        };
        let bytes = to_bytes(&t);
        let img = adopt_bytes(&bytes).unwrap();
        same_as_model(&img, &t);
        let back = img.to_topology().unwrap();
        assert_eq!(to_bytes(&back), bytes, "{desc}");
    }
}

#[test]
fn view_queries() {
    let t = synth("pack:2 core:2 pu:2");
    let img = adopt_bytes(&to_bytes(&t)).unwrap();
    assert_eq!(
        img.type_depth(ObjType::Core),
        TypeDepth::Depth(Depth::Normal(2))
    );
    let core = img.obj_at_depth(Depth::Normal(2), 3).unwrap();
    assert_eq!(core.cpuset().unwrap().to_string(), "0x000000c0");
    assert!(core.cpuset_has(7) && !core.cpuset_has(5));
    assert_eq!(core.parent().unwrap().obj_type(), ObjType::Package);
    assert_eq!(core.children().len(), 2);
    let set = wloc_core::CpuSet::from_range(4, Some(5));
    assert_eq!(
        img.covering(&set).unwrap(),
        img.obj_at_depth(Depth::Normal(2), 2).unwrap()
    );
    assert_eq!(img.root().obj_type(), ObjType::Machine);
    assert_eq!(img.objects().count(), img.len());
    assert!(!img.is_mapped());
}

#[test]
fn refusals_are_typed() {
    let bytes = to_bytes(&synth("pack:2 core:2 pu:2"));
    assert!(matches!(adopt_bytes(b"<?xml"), Err(ImageError::NotAnImage)));
    assert!(matches!(adopt_bytes(b""), Err(ImageError::NotAnImage)));
    assert!(matches!(
        adopt_bytes(&bytes[..4]),
        Err(ImageError::Truncated { .. })
    ));
    assert!(matches!(
        adopt_bytes(&bytes[..bytes.len() - 1]),
        Err(ImageError::Truncated { .. })
    ));
    let mut v = bytes.clone();
    // Versions 1 (per-object strings and attributes) and 2 (fixed-size
    // object records in depth-first order), and a future one.
    for old in [1u8, 2, 9] {
        v[8] = old;
        let e = adopt_bytes(&v).unwrap_err();
        assert!(matches!(e, ImageError::Version { found, .. } if found == old as u32));
        assert!(e.to_string().contains(&format!("version {old}")), "{e}");
    }
    let mut v = bytes.clone();
    let last = v.len() - 1;
    v[last] ^= 1;
    assert!(matches!(adopt_bytes(&v), Err(ImageError::Checksum { .. })));
}

/// Re-seals a damaged body with a correct checksum, so that the structure
/// checks (not the checksum) must refuse it.
fn reseal(mut v: Vec<u8>) -> Vec<u8> {
    let sum = twox_hash::XxHash3_64::oneshot(&v[HEADER_LEN..]);
    v[24..32].copy_from_slice(&sum.to_le_bytes());
    v
}

#[test]
fn hostile_bodies_with_good_checksums_are_refused_or_harmless() {
    let bytes = to_bytes(&synth("pack:2 core:2 pu:2"));
    for i in HEADER_LEN..bytes.len() {
        for flip in [0x01u8, 0x80, 0xff] {
            let mut v = bytes.clone();
            v[i] ^= flip;
            if let Ok(img) = adopt_bytes(&reseal(v)) {
                // Accepted: every query and the rebuild stay in bounds.
                for o in img.objects() {
                    let _ = (o.cpuset(), o.children(), o.parent(), o.attr(), o.depth());
                }
                for d in 0..img.depth() + 2 {
                    let _ = img.level(Depth::Normal(d));
                }
                let _ = img.to_topology();
            }
        }
    }
}

#[test]
fn a_file_changed_under_a_reader_does_not_reach_it() {
    let dir = tmpdir("changed");
    let p = dir.join("t.img");
    write(&synth("pack:2 core:2 pu:2"), &p).unwrap();
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&p).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o444, "images are published read-only");
    let img = adopt(&p).unwrap();
    // Truncate and overwrite the file in place (as root may, despite the mode).
    std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
    f.set_len(0).unwrap();
    drop(f);
    std::fs::write(&p, b"garbage").unwrap();
    assert_eq!(img.objs_by_type(ObjType::PU).len(), 8);
    assert!(matches!(adopt(&p), Err(ImageError::NotAnImage)));
    // Rewriting is atomic: the path always holds a whole image.
    write(&synth("pack:1 pu:3"), &p).unwrap();
    assert_eq!(adopt(&p).unwrap().objs_by_type(ObjType::PU).len(), 3);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn sealed_memfds_are_mapped_and_cannot_change() {
    use std::os::fd::AsRawFd;
    let fd = write_memfd(&synth("pack:2 core:2 pu:2")).unwrap();
    let f = std::fs::File::from(fd);
    let img = adopt_file(&f).unwrap();
    assert!(img.is_mapped());
    // The kernel refuses to shrink or write the sealed file.
    assert!(f.set_len(0).is_err());
    // SAFETY: plain write on a valid descriptor.
    let r = unsafe { libc::pwrite(f.as_raw_fd(), b"x".as_ptr().cast(), 1, 0) };
    assert!(r < 0);
    assert_eq!(img.objs_by_type(ObjType::PU).len(), 8);
    // Reopened through /proc, as a rank given a path does.
    let via = adopt(format!("/proc/self/fd/{}", f.as_raw_fd())).unwrap();
    assert!(via.is_mapped());
    assert_eq!(via.len(), img.len());
}

#[test]
fn an_unsealed_memfd_is_read_not_mapped() {
    use std::io::Write as _;
    // SAFETY: creating a memfd; the descriptor is owned below.
    let fd = unsafe { libc::memfd_create(c"t".as_ptr(), libc::MFD_ALLOW_SEALING) };
    assert!(fd >= 0);
    // SAFETY: `fd` is valid and owned by nobody else.
    let mut f = unsafe { File::from_raw_fd(fd) };
    f.write_all(&to_bytes(&synth("pu:4"))).unwrap();
    let img = adopt_file(&f).unwrap();
    assert!(!img.is_mapped());
}

/// A device, a FIFO with no writer and a folder are refused at once, with
/// an error naming the file: adopting never waits for a writer nor reads
/// an endless file.
#[test]
fn only_regular_files_are_adopted() {
    let start = std::time::Instant::now();
    let dir = tmpdir("not-regular");
    let fifo = dir.join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    for (p, kind) in [
        (Path::new("/dev/zero"), "a character device"),
        (fifo.as_path(), "a FIFO"),
        (dir.as_path(), "a directory"),
    ] {
        let e = adopt(p).unwrap_err().to_string();
        assert!(e.starts_with(&format!("{}: ", p.display())), "{e}");
        assert!(e.contains(kind) && e.contains("not a regular file"), "{e}");
        assert!(!file_is_image(p));
    }
    // A descriptor handed over is checked the same way.
    let zero = File::open("/dev/zero").unwrap();
    let e = adopt_file(&zero).unwrap_err().to_string();
    assert!(e.contains("a character device"), "{e}");
    assert!(start.elapsed() < std::time::Duration::from_secs(5));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Standard input may be a pipe: read in sequence, and refused past
/// [`MAX_IMAGE_BYTES`] (here, a pipe from `/dev/zero`, as `-i -` reads it).
#[test]
fn streams_are_read_within_the_cap() {
    let bytes = to_bytes(&synth("pack:2 pu:2"));
    let (r, mut w) = std::io::pipe().unwrap();
    let writer = std::thread::spawn(move || w.write_all(&bytes));
    let r = File::from(std::os::fd::OwnedFd::from(r));
    let img = adopt_stream(&r).unwrap();
    writer.join().unwrap().unwrap();
    assert_eq!(img.objs_by_type(ObjType::PU).len(), 4);
    assert!(
        adopt_file(&r).is_err(),
        "adopt_file takes regular files only"
    );
    let zero = File::open("/dev/zero").unwrap();
    let e = adopt_stream(&zero).unwrap_err().to_string();
    assert!(
        e.contains(&format!("larger than {MAX_IMAGE_BYTES} bytes")),
        "{e}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any synthetic machine round-trips: the rebuilt topology writes the
    /// same image.
    #[test]
    fn synthetic_round_trip(p in 1u32..4, c in 1u32..5, u in 1u32..4, numa in proptest::bool::ANY) {
        let desc = if numa {
            format!("numa:{p} core:{c} pu:{u}")
        } else {
            format!("pack:{p} l2:{c} core:1 pu:{u}")
        };
        let t = synth(&desc);
        let bytes = to_bytes(&t);
        let img = adopt_bytes(&bytes).unwrap();
        prop_assert_eq!(img.objs_by_type(ObjType::PU).len() as u32, p * c * u);
        let back = img.to_topology().unwrap();
        prop_assert_eq!(to_bytes(&back), bytes);
    }

    /// Arbitrary damage never panics: the image is refused or usable.
    #[test]
    fn damage_never_panics(cuts in proptest::collection::vec((0usize..4096, any::<u8>()), 1..8), truncate in 0usize..5000, fix in proptest::bool::ANY) {
        let mut v = to_bytes(&synth("pack:2 core:2 pu:2"));
        for (i, b) in cuts {
            let n = v.len();
            v[i % n] = b;
        }
        if truncate < v.len() && truncate % 3 == 0 {
            v.truncate(truncate);
        }
        let v = if fix && v.len() >= HEADER_LEN { reseal(v) } else { v };
        if let Ok(img) = adopt_bytes(&v) {
            for o in img.objects() {
                let _ = (o.cpuset(), o.children(), o.parent(), o.attr());
            }
            let _ = img.to_topology();
        }
    }
}

/// Where adopting spends its time:
/// `WLOC_IMAGE_PHASES=IMAGE cargo test --release -p wloc-image adopt_phases -- --ignored --nocapture --test-threads=1`
/// (one thread: the main thread's allocator, as in a command).
#[test]
#[ignore]
fn adopt_phases() {
    let Ok(p) = std::env::var("WLOC_IMAGE_PHASES") else {
        return;
    };
    let bytes = std::fs::read(p).unwrap();
    let mut buf = AlignedVec::<16>::new();
    buf.extend_from_slice(&bytes);
    let n = 2000;
    let time = |f: &dyn Fn()| {
        let s = std::time::Instant::now();
        for _ in 0..n {
            f();
        }
        s.elapsed().as_secs_f64() * 1e6 / n as f64
    };
    let hdr = time(&|| {
        check_header(&buf).unwrap();
    });
    let body = &buf[HEADER_LEN..];
    let acc = time(&|| {
        rkyv::access::<format::ArchivedBody, rkyv::rancor::Error>(body).unwrap();
    });
    let b = rkyv::access::<format::ArchivedBody, rkyv::rancor::Error>(body).unwrap();
    let tree = time(&|| validate::tree(b).unwrap());
    let path = std::env::var("WLOC_IMAGE_PHASES").unwrap();
    let read = time(&|| {
        let _ = adopt(&path).unwrap();
    });
    let io = time(&|| {
        let mut f = std::fs::File::open(&path).unwrap();
        let mut v = AlignedVec::<16>::with_capacity(bytes.len() + 1);
        v.extend_from_reader(&mut f).unwrap();
    });
    eprintln!(
        "open+read {io:.1} us, header+checksum {hdr:.1} us, bytecheck {acc:.1} us, tree {tree:.1} us, whole adopt {read:.1} us"
    );
}

/// An image of a body built by hand (a valid header and checksum), so
/// that the structure checks must refuse what is wrong in it.
fn image_of(body: &format::Body) -> Vec<u8> {
    let archived = rkyv::to_bytes::<rkyv::rancor::Error>(body).unwrap();
    let mut out = header(&archived, body.ty.len() as u32).to_vec();
    out.extend_from_slice(&archived);
    out
}

/// The column's values, widened.
fn values(c: &format::Col) -> Vec<u64> {
    let w = c.width as usize;
    c.bytes
        .chunks_exact(w)
        .map(|ch| {
            let mut v = [0u8; 8];
            v[..w].copy_from_slice(ch);
            u64::from_le_bytes(v)
        })
        .collect()
}

#[test]
fn structural_refusals() {
    let t = synth("pack:2 [numa(memory=1GB)] l2:2 core:2 pu:2");
    let body = format::body_of(&t, None);
    let img = adopt_bytes(&image_of(&body)).unwrap();
    // (Memory sizes are stored shifted; leading zero words of sets are
    // not stored.)
    assert!(body.total_memory_shift > 0, "{}", body.total_memory_shift);
    assert_eq!(img.root().total_memory(), t.obj(t.root()).total_memory);
    let refused = |b: &format::Body, what: &str| {
        let e = adopt_bytes(&image_of(b)).expect_err(what);
        assert!(matches!(e, ImageError::Invalid(_)), "{what}: {e}");
    };
    let n = body.ty.len();
    let pu = body
        .ty
        .iter()
        .rposition(|&t| t == ObjType::PU.index() as u8)
        .unwrap();
    let width = body.cpuset.width as usize;
    // A PU pointing to a cache's attributes.
    let mut b = body.clone();
    let mut a = values(&b.attr);
    a[pu] = 1;
    b.attr = format::Col::at_least(&a, width);
    refused(&b, "attribute of another kind");
    // The attribute table out of kind order.
    let mut b = body.clone();
    if b.attrs.len() >= 2 && b.attrs[0].kind_code() != b.attrs.last().unwrap().kind_code() {
        b.attrs.swap(0, body.attrs.len() - 1);
        refused(&b, "unsorted attribute table");
    }
    // A PU without a cpuset.
    let mut b = body.clone();
    let mut c = values(&b.cpuset);
    c[pu] = 0;
    b.cpuset = format::Col::at_least(&c, width);
    refused(&b, "missing cpuset");
    // A set past the table.
    let mut b = body.clone();
    let mut c = values(&b.nodeset);
    c[pu] = b.set_infinite.len() as u64 + 1;
    b.nodeset = format::Col::at_least(&c, width);
    refused(&b, "set past the table");
    // Set columns of another width than the attribute column.
    let mut b = body.clone();
    b.complete_cpuset = format::Col::at_least(&values(&b.complete_cpuset), width * 2);
    refused(&b, "columns of different widths");
    // A column one entry short, and one of width 3.
    let mut b = body.clone();
    b.gp_index
        .bytes
        .truncate(b.gp_index.bytes.len() - b.gp_index.width as usize);
    refused(&b, "short column");
    let mut b = body.clone();
    b.logical_index = format::Col {
        width: 3,
        bytes: vec![0; 3 * n],
    };
    refused(&b, "width 3");
    // Not breadth-first: the last object's parent goes back to the root,
    // an object its own parent, a parent after its child.
    let mut b = body.clone();
    let mut p = values(&b.parent);
    p[n - 1] = 0;
    b.parent = format::Col::at_least(&p, 1);
    refused(&b, "decreasing parents");
    let mut b = body.clone();
    let mut p = values(&b.parent);
    p[1] = 1;
    b.parent = format::Col::at_least(&p, 1);
    refused(&b, "own parent");
    // Depth -1 (stored + 8), an info run going back.
    let mut b = body.clone();
    let mut d = values(&b.depth);
    d[pu] = 7;
    b.depth = format::Col::of(&d);
    refused(&b, "depth -1");
    let mut b = body.clone();
    let mut s = values(&b.info_start);
    if let Some(last) = s.last_mut() {
        *last += 1;
    }
    b.info_start = format::Col::of(&s);
    refused(&b, "info run past the table");
    // A set skipping past the largest set, a skip table of another
    // length, a total memory shift of 64.
    let mut b = body.clone();
    b.set_skip[0] = 1 << 14;
    refused(&b, "set skip too large");
    let mut b = body.clone();
    b.set_skip.pop();
    refused(&b, "skip table short");
    let mut b = body.clone();
    b.total_memory_shift = 64;
    refused(&b, "shift 64");
    // A set run longer than the word table.
    let mut b = body.clone();
    *b.set_start.last_mut().unwrap() += 1;
    refused(&b, "set run past the words");
}

#[test]
fn a_rebuild_asking_more_than_its_budget_is_refused_before_building() {
    let t = synth("pack:4 core:16 pu:16");
    let mut body = format::body_of(&t, None);
    let real = image_of(&body);
    let cost = rebuild::rebuild_cost(adopt_bytes(&real).unwrap().body());
    // The estimate bounds the objects at least, and a real machine is far
    // inside its budget.
    assert!(cost > 1000 * 336, "{cost}");
    assert!(cost < REBUILD_SLACK, "{cost}");
    assert!(adopt_bytes(&real).unwrap().to_topology().is_ok());
    // Every set now skips as many zero words as a set may have: the image
    // keeps its size, its topology would take about 570 MB.
    for s in 0..body.set_skip.len() {
        let stored = body.set_start[s + 1] - body.set_start[s];
        body.set_skip[s] = (1 << 14) - stored;
    }
    let bytes = image_of(&body);
    assert!(bytes.len() < real.len() + 64);
    // Adopted, it answers (one set at a time, each at most 128 KB)...
    let img = adopt_bytes(&bytes).unwrap();
    let pu = img.objs_by_type(ObjType::PU)[5];
    assert_eq!(pu.cpuset().unwrap().first(), Some(((1 << 14) - 1) * 64 + 5));
    // ...and building it is refused before anything is built.
    let cost = rebuild::rebuild_cost(img.body());
    let limit = REBUILD_SLACK + REBUILD_RATIO * bytes.len() as u64;
    assert!(cost > 4 * limit, "{cost} for {limit}");
    let e = img.to_topology().unwrap_err().to_string();
    assert!(e.contains("its topology would take about"), "{e}");
    assert!(e.len() < 300, "{e}");
}

#[test]
fn quoted_parts_of_an_image_are_short() {
    assert_eq!(clip("abc"), "abc");
    let long = "é".repeat(300);
    let c = clip(&long);
    assert!(c.len() < 230 && c.ends_with("(600 bytes)"), "{c}");
}

/// A topology whose root, a core and a PU carry userdata: named or not,
/// plain or base64, several on one object.
fn with_userdata() -> Topology {
    let mut t = synth("pack:1 core:2 pu:2");
    let ud = |name: Option<&str>, base64: bool, length: u64, content: &str| wloc_core::UserData {
        name: name.map(str::to_string),
        base64,
        length,
        content: content.to_string(),
    };
    let root = t.root();
    t.obj_mut(root).userdata.push(ud(None, false, 5, "hello"));
    let core = t.objs_by_type(ObjType::Core)[1];
    t.obj_mut(core)
        .userdata
        .push(ud(Some("MyKey"), true, 4, "AAECAw=="));
    t.obj_mut(core)
        .userdata
        .push(ud(Some("second"), false, 0, ""));
    let pu = t.objs_by_type(ObjType::PU)[3];
    t.obj_mut(pu)
        .userdata
        .push(ud(Some("a&b"), false, 3, "<x>"));
    t
}

#[test]
fn userdata_survives_a_round_trip() {
    let t = with_userdata();
    let bytes = to_bytes(&t);
    let back = adopt_bytes(&bytes).unwrap().to_topology().unwrap();
    let all = |t: &Topology| -> Vec<(u64, Vec<wloc_core::UserData>)> {
        t.objs_by_type(ObjType::Machine)
            .into_iter()
            .chain(t.objs_by_type(ObjType::Core))
            .chain(t.objs_by_type(ObjType::PU))
            .map(|id| (t.obj(id).gp_index, t.obj(id).userdata.to_vec()))
            .collect()
    };
    assert_eq!(all(&back), all(&t));
    assert_eq!(all(&t).iter().map(|(_, u)| u.len()).sum::<usize>(), 4);
    assert_eq!(to_bytes(&back), bytes);
}

#[test]
fn bad_userdata_is_refused() {
    let body = format::body_of(&with_userdata(), None);
    assert_eq!(body.userdata.len(), 4);
    let refused = |b: &format::Body, what: &str| {
        let e = adopt_bytes(&image_of(b)).expect_err(what);
        assert!(
            matches!(&e, ImageError::Invalid(m) if m.contains("userdata")),
            "{what}: {e}"
        );
    };
    let mut b = body.clone();
    b.userdata[3].obj = b.ty.len() as u32;
    refused(&b, "object past the table");
    let mut b = body.clone();
    b.userdata.swap(0, 3);
    refused(&b, "out of order");
    let mut b = body.clone();
    b.userdata[0].length = u64::MAX;
    refused(&b, "length not the content's");
    let mut b = body.clone();
    b.userdata[1].content = "AA*CAw==".into();
    refused(&b, "not base64");
    let mut b = body.clone();
    b.userdata[1].content = "AAECAwE=".into();
    b.userdata[1].length = 4;
    refused(&b, "wrong padding");
}

fn a_stamp() -> Publication {
    Publication {
        boot_id: "6f1e0d4c-93a1-4a3e-8d0b-2c8f1f5e7a10".into(),
        generation: 7,
        cpus_online: "0-3,6".into(),
        nodes_online: "".into(),
    }
}

#[test]
fn a_publication_stamp_round_trips_and_plain_images_have_none() {
    use std::os::unix::fs::PermissionsExt;
    let t = synth("pack:2 core:2 pu:2");
    let d = tmpdir("stamp");
    let path = d.join("topology.img");
    write(&t, &path).unwrap();
    assert_eq!(adopt(&path).unwrap().publication(), None);
    // Published over a read-only plain image: the stamp and mode 0644,
    // whatever the old file's bits and the umask.
    write_published(&t, &path, &a_stamp()).unwrap();
    let img = adopt(&path).unwrap();
    assert_eq!(img.publication(), Some(a_stamp()));
    same_as_model(&img, &t);
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o644);
    // The stamp is part of the checksummed body: the topology alone
    // rebuilds the same, and the bytes differ only by it.
    assert_eq!(to_bytes(&img.to_topology().unwrap()), to_bytes(&t));
    let names: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("topology.img")]);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn bad_publication_stamps_are_refused_when_written_and_read() {
    let t = synth("pack:1 core:2 pu:1");
    let d = tmpdir("badstamp");
    let path = d.join("topology.img");
    write_published(&t, &path, &a_stamp()).unwrap();
    let long = Publication {
        cpus_online: "0,".repeat(MAX_ONLINE_LIST_BYTES / 2) + "9999999",
        ..a_stamp()
    };
    let e = write_published(&t, &path, &long).unwrap_err();
    assert!(matches!(e, ImageError::Publication(_)), "{e}");
    assert!(e.to_string().contains("CPUs online has"), "{e}");
    let bad = Publication {
        boot_id: "not a boot id".into(),
        ..a_stamp()
    };
    let e = write_published(&t, &path, &bad).unwrap_err();
    assert!(e.to_string().contains("boot id 'not a boot id'"), "{e}");
    // The refused writes left the published image as it was.
    assert_eq!(adopt(&path).unwrap().publication(), Some(a_stamp()));
    std::fs::remove_dir_all(&d).unwrap();
    // A stamp made by hand, with a good checksum, is refused on reading.
    let mut body = format::body_of(&t, Some(&a_stamp()));
    assert!(adopt_bytes(&image_of(&body)).is_ok());
    for (field, value) in [
        ("cpus", "0-3\n"),
        ("nodes", "1-0"),
        ("boot", ""),
        ("boot", &"a".repeat(MAX_BOOT_ID_BYTES + 1)),
    ] {
        let mut b = body.clone();
        let s = b.publication.as_mut().unwrap();
        match field {
            "cpus" => s.cpus_online = value.into(),
            "nodes" => s.nodes_online = value.into(),
            _ => s.boot_id = value.into(),
        }
        let e = adopt_bytes(&image_of(&b)).unwrap_err();
        assert!(matches!(e, ImageError::Publication(_)), "{field}: {e}");
    }
    body.publication.as_mut().unwrap().generation = 0;
    let e = adopt_bytes(&image_of(&body)).unwrap_err();
    assert!(e.to_string().contains("generation 0"), "{e}");
}

/// A file is refused from its first 64 bytes, before the rest is read:
/// no image, or an image announcing another size than the file has.
#[test]
fn the_header_refuses_a_file_before_it_is_read_whole() {
    let good = to_bytes(&synth("pack:2 pu:2"));
    assert!(check_header_of(&good[..HEADER_LEN], good.len() as u64).is_ok());
    // The same header on a file of 255 MiB: refused by size alone.
    let e = check_header_of(&good[..HEADER_LEN], 255 << 20).unwrap_err();
    assert!(e.to_string().contains("after the"), "{e}");
    assert!(matches!(
        check_header_of(&[0u8; HEADER_LEN], 255 << 20),
        Err(ImageError::NotAnImage)
    ));
    // Through a file: a large sparse file that is no image.
    let dir = tmpdir("large-non-image");
    let path = dir.join("big");
    let f = File::create(&path).unwrap();
    f.set_len(200 << 20).unwrap();
    let f = File::open(&path).unwrap();
    assert!(matches!(adopt_file(&f), Err(ImageError::NotAnImage)));
    std::fs::remove_dir_all(&dir).unwrap();
}
