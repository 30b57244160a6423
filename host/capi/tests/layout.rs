//! The public structures are laid out exactly as hwloc 2.14's headers
//! declare them (`tests/data/hwloc-2.14`): a C program compiled against
//! them prints every `sizeof` and `offsetof`, which must equal this
//! library's. 2.14 only appended to 2.9's structures (the membind
//! support's `weighted_interleave_membind`), so programs built with 2.9's
//! headers read the same fields at the same places.

mod support;

use std::mem::{offset_of, size_of};
use std::process::Command;

use hwloc::types::*;

/// (C type, C member or "sizeof", this library's value).
type Row = (&'static str, &'static str, usize);

macro_rules! layout {
    ($rows:ident, $rty:ty, $cty:literal, { $($rf:ident => $cf:literal),* $(,)? }) => {
        $rows.push(($cty, "sizeof", size_of::<$rty>()));
        $( $rows.push(($cty, $cf, offset_of!($rty, $rf))); )*
    };
}

fn rows() -> Vec<Row> {
    let mut r: Vec<Row> = Vec::new();
    layout!(r, hwloc_obj, "struct hwloc_obj", {
        type_ => "type", subtype => "subtype", os_index => "os_index", name => "name",
        total_memory => "total_memory", attr => "attr", depth => "depth",
        logical_index => "logical_index", next_cousin => "next_cousin",
        prev_cousin => "prev_cousin", parent => "parent", sibling_rank => "sibling_rank",
        next_sibling => "next_sibling", prev_sibling => "prev_sibling", arity => "arity",
        children => "children", first_child => "first_child", last_child => "last_child",
        symmetric_subtree => "symmetric_subtree", memory_arity => "memory_arity",
        memory_first_child => "memory_first_child", io_arity => "io_arity",
        io_first_child => "io_first_child", misc_arity => "misc_arity",
        misc_first_child => "misc_first_child", cpuset => "cpuset",
        complete_cpuset => "complete_cpuset", nodeset => "nodeset",
        complete_nodeset => "complete_nodeset", infos => "infos", infos_count => "infos_count",
        userdata => "userdata", gp_index => "gp_index",
    });
    layout!(r, hwloc_obj_attr_u, "union hwloc_obj_attr_u", {
        numanode => "numanode", cache => "cache", group => "group", pcidev => "pcidev",
        bridge => "bridge", osdev => "osdev",
    });
    layout!(r, hwloc_numanode_attr_s, "struct hwloc_numanode_attr_s", {
        local_memory => "local_memory", page_types_len => "page_types_len", page_types => "page_types",
    });
    layout!(r, hwloc_memory_page_type_s, "struct hwloc_memory_page_type_s", {
        size => "size", count => "count",
    });
    layout!(r, hwloc_cache_attr_s, "struct hwloc_cache_attr_s", {
        size => "size", depth => "depth", linesize => "linesize",
        associativity => "associativity", type_ => "type",
    });
    layout!(r, hwloc_group_attr_s, "struct hwloc_group_attr_s", {
        depth => "depth", kind => "kind", subkind => "subkind", dont_merge => "dont_merge",
    });
    layout!(r, hwloc_pcidev_attr_s, "struct hwloc_pcidev_attr_s", {
        domain => "domain", bus => "bus", dev => "dev", func => "func", class_id => "class_id",
        vendor_id => "vendor_id", device_id => "device_id", subvendor_id => "subvendor_id",
        subdevice_id => "subdevice_id", revision => "revision", linkspeed => "linkspeed",
    });
    layout!(r, hwloc_bridge_attr_s, "struct hwloc_bridge_attr_s", {
        upstream_pci => "upstream.pci", upstream_type => "upstream_type",
        downstream_pci => "downstream.pci", downstream_type => "downstream_type", depth => "depth",
    });
    // Offsets inside the bridge's `downstream.pci` structure.
    for (member, off) in [
        (
            "downstream.pci.domain",
            offset_of!(hwloc_bridge_downstream_pci_s, domain),
        ),
        (
            "downstream.pci.secondary_bus",
            offset_of!(hwloc_bridge_downstream_pci_s, secondary_bus),
        ),
        (
            "downstream.pci.subordinate_bus",
            offset_of!(hwloc_bridge_downstream_pci_s, subordinate_bus),
        ),
    ] {
        r.push(("struct hwloc_bridge_attr_s", member, off));
    }
    layout!(r, hwloc_osdev_attr_s, "struct hwloc_osdev_attr_s", { type_ => "type" });
    layout!(r, hwloc_info_s, "struct hwloc_info_s", { name => "name", value => "value" });
    layout!(r, hwloc_topology_discovery_support, "struct hwloc_topology_discovery_support", {
        pu => "pu", numa => "numa", numa_memory => "numa_memory", disallowed_pu => "disallowed_pu",
        disallowed_numa => "disallowed_numa", cpukind_efficiency => "cpukind_efficiency",
    });
    layout!(r, hwloc_topology_cpubind_support, "struct hwloc_topology_cpubind_support", {
        set_thisproc_cpubind => "set_thisproc_cpubind", get_thisproc_cpubind => "get_thisproc_cpubind",
        set_proc_cpubind => "set_proc_cpubind", get_proc_cpubind => "get_proc_cpubind",
        set_thisthread_cpubind => "set_thisthread_cpubind", get_thisthread_cpubind => "get_thisthread_cpubind",
        set_thread_cpubind => "set_thread_cpubind", get_thread_cpubind => "get_thread_cpubind",
        get_thisproc_last_cpu_location => "get_thisproc_last_cpu_location",
        get_proc_last_cpu_location => "get_proc_last_cpu_location",
        get_thisthread_last_cpu_location => "get_thisthread_last_cpu_location",
    });
    layout!(r, hwloc_topology_membind_support, "struct hwloc_topology_membind_support", {
        set_thisproc_membind => "set_thisproc_membind", get_thisproc_membind => "get_thisproc_membind",
        set_proc_membind => "set_proc_membind", get_proc_membind => "get_proc_membind",
        set_thisthread_membind => "set_thisthread_membind", get_thisthread_membind => "get_thisthread_membind",
        set_area_membind => "set_area_membind", get_area_membind => "get_area_membind",
        alloc_membind => "alloc_membind", firsttouch_membind => "firsttouch_membind",
        bind_membind => "bind_membind", interleave_membind => "interleave_membind",
        nexttouch_membind => "nexttouch_membind", migrate_membind => "migrate_membind",
        get_area_memlocation => "get_area_memlocation",
        weighted_interleave_membind => "weighted_interleave_membind",
    });
    layout!(r, hwloc_topology_misc_support, "struct hwloc_topology_misc_support", {
        imported_support => "imported_support",
    });
    layout!(r, hwloc_topology_support, "struct hwloc_topology_support", {
        discovery => "discovery", cpubind => "cpubind", membind => "membind", misc => "misc",
    });
    layout!(r, hwloc_distances_s, "struct hwloc_distances_s", {
        nbobjs => "nbobjs", objs => "objs", kind => "kind", values => "values",
    });
    layout!(r, hwloc_topology_diff_obj_attr_uint64_s, "struct hwloc_topology_diff_obj_attr_uint64_s", {
        type_ => "type", index => "index", oldvalue => "oldvalue", newvalue => "newvalue",
    });
    layout!(r, hwloc_topology_diff_obj_attr_string_s, "struct hwloc_topology_diff_obj_attr_string_s", {
        type_ => "type", name => "name", oldvalue => "oldvalue", newvalue => "newvalue",
    });
    layout!(r, hwloc_topology_diff_obj_attr_u, "union hwloc_topology_diff_obj_attr_u", {
        generic => "generic", uint64 => "uint64", string => "string",
    });
    layout!(r, hwloc_topology_diff_generic_s, "struct hwloc_topology_diff_generic_s", {
        type_ => "type", next => "next",
    });
    layout!(r, hwloc_topology_diff_obj_attr_s, "struct hwloc_topology_diff_obj_attr_s", {
        type_ => "type", next => "next", obj_depth => "obj_depth", obj_index => "obj_index", diff => "diff",
    });
    layout!(r, hwloc_topology_diff_too_complex_s, "struct hwloc_topology_diff_too_complex_s", {
        type_ => "type", next => "next", obj_depth => "obj_depth", obj_index => "obj_index",
    });
    layout!(r, hwloc_topology_diff_u, "union hwloc_topology_diff_u", {
        generic => "generic", obj_attr => "obj_attr", too_complex => "too_complex",
    });
    layout!(r, hwloc_location, "struct hwloc_location", { type_ => "type", location => "location" });
    layout!(r, hwloc_location_u, "union hwloc_location_u", { cpuset => "cpuset", object => "object" });
    r
}

