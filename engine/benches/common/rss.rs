//! The process's memory as Linux reports it, for the benchmarks that measure a peak in a
//! process of their own.

/// `VmRSS` or `VmHWM` of this process, in bytes (0 where `/proc` has none).
pub fn status_bytes(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.trim().strip_suffix("kB")?.trim().parse::<u64>().ok())
        .map_or(0, |kib| kib * 1024)
}
