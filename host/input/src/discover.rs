//! The discovery module's request and reply.
//!
//! The C library (`libhwloc.so.15`) carries no WebAssembly engine: the
//! discovery of a machine (this one, a recorded `/sys` tree, a CPUID dump)
//! runs in a separate module, `libwloc_discover.so` (`host/capi-discover`),
//! which the library loads with `dlopen` the first time a load needs it.
//! Both sides are built from this file:
//!
//! * [`BUILD_ID_SYMBOL`] (`const char *wloc_discover_build_id(void)`)
//!   answers [`BUILD_ID`], which the library compares with its own before
//!   it calls anything else: a module of other sources is refused.
//! * [`DISCOVER_SYMBOL`] (`int wloc_discover_v1(const uint8_t *request,
//!   size_t len, struct Reply *reply)`) takes a [`Request`] as
//!   [`Request::encode`] writes it and fills a [`Reply`]: on
//!   [`STATUS_OK`], the discovered topology as a topology image (lossless:
//!   objects, infos, distances, memory attributes, CPU kinds, userdata,
//!   allowed sets, whether it is this system) and the annotation warnings
//!   as text, one per line; otherwise an error message.
//! * [`FREE_SYMBOL`] (`void wloc_discover_free_v1(struct Reply *reply)`)
//!   frees what a reply holds: the bytes were allocated by the module and
//!   are freed by it, never by the library's allocator.

use std::ffi::OsStr;
use std::fmt;
use std::os::raw::{c_char, c_int};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use wloc_core::{ObjType, Topology, TypeFilter};

use crate::{CpuidBeside, Source};

/// The version of the entries below (part of their names).
pub const ABI_VERSION: u32 = 1;

/// What the library and the module compare: this crate's version, the
/// ABI version and a hash of the sources of the request, the reply and the
/// image format and model they carry (computed by `build.rs`), as a
/// NUL-terminated string.
pub const BUILD_ID_C: &str = concat!(
    "wloc-input ",
    env!("CARGO_PKG_VERSION"),
    " abi 1 sources ",
    env!("WLOC_INPUT_SOURCES_HASH"),
    "\0"
);

/// [`BUILD_ID_C`] without its NUL.
pub const BUILD_ID: &str = BUILD_ID_C.split_at(BUILD_ID_C.len() - 1).0;

/// The module's file name, looked for in the folder of the library's own
/// file (never anywhere an environment variable names).
pub const MODULE_FILE: &str = "libwloc_discover.so";

/// `const char *wloc_discover_build_id(void)`.
pub const BUILD_ID_SYMBOL: &[u8] = b"wloc_discover_build_id\0";
/// `int wloc_discover_v1(const uint8_t *, size_t, struct Reply *)`.
pub const DISCOVER_SYMBOL: &[u8] = b"wloc_discover_v1\0";
/// `void wloc_discover_free_v1(struct Reply *)`.
pub const FREE_SYMBOL: &[u8] = b"wloc_discover_free_v1\0";

/// The type of [`BUILD_ID_SYMBOL`].
pub type BuildIdFn = unsafe extern "C" fn() -> *const c_char;
/// The type of [`DISCOVER_SYMBOL`].
pub type DiscoverFn = unsafe extern "C" fn(*const u8, usize, *mut Reply) -> c_int;
/// The type of [`FREE_SYMBOL`].
pub type FreeFn = unsafe extern "C" fn(*mut Reply);

/// The reply was a topology image.
pub const STATUS_OK: c_int = 0;
/// Discovery failed: the message says why.
pub const STATUS_FAILED: c_int = 1;
/// The request could not be read (another build, or a bug).
pub const STATUS_BAD_REQUEST: c_int = 2;

/// What the module hands back, in memory it owns until
/// [`FREE_SYMBOL`] is called on it.
#[repr(C)]
#[derive(Debug)]
pub struct Reply {
    /// The topology image (on [`STATUS_OK`]), or NULL.
    pub image: *mut u8,
    /// Its length in bytes.
    pub image_len: usize,
    /// UTF-8 text: the warnings on success, the error otherwise; or NULL.
    pub message: *mut u8,
    /// Its length in bytes.
    pub message_len: usize,
}

impl Default for Reply {
    fn default() -> Self {
        Reply {
            image: std::ptr::null_mut(),
            image_len: 0,
            message: std::ptr::null_mut(),
            message_len: 0,
        }
    }
}

/// What needs discovering.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// The machine the process runs on.
    ThisSystem,
    /// A recorded `/sys` and `/proc` tree, and the CPUID dump read with
    /// it, if any.
    Fsroot(PathBuf, Option<CpuidBeside>),
    /// A folder of per-PU CPUID dumps.
    CpuidDump(PathBuf),
}

