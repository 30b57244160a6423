//! `wloc annotate [--ci] [--ri] [--cu] [--cd] INPUT.xml OUTPUT.xml
//! LOCATION ANNOTATION` (or `-- LOCATION... -- ANNOTATION`): site
//! annotations added to an XML topology, with hwloc-annotate's syntax and
//! behaviour: infos, subtypes, sizes, Misc objects, memory attribute
//! values on the objects at the locations; distances matrices, memory
//! attributes and CPU kinds on the topology.
//!
//! Where hwloc-annotate prints a warning and still writes its output (a
//! location naming no object, a memory attribute value it cannot set),
//! wloc stops with an error naming what was wrong and writes nothing.

use clap::Args;
use wloc::tool_flags::parse_hwloc_flags;
use wloc::topo_edit::{self, parse_c_u64};
use wloc::xml::XmlVersion;
use wloc_core::distances::{Distances, group, kind as dist_kind};
use wloc_core::memattrs::{self, Initiator, MemAttr, flags as ma_flags};
use wloc_core::object::{Info, ObjAttr};
use wloc_core::{CpuSet, ObjId, ObjType, Object, Topology};
use wloc_locality::{Op, WordOptions, resolve_word};

use wloc_core::TypeFilter;

use super::topology::keep_all;

/// The text of the input topology (`-` for standard input).
fn read_input(path: &str) -> super::Result<String> {
    Ok(wloc::files::read_text_arg(path, "the topology")?)
}

/// The `<info>` of the document's root object, in order.
fn root_infos_in_document(text: &str) -> Vec<(String, String)> {
    let opts = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    let Ok(doc) = roxmltree::Document::parse_with_options(text, opts) else {
        return Vec::new();
    };
    let Some(root) = doc
        .root_element()
        .children()
        .find(|n| n.has_tag_name("object"))
    else {
        return Vec::new();
    };
    root.children()
        .filter(|n| n.has_tag_name("info"))
        .filter_map(|n| {
            Some((
                n.attribute("name")?.to_string(),
                n.attribute("value").unwrap_or("").to_string(),
            ))
        })
        .collect()
}

/// The global index hwloc gives the next object it creates after loading
/// this XML document: it allocates one for every `<object>` as it reads
/// it, then moves past the `gp_index` the document gives, so objects out
/// of index order in the document push the counter further than the
/// largest index.
fn hwloc_next_gp_index(text: &str) -> u64 {
    let opts = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    let Ok(doc) = roxmltree::Document::parse_with_options(text, opts) else {
        return 0;
    };
    let mut next = 1u64;
    for n in doc.descendants().filter(|n| n.has_tag_name("object")) {
        next = next.saturating_add(1);
        if let Some(g) = n.attribute("gp_index").and_then(|g| g.parse::<u64>().ok()) {
            next = next.max(g.saturating_add(1));
        }
    }
    next
}

/// Options of `wloc annotate`, named as hwloc-annotate's.
#[derive(Args, Debug)]
pub struct AnnotateArgs {
    /// Clear the existing infos of the objects at the locations first.
    #[arg(long = "ci")]
    clear_infos: bool,
    /// Remove the infos with the annotation's name before adding the new
    /// one (only with `info`; without a value, they are just removed).
    #[arg(long = "ri")]
    replace_infos: bool,
    /// Clear the `<userdata>` of the objects at the locations first (other
    /// objects keep theirs, as with hwloc-annotate).
    #[arg(long = "cu")]
    clear_userdata: bool,
    /// Remove every distances matrix of the topology first.
    #[arg(long = "cd")]
    clear_distances: bool,
    /// INPUT.xml OUTPUT.xml, then one LOCATION (or `-- LOCATION... --`),
    /// then the annotation: `info NAME [VALUE]`, `subtype SUBTYPE`, `size
    /// SIZE`, `misc NAME`, `distances FILE [FLAGS]`, `memattr NAME FLAGS`,
    /// `memattr NAME INITIATOR VALUE`, `cpukind CPUSET EFFICIENCY FLAGS
    /// [INFONAME INFOVALUE]` or `none`.  Locations: `all`, `root`, or
    /// objects in hwloc's location language (`core:0-3`, `pack:1.numa:0`,
    /// `os=eth0`, `pci=0000:01:00.0`, `numa:all`...).  OUTPUT may be INPUT
    /// (changed in place) or `-` (standard output).
    #[arg(
        required = true,
        num_args = 1..,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "INPUT OUTPUT LOCATION ANNOTATION"
    )]
    args: Vec<String>,
}

/// What to add.
#[derive(Debug, PartialEq)]
enum Annotation {
    Info {
        name: String,
        value: Option<String>,
    },
    Subtype(String),
    Size(u64),
    Misc(String),
    Distances {
        file: String,
        flags: u64,
    },
    DistancesTransform {
        name: String,
        op: TransformOp,
    },
    MemattrRegister {
        name: String,
        flags: u64,
    },
    MemattrValue {
        name: String,
        initiator: String,
        value: u64,
    },
    CpuKind {
        cpuset: CpuSet,
        efficiency: i32,
        info: Option<(String, String)>,
    },
    None,
}

