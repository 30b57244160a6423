//! linux
