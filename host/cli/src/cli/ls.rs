//! `wloc ls`: show the topology as lstopo does, as a console listing,
//! XML, a synthetic description, JSON, a picture (SVG, text art, PNG,
//! interactive HTML), or a topology image.

use std::path::Path;

use clap::Args;
use wloc::console::{ConsoleOptions, IndexMode};
use wloc::xml::XmlVersion;
use wloc_core::{CpuSet, NodeSet, ObjType, Topology, TypeFilter};
use wloc_discovery::input;

use super::ls_draw::Picture;
use super::topology::{Components, Load, LoadErrors, TopologyArgs, keep_all};
use wloc::tool_flags::{parse_hwloc_flags, parse_set_format};
use wloc_locality::CpusetFormat;

/// Options of `wloc ls`, named as lstopo's.
#[derive(Args, Debug)]
pub struct LsArgs {
    #[command(flatten)]
    topo_args: TopologyArgs,
    /// Force the output format: console, xml, synthetic, json, svg, ascii,
    /// png, html or image (a topology image other processes adopt with -i or
    /// WLOC_IMAGE).
    #[arg(long = "of", visible_alias = "output-format", value_name = "FORMAT", value_parser = parse_output_format)]
    output_format: Option<OutputFormat>,
    /// Overwrite the output file if it exists.
    #[arg(short = 'f', long)]
    force: bool,
    /// Include additional details (twice for even more).
    #[arg(short = 'v', long, action = clap::ArgAction::Count)]
    verbose: u8,
    /// Reduce the amount of details shown.
    #[arg(short = 's', long)]
    silent: bool,
    /// Display logical object indexes only.
    #[arg(short = 'l', long)]
    logical: bool,
    /// Display OS (physical) object indexes only.
    #[arg(short = 'p', long)]
    physical: bool,
    /// Show the cpuset of each object.
    #[arg(short = 'c', long)]
    cpuset: bool,
    /// Only show the cpuset of each object.
    #[arg(short = 'C', long = "cpuset-only")]
    cpuset_only: bool,
    /// Show cpusets in taskset form (as --cof taskset).
    #[arg(long, overrides_with = "cpuset_output_format")]
    taskset: bool,
    /// The form of the cpusets shown: hwloc, list or taskset (implies -c
    /// unless -C is given).
    #[arg(long, visible_alias = "cof", value_name = "FORMAT", value_parser = parse_set_format, overrides_with = "taskset")]
    cpuset_output_format: Option<CpusetFormat>,
    /// Do not show any I/O device or bridge.
    #[arg(long)]
    no_io: bool,
    /// Do not show I/O bridges except host bridges.
    #[arg(long)]
    no_bridges: bool,
    /// Show all I/O devices and bridges.
    #[arg(long)]
    whole_io: bool,
    /// Do not show caches.
    #[arg(long)]
    no_caches: bool,
    /// Do not show instruction caches.
    #[arg(long)]
    no_icaches: bool,
    /// Do not show levels that have no hierarchical impact.
    #[arg(long)]
    merge: bool,
    /// Do not collapse identical PCI devices.
    #[arg(long)]
    no_collapse: bool,
    /// Filter objects of a type: TYPE:KIND, KIND being all, none, structure or important.
    #[arg(long = "filter", value_name = "TYPE:KIND")]
    filters: Vec<String>,
    /// Ignore objects of the given type (PU: hide them in the console
    /// listing, as lstopo does).
    #[arg(long = "ignore", value_name = "TYPE")]
    ignore: Vec<String>,
    /// Hide PUs in the console listing (as --filter PU:none).
    #[arg(long)]
    no_smt: bool,
    /// Only list the objects of this type, one per line (console listing).
    #[arg(long, value_name = "TYPE")]
    only: Option<String>,
    /// Only show the distance matrices (console listing).
    #[arg(long)]
    distances: bool,
    /// Only show the memory attributes (console listing).
    #[arg(long)]
    memattrs: bool,
    /// Only show the CPU kinds (console listing).
    #[arg(long)]
    cpukinds: bool,
    /// Do not run the built-in annotation components (DMI infos, PCI names) after Linux discovery.
    #[arg(long)]
    no_annotate: bool,
    /// Add a component (.wasm) for this run; it still needs the policy's approval.
    #[arg(long = "component", value_name = "FILE")]
    component: Vec<String>,
    /// Select and order components as HWLOC_COMPONENTS does: NAME, -NAME to exclude, stop.
    #[arg(long = "components", value_name = "LIST", allow_hyphen_values = true)]
    components: Option<String>,
    /// The component policy file (default: $WLOC_POLICY, else /etc/wloc/policy.toml).
    #[arg(long = "policy", value_name = "FILE")]
    pub policy: Option<std::path::PathBuf>,
    /// XML export flags, as lstopo's (a number or names such as v1): 1 (v1)
    /// writes hwloc 1.x XML (for machines whose tools still run hwloc
    /// 1.x), as hwloc 2.x does; 2 asks for hwloc 2.x XML (hwloc 3's flag),
    /// which is the default anyway.
    #[arg(long, value_name = "FLAGS", default_value = "0", value_parser = parse_export_xml_flags)]
    export_xml_flags: u64,
    /// The XML format to write: 2 (hwloc 2.x XML, `<topology
    /// version="2.0">`, readable by every released hwloc; the default) or 3
    /// (hwloc 3.0 XML, which hwloc 2.x refuses). Default: $WLOC_XML_VERSION,
    /// else 2.
    #[arg(long, value_name = "2|3", value_parser = parse_xml_version)]
    xml_version: Option<XmlVersion>,
    /// Synthetic export flags, as hwloc's HWLOC_TOPOLOGY_EXPORT_SYNTHETIC_FLAG_*:
    /// a number or names (no_extended_types, no_attrs, v1, ignore_memory).
    #[arg(long, value_name = "FLAGS", default_value = "0", value_parser = parse_export_synthetic_flags)]
    export_synthetic_flags: u64,
    /// Change which PUs and NUMA nodes are marked allowed: all, local (this
    /// process's cgroup), a cpuset or nodeset=SET (repeatable: the last
    /// cpuset and the last nodeset apply); implies --disallowed.
    #[arg(long = "allow", value_name = "all|local|SET|nodeset=SET")]
    allow: Vec<String>,
    /// hwloc's topology flags, a number or names: include_disallowed,
    /// is_thissystem, thissystem_allowed_resources, dont_change_binding,
    /// no_distances, no_memattrs, no_cpukinds.
    #[arg(long = "flags", value_name = "FLAGS", value_parser = parse_topology_flags)]
    flags: Option<u64>,
    #[command(flatten)]
    draw: super::ls_draw::DrawArgs,
    /// Output file (`-` for standard output; `-.xml` and the like pick a
    /// format).  `%h` (or `%N`, as Slurm writes it) is replaced by this
    /// machine's short host name and `%%` by `%`, so that one command run
    /// on every node (`srun`, `pdsh`, `clush`) writes one file per node:
    /// `wloc ls --of xml /shared/topo/%h.xml`.
    #[arg(allow_hyphen_values = true)]
    output: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OutputFormat {
    Console,
    Xml,
    Synthetic,
    Json,
    Image,
    Picture(super::ls_draw::Picture),
}

/// The output formats named as lstopo names them (`--of`, and the
/// extension of an output file name), ignoring case.
fn format_named(name: &str) -> Option<OutputFormat> {
    let n = name.to_ascii_lowercase();
    Some(match n.as_str() {
        "xml" => OutputFormat::Xml,
        "synthetic" => OutputFormat::Synthetic,
        "json" => OutputFormat::Json,
        "image" | "wlocimg" => OutputFormat::Image,
        // As lstopo: `txt` is the text art's old name.
        "ascii" | "txt" => OutputFormat::Picture(Picture::Ascii),
        "svg" | "nativesvg" | "svg(native)" => OutputFormat::Picture(Picture::Svg),
        "png" => OutputFormat::Picture(Picture::Png),
        "html" => OutputFormat::Picture(Picture::Html),
        "fig" => OutputFormat::Picture(Picture::Fig),
        "tikz" | "tex" => OutputFormat::Picture(Picture::Tikz),
        // As lstopo, the first three letters are enough.
        _ if n.len() >= 3 && "console".starts_with(&n[..3]) && "console".starts_with(&n) => {
            OutputFormat::Console
        }
        _ => return None,
    })
}

fn parse_output_format(s: &str) -> super::Result<OutputFormat> {
    Ok(format_named(s).ok_or_else(|| {
        format!(
            "unknown output format '{s}' (expected console, xml, synthetic, json, svg, ascii, png, html, fig, tikz or image)"
        )
    })?)
}

/// hwloc's XML export flag names.
const EXPORT_XML_FLAGS: [(&str, u64); 1] = [("HWLOC_TOPOLOGY_EXPORT_XML_FLAG_V1", 1)];

/// hwloc's synthetic export flag names.
const EXPORT_SYNTHETIC_FLAGS: [(&str, u64); 4] = [
    ("HWLOC_TOPOLOGY_EXPORT_SYNTHETIC_FLAG_NO_EXTENDED_TYPES", 1),
    ("HWLOC_TOPOLOGY_EXPORT_SYNTHETIC_FLAG_NO_ATTRS", 2),
    ("HWLOC_TOPOLOGY_EXPORT_SYNTHETIC_FLAG_V1", 4),
    ("HWLOC_TOPOLOGY_EXPORT_SYNTHETIC_FLAG_IGNORE_MEMORY", 8),
];

/// hwloc's topology flag names (`--flags`).
const TOPOLOGY_FLAGS: [(&str, u64); 10] = [
    (
        "HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED",
        topo_flags::INCLUDE_DISALLOWED,
    ),
    (
        "HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM",
        topo_flags::IS_THISSYSTEM,
    ),
    (
        "HWLOC_TOPOLOGY_FLAG_THISSYSTEM_ALLOWED_RESOURCES",
        topo_flags::THISSYSTEM_ALLOWED_RESOURCES,
    ),
    ("HWLOC_TOPOLOGY_FLAG_IMPORT_SUPPORT", 1 << 3),
    ("HWLOC_TOPOLOGY_FLAG_RESTRICT_TO_CPUBINDING", 1 << 4),
    ("HWLOC_TOPOLOGY_FLAG_RESTRICT_TO_MEMBINDING", 1 << 5),
    (
        "HWLOC_TOPOLOGY_FLAG_DONT_CHANGE_BINDING",
        topo_flags::DONT_CHANGE_BINDING,
    ),
    ("HWLOC_TOPOLOGY_FLAG_NO_DISTANCES", topo_flags::NO_DISTANCES),
    ("HWLOC_TOPOLOGY_FLAG_NO_MEMATTRS", topo_flags::NO_MEMATTRS),
    ("HWLOC_TOPOLOGY_FLAG_NO_CPUKINDS", topo_flags::NO_CPUKINDS),
];

/// The topology flags `wloc ls --flags` applies (hwloc's values).
mod topo_flags {
    pub const INCLUDE_DISALLOWED: u64 = 1 << 0;
    pub const IS_THISSYSTEM: u64 = 1 << 1;
    pub const THISSYSTEM_ALLOWED_RESOURCES: u64 = 1 << 2;
    /// wloc never changes the process's binding while discovering.
    pub const DONT_CHANGE_BINDING: u64 = 1 << 6;
    pub const NO_DISTANCES: u64 = 1 << 7;
    pub const NO_MEMATTRS: u64 = 1 << 8;
    pub const NO_CPUKINDS: u64 = 1 << 9;
    pub const SUPPORTED: u64 = INCLUDE_DISALLOWED
        | IS_THISSYSTEM
        | THISSYSTEM_ALLOWED_RESOURCES
        | DONT_CHANGE_BINDING
        | NO_DISTANCES
        | NO_MEMATTRS
        | NO_CPUKINDS;
}

/// Flags as hwloc's tools read them: a number or names; a name matching
/// no flag (or several) is an error.
fn parse_named_flags(s: &str, names: &[(&str, u64)], kind: &str) -> super::Result<u64> {
    match parse_hwloc_flags(s, names, kind) {
        u64::MAX => Err(format!("invalid {kind} flags '{s}'").into()),
        v => Ok(v),
    }
}

fn parse_export_xml_flags(s: &str) -> super::Result<u64> {
    parse_named_flags(s, &EXPORT_XML_FLAGS, "XML export")
}

fn parse_export_synthetic_flags(s: &str) -> super::Result<u64> {
    parse_named_flags(s, &EXPORT_SYNTHETIC_FLAGS, "synthetic export")
}

fn parse_topology_flags(s: &str) -> super::Result<u64> {
    let v = parse_named_flags(s, &TOPOLOGY_FLAGS, "topology")?;
    let unsupported = v & !topo_flags::SUPPORTED;
    if unsupported != 0 {
        return Err(format!(
            "topology flags {unsupported:#x} (import_support, restrict_to_cpubinding, restrict_to_membinding or unknown bits) are not supported by wloc ls; use --restrict binding to restrict to the binding"
        )
        .into());
    }
    Ok(v)
}

/// The environment variable that picks the XML format wloc writes when no
/// option does: `2` or `3`.
pub const XML_VERSION_ENV: &str = "WLOC_XML_VERSION";

fn parse_xml_version(s: &str) -> super::Result<XmlVersion> {
    match s.trim() {
        "2" | "2.0" => Ok(XmlVersion::V2),
        "3" | "3.0" => Ok(XmlVersion::V3),
        // hwloc 1.x XML is asked for as lstopo asks: with an export flag.
        "1" | "1.0" => {
            Err("hwloc 1.x XML is written with --export-xml-flags 1 (the version is 2 or 3)".into())
        }
        _ => Err(format!("unknown XML version '{s}' (expected 2 or 3)").into()),
    }
}

/// The XML format to write for users when no option asks: version 2
/// (what every released hwloc reads) unless `WLOC_XML_VERSION` says 3.
/// A bad value is an error naming the variable, not a silent default.
pub fn default_xml_version() -> super::Result<XmlVersion> {
    match std::env::var(XML_VERSION_ENV) {
        Ok(v) if !v.is_empty() => {
            Ok(parse_xml_version(&v).map_err(|e| format!("{XML_VERSION_ENV}={v}: {e}"))?)
        }
        _ => Ok(XmlVersion::V2),
    }
}

/// The environment variable that asks wloc's commands to behave as hwloc
/// 2.x's tools where they keep a hwloc 3.0 behaviour by default: `2`.
/// Today it changes two things: version 2 XML is written as hwloc 2.x
/// itself writes it, PCI types without their programming interface (hwloc 3
/// adds it to `pci_type` in both versions it writes); `wloc annotate` reads
/// version 2 XML as hwloc 2.x does (hwloc 3 names the compute backends of
/// OS devices in the root's infos).
pub const HWLOC_COMPAT_ENV: &str = "WLOC_HWLOC_COMPAT";

/// Whether `WLOC_HWLOC_COMPAT` asks for hwloc 2.x's behaviour. A value
/// other than empty, `2` or `3` is an error naming the variable.
pub fn hwloc2_compat() -> super::Result<bool> {
    match std::env::var(HWLOC_COMPAT_ENV) {
        Ok(v) => match v.trim() {
            "" | "3" | "3.0" => Ok(false),
            "2" | "2.x" => Ok(true),
            _ => Err(
                format!("{HWLOC_COMPAT_ENV}={v}: expected 2 (hwloc 2.x's behaviour) or 3").into(),
            ),
        },
        Err(_) => Ok(false),
    }
}

/// XML of `topo` in `version` for users: version 2 as hwloc 2.x writes it
/// with `WLOC_HWLOC_COMPAT=2`, else as hwloc 3 converts to it; without the
/// `support` elements when `HWLOC_XML_EXPORT_SUPPORT=0`, as hwloc.
pub fn export_xml(topo: &Topology, version: XmlVersion) -> super::Result<String> {
    // As hwloc's atoi: a value that does not start with a non-zero number is 0.
    let with_support = match std::env::var("HWLOC_XML_EXPORT_SUPPORT") {
        Ok(v) => {
            let t = v.trim_start();
            let t = t.strip_prefix('+').unwrap_or(t);
            let t = t.strip_prefix('-').unwrap_or(t);
            t.bytes().take_while(u8::is_ascii_digit).any(|c| c != b'0')
        }
        Err(_) => true,
    };
    Ok(wloc::xml::export_as(
        topo,
        version,
        hwloc2_compat()?,
        with_support,
    ))
}

/// An XML format `wloc ls` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum XmlFormat {
    /// hwloc 1.x XML, as hwloc 2.x writes it (`--export-xml-flags 1`).
    Hwloc1,
    /// hwloc 2.x or 3.0 XML.
    Version(XmlVersion),
}

