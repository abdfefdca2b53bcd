//! Temperature conversions between degrees Celsius and degrees Fahrenheit.

/// Degrees Fahrenheit for `celsius` degrees Celsius.
pub fn to_fahrenheit(celsius: f64) -> f64 {
    celsius * 9.0 / 5.0 - 32.0
}

/// Degrees Celsius for `fahrenheit` degrees Fahrenheit.
pub fn to_celsius(fahrenheit: f64) -> f64 {
    (fahrenheit - 32.0) * 5.0 / 9.0
}

/// A reading in Celsius for display, with one decimal: `21.5 °C`.
pub fn display_celsius(celsius: f64) -> String {
    format!("{celsius:.1} °C")
}
