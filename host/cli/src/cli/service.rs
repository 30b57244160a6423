//! `wloc service`: the command line of the topology service; the service
//! itself is [`wloc::service`].

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

/// Options of `wloc service`.
#[derive(Args, Debug)]
pub struct ServiceArgs {
    /// Where the image is published (its folder: owned by root, writable by root only; created 0755 when missing).
    #[arg(long, value_name = "FILE", default_value = wloc::service::DEFAULT_PATH)]
    pub path: PathBuf,
    /// Publish one image and exit.
    #[arg(long)]
    pub once: bool,
    /// Quiet time after the last kernel uevent (cpu, memory, node, pci) before discovering again, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 200, value_parser = clap::value_parser!(u64).range(0..=3_600_000))]
    pub debounce: u64,
    /// Time between two checks of the CPUs and NUMA nodes online against the published image, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub check_interval: u64,
    /// The component policy file, as `wloc ls --policy` (default: $WLOC_POLICY, else /etc/wloc/policy.toml).
    #[arg(long = "policy", value_name = "FILE")]
    pub policy: Option<PathBuf>,
}

/// Runs `wloc service`.
pub fn run(d: &wloc_discovery::Discovery, a: &ServiceArgs) -> super::Result {
    let o = wloc::service::Options {
        path: a.path.clone(),
        debounce: Duration::from_millis(a.debounce),
        check_interval: Duration::from_secs(a.check_interval),
        once: a.once,
    };
    Ok(wloc::service::run(d, &o)?)
}
