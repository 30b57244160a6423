//! Pictures of a topology with lstopo's layout.
//!
//! [`layout`] places every object the way hwloc 2.9's lstopo does
//! (`utils/lstopo/lstopo-draw.c`): box sizes from the font and grid sizes,
//! memory above the CPU children, I/O and Misc to the right, runs of
//! identical children factorized, children packed in a 4:3 rectangle.  The
//! result is one [`Scene`] of boxes, lines and texts in drawing order, which
//! each backend renders: [`svg`] (lstopo's native SVG), [`ascii`] (its text
//! art), [`png`] (the SVG rasterized by resvg) and [`html`] (the SVG in an
//! interactive page).

pub mod ascii;
pub mod fig;
pub mod html;
mod labels;
mod layout;
pub mod png;
pub mod svg;
pub mod tikz;

pub use layout::{layout, pci_collapsing};

use wloc_core::ObjId;

/// An RGB colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Color {
    /// Red.
    pub r: u8,
    /// Green.
    pub g: u8,
    /// Blue.
    pub b: u8,
}

impl Color {
    /// A colour from its components.
    pub const fn rgb(r: u8, g: u8, b: u8) -> Self {
        Color { r, g, b }
    }
    const fn grey(x: u8) -> Self {
        Color { r: x, g: x, b: x }
    }
    const WHITE: Color = Color::grey(0xff);
    const BLACK: Color = Color::grey(0);
}

/// The colours of the boxes, as lstopo's palettes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Palette {
    /// Legend background and text on dark backgrounds.
    pub white: Color,
    /// Text on light backgrounds and legend text.
    pub black: Color,
    /// Machine boxes.
    pub machine: Color,
    /// Group boxes outside packages.
    pub group: Color,
    /// Package boxes.
    pub package: Color,
    /// Group boxes inside packages.
    pub group_in_package: Color,
    /// Die boxes.
    pub die: Color,
    /// Core boxes.
    pub core: Color,
    /// PU boxes.
    pub pu: Color,
    /// NUMA node boxes.
    pub numanode: Color,
    /// The box around several memory children.
    pub memories: Color,
    /// Cache boxes.
    pub cache: Color,
    /// PCI device boxes.
    pub pcidev: Color,
    /// OS device boxes.
    pub osdev: Color,
    /// Bridge squares.
    pub bridge: Color,
    /// Misc boxes.
    pub misc: Color,
    /// Bound PUs and NUMA nodes.
    pub binding: Color,
    /// Disallowed PUs and NUMA nodes.
    pub disallowed: Color,
    /// Process Misc objects.
    pub process: Color,
}

// lstopo's epoxy greens: each darker shade is 100/110 of the previous one.
const EPOXY: (u8, u8, u8) = (0xe7, 0xff, 0xb5);
const fn darker(c: u8) -> u8 {
    ((c as u32 * 100) / 110) as u8
}
const EPOXY_GREY: u8 = ((EPOXY.0 as u32 + EPOXY.1 as u32 + EPOXY.2 as u32) / 3) as u8;

impl Palette {
    /// The colours in the order lstopo declares them to its backends
    /// (the Xfig and TikZ writers define them in this order).
    pub fn in_declaration_order(&self) -> [Color; 19] {
        [
            self.white,
            self.black,
            self.machine,
            self.group,
            self.package,
            self.group_in_package,
            self.die,
            self.core,
            self.pu,
            self.numanode,
            self.memories,
            self.cache,
            self.pcidev,
            self.osdev,
            self.bridge,
            self.misc,
            self.binding,
            self.disallowed,
            self.process,
        ]
    }

    /// lstopo's default colour palette.
    pub const COLORS: Palette = Palette {
        white: Color::WHITE,
        black: Color::BLACK,
        machine: Color::WHITE,
        group: Color::WHITE,
        package: Color::rgb(darker(EPOXY.0), darker(EPOXY.1), darker(EPOXY.2)),
        group_in_package: Color::rgb(EPOXY.0, EPOXY.1, EPOXY.2),
        die: Color::rgb(EPOXY.0, EPOXY.1, EPOXY.2),
        core: Color::grey(0xbe),
        pu: Color::WHITE,
        numanode: Color::rgb(0xef, 0xdf, 0xde),
        memories: Color::rgb(0xf2, 0xe8, 0xe8),
        cache: Color::WHITE,
        pcidev: Color::rgb(
            darker(darker(EPOXY.0)),
            darker(darker(EPOXY.1)),
            darker(darker(EPOXY.2)),
        ),
        osdev: Color::grey(0xde),
        bridge: Color::WHITE,
        misc: Color::WHITE,
        binding: Color::rgb(0, 0xff, 0),
        disallowed: Color::rgb(0xff, 0, 0),
        process: Color::rgb(0xff, 0xff, 0),
    };

