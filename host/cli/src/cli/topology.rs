//! The topology options commands share (`-i`, `--if`, `--thissystem`,
//! `--disallowed`, `--restrict`, `--restrict-flags`) and the one place
//! that turns them into a topology: resolved, loaded with the command's
//! filters, marked as this system and restricted.

use clap::Args;
use wloc::tool_flags::{parse_restrict_flags, restrict_topology, split_restrict};
use wloc_core::{Topology, TypeFilter};
use wloc_discovery::Discovery;
use wloc_discovery::input::{self, InputFormat, LoadError, Source};

/// Where the topology comes from: `-i` and `--if`, else the environment
/// (`WLOC_IMAGE`, then `WLOC_XMLFILE`, `HWLOC_SYNTHETIC`, ...), else this
/// machine.
#[derive(Args, Debug, Clone, Default)]
pub struct InputArgs {
    /// Read the topology from an XML file, a topology image, a directory (fsroot or CPUID dump) or a synthetic description.
    #[arg(short = 'i', long = "input", value_name = "INPUT")]
    pub input: Option<String>,
    /// Force the input format: xml, synthetic, fsroot, cpuid or image.
    #[arg(long = "if", visible_alias = "input-format", value_name = "FORMAT", value_parser = parse_input_format)]
    pub input_format: Option<InputFormat>,
}

/// The topology options of the commands that read a topology and act on
/// it as hwloc's tools do.
#[derive(Args, Debug, Clone, Default)]
pub struct TopologyArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Assume the input topology describes the system we run on (also WLOC_THISSYSTEM=1).
    #[arg(long)]
    pub thissystem: bool,
    /// Include objects disallowed by administrative limits.
    #[arg(long, alias = "whole-system")]
    pub disallowed: bool,
    /// Restrict the topology to some PUs, to NUMA nodes (nodeset=SET) or,
    /// in `wloc ls`, to this process's binding (binding).
    #[arg(long, value_name = "[nodeset=]SET|binding")]
    pub restrict: Option<String>,
    /// Restriction flags: a number or hwloc's names (remove_cpuless,
    /// adapt_misc, adapt_io, bynodeset, remove_memless).
    #[arg(long, value_name = "FLAGS")]
    pub restrict_flags: Option<String>,
}

/// The one parser of input format names (`--if`).
pub fn parse_input_format(s: &str) -> Result<InputFormat, UnknownInputFormat> {
    InputFormat::parse(s).ok_or_else(|| UnknownInputFormat(s.to_string()))
}

/// An input format name (`--if`) that is none of wloc's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown input format '{0}' (expected xml, synthetic, fsroot, cpuid or image)")]
pub struct UnknownInputFormat(pub String);

/// An empty topology that keeps every object type, and I/O objects as
/// `io` says.
pub fn keep_all(io: TypeFilter) -> Topology {
    let mut t = Topology::new();
    t.set_all_types_filter(TypeFilter::KeepAll);
    t.set_io_types_filter(io);
    t
}

/// How a command's messages name a load that failed.
#[derive(Clone, Copy, Debug)]
pub enum LoadErrors {
    /// `failed to load topology from INPUT: ...`, INPUT being `-i` or
    /// this name.
    Named(&'static str),
    /// As lstopo: only errors in the input's content (XML, synthetic
    /// description, component) are named so; others are told alone.
    ContentNamed(&'static str),
    /// The loader's message alone.
    Plain,
}

/// How `--restrict-flags` and the flag `nodeset=` implies combine.
#[derive(Clone, Copy, Debug)]
pub enum RestrictFlags {
    /// The flags given replace the implied one (lstopo, hwloc-info).
    Replace,
    /// The flags given are added to the implied one (hwloc-distrib).
    Add,
    /// The command read the flags itself, in order (hwloc-calc).
    Given(wloc_core::RestrictFlags),
}

/// Components chosen for discovery with `--component` and
/// `--components` (`wloc ls`; its `--policy` is the run's [`Discovery`]'s).
#[derive(Clone, Copy, Debug)]
pub struct Components<'a> {
    pub files: &'a [String],
    pub list: Option<&'a str>,
}

/// How a command loads its topology.
pub struct Load<'a> {
    /// An empty topology with the command's filters.
    pub topology: Topology,
    pub errors: LoadErrors,
    pub restrict_flags: RestrictFlags,
    /// `--restrict binding` restricts to this process's binding (lstopo).
    pub restrict_to_binding: bool,
    /// Failed restrictions are not reported.
    pub quiet: bool,
    /// Discovery components other than the input's own (`wloc ls`).
    pub components: Option<Components<'a>>,
    /// This machine may come from the image `wloc service` publishes
    /// (when it is trusted and current), instead of a discovery.
    pub adopt_published: bool,
    /// Changes made to the loaded topology before it is restricted, as
    /// lstopo changes it (`--flags`, `--allow`).
    pub tweak: Option<&'a dyn Fn(&mut Topology) -> super::Result>,
}

impl Load<'_> {
    /// Loading into `topology`, failures told as `errors` says, restriction
    /// flags replacing the implied one.
    pub fn new(topology: Topology, errors: LoadErrors) -> Self {
        Load {
            topology,
            errors,
            restrict_flags: RestrictFlags::Replace,
            restrict_to_binding: false,
            quiet: false,
            components: None,
            adopt_published: true,
            tweak: None,
        }
    }
}

