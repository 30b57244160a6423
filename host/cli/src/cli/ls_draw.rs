//! The drawing options of `wloc ls` (lstopo's) and the pictures it writes:
//! SVG, text art, PNG, an interactive HTML page, Xfig and LaTeX TikZ.

use clap::Args;
use wloc_core::{ObjType, Topology};
use wloc_draw::{Backend, Color, DrawOptions, IndexType, Legend, Orient, Palette};

/// The largest font, grid, line spacing and thickness accepted.
const MAX_SIZE: u32 = 1000;

/// lstopo's drawing options.
#[derive(Args, Debug, Default)]
pub struct DrawArgs {
    /// Remove all text legend lines at the bottom.
    #[arg(long)]
    no_legend: bool,
    /// Remove the default legend lines (host, indexes, date) at the bottom.
    #[arg(long)]
    no_default_legend: bool,
    /// Append a line of text at the bottom of the legend.
    #[arg(
        long = "append-legend",
        value_name = "TEXT",
        allow_hyphen_values = true
    )]
    append_legend: Vec<String>,
    /// Lay children out horizontally (all types, or =TYPE,... only).
    #[arg(long, value_name = "TYPES", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    horiz: Option<String>,
    /// Lay children out vertically (all types, or =TYPE,... only).
    #[arg(long, value_name = "TYPES", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    vert: Option<String>,
    /// Lay children out in rectangles (all types, or =TYPE,... only).
    #[arg(long, value_name = "TYPES", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    rect: Option<String>,
    /// Do not factorize identical objects (all types, or =TYPE only).
    #[arg(long, value_name = "TYPE", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    no_factorize: Option<String>,
    /// Factorize identical objects: =[TYPE,]N[,F[,L]] sets the minimum count N and how many first and last to keep.
    #[arg(long, value_name = "SPEC", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    factorize: Option<String>,
    /// Colour palette: grey, colors, white, or NAME=#RRGGBB to change one colour (repeatable, in order).
    #[arg(long, value_name = "PALETTE")]
    palette: Vec<String>,
    /// Use the grey palette.
    #[arg(long, visible_alias = "greyscale")]
    grey: bool,
    /// Font size of the text (10).
    #[arg(long, value_name = "N")]
    fontsize: Option<u32>,
    /// Margin between boxes (7).
    #[arg(long, value_name = "N")]
    gridsize: Option<u32>,
    /// Spacing between lines of text (4).
    #[arg(long, value_name = "N")]
    linespacing: Option<u32>,
    /// Thickness of lines and box borders (1).
    #[arg(long, value_name = "N")]
    thickness: Option<u32>,
    /// Do not show CPU kinds (different borders for different kinds of PUs).
    #[arg(long)]
    no_cpukinds: bool,
    /// Remove the text of all boxes (or of =TYPE,... only).
    #[arg(long, value_name = "TYPES", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    no_text: Option<String>,
    /// Remove the indexes from labels (or of =TYPE,... only).
    #[arg(long, value_name = "TYPES", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    no_index: Option<String>,
    /// Remove the attributes (sizes) from labels (or of =TYPE,... only).
    #[arg(long, value_name = "TYPES", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    no_attrs: Option<String>,
    /// Show the processes and threads bound to part of this machine
    /// (lstopo's option): as Misc objects below the objects they are bound
    /// to (every user's, as lstopo), or listed in the HTML page (`--of
    /// html`: only the current user's).  `--uid` chooses the user.
    #[arg(long = "ps", visible_alias = "top")]
    ps: bool,
    /// With --ps: only the processes of the user with this uid, or of all
    /// users with `all` (default: the current user), as `wloc ps --uid`.
    #[arg(long, value_name = "UID", requires = "ps")]
    uid: Option<String>,
}

/// lstopo's `--top` outside the HTML page: the processes and threads of
/// this machine bound to part of it are added to the topology as Misc
/// objects, as lstopo does: those of every user unless `--uid` names one.
/// Nothing is added to a topology that is not this machine's.
pub fn add_processes(a: &DrawArgs, topo: &mut Topology) -> super::Result {
    if !a.ps || !topo.is_thissystem {
        return Ok(());
    }
    let uid = match a.uid.as_deref() {
        None => None,
        Some(u) => wloc::processes::parse_uid(u)?,
    };
    let tasks = wloc::processes::top_tasks(topo, uid);
    Ok(wloc::processes::insert_top_tasks(topo, &tasks)?)
}

