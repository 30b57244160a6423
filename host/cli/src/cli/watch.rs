//! `wloc watch`: samples the dynamic properties the built-in sensors
//! component measures (temperatures, fans, power, energy, frequencies,
//! utilisation, NUMA memory use, memory errors) at an interval, for
//! chosen objects (hwloc's location language) and properties.
//!
//! Output: with `--json`, one JSON object per reading and line, for
//! programs; on a terminal, a table redrawn at each sample; otherwise one
//! `object name value unit` line per reading, a blank line between
//! samples.  Rates (power from energy counters, utilisation from CPU
//! times) need two readings, so a first sample is taken one interval
//! before the first one shown.

use std::collections::HashSet;
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use clap::Args;
use wloc_core::{ObjId, Topology, TypeFilter};
use wloc_discovery::annotations::{self, Annotators};
use wloc_locality::WordOptions;
use wloc_runtime::{Property, builtin};

use super::topology::{InputArgs, Load, LoadErrors, TopologyArgs, keep_all};

/// Options of `wloc watch`.
#[derive(Args, Debug)]
pub struct WatchArgs {
    /// Only properties with these names, or whose name starts with one
    /// and a dot (`temperature` matches `temperature.acpitz`); `*` and
    /// `?` are wildcards.
    #[arg(value_name = "PROPERTY-FILTER")]
    pub filter: Vec<String>,
    /// Only properties of the objects of this location (`pu:0-3`,
    /// `package:1`, `numa:0`, `pci=0000:02:00.0`, `os=eth0`, `machine:0`);
    /// may be given several times.
    #[arg(long = "object", short = 'o', value_name = "LOCATION")]
    pub objects: Vec<String>,
    /// One JSON object per reading and line.
    #[arg(long)]
    pub json: bool,
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

/// Whether a property name passes one filter.
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

/// Whether a property name passes any of the filters (all pass none).
fn matches_any(filters: &[String], name: &str) -> bool {
    filters.is_empty() || filters.iter().any(|f| matches(Some(f), name))
}

/// The objects the `--object` locations name.
fn chosen_objects(topo: &Topology, words: &[String]) -> super::Result<Option<HashSet<ObjId>>> {
    if words.is_empty() {
        return Ok(None);
    }
    let mut set = HashSet::new();
    for w in words {
        let r = wloc_locality::resolve_word(topo, w, &WordOptions::default())
            .map_err(|e| format!("bad --object '{w}': {e}"))?;
        if let Some(warning) = r.warnings.first() {
            return Err(format!("bad --object '{w}': {warning}").into());
        }
        if r.objects.is_empty() {
            return Err(format!(
                "--object '{w}' names no object (give one such as pu:0-3, numa:0, package:1, os=eth0)"
            ).into());
        }
        set.extend(r.objects);
    }
    Ok(Some(set))
}

/// How the samples are printed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Style {
    Lines,
    Json,
    Table,
}

/// Runs `wloc watch`.
pub fn run(d: &wloc_discovery::Discovery, a: &WatchArgs) -> super::Result {
    let args = TopologyArgs::from_input(a.input.clone());
    let source = args.source()?;
    if !annotations::applies_to(&source) {
        return Err(
            "wloc watch reads the sensors of a Linux machine: use this machine or a recorded fsroot (-i DIR --if fsroot)"
                .into(),
        );
    }
    let how = Load::new(keep_all(TypeFilter::KeepImportant), LoadErrors::Plain);
    let topo = args.load_source(d, &source, how)?;
    let objects = chosen_objects(&topo, &a.objects)?;
    let (annotators, warnings) = Annotators::builtin_matching(
        d,
        annotations::fsroot_of(&source),
        |b, _| b.name == builtin::ANNOTATE_SENSORS_NAME,
        &Default::default(),
    )?;
    for w in warnings {
        eprintln!("wloc: warning: {w}");
    }
    if annotators.names().is_empty() {
        return Err("the sensors component is not available (disabled by the policy?)".into());
    }
    let style = if a.json {
        Style::Json
    } else if std::io::stdout().is_terminal() {
        Style::Table
    } else {
        Style::Lines
    };
    let interval = Duration::from_millis(a.interval);
    let start = Instant::now();
    // The first sample gives rates their starting point; it is not shown.
    let (_, warnings) = annotators.sample_at(&topo, start);
    for w in &warnings {
        eprintln!("wloc: warning: {w}");
    }
    let mut next = start + interval;
    let mut sample = 0u64;
    loop {
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
        } else {
            next = now;
        }
        let taken = Instant::now();
        let (props, warnings) = annotators.sample_at(&topo, taken);
        for w in &warnings {
            eprintln!("wloc: warning: {w}");
        }
        let shown: Vec<&Property> = props
            .iter()
            .filter(|p| matches_any(&a.filter, &p.name))
            .filter(|p| objects.as_ref().is_none_or(|o| o.contains(&p.object)))
            .collect();
        if sample == 0 && shown.is_empty() {
            return Err(nothing_shown(a, &props).into());
        }
        let time = taken.duration_since(start).as_secs_f64();
        let text = match style {
            Style::Lines => lines(&topo, &shown, sample > 0),
            Style::Json => json_lines(&topo, &shown, sample, time)?,
            Style::Table => table(&topo, &shown, sample, a.interval),
        };
        let mut out = std::io::stdout().lock();
        out.write_all(text.as_bytes())?;
        out.flush()?;
        drop(out);
        sample += 1;
        if a.count != 0 && sample >= a.count {
            return Ok(());
        }
        next += interval;
    }
}

