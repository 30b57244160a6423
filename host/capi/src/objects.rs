//! objects
