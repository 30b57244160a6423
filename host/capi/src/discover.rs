//! Discovery through the module `libwloc_discover.so`.
//!
//! The library itself carries no WebAssembly engine, so that a program
//! reading XML, a synthetic description or a topology image never maps
//! one. When a load needs discovery (this machine, a recorded `/sys` tree,
//! a CPUID dump), the module is loaded once per process with `dlopen` and
//! asked through [`wloc_input::discover`]'s entries; it answers with a
//! topology image, which is validated here as any image is.
//!
//! Where the module comes from is a trust decision: the library runs in
//! setuid programs and daemons. It is looked for in one place only, the
//! folder of the file holding this library's code (found with `dladdr1`,
//! links resolved: a `libhwloc.so.15` link anywhere leads to the real
//! file's folder), under one name ([`MODULE_FILE`]); no variable can name
//! another. It is opened as the admin's policy is
//! ([`wloc_trust::owner::open_trusted_file`]: it and every folder above it
//! belong to root or to the effective user, no one else may write them,
//! and it is not a link) and `dlopen`ed through its open descriptor, so
//! that what was checked is what is loaded. A module whose build id is not
//! this library's is refused before it is asked anything.

use std::ffi::{CStr, CString, c_void};
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::OnceLock;

use wloc_core::Topology;
use wloc_input::discover::{
    BUILD_ID, BUILD_ID_SYMBOL, BuildIdFn, DISCOVER_SYMBOL, DiscoverFn, FREE_SYMBOL, FreeFn,
    MODULE_FILE, Reply, Request, STATUS_OK, Target,
};

/// The most message text read from a reply (warnings or an error).
const MAX_MESSAGE_BYTES: usize = 64 * 1024;

/// The entries of a loaded module of this build.
struct Module {
    discover: DiscoverFn,
    free: FreeFn,
}

/// `dladdr1`'s request for the object's link map.
const RTLD_DL_LINKMAP: libc::c_int = 2;

/// The first fields of glibc's `struct link_map` (`<link.h>`, public).
#[repr(C)]
struct LinkMapHead {
    l_addr: usize,
    l_name: *const libc::c_char,
}

/// The real path of the file holding this function's code: the shared
/// library, or the program it is linked into.
fn own_file() -> Result<PathBuf, String> {
    let mut info = libc::Dl_info {
        dli_fname: std::ptr::null(),
        dli_fbase: std::ptr::null_mut(),
        dli_sname: std::ptr::null(),
        dli_saddr: std::ptr::null_mut(),
    };
    let mut map: *mut c_void = std::ptr::null_mut();
    // SAFETY: the address is one of this library's functions; info and
    // map are writable.
    let found = unsafe {
        libc::dladdr1(
            own_file as *const c_void,
            &mut info,
            &mut map,
            RTLD_DL_LINKMAP,
        )
    };
    if found == 0 || map.is_null() {
        return Err("cannot find the library's own file (dladdr1 failed)".into());
    }
    // SAFETY: glibc's link map for the object, which lives as long as it
    // is loaded (so as long as this code runs).
    let name = unsafe { (*(map as *const LinkMapHead)).l_name };
    // SAFETY: l_name is NUL-terminated (empty for the main program).
    let name = (!name.is_null()).then(|| unsafe { CStr::from_ptr(name) });
    let path =
        match name {
            // The main program: its file, as the kernel names it.
            None => std::env::current_exe()
                .map_err(|e| format!("cannot find the program's file: {e}"))?,
            Some(n) if n.to_bytes().is_empty() => std::env::current_exe()
                .map_err(|e| format!("cannot find the program's file: {e}"))?,
            Some(n) => PathBuf::from(std::ffi::OsStr::from_bytes(n.to_bytes())),
        };
    // A name relative to a folder the program may have left since is not
    // followed in a privileged process (the loader gives such processes
    // no relative names of their own).
    if path.is_relative() && wloc_trust::env::secure_mode() {
        return Err(format!(
            "the library was loaded by a relative name ({}), which a privileged process does not follow",
            path.display()
        ));
    }
    std::fs::canonicalize(&path).map_err(|e| format!("cannot resolve {}: {e}", path.display()))
}

/// Where the module must be: beside the library's real file.
pub(crate) fn module_path() -> Result<PathBuf, String> {
    let own = own_file()?;
    let dir = own
        .parent()
        .ok_or_else(|| format!("{} has no folder", own.display()))?;
    Ok(dir.join(MODULE_FILE))
}

