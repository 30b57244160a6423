//! `libwloc_discover.so`: discovery for wloc's C library.
//!
//! `libhwloc.so.15` (`host/capi`) reads XML, synthetic descriptions and
//! topology images itself and loads this module (with `dlopen`, from the
//! folder of its own file) only when a program discovers a machine: this
//! machine, a recorded `/sys` tree or a CPUID dump.  The module runs
//! [`wloc_discovery`] as `wloc ls` does (the sandboxed components, under
//! the admin's policy, then the built-in annotations) and hands the
//! topology back as a topology image.  The entries and their contract are
//! [`wloc_input::discover`]'s.

use std::os::raw::{c_char, c_int};
use std::panic::{AssertUnwindSafe, catch_unwind};

use wloc_core::Topology;
use wloc_discovery::Discovery;
use wloc_discovery::annotations::annotate_discovered_as_libhwloc;
use wloc_input::discover::{
    BUILD_ID_C, Reply, Request, STATUS_BAD_REQUEST, STATUS_FAILED, STATUS_OK,
};

/// Runs a request: the topology discovered into the request's settings,
/// annotated, and the annotations' warnings.
pub fn run(request: &Request) -> Result<(Topology, Vec<String>), String> {
    let base = request.base().map_err(|e| e.to_string())?;
    let source = request.target.source();
    // A context per request: the policy is read (and the runtime started)
    // for this discovery, and nothing outlives it in the program that
    // loaded the module.
    let discovery = Discovery::new(None);
    let mut topo = discovery.load(&source, base).map_err(|e| e.to_string())?;
    let warnings =
        annotate_discovered_as_libhwloc(&discovery, &source, &mut topo, request.pci_names);
    Ok((topo, warnings))
}

/// Moves `bytes` into a pointer and length the module frees later.
fn leak(bytes: Vec<u8>) -> (*mut u8, usize) {
    let b = bytes.into_boxed_slice();
    let len = b.len();
    (Box::into_raw(b) as *mut u8, len)
}

/// Takes back what [`leak`] gave.
///
/// # Safety
/// `(p, len)` came from [`leak`] and was not freed.
unsafe fn unleak(p: *mut u8, len: usize) {
    if !p.is_null() {
        // SAFETY: the caller's contract: a boxed slice of `len` bytes.
        drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(p, len)) });
    }
}

/// `wloc_discover_build_id`: the build id the library compares with its
/// own before using the module.
#[unsafe(no_mangle)]
pub extern "C" fn wloc_discover_build_id() -> *const c_char {
    BUILD_ID_C.as_ptr() as *const c_char
}

/// `wloc_discover_v1`: discovers what the request names and fills
/// `reply` (see [`wloc_input::discover`]).
///
/// # Safety
/// `request` points to `len` readable bytes; `reply` to a writable
/// [`Reply`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wloc_discover_v1(
    request: *const u8,
    len: usize,
    reply: *mut Reply,
) -> c_int {
    if reply.is_null() {
        return STATUS_BAD_REQUEST;
    }
    let bytes: &[u8] = if request.is_null() || len == 0 {
        &[]
    } else {
        // SAFETY: the caller's contract.
        unsafe { std::slice::from_raw_parts(request, len) }
    };
    let (status, image, message) = match Request::decode(bytes) {
        Err(e) => (STATUS_BAD_REQUEST, None, e.to_string()),
        // No panic crosses into the library (nor into C).
        Ok(r) => match catch_unwind(AssertUnwindSafe(|| run(&r))) {
            Ok(Ok((topo, warnings))) => (
                STATUS_OK,
                Some(wloc_image::to_bytes(&topo)),
                warnings.join("\n"),
            ),
            Ok(Err(e)) => (STATUS_FAILED, None, e),
            Err(_) => (
                STATUS_FAILED,
                None,
                "discovery failed: internal error (panic) in the discovery module".to_string(),
            ),
        },
    };
    let mut out = Reply::default();
    if let Some(img) = image {
        (out.image, out.image_len) = leak(img);
    }
    if !message.is_empty() {
        (out.message, out.message_len) = leak(message.into_bytes());
    }
    // SAFETY: the caller's contract.
    unsafe { reply.write(out) };
    status
}

/// `wloc_discover_free_v1`: frees what a reply of this module holds and
/// empties it.
///
/// # Safety
/// `reply` is NULL or a [`Reply`] this module filled and has not freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wloc_discover_free_v1(reply: *mut Reply) {
    if reply.is_null() {
        return;
    }
    // SAFETY: the caller's contract.
    let r = unsafe { &mut *reply };
    // SAFETY: both came from `leak` in wloc_discover_v1.
    unsafe {
        unleak(r.image, r.image_len);
        unleak(r.message, r.message_len);
    }
    *r = Reply::default();
}

#[cfg(test)]
mod tests {
    use super::*;
    use wloc_input::discover::Target;

    fn call(bytes: &[u8]) -> (c_int, Reply) {
        let mut reply = Reply::default();
        // SAFETY: valid buffer and reply.
        let status = unsafe { wloc_discover_v1(bytes.as_ptr(), bytes.len(), &mut reply) };
        (status, reply)
    }

    fn text(p: *mut u8, len: usize) -> String {
        if p.is_null() {
            return String::new();
        }
        // SAFETY: a reply's message.
        String::from_utf8_lossy(unsafe { std::slice::from_raw_parts(p, len) }).into_owned()
    }

