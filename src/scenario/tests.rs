//! Unit tests of the parent module, kept apart so that the module reads as its code.

use super::*;
use toml_errors::without_keys_refused_in;

#[test]
fn scenario_hash_is_sha256_in_hex() {
    assert_eq!(
        scenario_hash("", []),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    assert_eq!(
        scenario_hash("abc", []),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
}

#[test]
fn scenario_hash_covers_each_trace_after_a_nul() {
    let (a, b) = (sha256(b"t_s\n1\n"), sha256(b"t_s\n2\n"));
    assert_eq!(
        scenario_hash("abc", [a.as_str()]),
        sha256(format!("abc\0{a}").as_bytes())
    );
    assert_eq!(
        scenario_hash("abc", [a.as_str(), b.as_str()]),
        sha256(format!("abc\0{a}\0{b}").as_bytes())
    );
    assert_ne!(
        scenario_hash("abc", [a.as_str()]),
        scenario_hash("abc", [b.as_str()])
    );
}

#[test]
fn line_col_counts_from_one() {
    let src = "a = 1\nbb = 2\n";
    assert_eq!(line_col(src, 0), (1, 1));
    assert_eq!(line_col(src, 6), (2, 1));
    assert_eq!(line_col(src, 9), (2, 4));
}

const OK: &str = "name = \"s\"\n[clients]\ncount = 5\n[network]\n\
        latency = { dist = \"constant\", value = \"1ms\" }\n[server]\nconcurrency = 1\n\
        service = { dist = \"constant\", value = \"1ms\" }\n[retry]\nmax_attempts = 2\n\
        [[strategy]]\nname = \"a\"\nbase = \"1ms\"\ncap = \"1s\"\n\
        [[strategy]]\nname = \"b\"\nbase = \"1ms\"\ncap = \"1s\"\n";

fn problems(src: &str) -> Vec<String> {
    match validate("s.toml", src) {
        Ok(_) => panic!("expected problems in:\n{src}"),
        Err(e) => e.0.iter().map(|e| e.to_string()).collect(),
    }
}

#[test]
fn the_fixture_is_valid() {
    let (_, s) = validate("s.toml", OK).expect("valid");
    assert_eq!(s.strategies.len(), 2);
}

#[test]
fn table_at_finds_the_array_element_at_an_offset_and_its_keys() {
    let path = |src, path, offset| table_at(src, path, offset).0;
    let offset = OK.find("name = \"b\"").expect("second strategy");
    assert_eq!(path(OK, "strategy", offset), "strategy[1]");
    let offset = OK.find("name = \"a\"").expect("first strategy");
    assert_eq!(path(OK, "strategy.budget", offset), "strategy[0].budget");
    let src = "outages = [{ start = \"1s\" }, { start = \"2s\", x = 1 }]\n";
    let offset = src.find("x = 1").expect("x");
    assert_eq!(
        table_at(src, "outages", offset),
        (
            "outages[1]".to_string(),
            vec!["start".to_string(), "x".to_string()]
        )
    );
    assert_eq!(
        table_at("not = [toml", "a.b", 3),
        ("a.b".to_string(), Vec::new()),
        "unparsable: unchanged, no keys"
    );
    // The root table's keys for the empty path; none for a path to a value.
    assert_eq!(table_at("a = 1\nb = 2\n", "", 0).1, ["a", "b"]);
    assert!(table_at("a = 1\n", "a", 0).1.is_empty());
}

#[test]
fn every_unknown_key_and_wrong_type_is_reported_not_just_the_first() {
    let src = OK
        .replace("count = 5", "count = 5\ncuont = 6")
        .replace("concurrency = 1", "concurrency = \"one\"")
        .replace("name = \"b\"", "name = \"b\"\nbsae = \"1s\"");
    let p = problems(&src);
    assert_eq!(
        p,
        [
            "s.toml:4:1: clients.cuont: unknown key `cuont` in clients (did you mean `count`?), expected one of `count`, `start`, `start_spread`, `requests`, `think`, `name`, `rate`, `profile`, `process`, `end`, `trace`, `clients`, `retry`",
            "s.toml:8:15: server.concurrency: expected an integer, found a string \"one\"",
            "s.toml:18:1: strategy[1].bsae: unknown key `bsae` in strategy[1] (did you mean `base`?), expected one of `name`, `base`, `cap`, `multiplier`, `increment`, `throttle_base`, `immediate_retries`, `jitter`, `jitter_past_cap`, `max_attempts`, `timeout`, `timeout_multiplier`, `connect_timeout`, `deadline`, `clamp_to_deadline`, `retry_on`, `retry_after`, `rate_limit`, `budget`, `breaker`, `client_rate_limiter`, `fallback_on`",
        ]
    );
}

#[test]
fn blanking_keeps_columns_after_multibyte_text() {
    // The blanked pair holds 2-byte characters; the later error on the same line keeps
    // its column in characters.
    let src = OK.replace(
        "[clients]\ncount = 5\n",
        "clients = { note = \"µµ\", count = 0 }\n",
    );
    let p = problems(&src);
    assert_eq!(p.len(), 2, "{p:?}");
    assert!(
        p[0].starts_with("s.toml:2:13: clients.note: unknown key `note` in clients"),
        "{p:?}"
    );
    assert_eq!(
        p[1],
        "s.toml:2:34: clients.count: expected an integer from 1 to 50000000, found 0"
    );
}

#[test]
fn a_misspelt_distribution_kind_is_not_also_reported_missing() {
    let src = OK.replace(
        "latency = { dist = \"constant\", value = \"1ms\" }",
        "latency = { dist = \"gamma\", value = \"1ms\" }",
    );
    let p = problems(&src);
    assert_eq!(
        p,
        [
            "s.toml:5:20: network.latency.dist: expected one of `constant`, `uniform`, `normal`, `exponential`, `lognormal`, found `gamma`"
        ]
    );
}

#[test]
fn a_wrongly_typed_source_is_not_also_reported_missing() {
    let src = OK.replace("count = 5", "count = \"five\"");
    assert_eq!(
        problems(&src),
        ["s.toml:3:9: clients.count: expected an integer, found a string \"five\""]
    );
}

#[test]
fn a_wrongly_typed_service_is_not_also_a_missing_server() {
    let start = OK.find("[server]").expect("server");
    let end = OK.find("[retry]").expect("retry");
    let src = format!("service = 5\n{}{}", &OK[..start], &OK[end..]);
    assert_eq!(
        problems(&src),
        ["s.toml:1:11: service: expected an array, found the integer 5"]
    );
}

#[test]
fn a_syntax_error_stops_at_the_first() {
    let src = OK
        .replace("count = 5", "count = = 5")
        .replace("cap = \"1s\"", "cap = 1");
    let p = problems(&src);
    assert_eq!(
        p,
        ["s.toml:3:9: TOML syntax: extra `=`, expected nothing, found `= 5`"]
    );
}

/// A key of about 80 dotted parts or more meets the parser's recursion limit, which came
/// with no line and "found the end of the file". The key is found past comments, strings,
/// quoted keys and values whose dots are no parts (helper-107), and inside an inline table.
#[test]
fn a_key_nested_too_deep_is_pointed_at() {
    let deep = |parts: usize| vec!["a"; parts].join(".");
    let dots = vec!["q"; 300].join(".");
    let floats = vec!["1.5"; 200].join(", ");
    for (before, line, col, parts) in [
        (format!("{} = 1\n", deep(100)), 2, 1, 100),
        (format!("{} = 1\n", deep(1000)), 2, 1, 1000),
        (format!("# {dots}\n  {} = 1\n", deep(110)), 3, 3, 110),
        (
            format!("d = \"\"\"\n{dots}\n\"\"\"\n{} = 1\n", deep(110)),
            5,
            1,
            110,
        ),
        (format!("\"{dots}\" = 1\n{} = 1\n", deep(110)), 3, 1, 110),
        (
            format!("v = [\n{floats}\n]\n{} = 1\n", deep(110)),
            5,
            1,
            110,
        ),
        (
            format!("x = {{ b = 1.5, {} = 1 }}\n", deep(110)),
            2,
            16,
            110,
        ),
        (format!("[{}]\nb = 1\n", deep(110)), 2, 2, 110),
        (format!("x = {{\n  {} = 1 }}\n", deep(110)), 3, 3, 110),
    ] {
        let src = OK.replace("[clients]", &format!("{before}[clients]"));
        assert_eq!(
            problems(&src),
            [format!(
                "s.toml:{line}:{col}: TOML syntax: expected a key of a few dotted parts, found one of {parts}, nested deeper than the parser reads"
            )],
            "{before}"
        );
    }
}

#[test]
fn unknown_key_is_reported_with_its_position_and_path() {
    let src = "name = \"x\"\n[clients]\ncount = 5\ncuont = 6\n";
    let errors = parse("s.toml", src).unwrap_err();
    let [err] = &errors.0[..] else {
        panic!("one error: {errors}")
    };
    assert_eq!(err.line, Some(4), "{err}");
    assert!(err.msg.contains("unknown key `cuont`"), "{err}");
    assert!(err.to_string().starts_with("s.toml:4:"), "{err}");
}

/// The list of expected keys offers only keys the table takes: `[server]` shares its type
/// with `[[service]]` but refuses `name`, `calls`, `retry`, `propagate_deadline` and
/// `latency`; a service's `retry` refuses `name` and `fallback_on`.
#[test]
fn an_unknown_key_lists_only_the_keys_its_table_takes() {
    let p = problems(&OK.replace("concurrency = 1", "concurrency = 1\nconcurency = 2"));
    assert_eq!(
        p,
        [
            "s.toml:8:1: server.concurency: unknown key `concurency` in server (did you mean `concurrency`?), expected one of `concurrency`, `queue`, `service`, `outages`, `rate_limit`, `retry_after`, `client_error_rate`, `occ`, `occ_write`, `discipline`, `queue_timeout`, `slowdown`, `capacity`, `autoscale`"
        ]
    );
    assert_eq!(
        without_keys_refused_in(
            "one of `name`, `base`, `fallback_on`",
            " in service[2].retry"
        ),
        "one of `base`"
    );
    for population in [" in clients.retry", " in clients[1].retry"] {
        assert_eq!(
            without_keys_refused_in("one of `name`, `base`, `fallback_on`", population),
            "one of `base`, `fallback_on`"
        );
    }
    assert_eq!(
        without_keys_refused_in("one of `name`, `base`, `fallback_on`", " in retry"),
        "one of `base`, `fallback_on`"
    );
    assert_eq!(
        without_keys_refused_in("one of `name`, `base`", " in strategy[0]"),
        "one of `name`, `base`"
    );
}

#[test]
fn the_starter_is_named_after_its_file() {
    let name_for = |file: &str| {
        let text = starter(std::path::Path::new(file));
        let line = text
            .lines()
            .find(|l| l.starts_with("name = "))
            .expect("a name line")
            .to_string();
        line.split('"').nth(1).expect("quoted").to_string()
    };
    assert_eq!(name_for("Checkout API.toml"), "checkout-api");
    assert_eq!(name_for("dir/peak.v2.toml"), "peak-v2");
    assert_eq!(name_for("archive.v2"), "archive");
    assert_eq!(name_for("plain"), "plain");
    // A hidden file's dots do not become a leading `-`; `.toml` alone has no stem.
    assert_eq!(name_for(".toml"), "scenario");
    assert_eq!(name_for(".hidden.toml"), "hidden");
    assert_eq!(name_for(".hidden"), "hidden");
    assert_eq!(name_for("-"), "scenario");
}

#[test]
fn a_table_written_as_an_array_of_tables_is_said_so_at_its_header() {
    let text = "name = \"x\"\n[clients]\ncount = 1\n[[server]]\nconcurrency = 1\n[[server]]\nconcurrency = 2\n[[network]]\nlatency = { dist = \"constant\", value = \"1ms\" }\n";
    let errors = validate("x.toml", text).unwrap_err().0;
    let shown: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
    assert_eq!(
        shown,
        [
            "x.toml:4:1: server: expected one table `[server]`, found an array of tables `[[server]]` (2 of them): write its header `[server]`, once",
            "x.toml:8:1: network: expected one table `[network]`, found an array of tables `[[network]]` (1 of them): write its header `[network]`, once",
        ]
    );
}
