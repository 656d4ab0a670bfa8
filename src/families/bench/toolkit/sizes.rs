//! Memory sizes the families size their buffers by: the last-level cache,
//! the machine's RAM, and the rule for buffers that must not fit in the
//! cache (lmbench's bw_mem, STREAM's arrays).

/// The last-level cache in bytes, from sysfs (the highest cache level of
/// CPU 0), or None.
pub fn llc_bytes() -> Option<u64> {
    let dir = std::fs::read_dir("/sys/devices/system/cpu/cpu0/cache").ok()?;
    dir.filter_map(|e| {
        let p = e.ok()?.path();
        let level: u32 = std::fs::read_to_string(p.join("level")).ok()?.trim().parse().ok()?;
        let size = parse_size(std::fs::read_to_string(p.join("size")).ok()?.trim())?;
        Some((level, size))
    })
    .max()
    .map(|(_, s)| s)
}

/// "48K", "2048K", "32M" -> bytes.
pub fn parse_size(s: &str) -> Option<u64> {
    let (num, mult) = match s.chars().last()? {
        'K' => (&s[..s.len() - 1], 1 << 10),
        'M' => (&s[..s.len() - 1], 1 << 20),
        'G' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.parse::<u64>().ok().map(|n| n * mult)
}

/// The memory buffers' size: 4x the LLC, at least 64 MiB, at most 1/8 of RAM.
pub fn mem_buffer_bytes(llc: Option<u64>, ram_bytes: u64) -> u64 {
    let want = llc.map_or(256 << 20, |l| 4 * l).max(64 << 20);
    let cap = (ram_bytes / 8).max(64 << 20);
    want.min(cap) / 4096 * 4096
}

/// The machine's RAM in bytes (8 GiB where /proc/meminfo does not say).
pub fn ram_bytes() -> u64 {
    crate::measure::host::meminfo("MemTotal").map_or(8 << 30, |kib| kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_and_buffers_follow_the_rule() {
        assert_eq!(parse_size("48K"), Some(48 << 10));
        assert_eq!(parse_size("32M"), Some(32 << 20));
        assert_eq!(parse_size("x"), None);
        assert_eq!(mem_buffer_bytes(Some(32 << 20), 64 << 30), 128 << 20);
        assert_eq!(mem_buffer_bytes(Some(1 << 20), 64 << 30), 64 << 20);
        assert_eq!(mem_buffer_bytes(Some(8 << 30), 16 << 30), 2 << 30);
    }
}
