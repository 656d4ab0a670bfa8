//! The pagefault family's headline in a run's summary (its tables are the
//! lmbench and hermit-basic tables' rows, `published/`).

use crate::families::bench::schema::pagefault;
use crate::tables::tabular::headline::{Headline, Headlines, Pick, headline};

/// The summary's headline: the first touch of a page.
pub struct PagefaultHeadline;

impl Headlines for PagefaultHeadline {
    fn headlines<'a>(&self, pick: Pick<'a>) -> Vec<Headline<'a>> {
        headline("first touch of a page (anonymous)", pick.one(pagefault::id(pagefault::ANON), pagefault::PER_PAGE)).into_iter().collect()
    }
}
