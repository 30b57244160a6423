//! The `log` import: messages shown on standard error (or captured),
//! rate-limited and escaped.

use std::io::Write;

use wloc_trust::text::sanitize;

use crate::bindings::log;
use crate::options::LogTarget;
use crate::state::HostState;

/// Longest log message shown, in characters.
const LOG_MESSAGE_CHARS: usize = 1000;

impl HostState {
    fn emit(&mut self, line: String) {
        match self.log_target {
            LogTarget::Stderr => {
                let _ = writeln!(std::io::stderr().lock(), "{line}");
            }
            LogTarget::Capture => self.logs.push(line),
            LogTarget::Discard => {}
        }
    }
}

impl log::Host for HostState {
    fn log(&mut self, level: log::Level, message: String) -> wasmtime::Result<()> {
        // Debug messages reach the terminal only on request: they explain
        // ordinary situations (a recording without pci.ids, say).
        if level == log::Level::Debug
            && self.log_target == LogTarget::Stderr
            && wloc_trust::env::var_os("WLOC_COMPONENT_DEBUG")
                .is_none_or(|v| v.is_empty() || v == "0")
        {
            return Ok(());
        }
        self.log_count = self.log_count.saturating_add(1);
        let max = self.limits.max_log_messages;
        if self.log_count > max.saturating_add(1) {
            return Ok(());
        }
        let line = if self.log_count == max.saturating_add(1) {
            format!(
                "wloc: component {}: more than {max} messages; the rest are dropped",
                self.component
            )
        } else {
            let level = match level {
                log::Level::Debug => "debug",
                log::Level::Info => "info",
                log::Level::Warning => "warning",
                log::Level::Error => "error",
            };
            format!(
                "wloc: component {} {level}: {}",
                self.component,
                sanitize(&message, LOG_MESSAGE_CHARS)
            )
        };
        self.emit(line);
        Ok(())
    }
}
