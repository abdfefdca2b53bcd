//! Moving sums and averages over a series of readings.

/// The sum of every run of `width` consecutive values, in order: `values.len() - width + 1`
/// sums, or none when `width` is 0 or more than the number of values.
pub fn window_sums(values: &[i64], width: usize) -> Vec<i64> {
    if width == 0 || width > values.len() {
        return Vec::new();
    }
    let mut sums = Vec::new();
    for start in 0..values.len() - width {
        sums.push(values[start..start + width].iter().sum());
    }
    sums
}

/// The mean of every run of `width` consecutive values (see [`window_sums`]).
pub fn moving_average(values: &[i64], width: usize) -> Vec<f64> {
    window_sums(values, width)
        .into_iter()
        .map(|sum| sum as f64 / width as f64)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_of_pairs() {
        assert_eq!(window_sums(&[1, 2, 3, 4], 2), vec![3, 5, 7]);
    }

    #[test]
    fn no_windows() {
        assert_eq!(window_sums(&[1, 2, 3], 0), Vec::<i64>::new());
        assert_eq!(window_sums(&[1, 2, 3], 4), Vec::<i64>::new());
    }

    #[test]
    fn averages() {
        assert_eq!(moving_average(&[2, 4, 6], 2), vec![3.0, 5.0]);
    }
}