/// The XML format `wloc ls` writes: `--export-xml-flags 1` (hwloc 1.x XML),
/// else `--xml-version`, else `--export-xml-flags 2` (version 2), else the
/// environment's choice (version 2 by default).
fn xml_format(option: Option<XmlVersion>, export_flags: u64) -> super::Result<XmlFormat> {
    if export_flags & !3 != 0 {
        return Err(format!(
            "invalid --export-xml-flags {export_flags}: unknown flag bits (1: hwloc 1.x XML, 2: hwloc 2.x XML)"
        ).into());
    }
    if export_flags & 1 != 0 {
        if export_flags & 2 != 0 {
            return Err("--export-xml-flags 3 asks for both hwloc 1.x and hwloc 2.x XML".into());
        }
        if option.is_some() {
            return Err("--export-xml-flags 1 (hwloc 1.x XML) contradicts --xml-version".into());
        }
        return Ok(XmlFormat::Hwloc1);
    }
    if let Some(v) = option {
        if export_flags & 2 != 0 && v != XmlVersion::V2 {
            return Err("--export-xml-flags 2 (hwloc 2.x XML) contradicts --xml-version 3".into());
        }
        return Ok(XmlFormat::Version(v));
    }
    if export_flags & 2 != 0 {
        return Ok(XmlFormat::Version(XmlVersion::V2));
    }
    default_xml_version().map(XmlFormat::Version)
}