/// The error when the first sample shows nothing.
fn nothing_shown(a: &WatchArgs, props: &[Property]) -> String {
    if props.is_empty() {
        return "no dynamic property is available: no hwmon, thermal zone, cpufreq, RAPL, /proc/stat, node meminfo or EDAC reading was found".into();
    }
    if !a.filter.is_empty() {
        let named: Vec<&Property> = props
            .iter()
            .filter(|p| matches_any(&a.filter, &p.name))
            .collect();
        if named.is_empty() {
            return format!(
                "no dynamic property matches '{}' ({} available: {})",
                a.filter.join(" "),
                props.len(),
                available(props.iter())
            );
        }
        return format!(
            "no property matching '{}' belongs to the objects of {} (these have: {})",
            a.filter.join(" "),
            a.objects.join(" "),
            available(props.iter())
        );
    }
    format!(
        "the objects of {} have no dynamic property",
        a.objects.join(" ")
    )
}

fn lines(topo: &Topology, shown: &[&Property], separate: bool) -> String {
    let mut s = String::new();
    if separate {
        s.push('\n');
    }
    for p in shown {
        let line = format!(
            "{} {} {} {}",
            annotations::object_label(topo, p.object),
            p.name,
            annotations::format_value(p.value),
            p.unit
        );
        s.push_str(line.trim_end());
        s.push('\n');
    }
    s
}

fn json_lines(
    topo: &Topology,
    shown: &[&Property],
    sample: u64,
    time: f64,
) -> super::Result<String> {
    let mut s = String::new();
    for p in shown {
        let o = topo.obj(p.object);
        let v = serde_json::json!({
            "sample": sample,
            "time": time,
            "object": annotations::object_label(topo, p.object),
            "type": o.obj_type.to_string(),
            "logical_index": o.logical_index(),
            "os_index": o.os_index,
            "gp_index": o.gp_index,
            "name": p.name,
            "value": p.value,
            "unit": p.unit,
        });
        s.push_str(&serde_json::to_string(&v).map_err(|e| format!("cannot write JSON: {e}"))?);
        s.push('\n');
    }
    Ok(s)
}

/// A table for a terminal, drawn over the previous one.
fn table(topo: &Topology, shown: &[&Property], sample: u64, interval: u64) -> String {
    let rows: Vec<[String; 4]> = shown
        .iter()
        .map(|p| {
            [
                annotations::object_label(topo, p.object),
                p.name.clone(),
                annotations::format_value(p.value),
                p.unit.clone(),
            ]
        })
        .collect();
    let head = ["OBJECT", "PROPERTY", "VALUE", "UNIT"];
    let mut w = head.map(|h| h.chars().count());
    for r in &rows {
        for (k, c) in r.iter().enumerate() {
            w[k] = w[k].max(c.chars().count());
        }
    }
    // Home and clear the screen, then the table.
    let mut s = format!(
        "\x1b[H\x1b[2Jwloc watch: sample {}, every {interval} ms (Ctrl-C stops)\n\n",
        sample + 1
    );
    let row = |s: &mut String, r: [&str; 4]| {
        let line = format!(
            "{:<w0$}  {:<w1$}  {:>w2$}  {}",
            r[0],
            r[1],
            r[2],
            r[3],
            w0 = w[0],
            w1 = w[1],
            w2 = w[2]
        );
        s.push_str(line.trim_end());
        s.push('\n');
    };
    row(&mut s, head);
    for r in &rows {
        row(&mut s, [&r[0], &r[1], &r[2], &r[3]]);
    }
    s
}

/// The distinct property names, for an error message.
fn available<'a>(props: impl Iterator<Item = &'a Property>) -> String {
    let mut names: Vec<&str> = props.map(|p| p.name.as_str()).collect();
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
    use super::{matches, matches_any};

    #[test]
    fn filters_match_whole_name_components_or_wildcards() {
        assert!(matches(None, "frequency"));
        assert!(matches(Some("temperature"), "temperature"));
        assert!(matches(Some("temperature"), "temperature.acpitz"));
        assert!(!matches(Some("temp"), "temperature"));
        assert!(matches(Some("*.coretemp.*"), "power.coretemp.x"));
        assert!(!matches(Some("fan*"), "temperature"));
        assert!(matches_any(&[], "x"));
        let f = ["power".to_string(), "utilisation".to_string()];
        assert!(matches_any(&f, "power.rapl.package-0"));
        assert!(matches_any(&f, "utilisation"));
        assert!(!matches_any(&f, "energy.rapl.package-0"));
    }
}
