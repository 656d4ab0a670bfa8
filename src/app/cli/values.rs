//! The value parsers of the command line (clap's `value_parser`s) and the
//! error they give, which clap prefixes with the option.

use crate::base::named::Named;
use thiserror::Error;

/// A value clap's parsers refuse (clap says which option, then this).
#[derive(Debug, Error)]
pub enum ArgError {
    #[error("'{0}' is not a percentage: use a number above 0, e.g. 5% or 2.5")]
    Percent(String),
    #[error("'{0}' is not KEY=VALUE (a case parameter and its value, e.g. procs=2)")]
    Where(String),
    #[error("'{0}' is not a name: use 1 to 64 letters, digits, '.', '_' or '-' (not starting with '.')")]
    Label(String),
    #[error("'{0}' is neither a number of rounds from 1 to 1000 nor 'auto'")]
    Rounds(String),
    #[error("'{0}' is not a number of minutes (above 0, at most a week)")]
    Budget(String),
    #[error("'{0}' is neither a number of rounds from 5 to 1000 nor 'auto'")]
    Interleave(String),
    #[error("'{0}' is not a percentage above 0 and below 100")]
    Target(String),
    #[error("'{0}' is not a duration in milliseconds between 0 (exclusive) and 60000")]
    Millis(String),
    #[error("'{0}' is not a size: use bytes or a number with K, M or G, at least 1M (e.g. 512M, 2G)")]
    Size(String),
    #[error("'{0}' is not a date: use YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ (e.g. 2026-11-21)")]
    Date(String),
    #[error("'{given}' is not one of: {valid}")]
    OneOf { given: String, valid: String },
}

/// "5%" or "5" (percent) or "0.05"?: percent always, 0 < p < 1000.
pub fn parse_percent(s: &str) -> Result<f64, ArgError> {
    let t = s.trim().trim_end_matches('%');
    match t.parse::<f64>() {
        Ok(v) if v > 0.0 && v < 1000.0 => Ok(v / 100.0),
        _ => Err(ArgError::Percent(s.to_string())),
    }
}

/// `--where KEY=VALUE`: both sides non-empty.
pub fn parse_where(s: &str) -> Result<(String, String), ArgError> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() && !v.trim().is_empty() => Ok((k.trim().to_string(), v.trim().to_string())),
        _ => Err(ArgError::Where(s.to_string())),
    }
}

/// One of a closed list of names (a [`Named`] type), or the sentence that
/// lists them.
pub fn parse_named<T: Named + Clone + Send + Sync + 'static>(s: &str) -> Result<T, ArgError> {
    T::parse(s).ok_or_else(|| ArgError::OneOf { given: s.to_string(), valid: T::names() })
}

/// A label or fleet id: what a run id may hold, at most 64 characters.
pub fn parse_label(s: &str) -> Result<String, ArgError> {
    let ok = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    if s.is_empty() || s.len() > 64 || !s.chars().all(ok) || s.starts_with('.') {
        return Err(ArgError::Label(s.to_string()));
    }
    Ok(s.to_string())
}

/// `--rounds`: a number of rounds, or `auto`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RoundsArg {
    Fixed(usize),
    Auto,
}

pub fn parse_rounds(s: &str) -> Result<RoundsArg, ArgError> {
    if s == "auto" {
        return Ok(RoundsArg::Auto);
    }
    match s.parse::<usize>() {
        Ok(n) if (1..=1000).contains(&n) => Ok(RoundsArg::Fixed(n)),
        _ => Err(ArgError::Rounds(s.to_string())),
    }
}

/// `compare --interleave`: a number of rounds, or until the cells settle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum InterleaveArg {
    Rounds(u32),
    Auto,
}

pub fn parse_interleave(s: &str) -> Result<InterleaveArg, ArgError> {
    if s == "auto" {
        return Ok(InterleaveArg::Auto);
    }
    match s.parse::<u32>() {
        Ok(n) if (5..=1000).contains(&n) => Ok(InterleaveArg::Rounds(n)),
        _ => Err(ArgError::Interleave(s.to_string())),
    }
}

pub fn parse_tsc_hz(s: &str) -> Result<f64, ArgError> {
    match s.parse::<f64>() {
        Ok(hz) if (1e7..=1e11).contains(&hz) => Ok(hz),
        _ => Err(ArgError::OneOf { given: s.to_string(), valid: "a TSC rate in Hz from 1e7 to 1e11".into() }),
    }
}

pub fn parse_budget(s: &str) -> Result<f64, ArgError> {
    match s.parse::<f64>() {
        Ok(m) if m > 0.0 && m <= 7.0 * 24.0 * 60.0 => Ok(m),
        _ => Err(ArgError::Budget(s.to_string())),
    }
}

pub fn parse_target(s: &str) -> Result<f64, ArgError> {
    match s.trim_end_matches('%').parse::<f64>() {
        Ok(p) if p > 0.0 && p < 100.0 => Ok(p),
        _ => Err(ArgError::Target(s.to_string())),
    }
}

pub fn parse_positive_ms(s: &str) -> Result<f64, ArgError> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 60_000.0 => Ok(v),
        _ => Err(ArgError::Millis(s.to_string())),
    }
}

pub fn parse_size_arg(s: &str) -> Result<u64, ArgError> {
    let bad = || ArgError::Size(s.to_string());
    let v = crate::families::bench::toolkit::sizes::parse_size(s.trim()).ok_or_else(bad)?;
    if v < 1 << 20 { Err(bad()) } else { Ok(v) }
}

/// A date, or a date and a UTC time, as runs record them (RFC 3339): the
/// prefix `started_at` is compared with.
pub fn parse_date(s: &str) -> Result<String, ArgError> {
    let bad = || ArgError::Date(s.to_string());
    let b = s.trim().as_bytes();
    let digits = |r: std::ops::Range<usize>| b.get(r).is_some_and(|x| x.iter().all(u8::is_ascii_digit));
    let date_ok = b.len() >= 10 && digits(0..4) && b[4] == b'-' && digits(5..7) && b[7] == b'-' && digits(8..10);
    if !date_ok {
        return Err(bad());
    }
    let num = |r: std::ops::Range<usize>| std::str::from_utf8(&b[r]).ok().and_then(|t| t.parse::<u32>().ok()).unwrap_or(0);
    if !(1..=12).contains(&num(5..7)) || !(1..=31).contains(&num(8..10)) {
        return Err(bad());
    }
    match b.len() {
        10 => Ok(s.trim().to_string()),
        20 if b[10] == b'T' && digits(11..13) && b[13] == b':' && digits(14..16) && b[16] == b':' && digits(17..19) && b[19] == b'Z' => {
            Ok(s.trim().to_string())
        }
        _ => Err(bad()),
    }
}

pub fn split_list(s: &str) -> Vec<String> {
    s.split(',').map(|x| x.trim().to_string()).filter(|x| !x.is_empty()).collect()
}
