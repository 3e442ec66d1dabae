//! ToolGuard rule artifacts: the authored rule sets load, and bad artifacts are rejected at
//! load with the file and the field named. Needs no τ²-bench data.

use crate::support::rule_dir;
use std::path::{Path, PathBuf};
use tauguard_core::chain_text;
use tauguard_guards::{RuleError, RuleSet, ToolCatalog, parse_rule_file};

fn tasks_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tasks")
}

fn airline() -> ToolCatalog {
    ToolCatalog::builtin("airline").unwrap()
}

/// Parses `text` as `<dir>/<tool>.yaml` and returns the error (panics on success).
fn reject(file: &str, text: &str) -> RuleError {
    let path = PathBuf::from("tasks/airline/rules").join(file);
    match parse_rule_file(&path, text, &airline()) {
        Ok(r) => panic!("{file} should be rejected, got {} rules", r.rules.len()),
        Err(e) => {
            eprintln!("{}", chain_text(&e));
            e
        }
    }
}

fn field(e: &RuleError) -> &str {
    e.field().unwrap_or_else(|| panic!("no field in {e}"))
}

#[test]
fn authored_rule_sets_load_for_every_domain() {
    let mut counts = Vec::new();
    for domain in ["airline", "retail", "telecom"] {
        let set =
            RuleSet::load_domain(&tasks_dir(), domain).unwrap_or_else(|e| panic!("{domain}: {e}"));
        let catalog = ToolCatalog::builtin(domain).unwrap();
        let covered: Vec<&str> = set.tools().map(|t| t.tool.as_str()).collect();
        let mutating: Vec<&str> = catalog.mutating.iter().map(String::as_str).collect();
        assert_eq!(
            covered, mutating,
            "{domain}: every mutating tool has a rule file"
        );
        for t in set.tools() {
            assert!(!t.rules.is_empty(), "{domain}/{}", t.tool);
            assert!(t.path.ends_with(format!("{}.yaml", t.tool)));
        }
        counts.push((domain, set.tools().count(), set.rule_count()));
    }
    // Tools and rules per domain, as authored (retail's exchange leaves the order status and
    // the gift-card balance to the tool: tasks/retail/rules/exchange_delivered_order_items.yaml).
    assert_eq!(
        counts,
        vec![("airline", 6, 37), ("retail", 7, 23), ("telecom", 6, 15)]
    );
}

#[test]
fn airline_rule_names_are_the_documented_ones() {
    let set = RuleSet::load_domain(&tasks_dir(), "airline").unwrap();
    let names = |tool: &str| -> Vec<String> {
        set.get(tool)
            .unwrap()
            .rules
            .iter()
            .map(|r| r.name.clone())
            .collect()
    };
    assert_eq!(
        names("cancel_reservation"),
        [
            "reservation_not_cancelled",
            "no_segment_flown",
            "cancellation_eligible"
        ]
    );
    let book = names("book_reservation");
    for n in [
        "passenger_count",
        "at_most_one_certificate",
        "at_most_one_credit_card",
        "at_most_three_gift_cards",
    ] {
        assert!(book.contains(&n.to_string()), "{n}");
    }
    let cancel = set.get("cancel_reservation").unwrap();
    assert_eq!(cancel.lookup_names(), ["reservation", "statuses"]);
    assert!(cancel.rules[2].check_source().contains("duration('24h')"));
}

#[test]
fn yaml_syntax_error_names_the_file() {
    let e = reject(
        "cancel_reservation.yaml",
        "tool: cancel_reservation\nrules: [\n  - name: x\n",
    );
    assert_eq!(field(&e), "(document)");
    assert!(chain_text(&e).contains("cancel_reservation.yaml"), "{e}");
    assert!(chain_text(&e).contains("YAML does not parse"), "{e}");
}

#[test]
fn unknown_key_is_a_schema_violation_with_its_path() {
    let text = "tool: cancel_reservation\nrules:\n  - name: a\n    check: \"true\"\n    message: m\n  - name: b\n    chek: \"true\"\n    message: m\n";
    let e = reject("cancel_reservation.yaml", text);
    assert!(field(&e).starts_with("rules[1]"), "{e}");
    assert!(chain_text(&e).contains("unknown field `chek`"), "{e}");
    assert!(
        chain_text(&e).contains("tasks/airline/rules/cancel_reservation.yaml"),
        "{e}"
    );
}

#[test]
fn missing_and_mistyped_fields_are_schema_violations() {
    let e = reject(
        "cancel_reservation.yaml",
        "tool: cancel_reservation\nrules:\n  - name: a\n    check: \"true\"\n",
    );
    assert!(field(&e).starts_with("rules[0]"), "{e}");
    assert!(chain_text(&e).contains("missing field `message`"), "{e}");

    let e = reject(
        "cancel_reservation.yaml",
        "tool: cancel_reservation\nrules:\n  - name: a\n    check: \"true\"\n    message: m\n    on_error: maybe\n",
    );
    assert_eq!(field(&e), "rules[0].on_error", "{e}");

    let e = reject(
        "cancel_reservation.yaml",
        "tool: cancel_reservation\nlookups:\n  r:\n    tool: get_reservation_details\n    argz: {}\nrules: []\n",
    );
    assert!(field(&e).starts_with("lookups.r"), "{e}");
}

