use super::*;

#[test]
fn integers_are_range_checked_never_truncated() {
    assert_eq!(parse_int(b" 42\n", Variant::Int16), Ok(42));
    assert_eq!(parse_int(b"+7", Variant::Int64), Ok(7));
    assert_eq!(parse_int(b"-32768", Variant::Int16), Ok(-32768));
    let e = parse_int(b"32768", Variant::Int16).unwrap_err();
    assert!(e.contains("32768") && e.contains("Int16"), "{e}");
    let e = parse_int(b"2147483648", Variant::Int32).unwrap_err();
    assert!(e.contains("2147483648") && e.contains("Int32"), "{e}");
    assert_eq!(
        parse_int(b"9223372036854775807", Variant::Int64),
        Ok(i64::MAX)
    );
    let e = parse_int(b"9223372036854775808", Variant::Int64).unwrap_err();
    assert!(e.contains("out of range"), "{e}");
    let e = parse_int(b"1.5", Variant::Int64).unwrap_err();
    assert!(e.contains("'1.5' is not an integer"), "{e}");
    assert!(parse_int(b"", Variant::Int64).is_err());
}

#[test]
fn utf8_flag_modes() {
    assert_eq!(utf8_flag(b"plain", Utf8Mode::Auto), Ok(false));
    assert_eq!(utf8_flag("caf\u{e9}".as_bytes(), Utf8Mode::Auto), Ok(true));
    assert_eq!(utf8_flag(b"caf\xe9", Utf8Mode::Auto), Ok(false));
    assert_eq!(utf8_flag(b"plain", Utf8Mode::Always), Ok(true));
    assert!(utf8_flag(b"caf\xe9", Utf8Mode::Always).is_err());
    assert_eq!(
        utf8_flag("caf\u{e9}".as_bytes(), Utf8Mode::Never),
        Ok(false)
    );
}

#[test]
fn json_is_escaped() {
    assert_eq!(json_string("a\"b\\c\n\u{1}"), "\"a\\\"b\\\\c\\n\\u0001\"");
    let s = Stats {
        size: 1,
        capacity: 2,
        ..Stats::default()
    };
    let j = stats_json(Path::new("/t/q"), Variant::Int16, &s);
    assert!(j.starts_with("{\"path\":\"/t/q\",\"type\":\"Int16\",\"size\":1,\"capacity\":2,"));
    assert!(!j.contains("arena"));
    assert!(stats_json(Path::new("q"), Variant::Str, &s).contains("\"compressed_saved\":0}"));
}

#[test]
fn watch_rates_come_from_deltas() {
    let a = Stats {
        push_ok: 10,
        pop_ok: 5,
        capacity: 8,
        ..Stats::default()
    };
    let b = Stats {
        push_ok: 30,
        pop_ok: 5,
        size: 3,
        capacity: 8,
        pop_waiters: 2,
        ..Stats::default()
    };
    let l = watch_line(&a, &b, 2.0, Variant::Int64);
    assert_eq!(l, "size 3/8  push/s 10.0  pop/s 0.0  waiting: push 0 pop 2");
}

#[test]
fn lossy_raw_and_nul_output() {
    let mut v = Vec::new();
    let plain = OutArgs {
        null: false,
        raw: false,
    };
    write_item(&mut v, &Got::Str, b"a\xffb", plain).unwrap();
    write_item(&mut v, &Got::Int(-3), b"", plain).unwrap();
    assert_eq!(v, "a\u{fffd}b\n-3\n".as_bytes());
    let mut v = Vec::new();
    let raw = OutArgs {
        null: false,
        raw: true,
    };
    write_item(&mut v, &Got::Str, b"a\xff\n", raw).unwrap();
    assert_eq!(v, b"a\xff\n");
    let mut v = Vec::new();
    let nul = OutArgs {
        null: true,
        raw: false,
    };
    write_item(&mut v, &Got::Str, b"x\xff", nul).unwrap();
    write_item(&mut v, &Got::Int(5), b"", nul).unwrap();
    assert_eq!(v, b"x\xff\x005\x00");
}

#[test]
fn dead_items_print_and_escape() {
    let q = AnyQueue::anonymous(Variant::Str, 8, 4096).unwrap();
    let d = DeadItem {
        seq: 4,
        deliveries: 3,
        reason: data_queue_shared::lease::DEAD_HOLDER_DIED,
        when_ns: 1_500_000_000,
        value: 4,
        stored: 8,
    };
    assert_eq!(dead_value_text(&q, &d, b"a\tb\n\\"), "a\\tb\\n\\\\");
    assert_eq!(
        dead_json(&q, &d, b"x\"", true),
        "{\"seq\":4,\"deliveries\":3,\"reason\":\"holder died\",\"when\":1.500000,\
         \"value\":\"x\\\"\",\"utf8\":true}"
    );
    let i = AnyQueue::anonymous(Variant::Int64, 8, 0).unwrap();
    let d = DeadItem { value: -7, ..d };
    assert_eq!(dead_value_text(&i, &d, b""), "-7");
    assert!(dead_json(&i, &d, b"", false).ends_with("\"value\":-7}"));
    assert_eq!(local_time(0).len(), "1970-01-01 00:00:00.000".len());
}

#[test]
fn work_counters_in_order() {
    let q = AnyQueue::anonymous(Variant::Int64, 8, 0).unwrap();
    let names: Vec<_> = q.lease_fields().into_iter().map(|(k, _)| k).collect();
    let at = names.iter().position(|k| *k == "max_deliveries").unwrap();
    assert_eq!(
        names[at..],
        [
            "max_deliveries",
            "max_dead",
            "delivered",
            "dead",
            "buried",
            "kicked",
            "drained",
            "delayed",
            "touched",
            "dead_full",
            "dead_items"
        ]
    );
}