/// Applies a `--filter TYPE:KIND` (TYPE may also be all, cache, icache or
/// io).  `PU:none` keeps the PUs (a topology has them) and returns true:
/// lstopo then hides them in its listing.
pub(super) fn apply_filter(topo: &mut Topology, spec: &str) -> super::Result<bool> {
    let (t, k) = spec.split_once(':').unwrap_or((spec, "none"));
    let kind = TypeFilter::from_name(k).ok_or_else(|| {
        format!("invalid filter kind '{k}' in --filter {spec} (expected all, none, structure or important)")
    })?;
    if kind == TypeFilter::KeepNone && ObjType::parse(t) == Some(ObjType::PU) {
        return Ok(true);
    }
    match t {
        "all" => topo.set_all_types_filter(kind),
        "cache" => {
            // hwloc's tools count memory-side caches as caches here.
            topo.set_cache_types_filter(kind);
            topo.set_type_filter(ObjType::MemCache, kind)
                .map_err(|e| format!("cannot apply --filter {spec}: {e}"))?;
        }
        "icache" => topo.set_icache_types_filter(kind),
        "io" => topo.set_io_types_filter(kind),
        _ => {
            let ty = ObjType::parse(t)
                .ok_or_else(|| format!("unknown object type '{t}' in --filter {spec}"))?;
            topo.set_type_filter(ty, kind)
                .map_err(|e| format!("cannot apply --filter {spec}: {e}"))?;
        }
    }
    Ok(false)
}

