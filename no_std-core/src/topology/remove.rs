//! Taking objects out of the tree: a single object whose children move up
//! to its parent (as hwloc's `unlink_and_free_single_object`), or a whole
//! subtree.

use alloc::vec;

use super::Topology;
use crate::object::*;

impl Topology {
    /// Unlinks one object, moving its children of every kind into its
    /// parent at its place.  The root cannot be removed this way.
    pub(super) fn remove_single(&mut self, id: ObjId) {
        let Some(parent) = self.obj(id).parent else {
            return;
        };
        let o = self.objs[id].take().expect("live object");
        for &c in o
            .children
            .iter()
            .chain(&o.memory_children)
            .chain(&o.io_children)
            .chain(&o.misc_children)
        {
            self.obj_mut(c).parent = Some(parent);
        }
        let p = self.obj_mut(parent);
        let splice = |list: &mut thin_vec::ThinVec<ObjId>, with: &[ObjId], also_append: bool| {
            if let Some(pos) = list.iter().position(|&x| x == id) {
                list.splice(pos..=pos, with.iter().copied());
            } else if also_append {
                list.extend_from_slice(with);
            }
        };
        match o.obj_type.kind() {
            ObjKind::Normal => {
                splice(&mut p.children, &o.children, true);
                p.memory_children.extend_from_slice(&o.memory_children);
                p.io_children.extend_from_slice(&o.io_children);
                p.misc_children.extend_from_slice(&o.misc_children);
            }
            ObjKind::Memory => {
                splice(&mut p.memory_children, &o.memory_children, true);
                p.misc_children.extend_from_slice(&o.misc_children);
            }
            ObjKind::Io => {
                splice(&mut p.io_children, &o.io_children, true);
                p.misc_children.extend_from_slice(&o.misc_children);
            }
            ObjKind::Misc => {
                splice(&mut p.misc_children, &o.misc_children, true);
            }
        }
        if o.obj_type.kind() == ObjKind::Normal && !o.children.is_empty() {
            // Normal children must stay sorted by their first PU.
            let mut ch = core::mem::take(&mut self.obj_mut(parent).children);
            ch.sort_by(|&a, &b| self.cmp_first(a, b));
            self.obj_mut(parent).children = ch;
        }
    }

    /// Removes an object and everything below it.
    pub fn remove_subtree(&mut self, id: ObjId) {
        if let Some(parent) = self.obj(id).parent {
            let p = self.obj_mut(parent);
            for list in [
                &mut p.children,
                &mut p.memory_children,
                &mut p.io_children,
                &mut p.misc_children,
            ] {
                list.retain(|&x| x != id);
            }
        }
        self.free_subtree(id);
        self.finished = false;
    }

    /// Removes several objects and everything below them, in time linear
    /// in the objects removed and their parents' lists (each parent's
    /// lists are filtered once, however many of its children go).  Ids
    /// below another one of `ids`, repeated, or no longer in the tree are
    /// taken care of.
    pub fn remove_subtrees(&mut self, ids: &[ObjId]) {
        let mut parents = alloc::collections::BTreeSet::new();
        let mut gone = alloc::collections::BTreeSet::new();
        for &id in ids {
            if let Some(o) = self.get(id) {
                if let Some(p) = o.parent {
                    parents.insert(p);
                }
                gone.insert(id);
            }
        }
        for &id in &gone {
            self.free_subtree(id);
        }
        for p in parents {
            // A parent freed with another subtree has no lists to filter.
            if let Some(Some(o)) = self.objs.get_mut(p) {
                for list in [
                    &mut o.children,
                    &mut o.memory_children,
                    &mut o.io_children,
                    &mut o.misc_children,
                ] {
                    list.retain(|x| !gone.contains(x));
                }
            }
        }
        self.finished = false;
    }

    /// Frees an object and everything below it, without touching its
    /// parent's lists (the caller rebuilds them).
    pub(super) fn free_subtree(&mut self, id: ObjId) {
        let mut stack = vec![id];
        while let Some(i) = stack.pop() {
            if let Some(o) = self.objs[i].take() {
                stack.extend(o.children);
                stack.extend(o.memory_children);
                stack.extend(o.io_children);
                stack.extend(o.misc_children);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::object::{ObjType, Object};
    use crate::topology::test_machines::small_machine;

    #[test]
    fn subtrees_go_together_nested_and_repeated() {
        let mut t = small_machine();
        let root = t.root();
        let mut bridges = alloc::vec::Vec::new();
        for _ in 0..3 {
            bridges.push(
                t.insert_by_parent(root, Object::new(ObjType::Bridge, None))
                    .unwrap(),
            );
        }
        let inner = t
            .insert_by_parent(bridges[0], Object::new(ObjType::PCIDevice, None))
            .unwrap();
        let os = t
            .insert_by_parent(inner, Object::new(ObjType::OSDevice, None))
            .unwrap();
        let before = t.ids().count();
        // A nested id, a repeated one and one already gone are harmless.
        t.remove_subtrees(&[inner, bridges[0], bridges[2], bridges[2]]);
        t.remove_subtrees(&[os]);
        assert_eq!(t.ids().count(), before - 4);
        assert_eq!(t.obj(root).io_children(), &[bridges[1]]);
        for gone in [bridges[0], bridges[2], inner, os] {
            assert!(t.get(gone).is_none());
        }
        t.finish().unwrap();
        t.check().unwrap();
    }
}
