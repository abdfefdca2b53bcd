//! How an amount of USD is written: a cap of $0.005 must not read as $0.01 beside a call of
//! $0.0051 it refuses, so an amount keeps the decimals it has (two at least, six at most).

/// `v` as `$1.50`, `$0.005`, `$0.0051`: at least two decimals, more while they matter.
pub fn usd(v: f64) -> String {
    if !v.is_finite() {
        return format!("${v}");
    }
    let mut decimals = 2;
    while decimals < 6 {
        let scale = 10f64.powi(decimals);
        if ((v * scale).round() / scale - v).abs() < 1e-12 {
            break;
        }
        decimals += 1;
    }
    format!("${v:.prec$}", prec = decimals as usize)
}

#[cfg(test)]
mod tests {
    use super::usd;

    #[test]
    fn an_amount_keeps_the_decimals_that_matter() {
        assert_eq!(usd(3.0), "$3.00");
        assert_eq!(usd(0.5), "$0.50");
        assert_eq!(usd(0.005), "$0.005");
        assert_eq!(usd(0.0051), "$0.0051");
        assert_eq!(usd(0.123_456_789), "$0.123457");
        assert_eq!(usd(100.0), "$100.00");
    }
}
