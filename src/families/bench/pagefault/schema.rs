//! First touch of a page.
//! Its section of the schema: its parameters, metric and detail names, ids.

crate::data::schema_core::family!("pagefault");
pub use crate::measure::scratch::FileWrites;

crate::data::schema_core::params! {
    /// A pagefault case: the file kind says how its file was written; the others have no parameters.
    Params {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        file_writes: Option<FileWrites>,
    }
}
/// Cycles per 4 KiB page.
pub const PER_PAGE: &str = "per_page";
pub const ANON: &str = "anon";
pub const FILE: &str = "file";
pub const ANON_THP: &str = "anon-thp";
pub const ANON_HUGETLB: &str = "anon-hugetlb";