impl Target {
    /// The source `wloc`'s loader reads for it.
    pub fn source(&self) -> Source {
        match self {
            Target::ThisSystem => Source::ThisSystem,
            Target::Fsroot(p, c) => Source::Fsroot(p.clone(), c.clone()),
            Target::CpuidDump(p) => Source::Cpuid(p.clone()),
        }
    }
}

/// A discovery request: the target and the settings of the program's
/// topology that discovery follows (type filters, and whether disallowed
/// PUs and nodes are kept).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// What to discover.
    pub target: Target,
    /// The filter of each type, in [`ObjType::ALL`] order.
    pub filters: [TypeFilter; 20],
    /// `HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED`.
    pub include_disallowed: bool,
    /// Whether hwloc's `pci` component would run (it names PCI devices
    /// from `pci.ids`): not when `HWLOC_COMPONENTS` or the program's
    /// blacklist leaves it out ([`crate::component_enabled`]).
    pub pci_names: bool,
}

/// Why a request could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestError(String);

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bad discovery request: {}", self.0)
    }
}

impl std::error::Error for RequestError {}

/// The first bytes of an encoded request.
const MAGIC: &[u8; 8] = b"WLOCREQ1";

/// Longest path a request carries (Linux's `PATH_MAX`).
pub const MAX_PATH_BYTES: usize = 4096;

fn filter_code(f: TypeFilter) -> u8 {
    match f {
        TypeFilter::KeepAll => 0,
        TypeFilter::KeepNone => 1,
        TypeFilter::KeepStructure => 2,
        TypeFilter::KeepImportant => 3,
    }
}

fn filter_of(code: u8) -> Option<TypeFilter> {
    Some(match code {
        0 => TypeFilter::KeepAll,
        1 => TypeFilter::KeepNone,
        2 => TypeFilter::KeepStructure,
        3 => TypeFilter::KeepImportant,
        _ => return None,
    })
}

impl Request {
    /// The request for `target` with the settings of `base`.
    pub fn new(target: Target, base: &Topology) -> Request {
        Request {
            target,
            filters: ObjType::ALL.map(|t| base.type_filter(t)),
            include_disallowed: base.include_disallowed,
            pci_names: true,
        }
    }

    /// An empty topology with the request's settings, to discover into.
    pub fn base(&self) -> Result<Topology, RequestError> {
        let mut t = Topology::new();
        for (ty, f) in ObjType::ALL.into_iter().zip(self.filters) {
            t.set_type_filter(ty, f)
                .map_err(|e| RequestError(format!("filter of {ty:?}: {e:?}")))?;
        }
        t.include_disallowed = self.include_disallowed;
        Ok(t)
    }

    /// The request as bytes: the magic, the target's kind (0 this system,
    /// 1 fsroot, 2 CPUID dump, 3 fsroot with a CPUID dump read after it,
    /// 4 the same with the x86 backend first), the flags (bit 0 include
    /// disallowed, bit 1 no PCI names), the 20 filters, then the path's
    /// length (u32, little-endian) and bytes, and for kinds 3 and 4 the
    /// dump's path the same way.
    pub fn encode(&self) -> Vec<u8> {
        let bytes = |p: &PathBuf| p.as_os_str().as_bytes().to_vec();
        let (kind, path, dump): (u8, Vec<u8>, Option<Vec<u8>>) = match &self.target {
            Target::ThisSystem => (0, Vec::new(), None),
            Target::Fsroot(p, None) => (1, bytes(p), None),
            Target::CpuidDump(p) => (2, bytes(p), None),
            Target::Fsroot(p, Some(c)) => {
                (3 + u8::from(c.x86_first), bytes(p), Some(bytes(&c.dump)))
            }
        };
        let mut out = Vec::with_capacity(MAGIC.len() + 30 + path.len());
        out.extend_from_slice(MAGIC);
        out.push(kind);
        out.push(u8::from(self.include_disallowed) | (u8::from(!self.pci_names) << 1));
        out.extend(self.filters.iter().map(|&f| filter_code(f)));
        for p in std::iter::once(&path).chain(&dump) {
            out.extend_from_slice(&(p.len() as u32).to_le_bytes());
            out.extend_from_slice(p);
        }
        out
    }

