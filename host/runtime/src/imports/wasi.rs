//! The WASI subset Rust's standard library imports (I/O streams, clocks,
//! random numbers, the command-line environment and the filesystem
//! types), linked with the run's empty WASI context (see
//! [`HostState`]): no environment, arguments or preopened directory.
//! Never sockets: a component that imports them is refused when it is
//! loaded.  The list of what is linked here is `WASI_LINKED` of
//! `wloc_trust::grant`, which refuses any other WASI import first.

use wasmtime::component::{HasData, Linker, ResourceTable};
use wasmtime_wasi::cli::{WasiCli, WasiCliView as _};
use wasmtime_wasi::clocks::{WasiClocks, WasiClocksView as _};
use wasmtime_wasi::filesystem::{WasiFilesystem, WasiFilesystemView as _};
use wasmtime_wasi::random::WasiRandom;
use wasmtime_wasi::{WasiCtxView, WasiView};

use crate::state::HostState;

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

struct HasIo;

impl HasData for HasIo {
    type Data<'a> = &'a mut ResourceTable;
}

/// Links the WASI interfaces above.
pub(crate) fn link(l: &mut Linker<HostState>) -> wasmtime::Result<()> {
    use wasmtime_wasi::p2::bindings::{cli, clocks, filesystem, random, sync};
    type T = HostState;
    sync::io::error::add_to_linker::<T, HasIo>(l, |t| &mut t.table)?;
    sync::io::poll::add_to_linker::<T, HasIo>(l, |t| &mut t.table)?;
    sync::io::streams::add_to_linker::<T, HasIo>(l, |t| &mut t.table)?;
    clocks::wall_clock::add_to_linker::<T, WasiClocks>(l, T::clocks)?;
    clocks::monotonic_clock::add_to_linker::<T, WasiClocks>(l, T::clocks)?;
    random::random::add_to_linker::<T, WasiRandom>(l, |t| t.wasi.random())?;
    random::insecure::add_to_linker::<T, WasiRandom>(l, |t| t.wasi.random())?;
    random::insecure_seed::add_to_linker::<T, WasiRandom>(l, |t| t.wasi.random())?;
    cli::exit::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::environment::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::stdin::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::stdout::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::stderr::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::terminal_input::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::terminal_output::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::terminal_stdin::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::terminal_stdout::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::terminal_stderr::add_to_linker::<T, WasiCli>(l, T::cli)?;
    filesystem::preopens::add_to_linker::<T, WasiFilesystem>(l, T::filesystem)?;
    sync::filesystem::types::add_to_linker::<T, WasiFilesystem>(l, T::filesystem)?;
    Ok(())
}
