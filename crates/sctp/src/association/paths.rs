//! The destinations of an association, each under a [`PathId`] that is never reused: a slab
//! of [`Path`]s in which removing an address (a peer restart that no longer lists it; ASCONF
//! later) empties its slot and moves no other path.

use std::fmt;
use std::net::IpAddr;
use std::ops::{Index, IndexMut};

use super::Path;

/// A destination of an association: the order in which the association learned the peer's
/// addresses, never reused. A removed address leaves its id unused, so every other id goes on
/// naming the same address, with its counters, outstanding chunks and timers.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct PathId(u32);

impl PathId {
    /// The id with number `n` (the n-th address learned, from 0).
    pub const fn new(n: u32) -> Self {
        PathId(n)
    }
    /// Its number.
    pub const fn get(self) -> u32 {
        self.0
    }
    /// Its number as an index (slot in [`Paths`], per-path tables).
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

/// Written as its bare number (events and results print paths as numbers).
impl fmt::Debug for PathId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for PathId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

/// The paths of an association by [`PathId`]. Indexing with an id that names no path (never
/// handed out, or removed) panics; the association only indexes with ids it holds, and
/// [`Paths::get`] answers for any id.
#[derive(Debug, Default)]
pub struct Paths {
    slots: Vec<Option<Path>>,
    live: usize,
    /// Bumped by every push, replace and remove (never reset: an association keeps one
    /// `Paths` for its life), so a holder of an earlier value knows whether the set of
    /// paths may have changed without comparing it.
    generation: u64,
}

impl Paths {
    /// No paths.
    pub fn new() -> Self {
        Paths::default()
    }
    /// Number of paths.
    pub fn len(&self) -> usize {
        self.live
    }
    /// True if there is no path.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }
    /// Number of ids handed out so far (removed paths included): every [`PathId`] of this
    /// association has an index below it, so per-path tables can be indexed by
    /// [`PathId::index`].
    pub fn id_bound(&self) -> usize {
        self.slots.len()
    }
    /// Changes whenever a path is added, replaced or removed: equal values mean the same
    /// paths to the same addresses.
    pub fn generation(&self) -> u64 {
        self.generation
    }
    /// The path `id`, if it exists.
    pub fn get(&self, id: PathId) -> Option<&Path> {
        self.slots.get(id.index()).and_then(Option::as_ref)
    }
    /// The path `id`, mutably, if it exists.
    pub fn get_mut(&mut self, id: PathId) -> Option<&mut Path> {
        self.slots.get_mut(id.index()).and_then(Option::as_mut)
    }
    /// True if `id` names a path.
    pub fn contains(&self, id: PathId) -> bool {
        self.get(id).is_some()
    }
    /// The paths with their ids, in id order.
    pub fn iter(&self) -> Iter<'_> {
        Iter(self.slots.iter().enumerate())
    }
    /// The paths with their ids, mutably, in id order.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (PathId, &mut Path)> + '_ {
        self.slots.iter_mut().enumerate().filter_map(|(i, p)| Some((PathId(i as u32), p.as_mut()?)))
    }
    /// The paths, in id order.
    pub fn values(&self) -> impl Iterator<Item = &Path> + '_ {
        self.slots.iter().flatten()
    }
    /// The ids, in order.
    pub fn ids(&self) -> impl Iterator<Item = PathId> + '_ {
        self.iter().map(|(id, _)| id)
    }
    /// The first path's id (the lowest).
    pub fn first(&self) -> Option<PathId> {
        self.ids().next()
    }
    /// The path to `remote`.
    pub fn find(&self, remote: IpAddr) -> Option<PathId> {
        self.iter().find(|(_, p)| p.remote == remote).map(|(id, _)| id)
    }
    /// The other paths, in id order starting after `id` and wrapping around (the order
    /// §6.4 alternates are tried in); `id` itself is not included.
    pub fn after(&self, id: PathId) -> impl Iterator<Item = PathId> + '_ {
        let n = self.slots.len();
        (1..n).map(move |k| PathId(((id.index() + k) % n) as u32)).filter(move |&q| q != id && self.contains(q))
    }
    /// Adds a path under a new id.
    pub(crate) fn push(&mut self, path: Path) -> PathId {
        let id = PathId(self.slots.len() as u32);
        self.slots.push(Some(path));
        self.live += 1;
        self.generation += 1;
        id
    }
    /// Puts `path` in the place of path `id` (which keeps its id); returns the old one.
    pub(crate) fn replace(&mut self, id: PathId, path: Path) -> Option<Path> {
        let slot = self.slots.get_mut(id.index())?;
        let old = slot.replace(path);
        self.generation += 1;
        if old.is_none() {
            self.live += 1;
        }
        old
    }
    /// Removes path `id`; its id is never used again.
    pub(crate) fn remove(&mut self, id: PathId) -> Option<Path> {
        let old = self.slots.get_mut(id.index())?.take();
        if old.is_some() {
            self.live -= 1;
            self.generation += 1;
        }
        old
    }
}

