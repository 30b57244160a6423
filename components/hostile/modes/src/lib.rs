//! A discovery component that misbehaves in the way its `mode` setting
//! names, so that the host's tests can check each misbehaviour is refused
//! or contained.  Never shipped.
//!
//! Modes that probe the sandbox (`read`, `wasi-fs`, `env`) answer a small
//! valid topology whose topology infos tell what each attempt got, so a
//! test sees exactly what leaked (nothing should).

use std::hint::black_box;
use wloc_hostile_kit::*;

fn discover() -> Result<Discovery, String> {
    let mode = config::get("mode").unwrap_or_default();
    let paths: Vec<String> = config::get("paths")
        .unwrap_or_default()
        .lines()
        .map(String::from)
        .collect();
    let mut d = small();
    match mode.as_str() {
        "good" => {}
        "spin" => {
            let mut x = 0u64;
            loop {
                x = black_box(x.wrapping_add(1));
            }
        }
        "alloc" => {
            let mut hoard: Vec<Vec<u8>> = Vec::new();
            loop {
                hoard.push(vec![1u8; 1 << 20]);
                black_box(&hoard);
            }
        }
        "panic" => panic!("hostile component panicked on purpose"),
        "unreachable" => core::arch::wasm32::unreachable(),
        "exit" => std::process::exit(3),
        "error" => return Err("hostile component gave up on purpose".into()),
        "log-flood" => {
            for i in 0..100_000 {
                log::log(log::Level::Error, &format!("flood {i} \x1b[31mred\x1b[0m"));
            }
        }
        "print-flood" => {
            for i in 0..100_000 {
                println!("stdout flood {i}");
                eprintln!("stderr flood {i}");
            }
        }
        "huge-bitmap" => d.objects[1].cpuset = set(vec![1; 1 << 17]),
        "infinite-cpuset" => {
            d.objects[1].cpuset = Some(Bitmap {
                words: vec![1],
                infinite: true,
            })
        }
        "empty-pu" => d.objects[1].cpuset = set(Vec::new()),
        "pu-without-os-index" => d.objects[1].os_index = None,
        "pu-set-mismatch" => d.objects[1].cpuset = set(vec![2]),
        "parent-out-of-range" => d.objects[1].parent = Some(77),
        "parent-later" => {
            d.objects.insert(1, pu(3, Some(4), 1));
            d.objects.push(obj(4, Some(1), ObjectType::Core));
        }
        "cycle" => {
            d.objects.push(obj(5, Some(6), ObjectType::Group));
            d.objects.push(obj(6, Some(5), ObjectType::Group));
        }
        "self-parent" => d.objects[1].parent = Some(2),
        "duplicate-ids" => d.objects.push(pu(2, Some(1), 1)),
        "two-roots" => d.objects.push(obj(9, None, ObjectType::Machine)),
        "machine-child" => d.objects.push(obj(9, Some(1), ObjectType::Machine)),
        "pu-child" => d.objects.push(pu(9, Some(2), 1)),
        "bad-attr" => {
            d.objects[1].attr = ObjectAttr::Cache(CacheAttr {
                size: 1,
                depth: 1,
                linesize: 64,
                associativity: 0,
                kind: CacheKind::Unified,
                inclusive: false,
            })
        }
        "io-without-parent" => d.objects.push(obj(9, None, ObjectType::PciDevice)),
        "huge-list" => {
            for i in 0..5000u32 {
                d.objects.push(pu(10 + i, Some(1), i + 1));
            }
        }
        "huge-strings" => {
            d.objects[1].infos.push(info("big", "x".repeat(8 << 20)));
        }
        "distances-size" => d.distances.push(distances(vec![2], vec![10, 20])),
        "distances-unknown-object" => d
            .distances
            .push(distances(vec![2, 99], vec![10, 20, 20, 10])),
        "memattr-unknown-target" => d.memattrs.push(bandwidth(1234)),
        "read" => {
            let max = 4096;
            let results = files::read_many(&paths, max);
            for (p, r) in paths.iter().zip(&results) {
                d.infos
                    .push(info(format!("read {p}"), describe_read(r, "read", 64)));
            }
            for p in &paths {
                let v = match files::list_dir(p) {
                    Ok(names) => format!("listed {} entries: {}", names.len(), names.join(",")),
                    Err(e) => describe_err(&e),
                };
                d.infos.push(info(format!("list {p}"), v));
                let v = match files::read_link(p) {
                    Ok(t) => format!("link to {t}"),
                    Err(e) => describe_err(&e),
                };
                d.infos.push(info(format!("link {p}"), v));
                let v = match files::glob(&format!("{p}/*")) {
                    Ok(names) => format!("matched {}: {}", names.len(), names.join(",")),
                    Err(e) => describe_err(&e),
                };
                d.infos.push(info(format!("glob {p}/*"), v));
            }
        }
        "cpuid" => {
            let n = cpuid::pu_count();
            d.infos.push(info("pu-count", n.to_string()));
            for pu in 0..=n.min(8) {
                let os = cpuid::os_index(pu);
                let (a, b, c, e) = cpuid::query(pu, 0x1f, 3);
                d.infos.push(info(
                    format!("pu {pu}"),
                    format!("os {os}: {a:x} {b:x} {c:x} {e:x}"),
                ));
            }
        }
        "read-huge" => {
            // Asks for far more than any budget allows.
            let many: Vec<String> = (0..200_000).map(|_| paths[0].clone()).collect();
            let results = files::read_many(&many, u32::MAX);
            let ok = results.iter().filter(|r| r.is_ok()).count();
            d.infos.push(info("read-huge ok", ok.to_string()));
        }
        "wasi-fs" => {
            for p in &paths {
                let v = match std::fs::read(p) {
                    Ok(b) => format!("read {} bytes", b.len()),
                    Err(e) => format!("error: {e}"),
                };
                d.infos.push(info(format!("wasi {p}"), v));
                let v = match std::fs::write(format!("{p}.wloc-hostile"), b"x") {
                    Ok(()) => "wrote".to_string(),
                    Err(e) => format!("error: {e}"),
                };
                d.infos.push(info(format!("wasi write {p}"), v));
            }
        }
        "env" => {
            let vars: Vec<String> = std::env::vars().map(|(k, _)| k).collect();
            d.infos.push(info("env", vars.join(",")));
            let args: Vec<String> = std::env::args().collect();
            d.infos.push(info("args", args.join(",")));
        }
        other => return Err(format!("unknown mode {other:?}")),
    }
    Ok(d)
}

component!(discover);
