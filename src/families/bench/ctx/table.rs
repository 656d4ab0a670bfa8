//! The ctx family's headline in a run's summary (its table is the lmbench
//! table's lat_ctx rows, `published/lmbench.rs`).

use crate::families::bench::schema::ctx;
use crate::tables::tabular::headline::{Headline, Headlines, Pick, extreme, headline};

/// The summary's headline: a context switch.
pub struct CtxHeadline;

impl Headlines for CtxHeadline {
    fn headlines<'a>(&self, pick: Pick<'a>) -> Vec<Headline<'a>> {
        headline("context switch (lat_ctx, 2 processes)", extreme(pick.of(ctx::FAMILY), ctx::SWITCH, false)).into_iter().collect()
    }
}
