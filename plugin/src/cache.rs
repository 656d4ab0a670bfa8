//! A set-associative cache with LRU replacement, on line numbers (an
//! address divided by the line size): which accesses miss. Emptied in
//! O(1): every way carries the generation it was filled in, and a way of an
//! older generation is empty.

/// The cache's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    pub size: u64,
    pub ways: u64,
    pub line: u64,
}

impl Geometry {
    /// A typical L1 data cache: 32 KiB, 8-way, 64-byte lines.
    pub const L1D: Geometry = Geometry { size: 32 * 1024, ways: 8, line: 64 };

    /// `SIZE/WAYS/LINE` in bytes, e.g. `32768/8/64`: sizes powers of two,
    /// at least one set, at most 64 MiB.
    pub fn parse(s: &str) -> Option<Geometry> {
        let mut it = s.split('/').map(|p| p.parse::<u64>().ok());
        let g = Geometry { size: it.next()??, ways: it.next()??, line: it.next()?? };
        let ok = it.next().is_none()
            && [g.size, g.ways, g.line].iter().all(|v| v.is_power_of_two())
            && g.size <= 64 << 20
            && g.line >= 4
            && g.size >= g.ways * g.line;
        ok.then_some(g)
    }

    pub fn sets(&self) -> u64 {
        self.size / (self.ways * self.line)
    }
}

#[derive(Clone, Copy)]
struct Way {
    line: u64,
    generation: u32,
    used: u64,
}

pub struct Cache {
    geometry: Geometry,
    ways: Vec<Way>,
    generation: u32,
    clock: u64,
}

impl Cache {
    pub fn new(geometry: Geometry) -> Cache {
        let empty = Way { line: 0, generation: 0, used: 0 };
        Cache { geometry, ways: vec![empty; (geometry.sets() * geometry.ways) as usize], generation: 1, clock: 0 }
    }

    /// Every line out.
    pub fn empty(&mut self) {
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.ways.iter_mut().for_each(|w| w.generation = 0);
            self.generation = 1;
        }
    }

    /// The `size` bytes at `addr` accessed: how many lines were not in the
    /// cache (0, 1, or 2 for an access across a line's end).
    pub fn access(&mut self, addr: u64, size: u64) -> u64 {
        let first = addr / self.geometry.line;
        let last = addr.saturating_add(size.max(1) - 1) / self.geometry.line;
        (first..=last.min(first + 1)).map(|l| u64::from(!self.touch(l))).sum()
    }

    /// Whether line `l` was in the cache; it is now, the most recently used.
    fn touch(&mut self, l: u64) -> bool {
        self.clock += 1;
        let ways = self.geometry.ways as usize;
        let set = (l % self.geometry.sets()) as usize;
        let slots = &mut self.ways[set * ways..(set + 1) * ways];
        let generation = self.generation;
        if let Some(w) = slots.iter_mut().find(|w| w.generation == generation && w.line == l) {
            w.used = self.clock;
            return true;
        }
        let victim =
            slots.iter_mut().min_by_key(|w| if w.generation == generation { w.used } else { 0 }).expect("a cache has at least one way");
        *victim = Way { line: l, generation, used: self.clock };
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometry_is_parsed_and_checked() {
        assert_eq!(Geometry::parse("32768/8/64"), Some(Geometry::L1D));
        assert_eq!(Geometry::L1D.sets(), 64);
        for bad in ["", "32768/8", "32768/8/64/1", "30000/8/64", "512/16/64", "x/8/64"] {
            assert_eq!(Geometry::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn misses_once_per_line_until_evicted_lru() {
        // 2 sets of 2 ways of 64 bytes: lines 0, 2, 4 share set 0.
        let mut c = Cache::new(Geometry { size: 256, ways: 2, line: 64 });
        assert_eq!(c.access(0, 8), 1);
        assert_eq!(c.access(8, 8), 0, "same line");
        assert_eq!(c.access(128, 8), 1);
        assert_eq!(c.access(0, 8), 0);
        assert_eq!(c.access(256, 8), 1, "evicts line 2, the least recently used");
        assert_eq!(c.access(0, 8), 0);
        assert_eq!(c.access(128, 8), 1);
        assert_eq!(c.access(60, 8), 1, "across into line 1");
        c.empty();
        assert_eq!(c.access(0, 1), 1, "emptied");
        assert_eq!(c.access(64, 1), 1);
    }
}