    /// Reads what [`Request::encode`] wrote; anything else is refused.
    pub fn decode(bytes: &[u8]) -> Result<Request, RequestError> {
        let bad = |what: &str| RequestError(what.to_string());
        let rest = bytes
            .strip_prefix(MAGIC.as_slice())
            .ok_or_else(|| bad("not a request of this version"))?;
        if rest.len() < 26 {
            return Err(bad("truncated"));
        }
        let (kind, flag) = (rest[0], rest[1]);
        let mut filters = [TypeFilter::KeepAll; 20];
        for (slot, &code) in filters.iter_mut().zip(&rest[2..22]) {
            *slot = filter_of(code).ok_or_else(|| bad("unknown type filter"))?;
        }
        // A length-prefixed path at the start of `b`, and what follows it.
        let take_path = |b: &[u8]| -> Result<(PathBuf, usize), RequestError> {
            let head: [u8; 4] = b
                .get(..4)
                .and_then(|h| h.try_into().ok())
                .ok_or_else(|| bad("truncated"))?;
            let len = u32::from_le_bytes(head) as usize;
            if len > MAX_PATH_BYTES {
                return Err(bad("path longer than 4096 bytes"));
            }
            let path = b
                .get(4..4 + len)
                .ok_or_else(|| bad("path length does not match"))?;
            Ok((PathBuf::from(OsStr::from_bytes(path)), 4 + len))
        };
        let (path, used) = take_path(&rest[22..])?;
        let tail = &rest[22 + used..];
        let named = !path.as_os_str().is_empty();
        let target = match kind {
            0 if !named => Target::ThisSystem,
            1 if named => Target::Fsroot(path, None),
            2 if named => Target::CpuidDump(path),
            3 | 4 if named => {
                let (dump, used) = take_path(tail)?;
                if dump.as_os_str().is_empty() || used != tail.len() {
                    return Err(bad("path length does not match"));
                }
                let x86_first = kind == 4;
                Target::Fsroot(path, Some(CpuidBeside { dump, x86_first }))
            }
            _ => return Err(bad("unknown target")),
        };
        if kind < 3 && !tail.is_empty() {
            return Err(bad("path length does not match"));
        }
        if flag & !3 != 0 {
            return Err(bad("unknown flag value"));
        }
        Ok(Request {
            target,
            filters,
            include_disallowed: flag & 1 != 0,
            pci_names: flag & 2 == 0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Topology {
        let mut t = Topology::new();
        t.set_type_filter(ObjType::PCIDevice, TypeFilter::KeepImportant)
            .unwrap();
        t.set_type_filter(ObjType::L1ICache, TypeFilter::KeepAll)
            .unwrap();
        t.set_type_filter(ObjType::Core, TypeFilter::KeepStructure)
            .unwrap();
        t.include_disallowed = true;
        t
    }

    #[test]
    fn requests_read_back_with_their_settings() {
        for target in [
            Target::ThisSystem,
            Target::Fsroot("/tmp/rec ording\n".into(), None),
            Target::Fsroot(
                "/r".into(),
                Some(CpuidBeside {
                    dump: "/r/../cpuid".into(),
                    x86_first: true,
                }),
            ),
            Target::CpuidDump(PathBuf::from(OsStr::from_bytes(b"/d/\xff"))),
        ] {
            let mut r = Request::new(target, &base());
            let back = Request::decode(&r.encode()).unwrap();
            assert_eq!(back, r);
            assert!(back.pci_names);
            r.pci_names = false;
            assert_eq!(Request::decode(&r.encode()).unwrap(), r);
            r.pci_names = true;
            let b = back.base().unwrap();
            for ty in ObjType::ALL {
                assert_eq!(b.type_filter(ty), base().type_filter(ty), "{ty:?}");
            }
            assert!(b.include_disallowed);
        }
    }

    #[test]
    fn damaged_requests_are_refused() {
        let good = Request::new(Target::Fsroot("/r".into(), None), &base()).encode();
        assert!(Request::decode(&good[..good.len() - 1]).is_err());
        assert!(Request::decode(&good[..10]).is_err());
        let mut other = good.clone();
        other[7] = b'9';
        assert!(Request::decode(&other).is_err());
        let mut kind = good.clone();
        kind[8] = 7;
        assert!(Request::decode(&kind).is_err());
        let mut flags = good.clone();
        flags[9] = 4;
        assert!(Request::decode(&flags).is_err());
        let mut filter = good.clone();
        filter[10] = 9;
        assert!(Request::decode(&filter).is_err());
        // This system names no path; the others need one.
        let mut this = good.clone();
        this[8] = 0;
        assert!(Request::decode(&this).is_err());
        // A dump's path: only after an fsroot with a dump, and whole.
        let dump = Target::Fsroot(
            "/r".into(),
            Some(CpuidBeside {
                dump: "/c".into(),
                x86_first: false,
            }),
        );
        let with_dump = Request::new(dump, &base()).encode();
        assert!(Request::decode(&with_dump).is_ok());
        assert!(Request::decode(&with_dump[..with_dump.len() - 1]).is_err());
        let mut trailing = good.clone();
        trailing.extend_from_slice(&with_dump[with_dump.len() - 6..]);
        assert!(Request::decode(&trailing).is_err());
        // A filter the model refuses (Machine filtered out).
        let mut machine = good;
        machine[10] = 1;
        assert!(Request::decode(&machine).unwrap().base().is_err());
    }

    #[test]
    fn the_build_id_names_the_sources() {
        assert!(BUILD_ID.starts_with("wloc-input "));
        assert_eq!(BUILD_ID.len() + 1, BUILD_ID_C.len());
        assert!(!BUILD_ID.contains('\0'));
    }
}