/// Whether the PUs are hidden from the listing: `--no-smt`, `--ignore PU`
/// or `--filter PU:none`, as lstopo's.
fn hides_pus(a: &LsArgs) -> bool {
    let pu = |t: &str| ObjType::parse(t) == Some(ObjType::PU);
    a.no_smt
        || a.ignore.iter().any(|t| pu(t))
        || a.filters.iter().any(|f| {
            f.split_once(':').is_some_and(|(t, k)| {
                pu(t) && TypeFilter::from_name(k) == Some(TypeFilter::KeepNone)
            })
        })
}

/// How `--allow` changes the allowed sets, the last value of each kind
/// winning as in lstopo.
#[derive(Debug, Default, PartialEq)]
struct Allow {
    /// `all` or `local` (the last one), or sets.
    whole: Option<AllowWhole>,
    cpuset: Option<CpuSet>,
    nodeset: Option<NodeSet>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum AllowWhole {
    All,
    Local,
}

fn parse_allow(values: &[String]) -> super::Result<Option<Allow>> {
    if values.is_empty() {
        return Ok(None);
    }
    let mut a = Allow::default();
    for v in values {
        match v.as_str() {
            "all" => a.whole = Some(AllowWhole::All),
            "local" => a.whole = Some(AllowWhole::Local),
            _ => {
                a.whole = None;
                match v.strip_prefix("nodeset=") {
                    Some(n) => {
                        a.nodeset = Some(n.parse().map_err(|e| {
                            format!("invalid --allow {v}: '{n}' is not a node set: {e}")
                        })?)
                    }
                    None => {
                        a.cpuset = Some(v.parse().map_err(|e| {
                            format!("invalid --allow {v} (expected all, local, a cpuset or nodeset=SET): {e}")
                        })?)
                    }
                }
            }
        }
    }
    Ok(Some(a))
}

/// Limits the allowed sets to what this process's Linux cgroup allows, as
/// hwloc's allowed-resources hook does (sets are kept when no cpuset
/// cgroup is found).
fn apply_local_restrictions(t: &mut Topology) {
    if let Some(r) = wloc_linux::allowed_resources(&wloc_linux::NativeFs::new("/")) {
        t.allowed_cpuset = r.cpuset;
        t.allowed_nodeset = r.nodeset;
    }
    t.allowed_cpuset = &t.allowed_cpuset & t.cpuset();
    t.allowed_nodeset = &t.allowed_nodeset & t.nodeset();
}

/// What lstopo's `--flags` and `--allow` change in the loaded topology,
/// before `--restrict`.
fn tweak_loaded(a: &LsArgs, t: &mut Topology) -> super::Result {
    let flags = a.flags.unwrap_or(0);
    let allow = parse_allow(&a.allow)?;
    let local = allow
        .as_ref()
        .is_some_and(|x| x.whole == Some(AllowWhole::Local));
    if flags & topo_flags::IS_THISSYSTEM != 0 || local {
        t.is_thissystem = true;
    }
    if flags & topo_flags::NO_DISTANCES != 0 {
        t.distances.clear();
    }
    if flags & topo_flags::NO_MEMATTRS != 0 {
        for m in &mut t.memattrs {
            m.values.clear();
        }
    }
    if flags & topo_flags::NO_CPUKINDS != 0 {
        t.cpukinds.clear();
    }
    if flags & topo_flags::THISSYSTEM_ALLOWED_RESOURCES != 0 && t.is_thissystem {
        apply_local_restrictions(t);
    }
    match allow {
        None => {}
        Some(Allow {
            whole: Some(AllowWhole::All),
            ..
        }) => t.allow_all(),
        Some(Allow {
            whole: Some(AllowWhole::Local),
            ..
        }) => apply_local_restrictions(t),
        Some(Allow {
            cpuset, nodeset, ..
        }) => t
            .allow(cpuset.as_ref(), nodeset.as_ref())
            .map_err(|e| format!("cannot apply --allow: {e}"))?,
    }
    Ok(())
}

/// Builds an empty topology with lstopo's filters and the user's.
fn configured_topology(a: &LsArgs) -> super::Result<Topology> {
    let mut t = keep_all(TypeFilter::KeepImportant);
    // As lstopo: --allow needs (and sets) the flag that keeps disallowed objects.
    if !a.allow.is_empty() || a.flags.unwrap_or(0) & topo_flags::INCLUDE_DISALLOWED != 0 {
        t.include_disallowed = true;
    }
    if a.merge {
        t.set_all_types_filter(TypeFilter::KeepStructure);
    }
    if a.no_caches {
        // lstopo drops memory-side caches with the CPU caches.
        t.set_cache_types_filter(TypeFilter::KeepNone);
        t.set_type_filter(ObjType::MemCache, TypeFilter::KeepNone)
            .map_err(|e| e.to_string())?;
    }
    if a.no_icaches {
        t.set_icache_types_filter(TypeFilter::KeepNone);
    }
    if a.no_io {
        t.set_io_types_filter(TypeFilter::KeepNone);
    } else if a.whole_io {
        t.set_io_types_filter(TypeFilter::KeepAll);
    }
    if a.no_bridges {
        t.set_type_filter(ObjType::Bridge, TypeFilter::KeepNone)
            .map_err(|e| e.to_string())?;
    }
    for f in &a.filters {
        apply_filter(&mut t, f)?;
    }
    for i in &a.ignore {
        apply_filter(&mut t, &format!("{i}:none"))?;
    }
    Ok(t)
}

/// An output file name with `%h` and `%N` replaced by `host` and `%%`
/// by `%`; other `%` are kept.
fn expand_host(name: &str, host: impl FnOnce() -> super::Result<String>) -> super::Result<String> {
    if !name.contains('%') {
        return Ok(name.to_string());
    }
    let mut host = Some(host);
    let mut host_name = None;
    let mut out = String::with_capacity(name.len() + 16);
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('%', Some('h' | 'N')) => {
                chars.next();
                if host_name.is_none() {
                    host_name = Some((host.take().expect("called once"))()?);
                }
                out.push_str(host_name.as_deref().unwrap_or_default());
            }
            ('%', Some('%')) => {
                chars.next();
                out.push('%');
            }
            _ => out.push(c),
        }
    }
    Ok(out)
}