/// How `distances-transform NAME OP` changes the matrix.
#[derive(Debug, PartialEq)]
enum TransformOp {
    /// Bandwidths become numbers of links.
    Links,
    /// The NVSwitch ports become one object.
    MergeSwitchPorts,
    /// Bandwidths between GPUs through the NVSwitches.
    TransitiveClosure,
    /// The object at this location leaves the matrix.
    RemoveObj(String),
    /// Objects of the first type (or OS devices of that subtype) are
    /// replaced by those of the second with the same locality, or removed
    /// when it is `null`.
    ReplaceObjs { old: String, new: String },
}

/// The command line after the options.
#[derive(Debug, PartialEq)]
struct Plan {
    input: String,
    output: String,
    locations: Vec<String>,
    annotation: Annotation,
}

const USAGE: &str = "usage: wloc annotate [--ci] [--ri] [--cu] [--cd] INPUT.xml OUTPUT.xml LOCATION ANNOTATION (or -- LOCATION... -- ANNOTATION)";

/// `HWLOC_DISTANCES_ADD_FLAG_GROUP`: Groups of the closest objects.
const DISTANCES_ADD_FLAG_GROUP: u64 = 1;
/// `HWLOC_DISTANCES_ADD_FLAG_GROUP_INACCURATE`: values may differ a little.
const DISTANCES_ADD_FLAG_GROUP_INACCURATE: u64 = 2;

/// hwloc's distances-add flag names.
const DISTANCES_ADD_FLAGS: [(&str, u64); 2] = [
    ("HWLOC_DISTANCES_ADD_FLAG_GROUP", DISTANCES_ADD_FLAG_GROUP),
    (
        "HWLOC_DISTANCES_ADD_FLAG_GROUP_INACCURATE",
        DISTANCES_ADD_FLAG_GROUP_INACCURATE,
    ),
];

/// hwloc's memory attribute flag names.
const MEMATTR_FLAGS: [(&str, u64); 3] = [
    ("HWLOC_MEMATTR_FLAG_HIGHER_FIRST", ma_flags::HIGHER_FIRST),
    ("HWLOC_MEMATTR_FLAG_LOWER_FIRST", ma_flags::LOWER_FIRST),
    (
        "HWLOC_MEMATTR_FLAG_NEED_INITIATOR",
        ma_flags::NEED_INITIATOR,
    ),
];

/// Reads an `int` as C's `atoi` would read a whole token.
fn parse_int(s: &str, what: &str) -> super::Result<i32> {
    Ok(s.trim()
        .parse::<i32>()
        .map_err(|_| format!("{what} '{s}' is not an integer"))?)
}

