use super::*;

fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
    let v = std::iter::once("dqs")
        .chain(args.iter().copied())
        .map(OsString::from);
    Cli::try_parse_from(normalize_args(v))
}

#[test]
fn the_command_definition_is_consistent() {
    Cli::command().debug_assert();
}

#[test]
fn create_parses_type_capacity_arena_and_mode() {
    let c = parse(&[
        "create",
        "q",
        "--type",
        "str",
        "--capacity",
        "10",
        "--arena",
        "8192",
        "--mode",
        "0660",
    ])
    .unwrap();
    let Cmd::Create(a) = c.cmd else { panic!() };
    assert_eq!(a.qtype, QType::Str);
    assert_eq!((a.capacity, a.arena, a.mode), (10, Some(8192), 0o660));
    let c = parse(&["create", "q", "-t", "int64", "-c", "4"]).unwrap();
    let Cmd::Create(a) = c.cmd else { panic!() };
    assert_eq!((a.qtype, a.mode, a.arena), (QType::Int, 0o600, None));
    assert!(parse(&["create", "q", "--type", "float", "--capacity", "4"]).is_err());
    assert!(parse(&["create", "q", "--type", "int"]).is_err());
    assert!(parse(&["create", "q", "--type", "int", "-c", "4", "--mode", "0999"]).is_err());
    // --wait -1 is a timeout (for ever), not an unknown option.
    for args in [
        &["pop", "q", "--wait", "-1"][..],
        &["pop", "q", "-w", "-1"],
        &["push", "q", "--wait", "-1", "--", "-5"],
    ] {
        let cli = parse(args).unwrap_or_else(|e| panic!("{args:?}: {e}"));
        let wait = match cli.cmd {
            Cmd::Pop(a) => a.wait,
            Cmd::Push(a) => a.wait,
            _ => None,
        };
        assert_eq!(wait, Some(f64::INFINITY), "{args:?}");
    }
}

#[test]
fn push_takes_negative_numbers_and_dash() {
    let c = parse(&["push", "q", "-5", "7", "--wait", "0.5"]).unwrap();
    let Cmd::Push(a) = c.cmd else { panic!() };
    assert_eq!(a.values, ["-5", "7"]);
    assert_eq!(a.wait, Some(0.5));
    let c = parse(&["push", "q", "-", "-0"]).unwrap();
    let Cmd::Push(a) = c.cmd else { panic!() };
    assert_eq!(a.values, ["-"]);
    assert!(a.null);
    let c = parse(&["push", "q", "-0", "-"]).unwrap();
    let Cmd::Push(a) = c.cmd else { panic!() };
    assert_eq!(a.values, ["-"]);
    assert!(a.null);
    let c = parse(&["push", "q", "--", "-x", "-0"]).unwrap();
    let Cmd::Push(a) = c.cmd else { panic!() };
    assert_eq!(a.values, ["-x", "-0"]);
    assert!(!a.null);
    assert!(parse(&["push", "q"]).is_err(), "a value is required");
    assert!(parse(&["push", "q", "a", "--utf8", "--bytes"]).is_err());
}

#[test]
fn pop_options() {
    let c = parse(&["pop", "q", "-n", "3", "-0", "--wait", "inf"]).unwrap();
    let Cmd::Pop(a) = c.cmd else { panic!() };
    assert_eq!((a.n, a.all, a.out.null, a.out.raw), (3, false, true, false));
    assert_eq!(a.wait, Some(f64::INFINITY));
    assert!(parse(&["pop", "q", "-n", "3", "--all"]).is_err());
    assert!(parse(&["pop", "q", "--wait", "NaN"]).is_err());
    assert!(parse(&["pop", "q", "--wait", "soon"]).is_err());
    assert!(parse(&["watch", "q", "--interval", "0"]).is_err());
    let c = parse(&["watch", "q", "--count", "2", "-i", "0.25"]).unwrap();
    let Cmd::Watch(a) = c.cmd else { panic!() };
    assert_eq!((a.count, a.interval), (Some(2), 0.25));
}

#[test]
fn seconds_and_modes() {
    assert_eq!(parse_secs("0"), Ok(0.0));
    assert_eq!(parse_secs("1.5"), Ok(1.5));
    assert_eq!(parse_secs("inf"), Ok(f64::INFINITY));
    assert!(parse_secs("NaN").is_err());
    // Negative: for ever, as a negative timeout in the Perl API.
    assert_eq!(parse_secs("-1"), Ok(f64::INFINITY));
    assert_eq!(parse_secs("-0.1"), Ok(f64::INFINITY));
    assert!(parse_interval("-1").is_err());
    assert_eq!(parse_mode("0660"), Ok(0o660));
    assert_eq!(parse_mode("660"), Ok(0o660));
    assert_eq!(parse_mode("0o755"), Ok(0o755));
    for special in ["4755", "0o4755", "2770", "1777", "7777"] {
        let e = parse_mode(special).unwrap_err();
        assert!(e.contains("setuid, setgid or sticky"), "{special}: {e}");
    }
    assert!(parse_mode("10000").is_err());
    assert!(parse_mode("").is_err());
    assert!(parse_mode("rw").is_err());
}

#[test]
fn usage_errors_become_one_line() {
    let e = parse(&["create", "q", "--type", "int"]).unwrap_err();
    let line = one_line_usage_error(&e.render().to_string(), &Some("create".into()));
    assert!(!line.contains('\n'), "{line}");
    assert!(line.starts_with("dqs create: "), "{line}");
    assert!(line.contains("--capacity"), "{line}");
    let e = parse(&[]).unwrap_err();
    assert_eq!(
        usage_error_line(&e, &None),
        "dqs: missing subcommand (see 'dqs --help')"
    );
}

#[test]
fn work_queue_options_parse() {
    let c = parse(&[
        "create",
        "q",
        "-t",
        "int",
        "-c",
        "8",
        "--max-deliveries",
        "5",
        "--max-dead",
        "0",
    ])
    .unwrap();
    let Cmd::Create(a) = c.cmd else { panic!() };
    assert_eq!((a.max_deliveries, a.max_dead), (Some(5), Some(0)));
    assert!(parse(&["create", "q", "-t", "int", "-c", "8", "--max-dead", "65537"]).is_err());
    assert!(parse(&[
        "create",
        "q",
        "-t",
        "int",
        "-c",
        "8",
        "--max-deliveries",
        "4294967296"
    ])
    .is_err());
    let c = parse(&["push", "q", "--delay", "0.5", "1"]).unwrap();
    let Cmd::Push(a) = c.cmd else { panic!() };
    assert_eq!(a.delay, Some(0.5));
    assert!(parse(&["push", "q", "--delay", "1", "--wait", "1", "1"]).is_err());
    for bad in ["-1", "nan", "inf", "x"] {
        assert!(parse_delay(bad).is_err(), "{bad}");
    }
    assert_eq!(parse_delay("0"), Ok(0.0));
    let c = parse(&["kick", "q", "3"]).unwrap();
    let Cmd::Kick(a) = c.cmd else { panic!() };
    assert_eq!(a.n, Some(3));
    let c = parse(&["kick", "q"]).unwrap();
    let Cmd::Kick(a) = c.cmd else { panic!() };
    assert_eq!(a.n, None);
    assert!(parse(&["kick", "q", "-1"]).is_err());
    let c = parse(&["dead", "q", "--json"]).unwrap();
    let Cmd::Dead(a) = c.cmd else { panic!() };
    assert!(a.json);
}