/// This machine's short host name, as Slurm names nodes.
fn short_host_name() -> super::Result<String> {
    let full = wloc::slurm::this_hostname()
        .ok_or("cannot read this machine's host name (for %h in the output file name)")?;
    Ok(wloc::slurm::short_name(&full).to_string())
}

/// Where the output goes and in which format, as lstopo decides: `--of`,
/// else the output name's extension (`-.EXT` is standard output in format
/// EXT), else the console.
fn output_target(a: &LsArgs) -> super::Result<(Option<String>, OutputFormat)> {
    let expanded = match &a.output {
        Some(o) => Some(expand_host(o, short_host_name)?),
        None => None,
    };
    let Some(out) = expanded else {
        return Ok((None, a.output_format.unwrap_or(OutputFormat::Console)));
    };
    if out == "-" || out == "/dev/stdout" {
        return Ok((None, a.output_format.unwrap_or(OutputFormat::Console)));
    }
    let ext = out.rfind('.').map(|dot| &out[dot + 1..]);
    let from_ext = ext.and_then(format_named);
    // `-.EXT` names standard output only when EXT is a format.
    if out.starts_with("-.") && !out[2..].contains('.') && from_ext.is_some() {
        if let Some(f) = a.output_format {
            eprintln!(
                "wloc: ignoring the extension of the standard output name '{out}' since --of was given"
            );
            return Ok((None, f));
        }
        return Ok((None, from_ext.unwrap_or(OutputFormat::Console)));
    }
    let format = match (a.output_format, from_ext, ext) {
        (Some(f), _, _) => f,
        (None, Some(f), _) => f,
        (None, None, Some(e)) => {
            return Err(format!(
                "unknown output format '{e}' given by the extension of '{out}' (use --of console, xml, synthetic, json, svg, ascii, png, html, fig, tikz or image)"
            )
            .into());
        }
        (None, None, None) => {
            return Err(format!(
                "cannot guess the output format of '{out}' without an extension: use --of console, xml, synthetic, json or image"
            )
            .into());
        }
    };
    Ok((Some(out), format))
}