/// Splits the positional arguments as hwloc-annotate does.
fn plan(args: &[String], replace_infos: bool) -> super::Result<Plan> {
    let (input, output, rest) = match args {
        [i, o, rest @ ..] if !rest.is_empty() => (i.clone(), o.clone(), rest),
        _ => return Err(format!("missing arguments\n{USAGE}").into()),
    };
    // As hwloc-annotate: `-- LOCATION... --` right after the files, else
    // one location (an annotation may then hold a `--`).
    let (locations, ann): (Vec<String>, &[String]) = if rest[0] == "--" {
        let body = &rest[1..];
        match body.iter().position(|a| a == "--") {
            Some(end) => (body[..end].to_vec(), &body[end + 1..]),
            None => {
                return Err(
                    format!("missing the '--' that ends the list of locations\n{USAGE}").into(),
                );
            }
        }
    } else {
        (vec![rest[0].clone()], &rest[1..])
    };
    if locations.is_empty() {
        return Err(format!("no location between the two '--'\n{USAGE}").into());
    }
    let Some(mode) = ann.first() else {
        return Err(format!("missing annotation after the location\n{USAGE}").into());
    };
    let args = &ann[1..];
    let want = |n: usize, form: &str| -> super::Result {
        if args.len() < n {
            Err(format!("missing arguments: the annotation is '{form}'").into())
        } else {
            Ok(())
        }
    };
    let at_most = |n: usize, form: &str| -> super::Result {
        match args.get(n) {
            Some(extra) => {
                Err(format!("unexpected argument '{extra}' after the annotation '{form}'").into())
            }
            None => Ok(()),
        }
    };
    let annotation = match mode.as_str() {
        "info" => {
            if replace_infos {
                want(1, "info NAME [VALUE]")?;
            } else {
                want(2, "info NAME VALUE")?;
            }
            at_most(2, "info NAME VALUE")?;
            Annotation::Info {
                name: args[0].clone(),
                value: args.get(1).cloned(),
            }
        }
        "subtype" => {
            want(1, "subtype SUBTYPE")?;
            at_most(1, "subtype SUBTYPE")?;
            Annotation::Subtype(args[0].clone())
        }
        "size" => {
            want(1, "size SIZE")?;
            at_most(1, "size SIZE")?;
            Annotation::Size(topo_edit::parse_size(&args[0])?)
        }
        "misc" => {
            want(1, "misc NAME")?;
            at_most(1, "misc NAME")?;
            Annotation::Misc(args[0].clone())
        }
        "distances" => {
            want(1, "distances FILE [FLAGS]")?;
            at_most(2, "distances FILE [FLAGS]")?;
            let flags = match args.get(1) {
                Some(f) => {
                    let v = parse_hwloc_flags(f, &DISTANCES_ADD_FLAGS, "distances_add");
                    if v & !3 != 0 {
                        return Err(format!(
                            "invalid distances flags '{f}' (expected a number or group, group_inaccurate)"
                        ).into());
                    }
                    v
                }
                None => 0,
            };
            Annotation::Distances {
                file: args[0].clone(),
                flags,
            }
        }
        "distances-transform" => {
            const FORM: &str = "distances-transform NAME links|merge-switch-ports|transitive-closure|remove-obj OBJ|replace-objs OLDTYPE NEWTYPE";
            want(2, FORM)?;
            let op = match args[1].as_str() {
                "links" => TransformOp::Links,
                "merge-switch-ports" => TransformOp::MergeSwitchPorts,
                "transitive-closure" => TransformOp::TransitiveClosure,
                "remove-obj" => {
                    want(3, FORM)?;
                    TransformOp::RemoveObj(args[2].clone())
                }
                "replace-objs" => {
                    want(4, FORM)?;
                    TransformOp::ReplaceObjs {
                        old: args[2].clone(),
                        new: args[3].clone(),
                    }
                }
                other => {
                    return Err(format!(
                        "unknown distances-transform operation '{other}' (the annotation is '{FORM}')"
                    )
                    .into());
                }
            };
            let used = match op {
                TransformOp::RemoveObj(_) => 3,
                TransformOp::ReplaceObjs { .. } => 4,
                _ => 2,
            };
            at_most(used, FORM)?;
            Annotation::DistancesTransform {
                name: args[0].clone(),
                op,
            }
        }
        "memattr" => {
            want(2, "memattr NAME FLAGS or memattr NAME INITIATOR VALUE")?;
            if args.len() == 2 {
                let flags = parse_hwloc_flags(&args[1], &MEMATTR_FLAGS, "memattr");
                Annotation::MemattrRegister {
                    name: args[0].clone(),
                    flags,
                }
            } else {
                at_most(3, "memattr NAME INITIATOR VALUE")?;
                let value = parse_c_u64(&args[2]).ok_or_else(|| {
                    format!("memory attribute value '{}' is not an unsigned integer", args[2])
                })?;
                Annotation::MemattrValue {
                    name: args[0].clone(),
                    initiator: args[1].clone(),
                    value,
                }
            }
        }
        "cpukind" => {
            want(3, "cpukind CPUSET EFFICIENCY FLAGS [INFONAME INFOVALUE]")?;
            at_most(5, "cpukind CPUSET EFFICIENCY FLAGS [INFONAME INFOVALUE]")?;
            let cpuset: CpuSet = args[0].parse().map_err(|e| {
                format!("'{}' is not a CPU set (hwloc's form, 0x0000000f): {e}", args[0])
            })?;
            if cpuset.is_empty() {
                return Err(format!("the CPU set '{}' of the CPU kind is empty", args[0]).into());
            }
            let efficiency = parse_int(&args[1], "CPU kind efficiency")?;
            let flags = parse_int(&args[2], "CPU kind flags")?;
            if flags != 0 {
                return Err(format!("CPU kind flags must be 0, not {flags}").into());
            }
            if args.len() == 4 {
                return Err("cpukind with an info name but without its value".into());
            }
            let info = match (args.get(3), args.get(4)) {
                (Some(n), Some(v)) if !n.is_empty() && !v.is_empty() => {
                    Some((n.clone(), v.clone()))
                }
                _ => None,
            };
            Annotation::CpuKind {
                cpuset,
                efficiency,
                info,
            }
        }
        "none" => {
            at_most(0, "none")?;
            Annotation::None
        }
        other => {
            return Err(format!(
                "unknown annotation '{other}' (expected info, subtype, size, misc, distances, distances-transform, memattr, cpukind or none)"
            ).into())
        }
    };
    if replace_infos && !matches!(annotation, Annotation::Info { .. }) {
        return Err("--ri needs an info annotation (info NAME [VALUE])".into());
    }
    Ok(Plan {
        input,
        output,
        locations,
        annotation,
    })
}

/// Whether a location is written as objects of a type (`TYPE:...`,
/// `TYPE=...`, `TYPE[...]`), as hwloc-annotate tells them from others.
fn is_typed(location: &str) -> bool {
    let typelen = location
        .bytes()
        .take_while(|c| c.is_ascii_alphanumeric())
        .count();
    typelen > 0 && matches!(location.as_bytes().get(typelen), Some(b':' | b'=' | b'['))
}

