//! What a background load achieved, as a line for people: the noise tables'
//! "load during" column and `oscycles load`'s progress lines (the kit's
//! [`crate::tabular::describe_rates`]).

pub use crate::tabular::describe_rates;
