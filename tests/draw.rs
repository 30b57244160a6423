//! `wloc ls --of svg|ascii|png|html|fig|tikz`: pictures with lstopo's layout.
//!
//! The SVG is compared with hwloc 2.14's native SVG writer (its own build, common::hwloc_2_14_tool)
//! (`lstopo-no-graphics --of svg`) element by element, parsed from both
//! documents: every box (id, class, x, y, width, height, fill and stroke),
//! every text (content and position) and every line, and the document
//! size.  The legend's date line is the only thing allowed to differ.  The
//! text art is compared byte for byte, date line aside.  The PNG is checked
//! against the SVG it comes from, and the HTML page in a headless chromium.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;

/// One SVG element as compared: tag, attributes (sorted) and text.
type Element = (String, Vec<(String, String)>, String);

/// The document size and elements of an SVG picture.
fn parse_svg(doc: &str) -> Result<((String, String), Vec<Element>), String> {
    let d = roxmltree::Document::parse(doc).map_err(|e| format!("invalid SVG: {e}"))?;
    let root = d.root_element();
    let size = (
        root.attribute("width").unwrap_or("").to_string(),
        root.attribute("height").unwrap_or("").to_string(),
    );
    let mut items = Vec::new();
    for e in root.children().filter(|n| n.is_element()) {
        let mut attrs: Vec<(String, String)> = e
            .attributes()
            .map(|a| (a.name().to_string(), a.value().to_string()))
            .collect();
        attrs.sort();
        let text = e.text().unwrap_or("").to_string();
        items.push((e.tag_name().name().to_string(), attrs, text));
    }
    Ok((size, items))
}

/// Compares two SVG pictures; the error lists the first differences.
fn compare_svg(expected: &str, actual: &str) -> Result<usize, String> {
    let (es, ei) = parse_svg(expected).map_err(|e| format!("hwloc: {e}"))?;
    let (as_, ai) = parse_svg(actual).map_err(|e| format!("wloc: {e}"))?;
    let mut diffs = Vec::new();
    if es != as_ {
        diffs.push(format!("document size {es:?} != {as_:?}"));
    }
    if ei.len() != ai.len() {
        diffs.push(format!("{} elements != {}", ei.len(), ai.len()));
    }
    for (i, (e, a)) in ei.iter().zip(ai.iter()).enumerate() {
        let date = e.0 == "text" && e.2.starts_with("Date: ") && a.2.starts_with("Date: ");
        let same = if date { e.1 == a.1 } else { e == a };
        if !same {
            diffs.push(format!("element {i}: hwloc {e:?}\n   wloc {a:?}"));
        }
        if diffs.len() > 4 {
            break;
        }
    }
    if diffs.is_empty() {
        Ok(ei.len())
    } else {
        Err(diffs.join("\n "))
    }
}

