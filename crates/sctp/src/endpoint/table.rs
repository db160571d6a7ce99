//! The associations of an endpoint, and which of them the driver's polls must look at.
//!
//! An endpoint is polled after every input for packets, events and its earliest timer. An
//! association has something new for those polls only after a mutable access (a packet, a
//! timeout, an application command), so the table marks each association it hands out
//! mutably and the polls visit only the marked ones: a server with many associations pays
//! per packet for the one the packet went to, not for all of them. The earliest timer of
//! every association is kept apart, so the endpoint's earliest is found without asking each.

use simtime::Instant;

use super::{AssocId, IndexKeys};
use crate::association::Association;

/// The association may have a packet to send ([`Association::poll_transmit`]).
pub(super) const MAY_TRANSMIT: u8 = 1;
/// The association may have an event ([`Association::poll_event`]).
pub(super) const MAY_HAVE_EVENT: u8 = 2;
/// The association's earliest timer may have changed ([`Association::poll_timeout`]).
pub(super) const TIMER_STALE: u8 = 4;
/// The association may have a message to read ([`Association::read`]).
pub(super) const MAY_READ: u8 = 8;
/// Everything a mutable access may change.
pub(super) const ALL: u8 = MAY_TRANSMIT | MAY_HAVE_EVENT | TIMER_STALE | MAY_READ;

/// No timer (in [`AssocTable`]'s timer array).
const NO_TIMER: u64 = u64::MAX;

/// The associations of an endpoint, in creation order: a vector sorted by id (ids only grow,
/// so a new one goes at the end), each with the keys it is indexed under. Looked up on every
/// packet and application call; a binary search over a few entries is far cheaper than a
/// tree's node walk or a hash, and an endpoint holds few associations compared with the
/// packets it handles. Removal (a finished association) is rare and shifts the rest.
#[derive(Debug)]
pub(super) struct AssocTable {
    entries: Vec<AssocEntry>,
    /// The ids of the entries with marks, ascending: the polls go through them in id order,
    /// as a scan of every association would.
    marked: Vec<AssocId>,
    /// Each entry's earliest timer as last looked at, in nanoseconds ([`NO_TIMER`]: none), by
    /// position: apart from the (large) entries, so finding the earliest reads one array.
    timers: Vec<u64>,
    /// The least of `timers`, unless `earliest_stale`.
    earliest: u64,
    /// An entry's timer that was the earliest moved later or left.
    earliest_stale: bool,
}

impl Default for AssocTable {
    fn default() -> Self {
        AssocTable {
            entries: Vec::new(),
            marked: Vec::new(),
            timers: Vec::new(),
            earliest: NO_TIMER,
            earliest_stale: false,
        }
    }
}

/// One association of an [`AssocTable`].
#[derive(Debug)]
pub(super) struct AssocEntry {
    pub(super) id: AssocId,
    pub(super) assoc: Association,
    /// What it is indexed under in the demultiplexing maps while it is live.
    pub(super) keys: Option<IndexKeys>,
    /// What the polls must look at ([`MAY_TRANSMIT`], [`MAY_HAVE_EVENT`], [`TIMER_STALE`],
    /// [`MAY_READ`]).
    marks: u8,
}

impl AssocTable {
    /// Where `id` is. Ids are handed out densely and removals are rare, so the entry is
    /// mostly at `id - first id`; otherwise a binary search finds it.
    #[inline(always)]
    fn position(&self, id: AssocId) -> Option<usize> {
        let first = self.entries.first()?.id.0;
        let guess = id.0.wrapping_sub(first) as usize;
        if self.entries.get(guess).is_some_and(|e| e.id == id) {
            return Some(guess);
        }
        self.entries.binary_search_by_key(&id, |e| e.id).ok()
    }

    /// Marks the entry at `i` with everything a mutable access may change.
    #[inline(always)]
    fn mark(&mut self, i: usize) {
        let e = &mut self.entries[i];
        if e.marks == 0 {
            let id = e.id;
            // Mostly the only one, or after the others (ids grow).
            match self.marked.last() {
                Some(&last) if last > id => {
                    let at = self.marked.partition_point(|&m| m < id);
                    self.marked.insert(at, id);
                }
                _ => self.marked.push(id),
            }
        }
        e.marks = ALL;
    }

    #[inline]
    pub(super) fn entry(&self, id: AssocId) -> Option<&AssocEntry> {
        self.position(id).map(|i| &self.entries[i])
    }

    #[inline]
    pub(super) fn get(&self, id: AssocId) -> Option<&Association> {
        self.entry(id).map(|e| &e.assoc)
    }

    /// An association, to change: marked for every poll.
    #[inline(always)]
    pub(super) fn get_mut(&mut self, id: AssocId) -> Option<&mut Association> {
        let i = self.position(id)?;
        self.mark(i);
        Some(&mut self.entries[i].assoc)
    }

    /// An association, for an access that changes nothing the polls look at (handing it a
    /// buffer, taking an event): not marked.
    #[inline(always)]
    pub(super) fn get_mut_unmarked(&mut self, id: AssocId) -> Option<&mut Association> {
        let i = self.position(id)?;
        Some(&mut self.entries[i].assoc)
    }

    /// `f` on association `id`, which is marked for every poll only if `f` finds something
    /// (an access that finds nothing changes nothing: a read of an association with nothing
    /// to read).
    #[inline]
    pub(super) fn get_mut_marking_found<T>(
        &mut self,
        id: AssocId,
        f: impl FnOnce(&mut Association) -> Option<T>,
    ) -> Option<T> {
        let i = self.position(id)?;
        let found = f(&mut self.entries[i].assoc)?;
        self.mark(i);
        Some(found)
    }