/// Runs `wloc ls`.
pub fn run(d: &wloc_discovery::Discovery, a: &LsArgs) -> super::Result {
    let (path, format) = output_target(a)?;
    let only = match &a.only {
        Some(t) => {
            Some(ObjType::parse(t).ok_or_else(|| format!("unknown object type '{t}' in --only"))?)
        }
        None => None,
    };
    if hides_pus(a) && matches!(format, OutputFormat::Picture(_)) {
        return Err("hiding PUs (--no-smt, --ignore PU, --filter PU:none) is not implemented for pictures; the console listing hides them".into());
    }
    if let Some(p) = &path
        && Path::new(p).exists()
        && !a.force
    {
        return Err(format!("output file '{p}' exists; use -f to overwrite it").into());
    }
    let mut topo = configured_topology(a)?;
    if let Some(r) = input::env_var("CPUKINDS_RANKING") {
        topo.cpukinds_ranking = wloc_core::cpukinds::Ranking::parse(&r)
            .ok_or_else(|| format!("unknown CPU kinds ranking '{r}' in HWLOC_CPUKINDS_RANKING"))?;
    }
    let args = &a.topo_args;
    let source = args.source()?;
    let mut preamble = String::new();
    if a.verbose > 0 && args.input.input_format.is_none() && format == OutputFormat::Console {
        // lstopo says how it understood an input whose format it guessed.
        if let Some(i) = &args.input.input {
            let what = match &source {
                input::Source::Xml(_) => "a XML file",
                input::Source::Synthetic(_) => "a synthetic topology description",
                input::Source::Cpuid(_) => "a cpuid dump",
                input::Source::CpuidThisSystem => "",
                input::Source::Fsroot(..) => "a file-system root",
                input::Source::ThisSystem => "",
                input::Source::Image(_) => "a topology image",
            };
            preamble = format!("assuming `{i}' is {what}\n");
        }
    }
    let tweak = |t: &mut Topology| tweak_loaded(a, t);
    let how = Load {
        restrict_to_binding: true,
        tweak: Some(&tweak),
        components: Some(Components {
            files: &a.component,
            list: a.components.as_deref(),
        }),
        // The published image was annotated by the service.
        adopt_published: !a.no_annotate,
        ..Load::new(topo, LoadErrors::ContentNamed("the environment"))
    };
    let (mut topo, origin) = args.load_source_from(d, &source, how)?;
    if let (Some(t), Some(name)) = (only, &a.only)
        && topo.type_depth(t) == wloc_core::topology::TypeDepth::Unknown
    {
        // lstopo 2.14 refuses a level the topology lacks.
        return Err(format!("level {name} passed to --only is unavailable.").into());
    }
    if !a.no_annotate && origin == super::topology::Origin::Loaded {
        wloc_discovery::annotations::annotate_discovered(d, &source, &mut topo);
    }
    if format != OutputFormat::Picture(Picture::Html) {
        // The HTML page lists processes beside the picture instead.
        super::ls_draw::add_processes(&a.draw, &mut topo)?;
    }
    let text = match format {
        OutputFormat::Console => {
            let opts = ConsoleOptions {
                verbose: a.verbose > 0,
                very_verbose: a.verbose > 1,
                silent: a.silent,
                index_mode: if a.logical {
                    IndexMode::Logical
                } else if a.physical {
                    IndexMode::Physical
                } else {
                    IndexMode::Default
                },
                show_cpuset: a.cpuset,
                show_cpuset_only: a.cpuset_only,
                cpuset_format: if a.taskset {
                    Some(CpusetFormat::Taskset)
                } else {
                    a.cpuset_output_format
                },
                collapse: !a.no_collapse,
                ignore_pus: hides_pus(a),
                only,
                distances_only: a.distances,
                memattrs_only: a.memattrs,
                cpukinds_only: a.cpukinds,
                ..ConsoleOptions::default()
            };
            preamble + &wloc::console::render(&topo, &opts)
        }
        OutputFormat::Xml => match xml_format(a.xml_version, a.export_xml_flags)? {
            XmlFormat::Hwloc1 => wloc::xml::export_v1(&topo),
            XmlFormat::Version(v) => export_xml(&topo, v)?,
        },
        OutputFormat::Synthetic => {
            let flags = wloc_core::synthetic::ExportFlags::from_bits(a.export_synthetic_flags)
                .ok_or_else(|| {
                    format!(
                        "invalid --export-synthetic-flags {}: unknown flag bits",
                        a.export_synthetic_flags
                    )
                })?;
            let mut s = wloc_core::synthetic::export(&topo, flags)
                .map_err(|e| format!("cannot export a synthetic description: {e}"))?;
            s.push('\n');
            s
        }
        OutputFormat::Json => wloc::json::export(&topo),
        OutputFormat::Image => {
            return match path {
                // Written atomically: processes adopting the previous image
                // at that path see it or the new one, never a part.
                Some(p) => Ok(wloc::image::write(&topo, &p)
                    .map_err(|e| format!("cannot write the image '{p}': {e}"))?),
                None => super::print_bytes(&wloc::image::to_bytes(&topo)),
            };
        }
        OutputFormat::Picture(what) => {
            let opts =
                super::ls_draw::options(&a.draw, a.logical, a.physical, !a.no_collapse, &topo)?;
            let bytes = super::ls_draw::draw(&topo, &opts, what, &a.draw)?;
            return match path {
                Some(p) => Ok(wloc::files::write(std::path::Path::new(&p), &bytes)?),
                None => super::print_bytes(&bytes),
            };
        }
    };
    match path {
        Some(p) => Ok(wloc::files::write(
            std::path::Path::new(&p),
            text.as_bytes(),
        )?),
        None => super::print(&text),
    }
}