impl TopologyArgs {
    /// Options reading only `input`.
    pub fn from_input(input: InputArgs) -> Self {
        TopologyArgs {
            input,
            ..TopologyArgs::default()
        }
    }

    /// The source `-i` and `--if` (else the environment) name.
    pub fn source(&self) -> super::Result<Source> {
        Ok(
            input::resolve(self.input.input.as_deref(), self.input.input_format)
                .map_err(|e| e.to_string())?,
        )
    }

    /// Resolves the source, then loads it (see [`Self::load_source`]).
    pub fn load(&self, d: &Discovery, how: Load<'_>) -> super::Result<(Topology, Source)> {
        let source = self.source()?;
        let topo = self.load_source(d, &source, how)?;
        Ok((topo, source))
    }

    /// Loads `source` into the command's topology, marks it as this
    /// system (`--thissystem`, `WLOC_THISSYSTEM`) and restricts it
    /// (`--restrict`): every command's topology comes from here.
    pub fn load_source(
        &self,
        d: &Discovery,
        source: &Source,
        how: Load<'_>,
    ) -> super::Result<Topology> {
        Ok(self.load_source_from(d, source, how)?.0)
    }

    /// [`Self::load_source`], also telling whether the topology is the
    /// published one (already annotated by the service that discovered it).
    pub fn load_source_from(
        &self,
        d: &Discovery,
        source: &Source,
        how: Load<'_>,
    ) -> super::Result<(Topology, Origin)> {
        let mut t = how.topology;
        if self.disallowed {
            t.include_disallowed = true;
        }
        let chose_components = how
            .components
            .is_some_and(|c| !c.files.is_empty() || c.list.is_some());
        let published = if how.adopt_published
            && *source == Source::ThisSystem
            && !chose_components
            && !d.names_a_policy()
        {
            wloc_published::adopt(t.clone(), None)
                .map_err(|why| wloc_published::tell_why_not(&why))
                .ok()
        } else {
            None
        };
        let origin = if published.is_some() {
            Origin::Published
        } else {
            Origin::Loaded
        };
        let loaded = match (published, how.components) {
            (Some(p), _) => Ok(p),
            (None, Some(c)) => d.load_with_components(source, t, c.files, c.list),
            (None, None) => d.load(source, t),
        };
        let input = self.input.input.as_deref();
        let named = |name: &str, e: &LoadError| {
            format!(
                "failed to load topology from {}: {e}",
                input.unwrap_or(name)
            )
        };
        let mut topo = loaded.map_err(|e| match how.errors {
            LoadErrors::Named(name) => named(name, &e),
            LoadErrors::ContentNamed(name) => match e {
                LoadError::Xml(_)
                | LoadError::Synthetic(_)
                | LoadError::Component(_)
                | LoadError::Image(_) => named(name, &e),
                other => other.to_string(),
            },
            LoadErrors::Plain => e.to_string(),
        })?;
        if self.thissystem || input::env_var("THISSYSTEM").is_some_and(|v| v != "0") {
            topo.is_thissystem = true;
        }
        if let Some(tweak) = how.tweak {
            tweak(&mut topo)?;
        }
        if let Some(spec) = &self.restrict {
            let given = self.restrict_flags.as_deref().map(parse_restrict_flags);
            if how.restrict_to_binding && spec == "binding" {
                // Only a topology of this system has this process's binding;
                // lstopo keeps the others whole, silently.
                if topo.is_thissystem {
                    let set = wloc_bind::thread_affinity()
                        .map_err(|_| "cannot read this process's binding")?;
                    let set = format!("{set}");
                    restrict_topology(&mut topo, &set, given.unwrap_or_default(), how.quiet);
                }
            } else {
                let (set, implied) = split_restrict(spec);
                let flags = match how.restrict_flags {
                    // --restrict-flags replaces the flag nodeset= implies, as
                    // lstopo does when it comes after --restrict.
                    RestrictFlags::Replace => given.unwrap_or(implied),
                    RestrictFlags::Add => given.unwrap_or_default() | implied,
                    RestrictFlags::Given(f) => f,
                };
                restrict_topology(&mut topo, set, flags, how.quiet);
            }
        }
        Ok((topo, origin))
    }
}

/// Where a command's topology came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Read or discovered as the source says.
    Loaded,
    /// This machine's image, published by `wloc service` and adopted.
    Published,
}

/// Loads an XML topology as hwloc's diff tools do: every object kept,
/// disallowed ones included.
pub fn load_xml(path: &str) -> super::Result<Topology> {
    let mut args = TopologyArgs::from_input(InputArgs {
        input: Some(path.to_string()),
        input_format: Some(InputFormat::Xml),
    });
    args.disallowed = true;
    // XML needs no component: a context of its own, which reads no policy
    // and starts no runtime.
    args.load_source(
        &Discovery::new(None),
        &args.source()?,
        Load::new(keep_all(TypeFilter::KeepAll), LoadErrors::Named("")),
    )
}

/// Whether `text` is an XML topology wloc can load (as `load_xml` loads).
pub fn check_xml(text: &str) -> super::Result {
    Ok(wloc::xml::import_str(text, keep_all(TypeFilter::KeepAll))
        .map(|_| ())
        .map_err(|e| e.to_string())?)
}