/// The processes the HTML page lists: none unless `--ps` asks, and then
/// those bound to part of this machine of one user (the current one
/// unless `--uid` names another, or `all`).  Command lines say what
/// others run: the page is a file that may travel, so nothing by default.
fn processes(a: &DrawArgs, topo: &Topology) -> super::Result<Vec<wloc_draw::html::Process>> {
    if !a.ps || !topo.is_thissystem {
        return Ok(Vec::new());
    }
    let uid = match a.uid.as_deref() {
        None => Some(wloc::processes::current_uid()),
        Some(u) => wloc::processes::parse_uid(u)?,
    };
    let mut procs = wloc::processes::bound_processes(topo);
    if let Some(uid) = uid {
        procs.retain(|p| wloc::processes::owned_by(p.pid, uid));
    }
    Ok(procs)
}

/// Parses a comma-separated list of types for per-type options; empty
/// means every type.
fn types_of(option: &str, list: &str) -> super::Result<Vec<ObjType>> {
    if list.is_empty() {
        return Ok(ObjType::ALL.to_vec());
    }
    list.split(',')
        .map(|t| {
            ObjType::parse(t)
                .ok_or_else(|| format!("unknown object type '{t}' in --{option}={list}").into())
        })
        .collect()
}

fn parse_color(spec: &str, hex: &str) -> super::Result<Color> {
    let v = u32::from_str_radix(hex, 16)
        .map_err(|_| format!("invalid colour '#{hex}' in --palette {spec} (expected #RRGGBB)"))?;
    if v > 0xff_ffff {
        return Err(
            format!("invalid colour '#{hex}' in --palette {spec} (expected #RRGGBB)").into(),
        );
    }
    Ok(Color::rgb((v >> 16) as u8, (v >> 8) as u8, v as u8))
}

/// The drawing options from the command line.
pub fn options(
    a: &DrawArgs,
    logical: bool,
    physical: bool,
    collapse: bool,
    topo: &Topology,
) -> super::Result<DrawOptions> {
    let index_type = if logical {
        IndexType::Logical
    } else if physical {
        IndexType::Physical
    } else {
        IndexType::Default
    };
    let legend = if a.no_legend {
        Legend::None
    } else if a.no_default_legend {
        Legend::NoDefault
    } else {
        Legend::All
    };
    let mut o = DrawOptions {
        index_type,
        legend,
        legend_append: a.append_legend.clone(),
        ..DrawOptions::default()
    };
    let secs = match std::env::var("SOURCE_DATE_EPOCH") {
        Ok(s) => s
            .trim()
            .parse::<i64>()
            .map_err(|_| format!("invalid SOURCE_DATE_EPOCH '{s}' (expected seconds)"))?,
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0),
    };
    o.date = Some(wloc_draw::c_locale_date(secs));
    if topo.is_thissystem {
        o.hostname = wloc::slurm::this_hostname();
    }
    for (opt, val, orient) in [
        ("horiz", &a.horiz, Orient::Horiz),
        ("vert", &a.vert, Orient::Vert),
        ("rect", &a.rect, Orient::Rect),
    ] {
        if let Some(list) = val {
            for t in types_of(opt, list)? {
                o.force_orient[t.index()] = orient;
            }
        }
    }
    if let Some(spec) = &a.factorize {
        factorize(&mut o, spec)?;
    }
    if let Some(list) = &a.no_factorize {
        for t in types_of("no-factorize", list)? {
            o.factorize_min[t.index()] = u32::MAX;
        }
    }
    if a.grey {
        o.palette = Palette::GREY;
    }
    for p in &a.palette {
        match p.split_once('=') {
            Some((name, value)) => {
                let hex = value.strip_prefix('#').ok_or_else(|| {
                    format!("invalid --palette {p}: the colour must be written #RRGGBB")
                })?;
                let c = parse_color(p, hex)?;
                if !o.palette.set_by_name(name, c) {
                    return Err(
                        format!("unknown palette colour name '{name}' in --palette {p}").into(),
                    );
                }
            }
            None => {
                o.palette = Palette::by_name(p).ok_or_else(|| {
                    format!("unknown palette '{p}' (expected grey, colors or white)")
                })?;
            }
        }
    }
    // Bounded so that no coordinate of a large topology can overflow.
    for (name, v, slot) in [
        ("fontsize", a.fontsize, &mut o.fontsize),
        ("gridsize", a.gridsize, &mut o.gridsize),
        ("linespacing", a.linespacing, &mut o.linespacing),
        ("thickness", a.thickness, &mut o.thickness),
    ] {
        if let Some(v) = v {
            if v > MAX_SIZE {
                return Err(format!("--{name} {v} is too large (at most {MAX_SIZE})").into());
            }
            *slot = v;
        }
    }
    o.pci_collapse = collapse;
    o.show_cpukinds = !a.no_cpukinds;
    for (opt, val, slot) in [
        ("no-text", &a.no_text, &mut o.show_text),
        ("no-index", &a.no_index, &mut o.show_indexes),
        ("no-attrs", &a.no_attrs, &mut o.show_attrs),
    ] {
        if let Some(list) = val {
            for t in types_of(opt, list)? {
                slot[t.index()] = false;
            }
        }
    }
    Ok(o)
}