    /// lstopo's grey palette.
    pub const GREY: Palette = Palette {
        package: Color::grey(darker(EPOXY_GREY)),
        group_in_package: Color::grey(EPOXY_GREY),
        die: Color::grey(EPOXY_GREY),
        numanode: Color::grey(0xe4),
        memories: Color::grey(0xe8),
        pcidev: Color::grey(darker(darker(EPOXY_GREY))),
        binding: Color::grey(0xbb),
        disallowed: Color::grey(0x77),
        process: Color::grey(0x99),
        ..Palette::COLORS
    };

    /// lstopo's white palette: every box white.
    pub const WHITE: Palette = Palette {
        white: Color::WHITE,
        black: Color::BLACK,
        machine: Color::WHITE,
        group: Color::WHITE,
        package: Color::WHITE,
        group_in_package: Color::WHITE,
        die: Color::WHITE,
        core: Color::WHITE,
        pu: Color::WHITE,
        numanode: Color::WHITE,
        memories: Color::WHITE,
        cache: Color::WHITE,
        pcidev: Color::WHITE,
        osdev: Color::WHITE,
        bridge: Color::WHITE,
        misc: Color::WHITE,
        binding: Color::WHITE,
        disallowed: Color::WHITE,
        process: Color::WHITE,
    };

    /// The palette named as lstopo's `--palette` names them.
    pub fn by_name(name: &str) -> Option<Palette> {
        match name {
            "grey" | "greyscale" => Some(Palette::GREY),
            "colors" | "default" => Some(Palette::COLORS),
            "white" | "none" => Some(Palette::WHITE),
            _ => None,
        }
    }

    /// Changes one box colour by its lstopo name (`package`, `core`, ...,
    /// case-insensitive); false if the name is unknown.
    pub fn set_by_name(&mut self, name: &str, c: Color) -> bool {
        let slot = match name.to_ascii_lowercase().as_str() {
            "machine" => &mut self.machine,
            "group" => &mut self.group,
            "package" => &mut self.package,
            "group_in_package" => &mut self.group_in_package,
            "die" => &mut self.die,
            "core" => &mut self.core,
            "pu" => &mut self.pu,
            "numanode" => &mut self.numanode,
            "memories" => &mut self.memories,
            "cache" => &mut self.cache,
            "pcidev" => &mut self.pcidev,
            "osdev" => &mut self.osdev,
            "bridge" => &mut self.bridge,
            "misc" => &mut self.misc,
            _ => return false,
        };
        *slot = c;
        true
    }
}

/// How children are arranged inside their parent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Orient {
    /// lstopo's choice (a rectangle unless something forces a line).
    None,
    /// One row.
    Horiz,
    /// One column.
    Vert,
    /// A rectangle close to 4:3.
    Rect,
}

/// Which indexes the labels show (lstopo's `-l`, `-p`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexType {
    /// Logical and physical for PUs and NUMA nodes, logical for packages,
    /// dies and cores.
    Default,
    /// Logical indexes only.
    Logical,
    /// Physical (OS) indexes only.
    Physical,
}

/// Which legend lines are drawn below the topology.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Legend {
    /// Host name, index type, date, then the custom lines.
    All,
    /// No legend at all (`--no-legend`).
    None,
    /// Only the custom lines (`--no-default-legend`).
    NoDefault,
}

/// Children kinds, as lstopo's `LSTOPO_CHILD_KIND_*` bits.
pub(crate) const KIND_NORMAL: u8 = 1;
pub(crate) const KIND_MEMORY: u8 = 2;
pub(crate) const KIND_IO: u8 = 4;
pub(crate) const KIND_MISC: u8 = 8;
pub(crate) const KIND_ALL: u8 = 15;

/// Where lstopo puts the children of each kind (`--children-order`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChildrenOrder {
    /// Memory children above the CPU children.
    pub memory_above: bool,
    /// I/O children on the right.
    pub io_right: bool,
    /// I/O children below.
    pub io_below: bool,
    /// Misc children on the right.
    pub misc_right: bool,
    /// Misc children below.
    pub misc_below: bool,
}