/// The objects a typed location names, in hwloc's order.  Indexes that
/// name no object are warnings while others remain; none at all is an error.
fn objects_at(topo: &Topology, location: &str) -> super::Result<Vec<ObjId>> {
    if !is_typed(location) {
        return Err(format!(
            "unknown location '{location}' (expected all, root or objects such as core:0, pack:1.core:all, numa:0-1, os=eth0)"
        ).into());
    }
    let opts = WordOptions {
        physical_input: false,
        nodeset_input: false,
        cpuset_format: None,
        depth_numbers: true,
    };
    let r = resolve_word(topo, location, &opts)
        .map_err(|e| format!("invalid location '{location}': {e}"))?;
    if r.op != Op::Or {
        return Err(format!(
            "invalid location '{location}': operators (~ x ^) combine sets, they do not name objects"
        ).into());
    }
    if r.objects.is_empty() {
        let why = r
            .warnings
            .first()
            .map(|w| format!(": {w}"))
            .unwrap_or_default();
        return Err(format!("location '{location}' names no object{why}").into());
    }
    for w in &r.warnings {
        eprintln!("wloc: warning: location '{location}': {w}");
    }
    Ok(r.objects)
}

/// The first object a location names, as hwloc-annotate picks objects of
/// distances files and memory attribute initiators.
fn unique_object(topo: &Topology, location: &str, what: &str) -> super::Result<ObjId> {
    let objs = objects_at(topo, location).map_err(|e| format!("{what}: {e}"))?;
    if objs.len() > 1 {
        eprintln!(
            "wloc: warning: {what}: '{location}' names several objects, only the first one is used"
        );
    }
    Ok(objs[0])
}

/// What is done to each object at the locations.
struct ObjectEdit<'a> {
    clear_infos: bool,
    clear_userdata: bool,
    replace_infos: bool,
    annotation: &'a Annotation,
    /// The memory attribute (index in `memattrs`) and initiator of a
    /// `memattr NAME INITIATOR VALUE` annotation.
    memattr: Option<(usize, Option<Initiator>, u64)>,
}

impl ObjectEdit<'_> {
    fn apply(&self, topo: &mut Topology, id: ObjId) {
        let o = topo.obj_mut(id);
        if self.clear_infos {
            o.infos.clear();
        }
        if self.clear_userdata {
            o.userdata.clear();
        }
        match self.annotation {
            Annotation::Info { name, value } => {
                if self.replace_infos {
                    o.infos.retain(|i| i.name != *name);
                }
                if let Some(v) = value {
                    o.add_info(name, v);
                }
            }
            Annotation::Subtype(s) => {
                o.subtype = (!s.is_empty()).then(|| s.clone());
            }
            Annotation::Size(size) => match &mut o.attr {
                ObjAttr::Numa(n) => n.local_memory = *size,
                ObjAttr::Cache(c) => c.size = *size,
                _ if o.obj_type == ObjType::NUMANode => {
                    o.attr = ObjAttr::Numa(wloc_core::object::NumaAttr {
                        local_memory: *size,
                        ..Default::default()
                    });
                }
                _ => {}
            },
            Annotation::Misc(name) => {
                let mut misc = Object::new(ObjType::Misc, None);
                misc.name = Some(name.clone());
                if let Err(e) = topo.insert_by_parent(id, misc) {
                    eprintln!("wloc: warning: Misc object {name:?} not added: {e}");
                }
            }
            _ => {}
        }
        if let Some((attr, initiator, value)) = &self.memattr {
            topo.memattrs[*attr].set(id, initiator.clone(), *value);
        }
    }

    /// Children first (normal, memory, I/O, Misc), then the object, as
    /// hwloc-annotate's `all`.
    fn apply_recursive(&self, topo: &mut Topology, id: ObjId) {
        let o = topo.obj(id);
        let children: Vec<ObjId> = o
            .children()
            .iter()
            .chain(o.memory_children())
            .chain(o.io_children())
            .chain(o.misc_children())
            .copied()
            .collect();
        for c in children {
            self.apply_recursive(topo, c);
        }
        self.apply(topo, id);
    }
}

