use ordinals::{ordinal, suffix};

#[test]
fn up_to_ten() {
    let got: Vec<String> = (1..=4).map(ordinal).collect();
    assert_eq!(got, ["1st", "2nd", "3rd", "4th"]);
    assert_eq!(ordinal(10), "10th");
}

#[test]
fn teens() {
    assert_eq!(ordinal(11), "11th");
    assert_eq!(ordinal(12), "12th");
    assert_eq!(ordinal(13), "13th");
}

#[test]
fn twenties() {
    assert_eq!(suffix(21), "st");
    assert_eq!(suffix(22), "nd");
    assert_eq!(suffix(23), "rd");
}