impl Default for ChildrenOrder {
    fn default() -> Self {
        ChildrenOrder {
            memory_above: true,
            io_right: true,
            io_below: false,
            misc_right: true,
            misc_below: false,
        }
    }
}

/// Minimum number of children before factorizing, by default (lstopo's
/// `FACTORIZE_MIN_DEFAULT`).
pub const FACTORIZE_MIN_DEFAULT: u32 = 4;

/// Drawing options, named after lstopo's.
#[derive(Clone, Debug)]
pub struct DrawOptions {
    /// Font size (`--fontsize`, 10).
    pub fontsize: u32,
    /// Margin between boxes (`--gridsize`, 7).
    pub gridsize: u32,
    /// Spacing between text lines (`--linespacing`, 4).
    pub linespacing: u32,
    /// Box and line thickness (`--thickness`, 1).
    pub thickness: u32,
    /// Which indexes the labels show.
    pub index_type: IndexType,
    /// Legend lines.
    pub legend: Legend,
    /// Lines appended to the legend (`--append-legend`).
    pub legend_append: Vec<String>,
    /// The date line of the legend, without `Date: ` (`None` leaves it out).
    pub date: Option<String>,
    /// This machine's host name, for the legend when the topology is this
    /// system and carries no `HostName` info.
    pub hostname: Option<String>,
    /// Box colours.
    pub palette: Palette,
    /// Arrangement of the children of each object type, indexed by
    /// [`wloc_core::ObjType::index`].
    pub force_orient: [Orient; 20],
    /// Arrangement of the right-hand (I/O, Misc) children, if forced.
    pub right_force_orient: Orient,
    /// Arrangement of the children below, if forced.
    pub below_force_orient: Orient,
    /// Where children of each kind go.
    pub children_order: ChildrenOrder,
    /// Per type: factorize children when a parent has more than this many
    /// (`u32::MAX` disables, `--no-factorize`).
    pub factorize_min: [u32; 20],
    /// Per type: children kept before the dots.
    pub factorize_first: [u32; 20],
    /// Per type: children kept after the dots.
    pub factorize_last: [u32; 20],
    /// Collapse runs of identical PCI devices (`--no-collapse` clears it).
    pub pci_collapse: bool,
    /// Draw the PUs of different CPU kinds with different strokes.
    pub show_cpukinds: bool,
    /// Per type: draw the label text.
    pub show_text: [bool; 20],
    /// Per type: show indexes in labels.
    pub show_indexes: [bool; 20],
    /// Per type: show attributes (sizes) in labels.
    pub show_attrs: [bool; 20],
    /// PUs bound by the process of interest (lstopo's `--pid`), coloured
    /// with the binding colour.
    pub cpu_binding: Option<wloc_core::bitmap::CpuSet>,
    /// NUMA nodes the process of interest is bound to.
    pub mem_binding: Option<wloc_core::bitmap::NodeSet>,
}

/// lstopo's first/last counts for a factorizing minimum.
pub fn factorize_bounds(min: u32) -> (u32, u32) {
    match min {
        0..=2 => (1, 0),
        3 => (1, 1),
        _ => (2, 1),
    }
}

impl Default for DrawOptions {
    fn default() -> Self {
        use wloc_core::ObjType as T;
        let mut force_orient = [Orient::None; 20];
        for t in [
            T::PU,
            T::L1Cache,
            T::L2Cache,
            T::L3Cache,
            T::L4Cache,
            T::L5Cache,
            T::L1ICache,
            T::L2ICache,
            T::L3ICache,
            T::NUMANode,
            T::MemCache,
        ] {
            force_orient[t.index()] = Orient::Horiz;
        }
        let (first, last) = factorize_bounds(FACTORIZE_MIN_DEFAULT);
        DrawOptions {
            fontsize: 10,
            gridsize: 7,
            linespacing: 4,
            thickness: 1,
            index_type: IndexType::Default,
            legend: Legend::All,
            legend_append: Vec::new(),
            date: None,
            hostname: None,
            palette: Palette::COLORS,
            force_orient,
            right_force_orient: Orient::None,
            below_force_orient: Orient::None,
            children_order: ChildrenOrder::default(),
            factorize_min: [FACTORIZE_MIN_DEFAULT; 20],
            factorize_first: [first; 20],
            factorize_last: [last; 20],
            pci_collapse: true,
            show_cpukinds: true,
            show_text: [true; 20],
            show_indexes: [true; 20],
            show_attrs: [true; 20],
            cpu_binding: None,
            mem_binding: None,
        }
    }
}

