//! wloc against libhwloc 2 in one process: XML loads, synthetic builds and
//! queries of finished topologies, timed by criterion, and the heap bytes
//! each loaded topology holds.  Run through `bench/inproc.sh`, which turns
//! the results into a table of ratios.
//!
//! Before timing, every input is checked to give the same number of
//! objects on both sides and every query the same checksum: the two sides
//! must do the same work.

#[cfg(no_hwloc)]
fn main() {
    eprintln!(
        "libhwloc's headers were not found when this benchmark was built: install libhwloc-dev (apt-get install libhwloc-dev) and run it again"
    );
    std::process::exit(1);
}

#[cfg(not(no_hwloc))]
fn main() {
    real::main()
}

#[cfg(not(no_hwloc))]
mod real {
    use std::hint::black_box;
    use std::time::Duration;

    use criterion::{BenchmarkId, Criterion};
    use wloc_bench_inproc::{self as b, Counting, hwloc};

    #[global_allocator]
    static ALLOC: Counting = Counting;

    /// Heap held by what `load` returns (median of a few loads), with the
    /// allocation calls the load made.
    fn heap_of<T>(load: impl Fn() -> T) -> (usize, usize) {
        drop(load());
        let mut samples = Vec::new();
        for _ in 0..5 {
            let before = hwloc::heap_in_use();
            let (_, calls0) = b::counted();
            let t = load();
            let after = hwloc::heap_in_use();
            let (_, calls1) = b::counted();
            drop(t);
            samples.push((after.saturating_sub(before), calls1 - calls0));
        }
        samples.sort();
        samples[samples.len() / 2]
    }

    fn slug(s: &str) -> String {
        s.chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect()
    }

    struct Row {
        group: String,
        id: String,
        name: String,
        wloc_heap: usize,
        hwloc_heap: usize,
        wloc_allocs: usize,
    }