/// Adds the distances matrix of a distances file.
fn add_distances(topo: &mut Topology, file: &str, flags: u64) -> super::Result {
    let text = wloc::files::read_text(std::path::Path::new(file), "the distances file")?;
    let d = topo_edit::parse_distances(&text)
        .map_err(|e| format!("invalid distances file '{file}', {e}"))?;
    let k = d.kind;
    let from = k & (dist_kind::FROM_OS | dist_kind::FROM_USER);
    let means = k & (dist_kind::MEANS_LATENCY | dist_kind::MEANS_BANDWIDTH);
    if k & !0x1f != 0 || from.count_ones() != 1 || means.count_ones() != 1 {
        return Err(format!(
            "invalid distances kind {k} in '{file}': it needs one origin (1 from the OS, 2 from the user) and one meaning (4 latency, 8 bandwidth), such as 5 or 6"
        ).into());
    }
    let mut objs = Vec::with_capacity(d.objects.len());
    for (line, loc) in &d.objects {
        let o = unique_object(topo, loc, &format!("distances file '{file}' line {line}"))?;
        objs.push(o);
    }
    let n = objs.len();
    let mut kind = k;
    let first_type = topo.obj(objs[0]).obj_type;
    let hetero = objs.iter().any(|&o| topo.obj(o).obj_type != first_type);
    if hetero {
        kind |= dist_kind::HETEROGENEOUS_TYPES;
    }
    let values = d.values.matrix(n);
    let dist = Distances::new(d.name, kind, objs, values)
        .ok_or_else(|| format!("invalid distances matrix in '{file}'"))?;
    if flags & DISTANCES_ADD_FLAG_GROUP != 0 && !hetero && grouping_enabled(topo) {
        // As hwloc's commit: Groups of the closest objects, when they fit
        // in the tree (object ids survive grouping).
        let env = wloc_trust::env::var("HWLOC_GROUPING_ACCURACY");
        let inaccurate = flags & DISTANCES_ADD_FLAG_GROUP_INACCURATE != 0;
        let accuracies = group::accuracies(inaccurate, env.as_deref());
        let mut grouped = topo.clone();
        if group::group_by_distances(&mut grouped, &dist, &accuracies) && grouped.finish().is_ok() {
            *topo = grouped;
        }
    }
    topo.distances.push(dist);
    Ok(())
}

/// Whether hwloc would build Groups from distances: Groups are kept and
/// `HWLOC_GROUPING` does not say 0.
fn grouping_enabled(topo: &Topology) -> bool {
    let off =
        wloc_trust::env::var("HWLOC_GROUPING").is_some_and(|v| wloc_linux::parse::atoi(&v) == 0);
    topo.type_filter(ObjType::Group) != TypeFilter::KeepNone && !off
}

/// Whether an object is an NVSwitch port, as hwloc's switch transforms
/// tell them.
fn is_nvswitch(topo: &Topology, o: ObjId) -> bool {
    topo.obj(o).subtype.as_deref() == Some("NVSwitch")
}

/// A type as `replace-objs` names it: an object type, else the subtype of
/// OS devices (`nvml`, `opencl`...).
fn type_or_osdev_subtype(name: &str) -> (ObjType, Option<&str>) {
    match ObjType::parse(name) {
        Some(t) => (t, None),
        None => (ObjType::OSDevice, Some(name)),
    }
}

/// Applies `distances-transform NAME OP` as hwloc-annotate does: the
/// transformed matrix replaces the one named, after the others.
fn transform_distances(topo: &mut Topology, name: &str, op: &TransformOp) -> super::Result {
    let found: Vec<usize> = (0..topo.distances.len())
        .filter(|&i| topo.distances[i].name.as_deref() == Some(name))
        .collect();
    let index = match found.as_slice() {
        [] => return Err(format!("no distances matrix is named '{name}'").into()),
        [i] => *i,
        more => {
            return Err(format!("{} distances matrices are named '{name}'", more.len()).into());
        }
    };
    let mut d = topo.distances[index].clone();
    let failed = |e: wloc_core::distances::TransformError| {
        format!("cannot transform the distances '{name}': {e}")
    };
    let nvlink = || -> super::Result {
        if name == "NVLinkBandwidth" {
            Ok(())
        } else {
            Err(format!("cannot transform the distances '{name}': switch ports are only known in NVLinkBandwidth").into())
        }
    };
    let mut removed = false;
    match op {
        TransformOp::Links => d.transform_links().map_err(failed)?,
        TransformOp::MergeSwitchPorts => {
            nvlink()?;
            d.merge_switch_ports(|o| is_nvswitch(topo, o))
                .map_err(failed)?;
            removed = true;
        }
        TransformOp::TransitiveClosure => {
            nvlink()?;
            d.transitive_closure(|o| is_nvswitch(topo, o));
        }
        TransformOp::RemoveObj(loc) => {
            let obj = unique_object(topo, loc, "distances-transform remove-obj")?;
            let keep: Vec<bool> = d.objs.iter().map(|&o| o != obj).collect();
            for (i, k) in keep.iter().enumerate() {
                if !k {
                    println!("Removing object #{i} from distances structures `{name}'");
                }
            }
            if keep.iter().filter(|&&k| k).count() < 2 {
                return Err(failed(wloc_core::distances::TransformError::TooFewObjects).into());
            }
            d.keep_positions(&keep);
            removed = true;
        }
        TransformOp::ReplaceObjs { old, new } => {
            let (old_type, old_subtype) = type_or_osdev_subtype(old);
            let to_null = new.eq_ignore_ascii_case("null");
            let (new_type, new_subtype) = type_or_osdev_subtype(new);
            let mut keep = vec![true; d.objs.len()];
            for (i, (slot, kept)) in d.objs.iter_mut().zip(keep.iter_mut()).enumerate() {
                let o = topo.obj(*slot);
                let sub_ok = old_subtype.is_none_or(|s| {
                    o.subtype
                        .as_deref()
                        .is_some_and(|os| os.eq_ignore_ascii_case(s))
                });
                if o.obj_type != old_type || !sub_ok {
                    continue;
                }
                if to_null {
                    println!("Replacing object #{i} in distances structures `{name}' with NULL");
                    *kept = false;
                } else if let Ok(n) =
                    topo.obj_with_same_locality(*slot, new_type, new_subtype, None)
                {
                    println!("Replacing object #{i} in distances structures `{name}'");
                    *slot = n;
                }
            }
            if to_null {
                if keep.iter().filter(|&&k| k).count() < 2 {
                    return Err(failed(wloc_core::distances::TransformError::TooFewObjects).into());
                }
                d.keep_positions(&keep);
                removed = true;
            }
        }
    }
    let first_type = d.objs.first().map(|&o| topo.obj(o).obj_type);
    let hetero = d
        .objs
        .iter()
        .any(|&o| Some(topo.obj(o).obj_type) != first_type);
    // hwloc recomputes the flag when objects leave the matrix, and sets
    // it (only) when the matrix is added again.
    if removed && !hetero {
        d.kind &= !dist_kind::HETEROGENEOUS_TYPES;
    }
    if hetero {
        d.kind |= dist_kind::HETEROGENEOUS_TYPES;
    }
    topo.distances.remove(index);
    topo.distances.push(d);
    Ok(())
}