/// The last `dlerror` message.
fn dlerror() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated string.
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        "unknown error".into()
    } else {
        // SAFETY: see above.
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

/// Loads and checks the module (once per process).
fn load_module() -> Result<Module, String> {
    let path = module_path()?;
    let shown = path.display();
    let file = wloc_trust::owner::open_trusted_file(&path).map_err(|e| match e {
        wloc_trust::owner::OpenError::Missing(_) => format!(
            "the discovery module {shown} is missing (it is installed beside libhwloc.so.15; XML, synthetic and image inputs do not need it)"
        ),
        wloc_trust::owner::OpenError::Refused(why) => {
            format!("the discovery module {shown} is not trusted: {why}")
        }
    })?;
    // Through the descriptor checked above, not the name: no rename in
    // between swaps the file. (Without /proc, the name checked.)
    let by_fd = PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()));
    let target = if by_fd.exists() { by_fd } else { path.clone() };
    let c = CString::new(target.as_os_str().as_bytes())
        .map_err(|_| format!("{shown}: a NUL in the path"))?;
    // SAFETY: a NUL-terminated path; the module is ours (checked above).
    let handle = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    drop(file);
    if handle.is_null() {
        return Err(format!(
            "cannot load the discovery module {shown}: {}",
            dlerror()
        ));
    }
    // The module is never unloaded: the component runtime it starts keeps
    // a thread running its code.
    let sym = |name: &[u8]| {
        // SAFETY: a live handle and a NUL-terminated symbol name.
        let p = unsafe { libc::dlsym(handle, name.as_ptr() as *const libc::c_char) };
        (!p.is_null()).then_some(p).ok_or_else(|| {
            let n = String::from_utf8_lossy(&name[..name.len() - 1]).into_owned();
            format!("the discovery module {shown} has no entry {n}: not a module of this library")
        })
    };
    // SAFETY: the symbol's type is BuildIdFn in every build (ABI v1).
    let build_id: BuildIdFn = unsafe { std::mem::transmute(sym(BUILD_ID_SYMBOL)?) };
    // SAFETY: a static NUL-terminated string (checked for NULL).
    let id = unsafe { build_id() };
    let id = if id.is_null() {
        String::new()
    } else {
        // SAFETY: see above.
        unsafe { CStr::from_ptr(id) }.to_string_lossy().into_owned()
    };
    if id != BUILD_ID {
        return Err(format!(
            "the discovery module {shown} is of another build (it says \"{}\", this library is \"{BUILD_ID}\"): install the library and the module of one build",
            id.chars().take(200).collect::<String>()
        ));
    }
    // SAFETY: the types of these entries in a module of this build.
    let discover: DiscoverFn = unsafe { std::mem::transmute(sym(DISCOVER_SYMBOL)?) };
    // SAFETY: see above.
    let free: FreeFn = unsafe { std::mem::transmute(sym(FREE_SYMBOL)?) };
    Ok(Module { discover, free })
}

fn module() -> Result<&'static Module, String> {
    static MODULE: OnceLock<Result<Module, String>> = OnceLock::new();
    MODULE
        .get_or_init(load_module)
        .as_ref()
        .map_err(Clone::clone)
}

/// What a reply held, copied out of the module's memory.
struct Taken {
    image: Result<wloc_image::AdoptedTopology, String>,
    message: String,
}

/// Copies a reply out (bounded, validated) before the module frees it.
fn take(reply: &Reply) -> Taken {
    let message = if reply.message.is_null() {
        String::new()
    } else {
        let n = reply.message_len.min(MAX_MESSAGE_BYTES);
        // SAFETY: the module's reply holds message_len bytes there; at
        // most that many are read.
        let bytes = unsafe { std::slice::from_raw_parts(reply.message, n) };
        String::from_utf8_lossy(bytes).into_owned()
    };
    let image = if reply.image.is_null() {
        Err("the discovery module returned no topology".to_string())
    } else if reply.image_len as u64 > wloc_image::MAX_IMAGE_BYTES {
        Err(format!(
            "the discovery module returned {} bytes, more than an image may have ({})",
            reply.image_len,
            wloc_image::MAX_IMAGE_BYTES
        ))
    } else {
        // SAFETY: the module's reply holds image_len bytes there.
        let bytes = unsafe { std::slice::from_raw_parts(reply.image, reply.image_len) };
        // Copied and checked as any image (header, checksum, archive).
        wloc_image::adopt_bytes(bytes)
            .map_err(|e| format!("the discovery module returned a bad image: {e}"))
    };
    Taken { image, message }
}

/// Discovers `target` into `base` (whose filters and flags the program
/// set) in the module. Returns the topology and the annotations'
/// warnings.
///
/// `pci_names`: whether hwloc's `pci` component would run and name PCI
/// devices (not when `HWLOC_COMPONENTS` or the program's blacklist leaves
/// it out).
pub(crate) fn discover(
    target: Target,
    base: &Topology,
    pci_names: bool,
) -> Result<(Topology, Vec<String>), String> {
    let m = module()?;
    let mut request = Request::new(target, base);
    request.pci_names = pci_names;
    let request = request.encode();
    let mut reply = Reply::default();
    // SAFETY: the request's bytes and a writable reply, as the entry
    // documents; the module is of this build.
    let status = unsafe { (m.discover)(request.as_ptr(), request.len(), &mut reply) };
    let taken = take(&reply);
    // SAFETY: the module's own reply, freed by the module once.
    unsafe { (m.free)(&mut reply) };
    if status != STATUS_OK {
        return Err(if taken.message.is_empty() {
            format!("discovery failed (status {status})")
        } else {
            taken.message
        });
    }
    let topo = taken.image?.to_topology_into(base.clone()).map_err(|e| {
        format!("the discovery module returned a topology that cannot be built: {e}")
    })?;
    let warnings = taken
        .message
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect();
    Ok((topo, warnings))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_module_is_looked_for_beside_the_code() {
        let p = module_path().unwrap();
        let exe = std::fs::canonicalize(std::env::current_exe().unwrap()).unwrap();
        assert_eq!(p.parent(), exe.parent());
        assert!(p.ends_with(MODULE_FILE));
    }

    #[test]
    fn replies_are_bounded_and_checked() {
        let mut junk = b"not an image".to_vec();
        let r = Reply {
            image: junk.as_mut_ptr(),
            image_len: junk.len(),
            message: std::ptr::null_mut(),
            message_len: 0,
        };
        let t = take(&r);
        assert!(t.image.err().unwrap().contains("bad image"));
        let r = Reply {
            image: junk.as_mut_ptr(),
            image_len: (wloc_image::MAX_IMAGE_BYTES + 1) as usize,
            message: junk.as_mut_ptr(),
            message_len: 3,
        };
        let t = take(&r);
        assert!(t.image.err().unwrap().contains("more than an image"));
        assert_eq!(t.message, "not");
        let t = take(&Reply::default());
        assert!(t.image.is_err());
        assert!(t.message.is_empty());
    }
}
