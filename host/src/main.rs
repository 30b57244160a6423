//! The `wloc` command-line tool.

mod cli;
mod cmd_bind;
mod cmd_calc;
mod cmd_component;
mod cmd_distrib;
mod cmd_gather_topology;
mod cmd_info;
mod cmd_place;
mod cmd_ps;
mod cmd_watch;

fn main() {
    std::process::exit(cli::main());
}