/// Registers a memory attribute as `hwloc_memattr_register` does.
fn register_memattr(topo: &mut Topology, name: &str, flags: u64) -> super::Result {
    let order = flags & (ma_flags::HIGHER_FIRST | ma_flags::LOWER_FIRST);
    if flags & !7 != 0 || order.count_ones() != 1 {
        return Err(format!(
            "invalid memory attribute flags {flags:#x}: give exactly one of higher_first and lower_first, and optionally need_initiator"
        ).into());
    }
    let mut id = 0;
    while let Some(a) = memattrs::attribute(topo, id) {
        if a.name == name {
            return Err(format!("memory attribute '{name}' already exists").into());
        }
        id += 1;
    }
    topo.memattrs.push(MemAttr::new(name, flags));
    Ok(())
}

/// The stored attribute and initiator of a `memattr NAME INITIATOR VALUE`.
fn memattr_target(
    topo: &mut Topology,
    name: &str,
    initiator: &str,
) -> super::Result<(usize, Option<Initiator>)> {
    let a = memattrs::find_attribute(topo, name)
        .ok_or_else(|| format!("no memory attribute named '{name}'"))?;
    if a.id < 2 {
        return Err(format!(
            "memory attribute '{}' is computed from the topology, it cannot be set",
            a.name
        )
        .into());
    }
    let (aname, aflags) = (a.name.to_string(), a.flags);
    let initiator = if aflags & ma_flags::NEED_INITIATOR == 0 {
        None
    } else if initiator == "none" {
        return Err(format!(
            "memory attribute '{aname}' needs an initiator (a CPU set such as 0x3 or an object such as pack:0), not none"
        ).into());
    } else if initiator.starts_with("0x") {
        let set: CpuSet = initiator
            .parse()
            .map_err(|e| format!("invalid initiator CPU set '{initiator}': {e}"))?;
        if set.is_empty() {
            return Err(format!("the initiator CPU set '{initiator}' is empty").into());
        }
        Some(Initiator::CpuSet(set))
    } else {
        Some(Initiator::Object(unique_object(
            topo,
            initiator,
            "memory attribute initiator",
        )?))
    };
    let pos = match topo.memattrs.iter().position(|m| m.name == aname) {
        Some(p) => p,
        None => {
            topo.memattrs.push(MemAttr::new(&aname, aflags));
            topo.memattrs.len() - 1
        }
    };
    Ok((pos, initiator))
}

