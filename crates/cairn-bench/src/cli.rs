//! What the benchmark binaries share: their flags, the machine's load and the CPU they used, and
//! percentiles of their timings.

/// The value after `name` on the command line, or `default`.
pub fn arg(name: &str, default: &str) -> String {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
        .unwrap_or_else(|| default.to_owned())
}

/// Whether `name` is on the command line.
pub fn flag(name: &str) -> bool {
    std::env::args().any(|a| a == name)
}

/// The 1, 5 and 15 minute load averages, as `/proc/loadavg` gives them.
pub fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// CPU seconds (user + system) this process has used so far; NaN where `/proc` is missing.
pub fn cpu_secs() -> f64 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            let rest = s.rsplit_once(')')?.1;
            let f: Vec<&str> = rest.split_whitespace().collect();
            let ticks = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
            Some(ticks / 100.0)
        })
        .unwrap_or(f64::NAN)
}

/// The `p` quantile (0..=1) of `times`, sorting them; NaN when there are none.
pub fn pct(times: &mut [f64], p: f64) -> f64 {
    if times.is_empty() {
        return f64::NAN;
    }
    times.sort_by(f64::total_cmp);
    times[((times.len() as f64 * p) as usize).min(times.len() - 1)]
}

#[cfg(test)]
mod tests {
    use super::pct;

    #[test]
    fn quantiles_of_sorted_and_empty_timings() {
        let mut t = [5.0, 1.0, 4.0, 2.0, 3.0];
        assert_eq!(pct(&mut t, 0.5), 3.0);
        assert_eq!(pct(&mut t, 0.95), 5.0);
        assert!(pct(&mut [], 0.5).is_nan());
    }
}
