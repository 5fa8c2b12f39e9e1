//! Fuzz target: any text as a scenario file. Parsing and validation must return a scenario or
//! errors, never panic; a valid scenario's warnings, load timeline and TOML form must be
//! computable too.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(scenario) = scenario::parse_str(text, Path::new("fuzz.toml")) {
        let _ = scenario::warnings(&scenario);
        let _ = scenario::load_timeline(&scenario);
        let _ = scenario::to_toml(&scenario);
    }
});
