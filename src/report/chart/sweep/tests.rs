//! Unit tests of the parent module, kept apart so that the module reads as its code.

use super::*;

#[test]
fn the_success_share_is_a_percentage_of_the_logical_requests() {
    let s = StrategySummary {
        requests: 200.0,
        succeeded: 150.0,
        ..Default::default()
    };
    assert_eq!(
        Metric::Succeeded.stat(&s),
        Stat {
            mean: 75.0,
            ci95: 0.0
        }
    );
    let none = StrategySummary::default();
    assert!(Metric::Succeeded.stat(&none).mean.is_nan());
}

#[test]
fn a_linear_axis_starts_at_zero_unless_the_values_sit_far_from_it() {
    // Client counts 10 .. 100: from 0, as Brooker draws them.
    assert_eq!(linear_range(10.0, 100.0), 0.0..103.6);
    // A cut ending between 35 s and 45 s: around the values.
    assert_eq!(linear_range(35.0, 45.0), 34.6..45.4);
    // One value, and values below zero.
    assert_eq!(linear_range(5.0, 5.0), 4.5..5.5);
    assert_eq!(linear_range(-2.0, 8.0), -2.4..8.4);
}

#[test]
fn swept_labels_read_as_numbers_or_seconds() {
    assert_eq!(numeric("200"), Some((200.0, false)));
    assert_eq!(numeric("0.5"), Some((0.5, false)));
    assert_eq!(numeric("250ms"), Some((0.25, true)));
    assert_eq!(numeric("down"), None);
    // Labels keep the file's text: TOML's other ways of writing numbers read too.
    assert_eq!(numeric("1_000"), Some((1000.0, false)));
    assert_eq!(numeric("0x10"), Some((16.0, false)));
    assert_eq!(numeric("0o7"), Some((7.0, false)));
    assert_eq!(numeric("2.5e3"), Some((2500.0, false)));
    assert_eq!(numeric("+1"), Some((1.0, false)));
}
