//! lstopo's console (text) output.
//!
//! [`render`] produces, byte for byte, what hwloc 2.9's `lstopo-no-graphics`
//! prints on its standard output for a topology (the `console` output
//! format), under the display options of [`ConsoleOptions`]:
//!
//! * the object tree (default), where an object that is the only child of
//!   its parent and covers the same PUs is printed on its parent's line
//!   after ` + `, and identical consecutive PCI functions are collapsed into
//!   `N x { PCI ... }`;
//! * the verbose tree (`-v`), one object per line with every attribute and
//!   info, followed by the level summary, distance matrices, memory
//!   attributes, CPU kinds and notes about the PUs;
//! * the level summary alone (`-s`);
//! * the `--only TYPE`, `--distances`, `--memattrs` and `--cpukinds`
//!   listings;
//! * logical (`-l`), physical (`-p`) or both (default) indexes, and cpusets
//!   (`-c`, `-C`, `--cof`).
//!
//! Options that change the topology itself (`--no-io`, `--whole-io`,
//! `--merge`, `--filter`, `--disallowed`, `--restrict`, ...) are applied
//! when the topology is built, not here.  The line lstopo prints before the
//! listing in verbose mode (``assuming `FILE' is a XML file``) belongs to
//! input handling and is not produced here either.

mod attrs;
mod cpukinds;
mod distances;
mod levels;
mod memattrs;
#[cfg(test)]
mod tests;
mod tree;

use std::collections::HashMap;
use std::fmt::Write as _;

use wloc_core::Topology;
use wloc_core::bitmap::{CpuSet, NodeSet};
use wloc_core::object::{BridgeUpstream, Depth, ObjId, ObjType};
use wloc_locality::CpusetFormat;

// hwloc's PCI class names live in the model, shared with the C library.
pub use wloc_core::pci::class_string as pci_class_string;

/// Which object indexes the listing shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IndexMode {
    /// lstopo's default: logical indexes (`L#`) everywhere, plus the OS
    /// index (`P#`) of PUs and NUMA nodes (of every object in verbose mode).
    #[default]
    Default,
    /// Logical indexes only (`-l`).
    Logical,
    /// OS (physical) indexes only (`-p`); objects without one show none.
    Physical,
}

/// The binding of the process given to lstopo's `--pid`: in verbose
/// listings, its PUs and NUMA nodes are marked `(binding)`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Binding {
    /// PUs the process is bound to.
    pub cpuset: CpuSet,
    /// NUMA nodes the process memory is bound to.
    pub nodeset: NodeSet,
}

/// Display options of the console output, named after lstopo's options.
///
/// lstopo's verbosity is a counter starting at 1, raised by each `-v` and
/// lowered by each `-s`; here it is `1 + verbose + very_verbose - silent`
/// (see [`ConsoleOptions::verbosity`]).  At 0 only the level summary is
/// printed, at 1 the tree, at 2 and above the verbose tree and every
/// trailing section.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConsoleOptions {
    /// `-v`: verbose listing (every attribute, summary, distances, ...).
    pub verbose: bool,
    /// A second `-v`: also list the `Capacity` and `Locality` memory
    /// attributes and attributes without values.
    pub very_verbose: bool,
    /// `-s`: one verbosity level less (the level summary alone, when not
    /// combined with `-v`).
    pub silent: bool,
    /// Which indexes to show (`-l`, `-p`, or both by default).
    pub index_mode: IndexMode,
    /// `-c`: append ` cpuset=...` to every object that has a cpuset.
    pub show_cpuset: bool,
    /// `-C`: print only the cpuset of each object (takes precedence over
    /// [`show_cpuset`](Self::show_cpuset)).
    pub show_cpuset_only: bool,
    /// `--cpuset-output-format` (`--cof`; `--taskset` is `--cof taskset`):
    /// the form of the cpusets shown (hwloc's by default); giving one
    /// implies `-c` unless `-C` is given.
    pub cpuset_format: Option<CpusetFormat>,
    /// Collapse identical consecutive PCI functions into `N x { ... }`
    /// (true by default; `--no-collapse` clears it).
    pub collapse: bool,
    /// Do not show PUs in the tree (`--no-smt`, `--ignore PU`,
    /// `--filter PU:none`); the summary still counts them.
    pub ignore_pus: bool,
    /// `--only TYPE`: list only the objects of that type, one per line.
    pub only: Option<ObjType>,
    /// `--distances`: print only the distance matrices.
    pub distances_only: bool,
    /// `--memattrs`: print only the memory attributes (all of them).
    pub memattrs_only: bool,
    /// `--cpukinds`: print only the CPU kinds.
    pub cpukinds_only: bool,
    /// `--pid`: binding of the observed process, for `(binding)` marks.
    pub binding: Option<Binding>,
}

impl Default for ConsoleOptions {
    fn default() -> Self {
        ConsoleOptions {
            verbose: false,
            very_verbose: false,
            silent: false,
            index_mode: IndexMode::Default,
            show_cpuset: false,
            show_cpuset_only: false,
            cpuset_format: None,
            collapse: true,
            ignore_pus: false,
            only: None,
            distances_only: false,
            memattrs_only: false,
            cpukinds_only: false,
            binding: None,
        }
    }
}

