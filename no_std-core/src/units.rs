//! How hwloc writes quantities for people.

use alloc::format;
use alloc::string::String;

/// A memory size the way hwloc prints it: rounded kilobytes in verbose
/// mode, otherwise the largest of KB, MB, GB, TB that keeps at least ten
/// units (`hwloc_memory_size_printf_value`/`_unit`).  The console listing,
/// the pictures and the C library's `hwloc_obj_attr_snprintf` share it.
#[doc(alias = "hwloc_memory_size_printf_value")]
pub fn memory_size(size: u64, verbose: bool) -> String {
    let (shift, unit) = if verbose || size < (10 << 20) {
        (9, "KB")
    } else if size < (10 << 30) {
        (19, "MB")
    } else if size < (10 << 40) {
        (29, "GB")
    } else {
        (39, "TB")
    };
    format!("{}{}", ((size >> shift) + 1) >> 1, unit)
}

#[cfg(test)]
mod tests {
    use super::memory_size;

    #[test]
    fn sizes_round_like_hwloc() {
        assert_eq!(memory_size(0, false), "0KB");
        assert_eq!(memory_size(1535, false), "1KB");
        assert_eq!(memory_size(1536, false), "2KB");
        assert_eq!(memory_size((10 << 20) - 1, false), "10240KB");
        assert_eq!(memory_size(10 << 20, false), "10MB");
        assert_eq!(memory_size(31 << 30, false), "31GB");
        assert_eq!(memory_size(10 << 40, false), "10TB");
        assert_eq!(memory_size(10 << 40, true), "10737418240KB");
    }
}
