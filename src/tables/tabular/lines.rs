//! What a plot of lines is: named series of points, each with its interval,
//! over labelled axes; `report::plot` draws it.

/// A point of a plot: x, the median y and its 95% interval (NaN where
/// there is none).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub x: f64,
    pub y: f64,
    pub lo: f64,
    pub hi: f64,
}

impl Point {
    /// A point without an interval (a figure that has none).
    pub fn bare(x: f64, y: f64) -> Point {
        Point { x, y, lo: f64::NAN, hi: f64::NAN }
    }

    pub(crate) fn has_interval(&self) -> bool {
        self.lo.is_finite() && self.hi.is_finite()
    }
}

/// A plot to draw: labelled axes with units, a caption naming where the
/// numbers come from, and named series of points, each drawn with its
/// interval as an error bar.
#[derive(Debug, Clone)]
pub struct Lines {
    pub title: String,
    pub x_desc: String,
    pub y_desc: String,
    pub log_x: bool,
    pub log_y: bool,
    pub caption: String,
    pub series: Vec<(String, Vec<Point>)>,
    /// The y axis, where several plots share it (None: from the data).
    pub y_range: Option<(f64, f64)>,
}
