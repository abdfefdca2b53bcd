use thermo::{display_celsius, to_celsius, to_fahrenheit};

#[test]
fn freezing_point() {
    assert_eq!(to_fahrenheit(0.0), 32.0);
    assert_eq!(to_celsius(32.0), 0.0);
}

#[test]
fn boiling_point() {
    assert_eq!(to_fahrenheit(100.0), 212.0);
    assert_eq!(to_celsius(212.0), 100.0);
}

#[test]
fn display() {
    assert_eq!(display_celsius(21.54), "21.5 °C");
}