fn run(cmd: &mut Command) -> Result<Vec<u8>, String> {
    let o = cmd
        .env("LC_ALL", "C")
        .output()
        .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    if !o.status.success() {
        return Err(format!(
            "{cmd:?} failed: {}",
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    Ok(o.stdout)
}

fn hwloc(input: &str, of: &str, opts: &[&str]) -> Result<Vec<u8>, String> {
    let mut c = common::hwloc_2_14_tool("lstopo-no-graphics");
    if !input.is_empty() {
        c.args(["-i", input]);
    }
    run(c.args(["--of", of]).args(opts).arg("-"))
}

fn wloc(input: &str, of: &str, opts: &[&str]) -> Result<Vec<u8>, String> {
    let mut c = Command::new(common::wloc());
    c.arg("ls");
    if !input.is_empty() {
        c.args(["-i", input]);
    }
    run(c.args(["--of", of]).args(opts).arg("-"))
}

/// Compares both tools' SVG for one input and options.
fn svg_case(input: &str, opts: &[&str]) -> Result<usize, String> {
    let h = String::from_utf8(hwloc(input, "svg", opts)?).map_err(|e| e.to_string())?;
    let w = String::from_utf8(wloc(input, "svg", opts)?).map_err(|e| e.to_string())?;
    compare_svg(&h, &w)
}

/// Every XML document of the conformance suite (the XML cases, and the
/// expected topologies of the x86 and Linux cases), rewritten as hwloc 2
/// XML (with every I/O object) so that hwloc 2.9 reads what wloc reads.
fn xml_cases(dir: &Path) -> Vec<(String, PathBuf)> {
    let conf = common::conformance();
    let mut out = Vec::new();
    for folder in ["xml", "x86", "linux"] {
        let mut names: Vec<String> = std::fs::read_dir(conf.join(folder))
            .expect("conformance folder")
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.ends_with(".xml"))
            .collect();
        names.sort();
        for n in names {
            let dst = dir.join(format!("v2-{folder}-{n}"));
            let o = common::export_v2(&conf.join(folder).join(&n), &dst, true);
            assert!(
                o.status.success(),
                "cannot export {folder}/{n} as hwloc 2 XML: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            out.push((n, dst));
        }
    }
    out
}

/// Cases that exercise each layout rule: PCI trees and collapsing, memory
/// above (several NUMA nodes, memory-side caches, CXL), groups, CPU
/// kinds, disallowed PUs, Misc objects.
const REPRESENTATIVE: [&str; 8] = [
    "16-2gr2gr2n2c+misc.xml",
    "16intel64-manyVFs.xml",
    "96em64t-4n4d3ca2co-pci.xml",
    "memorysidecaches.xml",
    "fakecpukinds.xml",
    "irregulargroups-disallowed.xml",
    "cxlmem+dax.v3.xml",
    "nvidiaDGX2.xml",
];

/// The drawing options compared on the representative cases.
const OPTION_SETS: [&[&str]; 20] = [
    &["--no-legend"],
    &["--horiz"],
    &["--vert"],
    &["--rect"],
    &["--no-factorize"],
    &["--factorize=2,1,1"],
    &["--no-collapse"],
    &["--palette", "grey"],
    &["--palette", "white"],
    &["--palette", "core=#ff0000", "--palette", "numanode=#123456"],
    &["--fontsize", "14"],
    &["--gridsize", "3"],
    &["--linespacing", "9", "--thickness", "2"],
    &["--no-io"],
    &["-l"],
    &["-p"],
    &["--append-legend", "first line", "--append-legend", "second"],
    &["--no-default-legend", "--append-legend", "only this"],
    &["--no-attrs", "--no-index=PU,Core"],
    &["--no-text=Core", "--no-cpukinds"],
];

#[test]
fn svg_matches_lstopo_box_for_box_on_every_xml_case() {
    common::require_hwloc();
    let dir = common::TempDir::new("draw-svg");
    let cases = xml_cases(&dir.0);
    let mut bad = Vec::new();
    let mut elements = 0;
    for (name, path) in &cases {
        match svg_case(path.to_str().unwrap(), &[]) {
            Ok(n) => elements += n,
            Err(e) => bad.push(format!("{name}: {e}")),
        }
    }
    println!("{elements} elements compared");
    common::assert_no_differences("svg (xml documents)", cases.len(), &bad, 52);
}

#[test]
fn svg_options_match_lstopo() {
    common::require_hwloc();
    let dir = common::TempDir::new("draw-opts");
    let cases = xml_cases(&dir.0);
    let mut bad = Vec::new();
    let mut count = 0;
    for (name, path) in cases
        .iter()
        .filter(|(n, _)| REPRESENTATIVE.contains(&n.as_str()))
    {
        for opts in OPTION_SETS {
            count += 1;
            if let Err(e) = svg_case(path.to_str().unwrap(), opts) {
                bad.push(format!("{name} {opts:?}: {e}"));
            }
        }
    }
    common::assert_no_differences("svg (options)", count, &bad, REPRESENTATIVE.len() * 20);
}

/// lstopo's Xfig and TikZ documents, byte for byte, on the representative
/// cases and the synthetic topologies; wloc is asked with `-.fig` and
/// `-.tikz` names (standard output in the format the extension gives).
/// wloc escapes `_` in TikZ labels where lstopo leaves it (which LaTeX
/// refuses): that one difference is undone before comparing.
#[test]
fn fig_and_tikz_match_lstopo_byte_for_byte() {
    common::require_hwloc();
    let dir = common::TempDir::new("draw-fig-tikz");
    let cases = xml_cases(&dir.0);
    let inputs: Vec<String> = cases
        .iter()
        .filter(|(n, _)| REPRESENTATIVE.contains(&n.as_str()))
        .map(|(_, p)| p.to_str().unwrap().to_string())
        .chain(SYNTHETIC.iter().map(|s| s.to_string()))
        .collect();
    let mut bad = Vec::new();
    let mut count = 0;
    for input in &inputs {
        for format in ["fig", "tikz"] {
            for opts in [
                &["--no-default-legend"][..],
                &["--no-legend", "--palette", "grey", "-p"],
            ] {
                count += 1;
                let h = hwloc(input, format, opts);
                let mut w = Command::new(common::wloc());
                w.args(["ls", "-i", input])
                    .args(opts)
                    .arg(format!("-.{format}"));
                let (h, w) = match (h, run(&mut w)) {
                    (Ok(h), Ok(w)) => (h, String::from_utf8_lossy(&w).replace("\\_", "_")),
                    (h, w) => {
                        bad.push(format!(
                            "{input} {format} {opts:?}: {:?} {:?}",
                            h.err(),
                            w.err()
                        ));
                        continue;
                    }
                };
                if String::from_utf8_lossy(&h) != w {
                    bad.push(format!("{input} {format} {opts:?}"));
                }
            }
        }
    }
    common::assert_no_differences("fig and tikz", count, &bad, inputs.len() * 4);
}

/// Synthetic topologies: deep, wide (factorized), with NUMA nodes at
/// several levels, dies, groups and caches.
const SYNTHETIC: [&str; 8] = [
    "pack:2 core:2 pu:2",
    "pack:2 l3:1 l2:4 l1:1 core:1 pu:2",
    "numa:2 pack:1 core:12 pu:2",
    "pack:4 [numa] core:8 pu:1",
    "pack:2 die:2 [numa] l3:1 core:6 pu:2",
    "group:3 pack:2 core:5 pu:3",
    "pack:1 core:64 pu:4",
    "group:2 pack:2 [numa] [numa] core:3 pu:1",
];

#[test]
fn svg_matches_lstopo_on_synthetic_topologies() {
    common::require_hwloc();
    let mut bad = Vec::new();
    let mut count = 0;
    for desc in SYNTHETIC {
        for opts in [&[][..], &["--no-factorize", "--vert"], &["-p", "--horiz"]] {
            count += 1;
            if let Err(e) = svg_case(desc, opts) {
                bad.push(format!("'{desc}' {opts:?}: {e}"));
            }
        }
    }
    common::assert_no_differences("svg (synthetic)", count, &bad, SYNTHETIC.len() * 3);
}

#[test]
fn svg_matches_lstopo_on_this_machine() {
    common::require_hwloc();
    // This machine's topology as hwloc sees it, drawn by both: the
    // comparison is about drawing, not discovery (which the conformance
    // tests cover).  Then wloc's own discovery, drawn by both.
    let dir = common::TempDir::new("draw-here");
    let x = dir.0.join("here.xml");
    std::fs::write(
        &x,
        hwloc("", "xml", &[]).expect("hwloc exports this machine"),
    )
    .unwrap();
    let x = x.to_str().unwrap();
    svg_case(x, &[]).unwrap_or_else(|e| panic!("this machine (hwloc's XML): {e}"));
    let w = dir.0.join("wloc.xml");
    std::fs::write(
        &w,
        wloc("", "xml", &["--export-xml-flags", "2"]).expect("wloc exports this machine"),
    )
    .unwrap();
    svg_case(w.to_str().unwrap(), &[]).unwrap_or_else(|e| panic!("this machine (wloc's XML): {e}"));
}

#[test]
fn wloc_svg_is_valid_and_deterministic() {
    let a = wloc("pack:2 core:2 pu:2", "svg", &["--no-legend"]).unwrap();
    let b = wloc("pack:2 core:2 pu:2", "svg", &["--no-legend"]).unwrap();
    assert_eq!(a, b);
    let s = String::from_utf8(a).unwrap();
    // A strict reader takes the viewBox (lstopo writes units there).
    let d = roxmltree::Document::parse(&s).unwrap();
    let vb = d.root_element().attribute("viewBox").unwrap();
    assert!(vb.split(' ').all(|n| n.parse::<u32>().is_ok()), "{vb}");
    // A fixed date makes the legend deterministic too.
    let dated = |_: ()| {
        let o = Command::new(common::wloc())
            .args(["ls", "-i", "pack:1 pu:2", "--of", "svg", "-"])
            .env("SOURCE_DATE_EPOCH", "0")
            .output()
            .unwrap();
        String::from_utf8(o.stdout).unwrap()
    };
    let s = dated(());
    assert!(s.contains(">Date: Thu Jan  1 00:00:00 1970</text>"), "{s}");
    assert_eq!(s, dated(()));
}

#[test]
fn ascii_matches_lstopo_byte_for_byte() {
    common::require_hwloc();
    let dir = common::TempDir::new("draw-ascii");
    let cases = xml_cases(&dir.0);
    let mut bad = Vec::new();
    let mut count = 0;
    let strip = |b: Vec<u8>| -> String {
        String::from_utf8_lossy(&b)
            .lines()
            .filter(|l| !l.contains("Date: "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let inputs: Vec<String> = cases
        .iter()
        .map(|(_, p)| p.to_str().unwrap().to_string())
        .chain(SYNTHETIC.iter().map(|s| s.to_string()))
        .collect();
    for input in &inputs {
        for (locale, opts) in [
            ("C", &[][..]),
            ("C.UTF-8", &["--no-legend"][..]),
            ("C", &["--no-collapse", "-p", "--append-legend", "x"][..]),
        ] {
            count += 1;
            let mut h = common::hwloc_2_14_tool("lstopo-no-graphics");
            h.args(["-i", input, "--of", "ascii"]).args(opts).arg("-");
            let mut w = Command::new(common::wloc());
            w.args(["ls", "-i", input, "--of", "ascii"])
                .args(opts)
                .arg("-");
            let (h, w) = (
                h.env("LC_ALL", locale).output().unwrap(),
                w.env("LC_ALL", locale).output().unwrap(),
            );
            assert!(h.status.success() && w.status.success(), "{input} {opts:?}");
            if locale == "C.UTF-8" && count == 2 {
                assert!(
                    String::from_utf8_lossy(&w.stdout).contains('\u{2500}'),
                    "UTF-8 locales draw with box-drawing characters"
                );
            }
            if strip(h.stdout) != strip(w.stdout) {
                bad.push(format!("{input} {locale} {opts:?}"));
            }
        }
    }
    common::assert_no_differences("ascii", count, &bad, inputs.len() * 3);
}

/// A box of a picture: x, y, width, height, fill.
type PicBox = (u32, u32, u32, u32, [u8; 3]);
/// A rectangle around a text: x, y, width, height.
type TextArea = (u32, u32, u32, u32);

/// The boxes of an SVG picture and the areas of its texts.
fn boxes_and_texts(svg: &str) -> (Vec<PicBox>, Vec<TextArea>) {
    let d = roxmltree::Document::parse(svg).unwrap();
    let num = |n: roxmltree::Node, a: &str| n.attribute(a).unwrap().parse::<u32>().unwrap();
    let mut boxes = Vec::new();
    let mut texts = Vec::new();
    for n in d.root_element().children().filter(|n| n.is_element()) {
        match n.tag_name().name() {
            "rect" => {
                let f = n.attribute("fill").unwrap();
                let rgb: Vec<u8> = f
                    .trim_start_matches("rgb(")
                    .trim_end_matches(')')
                    .split(',')
                    .map(|c| c.parse().unwrap())
                    .collect();
                boxes.push((
                    num(n, "x"),
                    num(n, "y"),
                    num(n, "width"),
                    num(n, "height"),
                    [rgb[0], rgb[1], rgb[2]],
                ));
            }
            "text" => {
                // A generous box around the glyphs, whatever the font.
                let size = 10;
                let len = n.text().unwrap_or("").chars().count() as u32;
                let (x, y) = (num(n, "x"), num(n, "y"));
                texts.push((
                    x.saturating_sub(2),
                    y.saturating_sub(size + 3),
                    len * size + 4,
                    size + 8,
                ));
            }
            _ => {}
        }
    }
    (boxes, texts)
}

#[test]
fn png_has_the_svg_size_and_box_colours() {
    let dir = common::TempDir::new("draw-png");
    let cases = xml_cases(&dir.0);
    let mut checked = 0;
    for (name, path) in cases
        .iter()
        .filter(|(n, _)| REPRESENTATIVE.contains(&n.as_str()))
    {
        let p = path.to_str().unwrap();
        let svg = String::from_utf8(wloc(p, "svg", &[]).unwrap()).unwrap();
        let png_path = dir.0.join(format!("{name}.png"));
        let o = common::run_wloc(["ls", "-i", p, png_path.to_str().unwrap()]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let (w, h, px) = wloc_draw::png::decode(&std::fs::read(&png_path).unwrap()).unwrap();
        let (sw, sh) = {
            let d = roxmltree::Document::parse(&svg).unwrap();
            let r = d.root_element();
            let n = |a: &str| {
                r.attribute(a)
                    .unwrap()
                    .trim_end_matches("px")
                    .parse::<u32>()
                    .unwrap()
            };
            (n("width"), n("height"))
        };
        assert_eq!((w, h), (sw, sh), "{name}: PNG size");
        let (boxes, texts) = boxes_and_texts(&svg);
        for (i, &(x, y, bw, bh, fill)) in boxes.iter().enumerate() {
            let (cx, cy) = (x + bw / 2, y + bh / 2);
            // The colour there is the last box drawn over the centre,
            // unless a border or a text passes near it.
            let near_edge = boxes.iter().any(|&(ox, oy, ow, oh, _)| {
                let inside = cx + 2 >= ox && cx <= ox + ow + 2 && cy + 2 >= oy && cy <= oy + oh + 2;
                let on_edge = cx.abs_diff(ox) <= 2
                    || cx.abs_diff(ox + ow) <= 2
                    || cy.abs_diff(oy) <= 2
                    || cy.abs_diff(oy + oh) <= 2;
                inside && on_edge
            });
            let in_text = texts
                .iter()
                .any(|&(tx, ty, tw, th)| cx >= tx && cx <= tx + tw && cy >= ty && cy <= ty + th);
            if near_edge || in_text {
                continue;
            }
            let top = boxes[i..]
                .iter()
                .rev()
                .find(|&&(ox, oy, ow, oh, _)| cx > ox && cx < ox + ow && cy > oy && cy < oy + oh)
                .map(|b| b.4)
                .unwrap_or(fill);
            let at = ((cy * w + cx) * 4) as usize;
            assert_eq!(
                &px[at..at + 3],
                &top,
                "{name}: box {i} at ({x},{y}) {bw}x{bh}: centre ({cx},{cy})"
            );
            checked += 1;
        }
    }
    println!("{checked} box centres checked");
    assert!(checked > 100, "only {checked} box centres checked");
}

fn chromium(args: &[&str]) -> String {
    let o = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-dev-shm-usage",
        ])
        .args(args)
        .output()
        .expect("chromium runs");
    assert!(
        o.status.success(),
        "chromium {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The text of the element with this id in a dumped DOM.
fn element_text(dom: &str, id: &str) -> String {
    let start = dom
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no #{id} in the page"));
    let open = start + dom[start..].find('>').unwrap() + 1;
    // Good enough for the leaf and table elements the page fills.
    let rest = &dom[open..];
    let mut out = String::new();
    let mut depth = 0i32;
    let mut in_tag = false;
    let mut tag = String::new();
    for c in rest.chars() {
        if in_tag {
            if c == '>' {
                in_tag = false;
                if tag.starts_with('/') {
                    depth -= 1;
                    if depth < 0 {
                        break;
                    }
                } else if !tag.ends_with('/') {
                    depth += 1;
                }
                out.push(' ');
            } else {
                tag.push(c);
            }
        } else if c == '<' {
            in_tag = true;
            tag.clear();
        } else {
            out.push(c);
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn html_page_shows_objects_searches_and_highlights_processes() {
    if let Err(e) = common::require_packages(&[("/usr/bin/chromium", "chromium")]) {
        panic!("{e}");
    }
    let dir = common::TempDir::new("draw-html");
    let input = "pack:2 [numa] l3:1 core:4 pu:2";
    let page = dir.0.join("page.html");
    let o = common::run_wloc(["ls", "-i", input, page.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        !html.contains(" src=") && !html.contains(" href="),
        "self-contained"
    );
    let url = format!("file://{}", page.display());

    // A click on Core L#5 shows its attributes, sets and infos.
    let dom = chromium(&["--dump-dom", &format!("{url}#click=Core_5_rect")]);
    assert_eq!(element_text(&dom, "info-title"), "Core L#5");
    let table = element_text(&dom, "info-table");
    let xml = String::from_utf8(wloc(input, "xml", &[]).unwrap()).unwrap();
    let d = roxmltree::Document::parse_with_options(
        &xml,
        roxmltree::ParsingOptions {
            allow_dtd: true,
            ..Default::default()
        },
    )
    .unwrap();
    let core5 = d
        .descendants()
        .filter(|n| n.attribute("type") == Some("Core"))
        .nth(5)
        .unwrap();
    let cpuset = core5.attribute("cpuset").unwrap();
    assert!(table.contains(&format!("cpuset {cpuset}")), "{table}");
    assert!(table.contains("cpus 10-11"), "{table}");
    assert!(table.contains("nodeset 0x00000002"), "{table}");
    assert!(table.contains("logical index 5"), "{table}");
    assert!(
        dom.contains("class=\"Core selected\""),
        "the clicked box is marked"
    );

    // Searching by type and by type and index.
    let dom = chromium(&["--dump-dom", &format!("{url}#search=l3")]);
    assert!(element_text(&dom, "results").starts_with("2 found (2 drawn)"));
    let dom = chromium(&["--dump-dom", &format!("{url}#search=pu:7")]);
    assert!(element_text(&dom, "results").starts_with("1 found (1 drawn): PU L#7"));
    assert_eq!(dom.matches(" hit\"").count(), 1);

    // A screenshot of the page.
    let shot = dir.0.join("shot.png");
    chromium(&[
        &format!("--screenshot={}", shot.display()),
        "--window-size=1000,700",
        &format!("{url}#click=PU_3_rect"),
    ]);
    let (w, h, _) = wloc_draw::png::decode(&std::fs::read(&shot).unwrap()).unwrap();
    assert_eq!((w, h), (1000, 700));

    // With --ps, a process of this user bound to the first PU of this
    // machine is listed and highlighted by its binding.
    let here = dir.0.join("here.html");
    let mut child = Command::new("taskset")
        .args(["-c", "0", "sleep", "60"])
        .spawn()
        .expect("taskset runs");
    std::thread::sleep(std::time::Duration::from_millis(200));
    let o = common::run_wloc(["ls", "--ps", here.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let cpus = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    if cpus > 1 {
        let dom = chromium(&[
            "--dump-dom",
            &format!("file://{}#pid={}", here.display(), child.id()),
        ]);
        let bound = element_text(&dom, "bound");
        assert!(
            bound.starts_with(&format!("{} sleep bound to PUs 0 (1 drawn)", child.id())),
            "{bound}"
        );
        assert_eq!(dom.matches("class=\"PU bound\"").count(), 1);
    } else {
        println!("one CPU: no process can be bound to part of the machine");
    }
    let _ = child.kill();
    let _ = child.wait();
}
