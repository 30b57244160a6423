//! memattrs
