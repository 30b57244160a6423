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