/// Runs `wloc annotate`.
pub fn run(a: &AnnotateArgs) -> super::Result {
    let p = plan(&a.args, a.replace_infos)?;
    let text = read_input(&p.input)?;
    let base = {
        let mut t = keep_all(TypeFilter::KeepAll);
        t.include_disallowed = true;
        t
    };
    // As hwloc 2.x reads it when asked (WLOC_HWLOC_COMPAT=2): hwloc 3 names
    // the compute backends of version 2 OS devices in the root's infos.
    let imported = if super::ls::hwloc2_compat()? {
        wloc::xml::import_str_as_hwloc2(&text, base)
    } else {
        wloc::xml::import_str(&text, base)
    };
    let mut topo =
        imported.map_err(|e| format!("failed to load topology from {}: {e}", p.input))?;
    // hwloc keeps the topology's infos (Backend, OSName...) in the root
    // object, after those the document gave it first (as the hwloc 2
    // export writes them): infos added to the root come after them all.
    let topology_infos = std::mem::take(&mut topo.infos);
    let root = topo.root();
    let mut pool = std::mem::take(&mut topo.obj_mut(root).infos);
    pool.extend(topology_infos);
    // In the order of the document (the split above loses it).
    let mut infos = Vec::with_capacity(pool.len());
    for (name, value) in root_infos_in_document(&text) {
        if let Some(i) = pool.iter().position(|i| i.name == name && i.value == value) {
            infos.push(pool.remove(i));
        }
    }
    infos.append(&mut pool);
    topo.obj_mut(root).infos = infos;
    // Objects added get the global indexes hwloc would give them.
    topo.reserve_gp_index(hwloc_next_gp_index(&text).saturating_sub(1));
    if a.clear_distances {
        topo.distances.clear();
    }
    match &p.annotation {
        // The locations are not used by these, as in hwloc-annotate.
        Annotation::Distances { file, flags } => add_distances(&mut topo, file, *flags)?,
        Annotation::DistancesTransform { name, op } => transform_distances(&mut topo, name, op)?,
        Annotation::MemattrRegister { name, flags } => register_memattr(&mut topo, name, *flags)?,
        Annotation::CpuKind {
            cpuset,
            efficiency,
            info,
        } => {
            let infos: Vec<Info> = info
                .iter()
                .map(|(n, v)| Info {
                    name: n.clone(),
                    value: v.clone(),
                })
                .collect();
            let forced = (*efficiency >= 0).then_some(*efficiency);
            wloc_core::cpukinds::register(&mut topo.cpukinds, cpuset, forced, &infos);
            let arch = topo.obj(topo.root()).info("Architecture").map(String::from);
            let how = topo.cpukinds_ranking;
            wloc_core::cpukinds::rank(&mut topo.cpukinds, how, arch.as_deref());
        }
        _ => {
            let memattr = match &p.annotation {
                Annotation::MemattrValue {
                    name,
                    initiator,
                    value,
                } => {
                    let (attr, init) = memattr_target(&mut topo, name, initiator)?;
                    Some((attr, init, *value))
                }
                _ => None,
            };
            let edit = ObjectEdit {
                clear_infos: a.clear_infos,
                clear_userdata: a.clear_userdata,
                replace_infos: a.replace_infos,
                annotation: &p.annotation,
                memattr,
            };
            // Every location is checked before anything changes.
            let mut targets: Vec<Target> = Vec::new();
            // `none` with nothing to clear changes no object: as in
            // hwloc-annotate, its location is not read (`--cd IN OUT dummy none`).
            let nothing_to_do =
                matches!(p.annotation, Annotation::None) && !a.clear_infos && !a.clear_userdata;
            for loc in &p.locations {
                targets.push(match loc.as_str() {
                    "all" => Target::All,
                    "root" => Target::Objects(vec![topo.root()]),
                    _ if nothing_to_do && !is_typed(loc) => continue,
                    _ => {
                        let objs = objects_at(&topo, loc)?;
                        let misc_on_misc = matches!(p.annotation, Annotation::Misc(_))
                            && objs.iter().any(|&o| topo.obj(o).obj_type == ObjType::Misc);
                        if misc_on_misc {
                            Target::Live(loc, objs.len())
                        } else {
                            Target::Objects(objs)
                        }
                    }
                });
            }
            for t in targets {
                match t {
                    Target::All => {
                        let root = topo.root();
                        edit.apply_recursive(&mut topo, root);
                    }
                    Target::Objects(objs) => {
                        for o in objs {
                            edit.apply(&mut topo, o);
                        }
                    }
                    Target::Live(loc, n) => {
                        // hwloc walks the Misc level as it grows: the i-th
                        // object is looked up after the previous insertions.
                        for i in 0..n {
                            topo.connect();
                            let objs = objects_at(&topo, loc)?;
                            match objs.get(i) {
                                Some(&o) => edit.apply(&mut topo, o),
                                None => break,
                            }
                        }
                    }
                }
            }
            if matches!(p.annotation, Annotation::Misc(_)) {
                topo.connect();
            }
        }
    }
    let xml = super::ls::export_xml(&topo, XmlVersion::V2)?;
    if p.output == "-" {
        super::print(&xml)
    } else {
        Ok(wloc::files::write(
            std::path::Path::new(&p.output),
            xml.as_bytes(),
        )?)
    }
}

