//! wloc's end-to-end tests, in one test binary: each module runs the
//! `wloc` command (and hwloc's tools, QEMU machines or a real policy file)
//! the way a user would.  One binary links wasmtime once, and its tests
//! share one harness.

mod aarch64_host;
mod annotate;

mod annotate_differential;
mod bad_recordings;
mod binding;
mod calc_differential;
mod cgroup_mounts;
mod cli;
mod common;
mod distrib_differential;
mod draw;
mod dropin;
mod dropin_gaps;
mod fabric;
mod file_safety;
mod gather_cpuid;
mod gather_topology;
mod graph;
mod hostile;
mod hostile_annotations;
mod hostile_cache;
mod hostile_files;
mod hostile_formats;
mod hostile_gather;
mod hostile_records;
mod hwloc_2_14_calc_info;
mod hwloc_2_14_tools;
mod hwloc_differential;
mod image;
mod info_ps;
mod k8s;
mod linux_conformance;
mod live_differential;
mod oci_registry;
mod offline_cpus;
mod openmp_seed;
mod published;
mod qemu_arm_boot;
mod qemu_boot;
mod qemu_linux;
mod qemu_pvh_boot;
mod scheduler_inputs;
mod service;
mod slurm;
mod slurm_cluster;
mod store;
mod topology_diff;
mod userdata;
mod watch;
mod x86_conformance;
mod x86_linux;
mod xml_conformance;
mod xml_v1;
mod xml_v1_diff;