    /// A recorded Linux machine, unpacked into a fresh folder.
    fn recording(name: &str) -> std::path::PathBuf {
        let tarball = format!(
            "{}/../../tests/data/conformance/linux/{name}.tar.bz2",
            env!("CARGO_MANIFEST_DIR")
        );
        let dir = std::env::temp_dir().join(format!("wloc-discover-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let ok = std::process::Command::new("tar")
            .arg("xjf")
            .arg(&tarball)
            .arg("-C")
            .arg(&dir)
            .status()
            .unwrap();
        assert!(ok.success(), "unpacking {tarball}");
        dir.join(name)
    }

    /// Everything the C library reads of a topology, beyond what its XML
    /// export shows.
    fn same(a: &Topology, b: &Topology, what: &str) {
        assert_eq!(
            wloc_xml::export_canonical(a),
            wloc_xml::export_canonical(b),
            "{what}"
        );
        assert_eq!(a.is_thissystem, b.is_thissystem, "{what}");
        assert_eq!(a.allowed_cpuset, b.allowed_cpuset, "{what}");
        assert_eq!(a.allowed_nodeset, b.allowed_nodeset, "{what}");
        assert_eq!(a.infos, b.infos, "{what}");
        assert_eq!(a.support, b.support, "{what}");
        assert_eq!(a.distances.len(), b.distances.len(), "{what}");
        assert_eq!(a.memattrs.len(), b.memattrs.len(), "{what}");
        assert_eq!(a.cpukinds.len(), b.cpukinds.len(), "{what}");
        for (x, y) in a.iter_dfs().into_iter().zip(b.iter_dfs()) {
            let (x, y) = (a.obj(x), b.obj(y));
            assert_eq!(x.infos, y.infos, "{what}");
            assert_eq!(x.userdata, y.userdata, "{what}");
            assert_eq!(x.gp_index, y.gp_index, "{what}");
            assert_eq!(x.attr, y.attr, "{what}");
        }
    }

    /// The entry's reply, rebuilt into `base` as the C library does.
    fn rebuilt(req: &Request, base: &Topology) -> Topology {
        let (status, mut reply) = call(&req.encode());
        let msg = text(reply.message, reply.message_len);
        assert_eq!(status, STATUS_OK, "{msg}");
        // SAFETY: the reply's image.
        let img = unsafe { std::slice::from_raw_parts(reply.image, reply.image_len) };
        let topo = wloc_image::adopt_bytes(img)
            .unwrap()
            .to_topology_into(base.clone())
            .unwrap();
        // SAFETY: this module's reply.
        unsafe { wloc_discover_free_v1(&mut reply) };
        assert!(reply.image.is_null() && reply.message.is_null());
        topo
    }

    #[test]
    fn a_recording_comes_back_as_its_discovery() {
        let rec = recording("16amd64-4n4c-cgroup-distance-merge");
        let mut base = Topology::new();
        base.set_all_types_filter(wloc_core::TypeFilter::KeepAll);
        let req = Request::new(Target::Fsroot(rec.clone(), None), &base);
        let (direct, _) = run(&req).unwrap();
        assert!(!direct.distances.is_empty());
        same(&rebuilt(&req, &base), &direct, "recording");
        let _ = std::fs::remove_dir_all(rec.parent().unwrap());
    }

    #[test]
    fn this_machine_survives_its_image() {
        // What the library is handed for this machine: the image of one
        // discovery, with hwloc's default filters and with all kept.
        for all in [false, true] {
            let mut base = Topology::new();
            if all {
                base.set_all_types_filter(wloc_core::TypeFilter::KeepAll);
            }
            let (direct, _) = run(&Request::new(Target::ThisSystem, &base)).unwrap();
            let back = wloc_image::adopt_bytes(&wloc_image::to_bytes(&direct))
                .unwrap()
                .to_topology_into(base)
                .unwrap();
            assert!(back.is_thissystem);
            same(&back, &direct, "this machine");
        }
    }

    #[test]
    fn bad_requests_and_failures_are_replies_not_panics() {
        let (status, mut reply) = call(b"WLOCREQ9");
        assert_eq!(status, STATUS_BAD_REQUEST);
        assert!(reply.image.is_null());
        assert!(text(reply.message, reply.message_len).contains("bad discovery request"));
        // SAFETY: this module's reply.
        unsafe { wloc_discover_free_v1(&mut reply) };
        let req = Request::new(
            Target::Fsroot("/nonexistent/wloc-recording".into(), None),
            &Topology::new(),
        );
        let (status, mut reply) = call(&req.encode());
        assert_eq!(status, STATUS_FAILED);
        assert!(text(reply.message, reply.message_len).contains("not a directory"));
        // SAFETY: this module's reply.
        unsafe { wloc_discover_free_v1(&mut reply) };
        // SAFETY: NULLs are refused, not read.
        let status = unsafe { wloc_discover_v1(std::ptr::null(), 0, std::ptr::null_mut()) };
        assert_eq!(status, STATUS_BAD_REQUEST);
    }

    #[test]
    fn the_build_id_entry_answers_the_shared_constant() {
        // SAFETY: a static NUL-terminated string.
        let id = unsafe { std::ffi::CStr::from_ptr(wloc_discover_build_id()) };
        assert_eq!(id.to_str().unwrap(), wloc_input::discover::BUILD_ID);
    }
}
