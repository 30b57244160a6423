//! Output to the serial port.
//!
//! Text goes through the firmware's Serial I/O protocol as raw bytes, so
//! long lines reach the other end unchanged (the text console would wrap
//! them at its width and add escape sequences).  Without a serial port,
//! the text console is used.

use alloc::vec::Vec;
use core::fmt;

use uefi::boot::{self, ScopedProtocol};
use uefi::proto::console::serial::Serial;

/// A line-buffered writer to the first serial port.
pub struct SerialOut {
    port: Option<ScopedProtocol<Serial>>,
    buf: Vec<u8>,
}

impl SerialOut {
    /// Opens the first serial port the firmware knows.  Opening it
    /// exclusively detaches the firmware's terminal from it, so that
    /// nothing else writes in the middle of the output.
    pub fn open() -> SerialOut {
        let port = boot::get_handle_for_protocol::<Serial>()
            .ok()
            .and_then(|h| boot::open_protocol_exclusive::<Serial>(h).ok());
        SerialOut {
            port,
            buf: Vec::new(),
        }
    }

    /// Sends what is buffered.
    pub fn flush(&mut self) {
        if self.buf.is_empty() {
            return;
        }
        match &mut self.port {
            Some(p) => {
                // A serial port that times out loses the text; there is
                // nowhere else to report that.
                let _ = p.write_exact(&self.buf);
            }
            None => {
                if let Ok(s) = core::str::from_utf8(&self.buf) {
                    uefi::print!("{s}");
                }
            }
        }
        self.buf.clear();
    }
}

impl fmt::Write for SerialOut {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for &b in s.as_bytes() {
            if b == b'\n' {
                // Terminals expect CR LF.
                self.buf.push(b'\r');
                self.buf.push(b'\n');
                self.flush();
            } else {
                self.buf.push(b);
            }
        }
        Ok(())
    }
}