#[test]
fn cel_syntax_error_names_the_field() {
    let text = "tool: cancel_reservation\nrules:\n  - name: ok\n    check: \"size(args) > 0\"\n    message: m\n  - name: bad\n    check: \"args.reservation_id ==\"\n    message: m\n";
    let e = reject("cancel_reservation.yaml", text);
    assert_eq!(field(&e), "rules[1].check", "{e}");
    assert!(chain_text(&e).contains("CEL does not compile"), "{e}");

    let text = "tool: cancel_reservation\nrules:\n  - name: bad\n    when: \"(args\"\n    check: \"true\"\n    message: m\n";
    assert_eq!(
        field(&reject("cancel_reservation.yaml", text)),
        "rules[0].when"
    );

    let text = "tool: cancel_reservation\nlookups:\n  reservation:\n    tool: get_reservation_details\n    args: {reservation_id: \"args.[\"}\nrules:\n  - name: a\n    check: \"true\"\n    message: m\n";
    assert_eq!(
        field(&reject("cancel_reservation.yaml", text)),
        "lookups.reservation.args.reservation_id"
    );
}

#[test]
fn unknown_variables_are_rejected_at_load() {
    let text = "tool: cancel_reservation\nlookups:\n  reservation:\n    tool: get_reservation_details\n    args: {reservation_id: \"args.reservation_id\"}\nrules:\n  - name: typo\n    check: \"reservaton.cabin == 'business'\"\n    message: m\n";
    let e = reject("cancel_reservation.yaml", text);
    assert_eq!(field(&e), "rules[0].check");
    assert!(chain_text(&e).contains("`reservaton`"), "{e}");

    // A lookup may only read lookups declared before it; `item` only inside `for_each`.
    let text = "tool: cancel_reservation\nlookups:\n  a:\n    tool: get_user_details\n    args: {user_id: \"b.user_id\"}\n  b:\n    tool: get_reservation_details\n    args: {reservation_id: \"item\"}\nrules:\n  - name: x\n    check: \"true\"\n    message: m\n";
    assert_eq!(
        field(&reject("cancel_reservation.yaml", text)),
        "lookups.a.args.user_id"
    );
}

#[test]
fn unknown_or_read_only_tools_are_rejected() {
    let rule = "rules:\n  - name: a\n    check: \"true\"\n    message: m\n";
    let e = reject("book_flight.yaml", &format!("tool: book_flight\n{rule}"));
    assert_eq!(field(&e), "tool");
    assert!(
        chain_text(&e).contains("not a mutating tool of the airline domain"),
        "{e}"
    );

    let e = reject(
        "get_user_details.yaml",
        &format!("tool: get_user_details\n{rule}"),
    );
    assert_eq!(field(&e), "tool");
    assert!(chain_text(&e).contains("read-only"), "{e}");

    // A rule file is named after its tool.
    let e = reject("cancel.yaml", &format!("tool: cancel_reservation\n{rule}"));
    assert_eq!(field(&e), "tool");

    // Lookups call read-only tools only, and records name real collections.
    let e = reject(
        "cancel_reservation.yaml",
        &format!(
            "tool: cancel_reservation\nlookups:\n  x:\n    tool: cancel_reservation\n    args: {{}}\n{rule}"
        ),
    );
    assert_eq!(field(&e), "lookups.x.tool");
    assert!(chain_text(&e).contains("mutates state"), "{e}");
    let e = reject(
        "cancel_reservation.yaml",
        &format!("tool: cancel_reservation\nlookups:\n  x:\n    record: planes\n{rule}"),
    );
    assert_eq!(field(&e), "lookups.x.record");
    let e = reject(
        "cancel_reservation.yaml",
        &format!("tool: cancel_reservation\nlookups:\n  args:\n    record: flights\n{rule}"),
    );
    assert_eq!(field(&e), "lookups.args");
}

#[test]
fn duplicate_rule_names_and_empty_rule_lists_are_rejected() {
    let text = "tool: cancel_reservation\nrules:\n  - name: a\n    check: \"true\"\n    message: m\n  - name: a\n    check: \"true\"\n    message: m\n";
    assert_eq!(
        field(&reject("cancel_reservation.yaml", text)),
        "rules[1].name"
    );
    assert_eq!(
        field(&reject(
            "cancel_reservation.yaml",
            "tool: cancel_reservation\nrules: []\n"
        )),
        "rules"
    );
}

#[test]
fn a_bad_file_in_a_rule_directory_fails_the_whole_load() {
    let dir = rule_dir(
        "cancel_reservation.yaml",
        "tool: cancel_reservation\nrules:\n  - name: a\n    check: \"true\"\n    message: m\n",
    );
    std::fs::write(dir.path().join("notes.txt"), "not a rule file").unwrap();
    let set = RuleSet::load_dir(dir.path(), &airline()).unwrap();
    assert_eq!(set.rule_count(), 1);

    let bad = dir.path().join("send_certificate.yaml");
    std::fs::write(&bad, "tool: send_certificate\nrules:\n  - name: a\n    check: \"args.amount >\"\n    message: m\n")
        .unwrap();
    let e = RuleSet::load_dir(dir.path(), &airline()).unwrap_err();
    assert_eq!(e.path(), bad.as_path());
    assert_eq!(field(&e), "rules[0].check");
    assert!(chain_text(&e).contains("send_certificate.yaml"), "{e}");

    assert!(matches!(
        RuleSet::load_dir(&dir.path().join("missing"), &airline()),
        Err(RuleError::Io { .. })
    ));
}