    /// Adds `a` under `id`, which is greater than every id present, not yet indexed. It is
    /// marked: a new association has its first packet to send.
    pub(super) fn push(&mut self, id: AssocId, a: Association) {
        debug_assert!(self.entries.last().is_none_or(|e| e.id < id));
        self.entries.push(AssocEntry { id, assoc: a, keys: None, marks: 0 });
        self.timers.push(NO_TIMER);
        self.mark(self.entries.len() - 1);
    }

    pub(super) fn remove(&mut self, id: AssocId) -> Option<Association> {
        let i = self.position(id)?;
        if let Ok(k) = self.marked.binary_search(&id) {
            self.marked.remove(k);
        }
        if self.timers.remove(i) == self.earliest {
            self.earliest_stale = true;
        }
        Some(self.entries.remove(i).assoc)
    }

    pub(super) fn set_keys(&mut self, id: AssocId, keys: IndexKeys) {
        if let Some(i) = self.position(id) {
            self.entries[i].keys = Some(keys);
        }
    }

    pub(super) fn take_keys(&mut self, id: AssocId) -> Option<IndexKeys> {
        self.position(id).and_then(|i| self.entries[i].keys.take())
    }

    /// The indexed associations and their keys, by id.
    pub(super) fn indexed(&self) -> impl Iterator<Item = (AssocId, &IndexKeys)> + '_ {
        self.entries.iter().filter_map(|e| e.keys.as_ref().map(|k| (e.id, k)))
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = (AssocId, &Association)> + '_ {
        self.entries.iter().map(|e| (e.id, &e.assoc))
    }

    /// Every association, to change: all are marked.
    pub(super) fn iter_mut(&mut self) -> impl Iterator<Item = (AssocId, &mut Association)> + '_ {
        for i in 0..self.entries.len() {
            self.mark(i);
        }
        self.entries.iter_mut().map(|e| (e.id, &mut e.assoc))
    }

    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Calls `visit` with the position of each marked entry, in id order, until it returns
    /// `Some`; entries left without marks leave the list.
    fn visit_marked<T>(&mut self, mut visit: impl FnMut(&mut Self, usize) -> Option<T>) -> Option<T> {
        if self.entries.len() == 1 {
            // One association, the common case: it is in the list exactly when it has marks.
            if self.entries[0].marks == 0 {
                return None;
            }
            let found = visit(self, 0);
            if self.entries[0].marks == 0 {
                self.marked.clear();
            }
            return found;
        }
        let mut k = 0;
        while let Some(&id) = self.marked.get(k) {
            let Some(i) = self.position(id) else {
                self.marked.remove(k);
                continue;
            };
            let found = visit(self, i);
            if self.entries[i].marks == 0 {
                self.marked.remove(k);
            } else {
                k += 1;
            }
            if found.is_some() {
                return found;
            }
        }
        None
    }

    /// The first result of `poll` over the associations marked `mark`, in id order. `poll`
    /// says `None` for an association when it has nothing: its mark is then cleared (it has
    /// nothing until its next mutable access). `also` are the marks an association gets
    /// whether or not it had something (what the poll may have changed), `found_also` the
    /// ones it gets only if it had.
    #[inline]
    pub(super) fn poll_marked<T>(
        &mut self,
        mark: u8,
        also: u8,
        found_also: u8,
        mut poll: impl FnMut(&mut Association) -> Option<T>,
    ) -> Option<(AssocId, T)> {
        self.visit_marked(|table, i| {
            let e = &mut table.entries[i];
            if e.marks & mark == 0 {
                return None;
            }
            let found = poll(&mut e.assoc);
            e.marks |= also;
            if found.is_none() {
                e.marks &= !mark;
            } else {
                // Still in `marked`: it kept `mark`.
                e.marks |= found_also;
            }
            found.map(|t| (e.id, t))
        })
    }

    /// Takes the earliest timer of every association whose timer may have changed.
    fn refresh_timers(&mut self) {
        self.visit_marked(|table, i| -> Option<()> {
            let e = &mut table.entries[i];
            if e.marks & TIMER_STALE != 0 {
                e.marks &= !TIMER_STALE;
                let t = e.assoc.poll_timeout().map_or(NO_TIMER, |t| t.0);
                let old = std::mem::replace(&mut table.timers[i], t);
                if t < table.earliest {
                    table.earliest = t;
                } else if old == table.earliest && t != old {
                    table.earliest_stale = true;
                }
            }
            None
        });
    }

    /// The earliest timer of any association.
    pub(super) fn earliest_timer(&mut self) -> Option<Instant> {
        self.refresh_timers();
        if self.earliest_stale {
            self.earliest = self.timers.iter().fold(NO_TIMER, |a, &b| a.min(b));
            self.earliest_stale = false;
        }
        (self.earliest != NO_TIMER).then_some(Instant(self.earliest))
    }

    /// Calls `fire` on every association with a timer due at `now`, in id order (marked:
    /// a timeout changes it).
    pub(super) fn fire_due(&mut self, now: Instant, mut fire: impl FnMut(&mut Association)) {
        if self.earliest_timer().is_none_or(|t| t > now) {
            return;
        }
        for i in 0..self.entries.len() {
            if self.timers[i] <= now.0 {
                self.mark(i);
                fire(&mut self.entries[i].assoc);
            }
        }
    }
}
