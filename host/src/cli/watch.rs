//! `wloc watch`: samples the dynamic properties (temperatures, fan
//! speeds, power, frequencies, ...) that the built-in annotation
//! components measure, and prints one `object name value unit` line per
//! reading, a blank line between samples.

use std::io::Write;
use std::time::{Duration, Instant};

use clap::Args;
use wloc::annotations::{self, Annotators};
use wloc_core::TypeFilter;

use super::topology::{keep_all, InputArgs, Load, LoadErrors, TopologyArgs};

/// Options of `wloc watch`.
#[derive(Args, Debug)]
pub struct WatchArgs {
    /// Only properties with this name, or whose name starts with it and a
    /// dot (`temperature` matches `temperature.acpitz`); `*` and `?` are
    /// wildcards.
    #[arg(value_name = "PROPERTY-FILTER")]
    pub filter: Option<String>,
    /// Time between samples, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..=86_400_000))]
    pub interval: u64,
    /// Number of samples (0: until interrupted).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub count: u64,
    // The machine: this one, or a recorded fsroot (`-i DIR`, whose
    // readings are used).
    #[command(flatten)]
    pub input: InputArgs,
}

/// Whether a property name passes the filter.
pub fn matches(filter: Option<&str>, name: &str) -> bool {
    let Some(f) = filter else { return true };
    if f.contains(['*', '?']) {
        return wloc_runtime::fs::wildcard_match(f, name);
    }
    name == f
        || name
            .strip_prefix(f)
            .is_some_and(|rest| rest.starts_with('.'))
}

/// Runs `wloc watch`.
pub fn run(a: &WatchArgs) -> super::Result {
    let args = TopologyArgs::from_input(a.input.clone());
    let source = args.source()?;
    if !annotations::applies_to(&source) {
        return Err(
            "wloc watch reads the sensors of a Linux machine: use this machine or a recorded fsroot (-i DIR --if fsroot)"
                .into(),
        );
    }
    let how = Load::new(keep_all(TypeFilter::KeepImportant), LoadErrors::Plain);
    let topo = args.load_source(&source, how)?;
    let (annotators, warnings) = Annotators::builtin(annotations::fsroot_of(&source))?;
    for w in warnings {
        eprintln!("wloc: warning: {w}");
    }
    let interval = Duration::from_millis(a.interval);
    let stdout = std::io::stdout();
    let mut sample = 0u64;
    let mut next = Instant::now();
    loop {
        let (props, warnings) = annotators.sample(&topo);
        for w in &warnings {
            eprintln!("wloc: warning: {w}");
        }
        let shown: Vec<_> = props
            .iter()
            .filter(|p| matches(a.filter.as_deref(), &p.name))
            .collect();
        if sample == 0 && shown.is_empty() {
            return Err(match &a.filter {
                Some(f) => format!(
                    "no dynamic property matches '{f}' ({} available: {})",
                    props.len(),
                    available(&props)
                ),
                None => "no dynamic property is available: no hwmon, thermal zone or cpufreq reading was found".into(),
            }
            .into());
        }
        let mut out = stdout.lock();
        if sample > 0 {
            writeln!(out)?;
        }
        for p in shown {
            let line = format!(
                "{} {} {} {}",
                annotations::object_label(&topo, p.object),
                p.name,
                annotations::format_value(p.value),
                p.unit
            );
            writeln!(out, "{}", line.trim_end())?;
        }
        out.flush()?;
        drop(out);
        sample += 1;
        if a.count != 0 && sample >= a.count {
            return Ok(());
        }
        next += interval;
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
        } else {
            next = now;
        }
    }
}

/// The distinct property names, for an error message.
fn available(props: &[wloc_runtime::Property]) -> String {
    let mut names: Vec<&str> = props.iter().map(|p| p.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn filters_match_whole_name_components_or_wildcards() {
        assert!(matches(None, "frequency"));
        assert!(matches(Some("temperature"), "temperature"));
        assert!(matches(Some("temperature"), "temperature.acpitz"));
        assert!(!matches(Some("temp"), "temperature"));
        assert!(matches(Some("*.coretemp.*"), "power.coretemp.x"));
        assert!(!matches(Some("fan*"), "temperature"));
    }
}
