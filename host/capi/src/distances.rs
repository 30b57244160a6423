//! distances