#[cfg(test)]
mod tests {
    use super::{XmlFormat, expand_host, parse_xml_version, xml_format};
    use wloc::xml::XmlVersion;

    #[test]
    fn xml_version_options_follow_lstopo() {
        assert_eq!(parse_xml_version("2").unwrap(), XmlVersion::V2);
        assert_eq!(parse_xml_version("3.0").unwrap(), XmlVersion::V3);
        assert!(
            parse_xml_version("1")
                .unwrap_err()
                .to_string()
                .contains("1.x")
        );
        assert!(parse_xml_version("4").is_err());
        let v = |v| XmlFormat::Version(v);
        assert_eq!(
            xml_format(Some(XmlVersion::V3), 0).unwrap(),
            v(XmlVersion::V3)
        );
        assert_eq!(
            xml_format(Some(XmlVersion::V2), 2).unwrap(),
            v(XmlVersion::V2)
        );
        assert_eq!(xml_format(None, 2).unwrap(), v(XmlVersion::V2));
        // lstopo 2.9's flag 1 is hwloc 1.x XML.
        assert_eq!(xml_format(None, 1).unwrap(), XmlFormat::Hwloc1);
        assert!(xml_format(None, 3).is_err());
        assert!(xml_format(Some(XmlVersion::V2), 1).is_err());
        assert!(xml_format(Some(XmlVersion::V3), 2).is_err());
        assert!(xml_format(None, 8).is_err());
    }

    #[test]
    fn output_names_expand_the_host_name() {
        let host = || Ok("node7".to_string());
        assert_eq!(expand_host("/t/%h.xml", host).unwrap(), "/t/node7.xml");
        assert_eq!(expand_host("%N-%h.xml", host).unwrap(), "node7-node7.xml");
        assert_eq!(expand_host("100%%.xml", host).unwrap(), "100%.xml");
        assert_eq!(expand_host("50%.xml", host).unwrap(), "50%.xml");
        assert_eq!(expand_host("a%xb%", host).unwrap(), "a%xb%");
        assert_eq!(
            expand_host("plain.xml", || Err("unused".into())).unwrap(),
            "plain.xml"
        );
        assert!(expand_host("%h.xml", || Err("no host".into())).is_err());
    }
}
