//! cpukinds
