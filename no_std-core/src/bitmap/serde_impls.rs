//! Serde support: bitmaps and typed sets as their hwloc string form.

use super::{Bitmap, Set, SetKind};
use core::fmt;
use serde::de::{self, Deserialize, Deserializer, Visitor};
use serde::ser::{Serialize, Serializer};

impl Serialize for Bitmap {
    /// Serializes as the hwloc string form.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

struct BitmapVisitor;

impl Visitor<'_> for BitmapVisitor {
    type Value = Bitmap;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an hwloc bitmap string such as \"0x00000003\" or \"0xf...f\"")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Bitmap, E> {
        Bitmap::parse(v).map_err(E::custom)
    }
}

impl<'de> Deserialize<'de> for Bitmap {
    /// Deserializes from the hwloc string form.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(BitmapVisitor)
    }
}

impl<K: SetKind> Serialize for Set<K> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.bitmap().serialize(serializer)
    }
}

impl<'de, K: SetKind> Deserialize<'de> for Set<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Bitmap::deserialize(deserializer).map(Set::from_bitmap)
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::super::*;
    use alloc::string::ToString;

    #[cfg(feature = "serde")]
    #[test]
    fn serde_from_hwloc_string() {
        use serde::Deserialize;
        use serde::de::value::{Error, StrDeserializer};
        let d = StrDeserializer::<Error>::new("0xf...f,,0x00000001");
        assert_eq!(Bitmap::deserialize(d).unwrap(), list("0,64-"));
        let d = StrDeserializer::<Error>::new("0x00000003");
        assert_eq!(
            NodeSet::deserialize(d).unwrap(),
            NodeSet::from_range(0, Some(1))
        );
        let d = StrDeserializer::<Error>::new("0xg");
        let e = Bitmap::deserialize(d).unwrap_err().to_string();
        assert!(e.contains("unexpected character 'g'"), "{e}");
    }
}
