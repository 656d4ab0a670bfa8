//! UDP sequence accounting.

/// Which datagrams of a measured phase arrived: unique, duplicated, out of
/// order; with the sender's count, the loss.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct SeqTracker {
    seen: Vec<u64>,
    pub unique: u64,
    pub duplicates: u64,
    pub out_of_order: u64,
    highest: Option<u64>,
}

impl SeqTracker {
    pub fn record(&mut self, seq: u64) {
        let (word, bit) = ((seq / 64) as usize, seq % 64);
        if word >= self.seen.len() {
            self.seen.resize(word + 1 + word / 2, 0);
        }
        if self.seen[word] & (1 << bit) != 0 {
            self.duplicates += 1;
            return;
        }
        self.seen[word] |= 1 << bit;
        self.unique += 1;
        if self.highest.is_some_and(|h| seq < h) {
            self.out_of_order += 1;
        }
        self.highest = Some(self.highest.map_or(seq, |h| h.max(seq)));
    }

    /// Datagrams sent but never received.
    pub fn lost(&self, sent: u64) -> u64 {
        sent.saturating_sub(self.unique)
    }
}