impl DrawOptions {
    /// Forces one arrangement for the children of every type (`--horiz`,
    /// `--vert`, `--rect`).
    pub fn force_all(&mut self, o: Orient) {
        self.force_orient = [o; 20];
    }

    /// Disables factorizing for every type (`--no-factorize`).
    pub fn no_factorize(&mut self) {
        self.factorize_min = [u32::MAX; 20];
    }
}

/// Which backend measures the text: lstopo's layout depends on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// The native SVG writer: a character is `fontsize*11/9/2` wide.
    Svg,
    /// The text art: grid, font and line spacing are 10, a character is
    /// half a grid cell wide and lines snap to whole cells.
    Ascii,
    /// The Xfig writer: a character is `fontsize*11/10/2` wide.
    Fig,
    /// The LaTeX TikZ writer: a character is `fontsize*13/9*10/22` wide.
    Tikz,
}

/// One thing drawn, in drawing order.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    /// A filled box with a black border.
    Box {
        /// The layer, as lstopo's drawing depth (100 for the root, less
        /// inside it): the Xfig writer stacks items by it.
        depth: u32,
        /// The object it stands for (`None` for the legend).
        obj: Option<ObjId>,
        /// The box number within the object (`_N` suffix of its id).
        id: u32,
        /// Left.
        x: u32,
        /// Top.
        y: u32,
        /// Width.
        width: u32,
        /// Height.
        height: u32,
        /// Fill colour.
        fill: Color,
        /// CPU kind style of the object (0: plain border).
        cpukind_style: u32,
    },
    /// A black line.
    Line {
        /// The layer, as lstopo's drawing depth (100 for the root, less
        /// inside it): the Xfig writer stacks items by it.
        depth: u32,
        /// The object it belongs to.
        obj: Option<ObjId>,
        /// The line number within the object.
        id: u32,
        /// Start x.
        x1: u32,
        /// Start y.
        y1: u32,
        /// End x.
        x2: u32,
        /// End y.
        y2: u32,
    },
    /// A line of text whose top-left corner is (x, y).
    Text {
        /// The layer, as lstopo's drawing depth (100 for the root, less
        /// inside it): the Xfig writer stacks items by it.
        depth: u32,
        /// The object it labels (`None` for the legend).
        obj: Option<ObjId>,
        /// The text number within the object.
        id: u32,
        /// Left.
        x: u32,
        /// Top.
        y: u32,
        /// The text.
        text: String,
        /// Its colour.
        color: Color,
        /// CPU kind style of the object (odd styles are bold).
        cpukind_style: u32,
        /// Whether this is the legend's date line.
        is_date: bool,
    },
}

/// A laid-out picture.
#[derive(Clone, Debug, PartialEq)]
pub struct Scene {
    /// Total width.
    pub width: u32,
    /// Total height.
    pub height: u32,
    /// Font size used for the texts.
    pub fontsize: u32,
    /// Spacing between lines of text.
    pub linespacing: u32,
    /// Box and line thickness.
    pub thickness: u32,
    /// Everything drawn, in order.
    pub items: Vec<Item>,
}

pub use labels::{memory_size, type_name};

/// Formats a time (seconds since the epoch, UTC) as the C locale's `%c`:
/// `Wed Nov 25 15:39:07 2026`.
pub fn c_locale_date(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (h, m, s) = (rem / 3600, (rem / 60) % 60, rem % 60);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let mo = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(mo <= 2);
    let wd = (days + 4).rem_euclid(7) as usize;
    const WD: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    const MO: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{} {} {:>2} {:02}:{:02}:{:02} {}",
        WD[wd],
        MO[(mo - 1) as usize],
        d,
        h,
        m,
        s,
        y
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn palettes_match_lstopo() {
        let p = Palette::COLORS;
        assert_eq!(p.package, Color::rgb(210, 231, 164));
        assert_eq!(p.pcidev, Color::rgb(190, 210, 149));
        assert_eq!(Palette::GREY.package, Color::grey(201));
    }

    #[test]
    fn dates_are_c_locale() {
        assert_eq!(c_locale_date(0), "Thu Jan  1 00:00:00 1970");
        assert_eq!(c_locale_date(1_795_621_147), "Wed Nov 25 15:39:07 2026");
    }
}
