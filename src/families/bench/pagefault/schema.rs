//! First touch of a page.
//! Its section of the schema: its parameters, metric and detail names, ids.

crate::data::schema_core::family!("pagefault");
/// No parameters.
pub type Params = crate::data::schema_core::NoParams;
/// Cycles per 4 KiB page.
pub const PER_PAGE: &str = "per_page";
pub const ANON: &str = "anon";
pub const FILE: &str = "file";
pub const ANON_THP: &str = "anon-thp";
pub const ANON_HUGETLB: &str = "anon-hugetlb";