impl ConsoleOptions {
    /// lstopo's verbosity counter: 1 by default, plus one for
    /// [`verbose`](Self::verbose) and for [`very_verbose`](Self::very_verbose),
    /// minus one for [`silent`](Self::silent).
    pub fn verbosity(&self) -> i32 {
        1 + i32::from(self.verbose) + i32::from(self.very_verbose) - i32::from(self.silent)
    }

    /// lstopo's `show_cpuset` level: 0 none, 1 `-c` (or `--cof`), 2 `-C`.
    fn cpuset_level(&self) -> u8 {
        if self.show_cpuset_only {
            2
        } else if self.show_cpuset || self.cpuset_format.is_some() {
            1
        } else {
            0
        }
    }
}

/// Renders `topo` as lstopo's console output with the given options.
///
/// The result is exactly what `lstopo-no-graphics` (hwloc 2.9) writes on
/// its standard output, apart from the ``assuming `...' is ...`` line it
/// prints first in verbose mode when guessing the input format.
pub fn render(topo: &Topology, opts: &ConsoleOptions) -> String {
    let mut r = Renderer::new(topo, opts);
    r.run();
    r.out
}

use wloc_draw::memory_size;
pub use wloc_draw::type_name;

/// An info value, quoted when it contains a space.
fn quoted_info(name: &str, value: &str) -> String {
    if value.contains(' ') {
        format!("{name}=\"{value}\"")
    } else {
        format!("{name}={value}")
    }
}

/// A PCI address with its domain: `0000:02:00.1`.
fn full_busid(domain: u32, bus: u8, dev: u8, func: u8) -> String {
    format!("{domain:04x}:{bus:02x}:{dev:02x}.{func:01x}")
}

/// hwloc's `(int)` view of an index: an unknown one prints as -1.
fn signed_index(i: u32) -> i64 {
    if i == u32::MAX { -1 } else { i64::from(i) }
}

/// Weight of a set as hwloc prints it: -1 when infinite.
fn weight(w: Option<u32>) -> i64 {
    w.map(i64::from).unwrap_or(-1)
}

struct Renderer<'a> {
    topo: &'a Topology,
    opts: &'a ConsoleOptions,
    verbosity: i32,
    cpuset_level: u8,
    /// For PCI devices: how many functions this one stands for (>1), or -1
    /// when it is folded into a previous one.
    collapsed: HashMap<ObjId, i32>,
    need_pci_domain: bool,
    out: String,
}

impl<'a> Renderer<'a> {
    fn new(topo: &'a Topology, opts: &'a ConsoleOptions) -> Self {
        let mut r = Renderer {
            topo,
            opts,
            verbosity: opts.verbosity(),
            cpuset_level: opts.cpuset_level(),
            collapsed: HashMap::new(),
            need_pci_domain: false,
            out: String::new(),
        };
        r.need_pci_domain = r.compute_need_pci_domain();
        if opts.collapse {
            r.compute_collapsing();
        }
        r
    }

    /// Whether PCI addresses need their domain: some PCI device has a
    /// non-zero domain, or a PCI bridge listed before the first host bridge
    /// of the bridge level does (lstopo stops looking at the first host
    /// bridge).
    fn compute_need_pci_domain(&self) -> bool {
        let t = self.topo;
        if t.level(Depth::PciDevice)
            .iter()
            .any(|&id| t.obj(id).pci().is_some_and(|p| p.domain != 0))
        {
            return true;
        }
        for &id in t.level(Depth::Bridge) {
            let o = t.obj(id);
            match o.bridge().map(|b| &b.upstream) {
                Some(BridgeUpstream::Pci(p)) => {
                    if p.domain != 0 {
                        return true;
                    }
                }
                _ => break,
            }
        }
        false
    }

    /// Marks runs of identical PCI functions the way lstopo does (see
    /// [`wloc_draw::pci_collapsing`], which the pictures share).
    fn compute_collapsing(&mut self) {
        self.collapsed = wloc_draw::pci_collapsing(self.topo).into_iter().collect();
    }

    fn run(&mut self) {
        let opts = self.opts;
        if opts.distances_only {
            self.distances();
            return;
        }
        if opts.memattrs_only {
            self.memattrs(true);
            return;
        }
        if opts.cpukinds_only {
            self.cpukinds();
            return;
        }
        let v = self.verbosity;
        if let Some(t) = opts.only {
            if v > 1 {
                let _ = writeln!(self.out, "Only showing some {} objects", t.xml_name());
            }
            self.only(self.topo.root(), t);
        } else if v >= 1 {
            self.tree(self.topo.root(), None, 0);
            self.out.push('\n');
        }
        if opts.only.is_some() {
            return;
        }
        if v > 1 || v == 0 {
            self.summary();
        }
        if v > 1 {
            self.distances();
            self.memattrs(v >= 3);
            self.cpukinds();
            self.notes();
        }
    }
}