/// `--factorize=[TYPE,]N[,F[,L]]`.
fn factorize(o: &mut DrawOptions, spec: &str) -> super::Result {
    let mut parts: Vec<&str> = spec.split(',').collect();
    let types = match parts.first() {
        Some(first) if !first.is_empty() && !first.starts_with(|c: char| c.is_ascii_digit()) => {
            let t = ObjType::parse(first)
                .ok_or_else(|| format!("unknown object type '{first}' in --factorize={spec}"))?;
            parts.remove(0);
            vec![t]
        }
        _ => ObjType::ALL.to_vec(),
    };
    let num = |s: &str| {
        s.parse::<u32>()
            .map_err(|_| format!("invalid number '{s}' in --factorize={spec}"))
    };
    let parts: Vec<&str> = parts.into_iter().filter(|p| !p.is_empty()).collect();
    for t in types {
        let i = t.index();
        let min = match parts.first() {
            Some(s) => num(s)?,
            None => wloc_draw::FACTORIZE_MIN_DEFAULT,
        };
        let (mut first, mut last) = wloc_draw::factorize_bounds(min);
        if let Some(s) = parts.get(1) {
            first = num(s)?;
        }
        if let Some(s) = parts.get(2) {
            last = num(s)?;
        }
        o.factorize_min[i] = min;
        o.factorize_first[i] = first;
        o.factorize_last[i] = last;
    }
    Ok(())
}

/// The picture formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Picture {
    /// lstopo's native SVG.
    Svg,
    /// lstopo's text art.
    Ascii,
    /// The SVG rasterized.
    Png,
    /// The SVG in an interactive page.
    Html,
    /// lstopo's Xfig document.
    Fig,
    /// lstopo's LaTeX TikZ document.
    Tikz,
}

/// Draws the topology in a picture format (the HTML page with the
/// processes `a` asks for).
pub fn draw(
    topo: &Topology,
    opts: &DrawOptions,
    what: Picture,
    a: &DrawArgs,
) -> super::Result<Vec<u8>> {
    Ok(match what {
        Picture::Svg => {
            let scene = wloc_draw::layout(topo, opts, Backend::Svg);
            wloc_draw::svg::render(topo, &scene).into_bytes()
        }
        Picture::Ascii => {
            let scene = wloc_draw::layout(topo, opts, Backend::Ascii);
            wloc_draw::ascii::render(&scene, wloc_draw::ascii::locale_is_utf8()).into_bytes()
        }
        Picture::Fig => {
            let scene = wloc_draw::layout(topo, opts, Backend::Fig);
            wloc_draw::fig::render(topo, &scene, &opts.palette).into_bytes()
        }
        Picture::Tikz => {
            let env = std::env::var("LSTOPO_TIKZ_FONTFAMILY").ok();
            let family = wloc_draw::tikz::font_family(env.as_deref()).ok_or_else(|| {
                format!(
                    "invalid LSTOPO_TIKZ_FONTFAMILY={}: the only accepted values are rm, sf and tt",
                    env.as_deref().unwrap_or_default()
                )
            })?;
            let scene = wloc_draw::layout(topo, opts, Backend::Tikz);
            wloc_draw::tikz::render(&scene, &opts.palette, family).into_bytes()
        }
        Picture::Png => {
            let scene = wloc_draw::layout(topo, opts, Backend::Svg);
            wloc_draw::png::render(topo, &scene)?
        }
        Picture::Html => {
            let scene = wloc_draw::layout(topo, opts, Backend::Svg);
            let root = topo.obj(topo.root());
            let host = topo
                .infos
                .iter()
                .chain(root.infos.iter())
                .find(|i| i.name == "HostName")
                .map(|i| i.value.clone())
                .or_else(|| opts.hostname.clone());
            let title = match host {
                Some(h) => format!("wloc: {h}"),
                None => "wloc: topology".to_string(),
            };
            let procs = processes(a, topo)?;
            wloc_draw::html::render(topo, &scene, &title, &procs).into_bytes()
        }
    })
}