impl<'a> IntoIterator for &'a Paths {
    type Item = (PathId, &'a Path);
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

/// Iterator over the paths of [`Paths`] with their ids, in id order.
#[derive(Clone, Debug)]
pub struct Iter<'a>(std::iter::Enumerate<std::slice::Iter<'a, Option<Path>>>);

impl<'a> Iterator for Iter<'a> {
    type Item = (PathId, &'a Path);
    fn next(&mut self) -> Option<Self::Item> {
        self.0.by_ref().find_map(|(i, p)| Some((PathId(i as u32), p.as_ref()?)))
    }
}

impl Index<PathId> for Paths {
    type Output = Path;
    fn index(&self, id: PathId) -> &Path {
        match self.get(id) {
            Some(p) => p,
            None => panic!("no path {id}"),
        }
    }
}

impl IndexMut<PathId> for Paths {
    fn index_mut(&mut self, id: PathId) -> &mut Path {
        match self.get_mut(id) {
            Some(p) => p,
            None => panic!("no path {id}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn path(last: u8) -> Path {
        Path::new(IpAddr::from([10, 0, 0, last]), &Config::default(), 65_536, 0)
    }

    #[test]
    fn removing_a_path_keeps_every_other_id() {
        let mut paths = Paths::new();
        let ids: Vec<PathId> = (1..=3).map(|i| paths.push(path(i))).collect();
        assert_eq!(ids, vec![PathId::new(0), PathId::new(1), PathId::new(2)]);
        paths[ids[2]].error_count = 7;
        assert!(paths.remove(ids[1]).is_some());
        assert_eq!(paths.len(), 2);
        assert_eq!(paths.id_bound(), 3);
        assert!(!paths.contains(ids[1]));
        assert_eq!(paths.ids().collect::<Vec<_>>(), vec![ids[0], ids[2]]);
        assert_eq!(paths[ids[2]].error_count, 7);
        assert_eq!(paths.find(IpAddr::from([10, 0, 0, 3])), Some(ids[2]));
        // A new address gets a new id, never the removed one.
        assert_eq!(paths.push(path(4)), PathId::new(3));
        assert_eq!(paths.after(ids[2]).collect::<Vec<_>>(), vec![PathId::new(3), ids[0]]);
        assert_eq!(paths.after(ids[1]).collect::<Vec<_>>(), vec![ids[2], PathId::new(3), ids[0]]);
    }

    #[test]
    fn every_change_of_the_paths_changes_the_generation() {
        let mut paths = Paths::new();
        let mut seen = vec![paths.generation()];
        let a = paths.push(path(1));
        seen.push(paths.generation());
        paths[a].error_count = 3; // a path's state is not its identity
        assert_eq!(paths.generation(), seen[1]);
        paths.replace(a, path(2));
        seen.push(paths.generation());
        paths.remove(a);
        seen.push(paths.generation());
        paths.push(path(1));
        seen.push(paths.generation());
        let mut distinct = seen.clone();
        distinct.dedup();
        assert_eq!(distinct, seen, "a generation repeated: {seen:?}");
    }

    #[test]
    fn path_ids_print_as_numbers() {
        assert_eq!(format!("{:?}", Some(PathId::new(2))), "Some(2)");
    }
}
