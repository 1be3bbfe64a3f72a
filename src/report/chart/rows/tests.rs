use super::*;
use crate::report::chart::INK;

fn bar(value: f64, label: &str) -> Item {
    Item::Bar {
        value,
        ci: 0.0,
        color: INK,
        alpha: 1.0,
        label: label.into(),
    }
}

#[test]
fn a_log_axis_says_so_under_it_and_a_linear_one_does_not() {
    let mut panel = Panel {
        caption: String::new(),
        axis: "calls per run".into(),
        unit: String::new(),
        scale: Scale::Log,
        reference: None,
        items: Vec::new(),
    };
    assert_eq!(panel.axis_desc(), "calls per run (log)");
    for scale in [Scale::Linear, Scale::Share, Scale::Diverging] {
        panel.scale = scale;
        assert_eq!(panel.axis_desc(), "calls per run");
    }
}

#[test]
fn the_axis_leaves_room_for_every_label_after_its_bar() {
    let panel = Panel {
        caption: String::new(),
        axis: String::new(),
        unit: String::new(),
        scale: Scale::Linear,
        reference: None,
        items: vec![
            vec![bar(80_671.0, "80 671 = 8.07x")],
            vec![bar(208.0, "208 = 0.02x")],
            vec![bar(50_000.0, "50 000 = 5.00x")],
        ],
    };
    let axis = fit_axis(&panel, 100.0, 400.0);
    for item in panel.items.iter().flatten() {
        let end = axis.px(item.end()) as f64 + LABEL_GAP as f64 + text_width(item.label(), TICK);
        assert!(end <= 401.0, "{}: ends at {end}", item.label());
    }
    // The same on a log axis, which starts at the power of ten below the least value.
    let log = Panel {
        scale: Scale::Log,
        ..panel.clone()
    };
    let axis = fit_axis(&log, 100.0, 400.0);
    assert!(axis.log && axis.lo == 100.0, "{axis:?}");
    assert!(axis.hi < 100_000.0, "{axis:?}");
    for item in log.items.iter().flatten() {
        let end = axis.px(item.end()) as f64 + LABEL_GAP as f64 + text_width(item.label(), TICK);
        assert!(end <= 401.0, "{}: ends at {end}", item.label());
    }
}

#[test]
fn ticks_are_round_and_inside() {
    assert_eq!(
        nice_ticks(0.0, 100.0, 5),
        [0.0, 20.0, 40.0, 60.0, 80.0, 100.0]
    );
    assert_eq!(nice_ticks(0.0, 9.0, 4), [0.0, 5.0]);
    assert_eq!(nice_ticks(0.0, 9.0, 5), [0.0, 2.0, 4.0, 6.0, 8.0]);
    assert_eq!(nice_ticks(-30.0, 12.0, 5), [-30.0, -20.0, -10.0, 0.0, 10.0]);
}