/// Objects a location designates.
enum Target<'a> {
    All,
    Objects(Vec<ObjId>),
    /// Misc objects getting Misc children: the location, and how many
    /// objects it named first.
    Live(&'a str, usize),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn distances_transforms_parse_as_hwloc_annotate() {
        let t = |s: &str| plan(&args(s), false).map(|p| p.annotation);
        assert_eq!(
            t("i o d distances-transform NV links").unwrap(),
            Annotation::DistancesTransform {
                name: "NV".into(),
                op: TransformOp::Links
            }
        );
        assert_eq!(
            t("i o d distances-transform NV replace-objs nvml null").unwrap(),
            Annotation::DistancesTransform {
                name: "NV".into(),
                op: TransformOp::ReplaceObjs {
                    old: "nvml".into(),
                    new: "null".into()
                }
            }
        );
        assert_eq!(
            t("i o d distances-transform NV remove-obj pu:1").unwrap(),
            Annotation::DistancesTransform {
                name: "NV".into(),
                op: TransformOp::RemoveObj("pu:1".into())
            }
        );
        assert!(t("i o d distances-transform NV").is_err());
        assert!(t("i o d distances-transform NV replace-objs pu").is_err());
        assert!(t("i o d distances-transform NV links extra").is_err());
        assert!(t("i o d distances-transform NV shuffle").is_err());
    }

    #[test]
    fn both_syntaxes_and_every_annotation_parse() {
        let p = plan(&args("in.xml out.xml core:0 info Rack r1"), false).unwrap();
        assert_eq!(p.locations, ["core:0"]);
        assert_eq!(
            p.annotation,
            Annotation::Info {
                name: "Rack".into(),
                value: Some("r1".into())
            }
        );
        let p = plan(&args("in out -- core:0 pu:1 -- misc M"), false).unwrap();
        assert_eq!(p.locations, ["core:0", "pu:1"]);
        assert_eq!(p.annotation, Annotation::Misc("M".into()));
        let p = plan(&args("in out root info Note --"), false).unwrap();
        assert_eq!(p.locations, ["root"]);
        assert_eq!(
            p.annotation,
            Annotation::Info {
                name: "Note".into(),
                value: Some("--".into())
            }
        );
        assert_eq!(
            plan(&args("i o root size 2GiB"), false).unwrap().annotation,
            Annotation::Size(2 << 30)
        );
        assert_eq!(
            plan(&args("i o x memattr Foo higher,need"), false)
                .unwrap()
                .annotation,
            Annotation::MemattrRegister {
                name: "Foo".into(),
                flags: 5
            }
        );
        assert!(matches!(
            plan(&args("i o numa:0 memattr Latency 0x3 123"), false)
                .unwrap()
                .annotation,
            Annotation::MemattrValue { value: 123, .. }
        ));
        assert!(matches!(
            plan(&args("i o x cpukind 0xf0 1 0 CoreType Big"), false)
                .unwrap()
                .annotation,
            Annotation::CpuKind {
                efficiency: 1,
                info: Some(_),
                ..
            }
        ));
        assert_eq!(
            plan(&args("i o core:0 info Rack"), true)
                .unwrap()
                .annotation,
            Annotation::Info {
                name: "Rack".into(),
                value: None
            }
        );
    }

    #[test]
    fn bad_command_lines_say_what_is_wrong() {
        let e = |s: &str, ri: bool| plan(&args(s), ri).unwrap_err().to_string();
        assert!(e("in out", false).contains("missing"));
        assert!(e("in out core:0", false).contains("missing annotation"));
        assert!(e("in out core:0 info Rack", false).contains("info NAME VALUE"));
        assert!(e("in out core:0 frobnicate x", false).contains("unknown annotation 'frobnicate'"));
        assert!(e("in out core:0 misc a b", false).contains("unexpected argument 'b'"));
        assert!(e("in out core:0 size 12apples", false).contains("unknown unit"));
        assert!(e("in out x cpukind zz 0 0", false).contains("not a CPU set"));
        assert!(e("in out x cpukind 0x1 0 1", false).contains("flags must be 0"));
        assert!(e("in out x cpukind 0x1 0 0 Name", false).contains("without its value"));
        assert!(e("in out core:0 misc M", true).contains("--ri"));
        assert!(e("in out x memattr L numa:0 nope", false).contains("not an unsigned integer"));
        assert!(e("in out -- -- none", false).contains("no location"));
        assert!(e("in out -- core:0 none", false).contains("missing the '--'"));
        assert!(e("in out core:0 pu:1 -- misc M", false).contains("unknown annotation 'pu:1'"));
    }

    #[test]
    fn typed_locations_are_told_from_others() {
        assert!(is_typed("core:0"));
        assert!(is_typed("os=eth0"));
        assert!(is_typed("pci[10de:*]:0"));
        assert!(is_typed("2:1"));
        assert!(!is_typed("dummy"));
        assert!(!is_typed("0x3"));
        assert!(!is_typed(":0"));
    }
}

#[cfg(test)]
mod clap_tests {
    use clap::Parser;

    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        a: super::AnnotateArgs,
    }

    #[test]
    fn the_first_double_dash_reaches_the_arguments() {
        let t = T::try_parse_from(["t", "--ci", "in", "out", "--", "root", "--", "none"]).unwrap();
        assert_eq!(t.a.args, ["in", "out", "--", "root", "--", "none"]);
    }
}
