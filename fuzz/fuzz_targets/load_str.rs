//! Fuzzes scenario validation: any text must give a scenario or positioned errors, never a
//! panic, and an accepted scenario's memory estimate must be computable.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match herdsim::scenario::sweep::load_str("fuzz.toml", text) {
        Ok(file) => {
            let estimate = herdsim::limits::estimate(&file, 2, true);
            assert!(estimate.runs <= herdsim::limits::MAX_RUNS);
        }
        Err(errors) => {
            let shown = errors.to_string();
            assert!(shown.lines().all(|l| !l.chars().any(herdsim::text::is_unsafe)));
        }
    }
});