/// The C program printing the same rows from the system's headers.
fn c_source(rows: &[Row]) -> String {
    let mut s = String::from(
        "#include <stdio.h>\n#include <stddef.h>\n#include <hwloc.h>\n#include <hwloc/diff.h>\n#include <hwloc/distances.h>\n#include <hwloc/memattrs.h>\nint main(void) {\n",
    );
    for (ty, member, _) in rows {
        if *member == "sizeof" {
            s += &format!("  printf(\"{ty} sizeof %zu\\n\", sizeof({ty}));\n");
        } else if let Some(inner) = member.strip_prefix("downstream.pci.") {
            // Offsets inside the anonymous downstream.pci structure.
            s += &format!(
                "  printf(\"{ty} {member} %zu\\n\", offsetof({ty}, downstream.pci.{inner}) - offsetof({ty}, downstream.pci));\n"
            );
        } else {
            s += &format!("  printf(\"{ty} {member} %zu\\n\", offsetof({ty}, {member}));\n");
        }
    }
    s + "  return 0;\n}\n"
}

#[test]
fn structures_match_hwloc_2_14s_headers() {
    support::require_c_toolchain();
    let rows = rows();
    let dir = support::library_dir("layout");
    let inc = support::hwloc_2_14_headers(&dir);
    let src = dir.join("layout.c");
    let exe = dir.join("layout");
    std::fs::write(&src, c_source(&rows)).unwrap();
    support::compile(
        Command::new("gcc")
            .arg("-I")
            .arg(&inc)
            .arg("-o")
            .arg(&exe)
            .arg(&src),
    );
    let out = Command::new(&exe).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let c: Vec<&str> = text.lines().collect();
    let mut bad = Vec::new();
    for (line, (ty, member, ours)) in c.iter().zip(&rows) {
        let theirs = line
            .rsplit(' ')
            .next()
            .and_then(|v| v.parse::<usize>().ok());
        if theirs != Some(*ours) {
            bad.push(format!(
                "{ty} {member}: hwloc.h says {line:?}, this library {ours}"
            ));
        }
    }
    assert_eq!(c.len(), rows.len(), "{text}");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