    pub fn main() {
        hwloc::disable_plugins();
        let inputs = b::xml_inputs().unwrap_or_else(|e| {
            eprintln!("cannot prepare the inputs: {e}");
            std::process::exit(1);
        });
        let mut rows = Vec::new();

        // Check both sides agree, and measure the heap.
        for inp in &inputs {
            let w = b::wloc_xml(&inp.xml);
            let h = hwloc::load_xml(&inp.xml).unwrap_or_else(|| {
                eprintln!("libhwloc refuses {}", inp.name);
                std::process::exit(1)
            });
            let (wn, hn) = (b::wloc_count_objects(&w), h.count_objects());
            assert_eq!(wn, hn, "{}: wloc has {wn} objects, libhwloc {hn}", inp.name);
            let (wh, wa) = heap_of(|| b::wloc_xml(&inp.xml));
            let (hh, _) = heap_of(|| hwloc::load_xml(&inp.xml));
            rows.push(Row {
                group: "load".into(),
                id: slug(&inp.name),
                name: inp.name.clone(),
                wloc_heap: wh,
                hwloc_heap: hh,
                wloc_allocs: wa,
            });
        }
        for (name, desc) in b::SYNTHETIC {
            let w = b::wloc_synthetic(desc);
            let h = hwloc::load_synthetic(desc).expect("libhwloc builds the description");
            let (wn, hn) = (b::wloc_count_objects(&w), h.count_objects());
            assert_eq!(wn, hn, "{name}: wloc has {wn} objects, libhwloc {hn}");
            let (wh, wa) = heap_of(|| b::wloc_synthetic(desc));
            let (hh, _) = heap_of(|| hwloc::load_synthetic(desc));
            rows.push(Row {
                group: "load".into(),
                id: slug(name),
                name: format!("{name} (`{desc}`)"),
                wloc_heap: wh,
                hwloc_heap: hh,
                wloc_allocs: wa,
            });
        }

        // The topologies queried: a large real machine and the 4096-PU one.
        let queried: Vec<(&str, String)> = vec![
            ("192em64t-12gr2n8c2t", inputs[1].xml.clone()),
            ("4096 PUs", inputs[inputs.len() - 1].xml.clone()),
        ];
        type Q = (
            &'static str,
            fn(&wloc_core::Topology) -> u64,
            fn(&hwloc::Topo) -> u64,
        );
        let queries: [Q; 6] = [
            ("objects by depth and type", b::wloc_q_by_depth_type, |h| {
                h.q_by_depth_type()
            }),
            (
                "covering cpuset (PU pairs, near)",
                |t| b::wloc_q_covering(t, 1),
                |h| h.q_covering(1),
            ),
            (
                "covering cpuset (PU pairs, far)",
                |t| b::wloc_q_covering(t, 7),
                |h| h.q_covering(7),
            ),
            ("ancestor Package of each PU", b::wloc_q_ancestor, |h| {
                h.q_ancestor()
            }),
            ("next PU / Core by type", b::wloc_q_next, |h| h.q_next()),
            ("cpuset to nodeset", b::wloc_q_nodeset, |h| h.q_nodeset()),
        ];
        let loaded: Vec<_> = queried
            .iter()
            .map(|(name, xml)| (*name, b::wloc_xml(xml), hwloc::load_xml(xml).unwrap()))
            .collect();
        for (name, w, h) in &loaded {
            for (q, wq, hq) in &queries {
                assert_eq!(wq(w), hq(h), "{name}: query {q} disagrees");
            }
        }

        // Query rows carry no heap figures: they name the benchmarks.
        for (name, _, _) in &loaded {
            for (q, _, _) in &queries {
                rows.push(Row {
                    group: format!("query-{}", slug(name)),
                    id: slug(q),
                    name: format!("{q} | {name}"),
                    wloc_heap: 0,
                    hwloc_heap: 0,
                    wloc_allocs: 0,
                });
            }
        }

        if let Some(out) = std::env::var_os("WLOC_BENCH_HEAP_OUT") {
            let mut s = String::from("[\n");
            for (i, r) in rows.iter().enumerate() {
                s.push_str(&format!(
                    "  {{\"group\": \"{}\", \"id\": \"{}\", \"name\": \"{}\", \"wloc_heap\": {}, \"hwloc_heap\": {}, \"wloc_allocs\": {}}}{}\n",
                    r.group,
                    r.id,
                    r.name,
                    r.wloc_heap,
                    r.hwloc_heap,
                    r.wloc_allocs,
                    if i + 1 < rows.len() { "," } else { "" }
                ));
            }
            s.push_str("]\n");
            std::fs::write(&out, s).expect("write the heap figures");
        }

        let mut c = Criterion::default()
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(2))
            .sample_size(20)
            .configure_from_args();

        {
            let mut g = c.benchmark_group("load");
            for inp in &inputs {
                let id = slug(&inp.name);
                g.bench_with_input(BenchmarkId::new("wloc", &id), &inp.xml, |bch, x| {
                    bch.iter(|| b::wloc_xml(black_box(x)))
                });
                g.bench_with_input(BenchmarkId::new("hwloc", &id), &inp.xml, |bch, x| {
                    bch.iter(|| hwloc::load_xml(black_box(x)))
                });
            }
            for (name, desc) in b::SYNTHETIC {
                let id = slug(name);
                g.bench_with_input(BenchmarkId::new("wloc", &id), desc, |bch, d| {
                    bch.iter(|| b::wloc_synthetic(black_box(d)))
                });
                g.bench_with_input(BenchmarkId::new("hwloc", &id), desc, |bch, d| {
                    bch.iter(|| hwloc::load_synthetic(black_box(d)))
                });
            }
            g.finish();
        }
        for (name, w, h) in &loaded {
            let mut g = c.benchmark_group(format!("query-{}", slug(name)));
            for (q, wq, hq) in &queries {
                let id = slug(q);
                g.bench_function(BenchmarkId::new("wloc", &id), |bch| {
                    bch.iter(|| wq(black_box(w)))
                });
                g.bench_function(BenchmarkId::new("hwloc", &id), |bch| {
                    bch.iter(|| hq(black_box(h)))
                });
            }
            g.finish();
        }
        c.final_summary();
    }
}
