//! CPU kinds (`--cpukinds`, and verbose listings).

use std::fmt::Write as _;

use super::Renderer;

impl Renderer<'_> {
    /// CPU kinds with their infos.
    pub(super) fn cpukinds(&mut self) {
        for (i, k) in self.topo.cpukinds.iter().enumerate() {
            let _ = writeln!(
                self.out,
                "CPU kind #{i} efficiency {} cpuset {}",
                k.efficiency, k.cpuset
            );
            for info in &k.infos {
                let _ = writeln!(self.out, "  {} = {}", info.name, info.value);
            }
        }
    }
}
