//! Schema check of the shipped checklists (`tasks/<domain>/checklist/`) and of the loader's
//! rejections of bad artifacts.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use tauguard_core::Requestor;
use tauguard_guards::{
    ArtifactError, RequirementType, ToolCatalog, load_domain_checklists, write_domain_checklists,
};

use tauguard_testkit::workspace_root;

fn checklist_dir(domain: &str) -> PathBuf {
    workspace_root()
        .join("tasks")
        .join(domain)
        .join("checklist")
}

fn data_dir() -> Option<PathBuf> {
    tauguard_testkit::tau2_dir()
}

const MUTATING: &[(&str, &[&str])] = &[
    (
        "airline",
        &[
            "book_reservation",
            "cancel_reservation",
            "send_certificate",
            "update_reservation_baggages",
            "update_reservation_flights",
            "update_reservation_passengers",
        ],
    ),
    (
        "retail",
        &[
            "cancel_pending_order",
            "exchange_delivered_order_items",
            "modify_pending_order_address",
            "modify_pending_order_items",
            "modify_pending_order_payment",
            "modify_user_address",
            "return_delivered_order_items",
        ],
    ),
    (
        "telecom",
        &[
            "suspend_line",
            "resume_line",
            "send_payment_request",
            "enable_roaming",
            "disable_roaming",
            "refuel_data",
        ],
    ),
];

const READ_ONLY: &[(&str, &[&str])] = &[
    (
        "airline",
        &[
            "get_reservation_details",
            "get_user_details",
            "list_all_airports",
            "search_direct_flight",
            "search_onestop_flight",
            "get_flight_status",
        ],
    ),
    (
        "retail",
        &[
            "find_user_id_by_name_zip",
            "find_user_id_by_email",
            "get_order_details",
            "get_product_details",
            "get_item_details",
            "get_user_details",
            "list_all_product_types",
        ],
    ),
    (
        "telecom",
        &[
            "get_customer_by_phone",
            "get_customer_by_id",
            "get_customer_by_name",
            "get_details_by_id",
            "get_bills_for_customer",
            "get_data_usage",
        ],
    ),
];

const GENERIC: &[&str] = &["calculate", "transfer_to_human_agents", "think"];

fn lookup(table: &[(&str, &'static [&'static str])], domain: &str) -> &'static [&'static str] {
    table
        .iter()
        .find(|(d, _)| *d == domain)
        .map(|(_, t)| *t)
        .expect("known domain")
}

/// The tool list built from names in this test: runs without data.
fn builtin_info(domain: &str) -> ToolCatalog {
    ToolCatalog::new(
        domain,
        lookup(MUTATING, domain).iter().copied(),
        lookup(READ_ONLY, domain).iter().copied(),
        ["calculate", "transfer_to_human_agents"],
    )
}

/// The tool list of `tools.json`: the names come from the file; the mutating ones are the
/// expected set (which must all be present), generic helpers are neither, the rest read-only.
fn tools_json_info(data: &Path, domain: &str) -> ToolCatalog {
    let path = data.join(domain).join("tools.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let file: serde_json::Value = serde_json::from_str(&text).expect("tools.json is JSON");
    let names: BTreeSet<String> = file["assistant_tools"]
        .as_array()
        .expect("assistant_tools")
        .iter()
        .map(|t| {
            t["function"]["name"]
                .as_str()
                .expect("tool name")
                .to_string()
        })
        .collect();
    let mutating: BTreeSet<String> = lookup(MUTATING, domain)
        .iter()
        .map(|s| s.to_string())
        .collect();
    for m in &mutating {
        assert!(
            names.contains(m),
            "{domain}: tools.json lacks mutating tool {m}"
        );
    }
    let other: BTreeSet<String> = names
        .iter()
        .filter(|n| GENERIC.contains(&n.as_str()))
        .cloned()
        .collect();
    let read_only: Vec<String> = names
        .iter()
        .filter(|n| !mutating.contains(*n) && !other.contains(*n))
        .cloned()
        .collect();
    ToolCatalog::new(domain, mutating, read_only, other)
}

#[test]
fn shipped_checklists_load_with_builtin_tool_lists() {
    let mut summary = Vec::new();
    for (domain, mutating) in MUTATING {
        let info = builtin_info(domain);
        let set =
            load_domain_checklists(&checklist_dir(domain), &info).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            set.tools
                .keys()
                .map(String::as_str)
                .collect::<BTreeSet<_>>(),
            mutating.iter().copied().collect()
        );
        assert!(!set.general.is_empty(), "{domain}: general rules");
        for c in set.tools.values() {
            assert!(
                c.requirements
                    .iter()
                    .any(|r| r.kind == RequirementType::Data),
                "{domain}/{}: no data requirement",
                c.tool
            );
            assert!(c.description.is_some(), "{domain}/{}: description", c.tool);
        }
        summary.push(format!(
            "{domain}: {} tools, {} constraints, {} requirements, {} general rules",
            set.tools.len(),
            set.constraint_count(),
            set.requirement_count(),
            set.general.len()
        ));
    }
    eprintln!("{}", summary.join("\n"));
}

#[test]
fn shipped_checklists_load_with_real_tool_lists() {
    let Some(data) = data_dir() else { return };
    for (domain, _) in MUTATING {
        let info = tools_json_info(&data, domain);
        load_domain_checklists(&checklist_dir(domain), &info)
            .unwrap_or_else(|e| panic!("tools.json of {domain}: {e}"));

        // The environment's own tool kinds, where the domain loads (its implementation may
        // still be in progress; the tools.json check above is the required one).
        let dd = tauguard_env::DataDir::resolve(Some(&data)).expect("data dir");
        match tauguard_env::DomainData::load(&dd, domain) {
            Ok(loaded) => {
                let env = loaded.fresh_env();
                let info = ToolCatalog::from_toolkit(*domain, env.toolkit(Requestor::Assistant));
                load_domain_checklists(&checklist_dir(domain), &info)
                    .unwrap_or_else(|e| panic!("environment toolkit of {domain}: {e}"));
            }
            Err(e) => eprintln!("{domain}: environment toolkit not checked ({e})"),
        }
    }
}

#[test]
fn shipped_checklists_roundtrip_through_the_writer() {
    let info = builtin_info("airline");
    let set = load_domain_checklists(&checklist_dir("airline"), &info).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    write_domain_checklists(tmp.path(), &set).unwrap();
    let back = load_domain_checklists(tmp.path(), &info).unwrap();
    assert_eq!(back, set);
}

// ---------------------------------------------------------------------------------------------
// Bad artifacts
// ---------------------------------------------------------------------------------------------

fn mini_info() -> ToolCatalog {
    ToolCatalog::new(
        "airline",
        ["book_reservation", "cancel_reservation"],
        ["get_user_details", "get_reservation_details"],
        ["calculate"],
    )
}

const BOOK: &str = "tool: book_reservation
description: Books.
constraints:
  - name: max_five_passengers
    rule: At most five passengers.
requirements:
  - name: user_details_retrieved
    type: data
    tool: get_user_details
    hint: Looked up.
  - name: user_confirmation
    type: procedural
    hint: The user said yes.
";

const CANCEL: &str = "tool: cancel_reservation
requirements:
  - name: reservation_details_retrieved
    type: data
    tool: get_reservation_details
    hint: Looked up.
";

const GENERAL: &str = "rules:
  - name: one_action_per_turn
    rule: One tool call at a time.
";

/// A valid mini artifact set with `file` replaced by `text` (or removed when `None`).
fn set_with(file: &str, text: Option<&str>) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    for (name, body) in [
        ("book_reservation.yaml", BOOK),
        ("cancel_reservation.yaml", CANCEL),
        ("general_rules.yaml", GENERAL),
    ] {
        std::fs::write(tmp.path().join(name), body).unwrap();
    }
    match text {
        Some(t) => std::fs::write(tmp.path().join(file), t).unwrap(),
        None => std::fs::remove_file(tmp.path().join(file)).unwrap(),
    }
    tmp
}

fn rejected(file: &str, text: Option<&str>) -> ArtifactError {
    let tmp = set_with(file, text);
    match load_domain_checklists(tmp.path(), &mini_info()) {
        Ok(_) => panic!("{file} should be rejected"),
        Err(e) => e,
    }
}

/// The error names `file` and `field`, both structurally and in its message.
fn assert_names(e: &ArtifactError, file: &str, field: Option<&str>) {
    let shown = e.to_string();
    assert_eq!(
        e.file.file_name().and_then(|n| n.to_str()),
        Some(file),
        "{shown}"
    );
    assert!(shown.contains(file), "{shown}");
    if let Some(field) = field {
        assert!(
            e.fields().any(|f| f == field),
            "expected field {field}: {shown}"
        );
        assert!(shown.contains(field), "{shown}");
    }
}

#[test]
fn mini_set_is_valid() {
    let tmp = set_with("README.md", Some("not an artifact"));
    let set = load_domain_checklists(tmp.path(), &mini_info()).unwrap();
    assert_eq!(set.tools.len(), 2);
    assert_eq!(set.requirement_count(), 3);
}

#[test]
fn unknown_key_is_rejected() {
    let text = BOOK.replace(
        "    hint: Looked up.\n",
        "    hint: Looked up.\n    verify_with: get_user_details\n",
    );
    let e = rejected("book_reservation.yaml", Some(&text));
    assert_names(
        &e,
        "book_reservation.yaml",
        Some("requirements[0].verify_with"),
    );

    let text = format!("{BOOK}notes: extra\n");
    let e = rejected("book_reservation.yaml", Some(&text));
    assert_names(&e, "book_reservation.yaml", Some("notes"));
}

#[test]
fn wrong_types_are_rejected() {
    let text = BOOK.replace("type: procedural", "type: maybe");
    let e = rejected("book_reservation.yaml", Some(&text));
    assert_names(&e, "book_reservation.yaml", Some("requirements[1].type"));

    let text = BOOK.replace(
        "  - name: user_confirmation",
        "  - name: [user_confirmation]",
    );
    let e = rejected("book_reservation.yaml", Some(&text));
    assert_names(&e, "book_reservation.yaml", Some("requirements[1].name"));

    let e = rejected(
        "cancel_reservation.yaml",
        Some("tool: cancel_reservation\nrequirements: none\n"),
    );
    assert_names(&e, "cancel_reservation.yaml", Some("requirements"));

    let e = rejected(
        "general_rules.yaml",
        Some("rules:\n  - name: a\n    rule: {x: 1}\n"),
    );
    assert_names(&e, "general_rules.yaml", Some("rules[0].rule"));
}

#[test]
fn missing_field_is_rejected() {
    let text = BOOK.replace("    hint: The user said yes.\n", "");
    let e = rejected("book_reservation.yaml", Some(&text));
    assert_names(&e, "book_reservation.yaml", Some("requirements[1].hint"));
}

#[test]
fn checklist_for_unknown_tool_is_rejected() {
    let text = CANCEL.replace("cancel_reservation", "fly_rocket");
    let e = rejected("fly_rocket.yaml", Some(&text));
    assert_names(&e, "fly_rocket.yaml", Some("tool"));
    assert!(e.to_string().contains("unknown tool `fly_rocket`"), "{e}");
}

#[test]
fn checklist_for_read_only_tool_is_rejected() {
    let text = CANCEL.replace("tool: cancel_reservation", "tool: get_user_details");
    let e = rejected("get_user_details.yaml", Some(&text));
    assert_names(&e, "get_user_details.yaml", Some("tool"));
    assert!(e.to_string().contains("read-only"), "{e}");
}

#[test]
fn data_requirement_naming_a_mutating_tool_is_rejected() {
    let text = BOOK.replace(
        "    type: procedural\n",
        "    type: data\n    tool: cancel_reservation\n",
    );
    let e = rejected("book_reservation.yaml", Some(&text));
    assert_names(&e, "book_reservation.yaml", Some("requirements[1].tool"));
    assert!(e.to_string().contains("mutating"), "{e}");
}

#[test]
fn data_requirement_problems_are_rejected() {
    // No tool at all.
    let text = BOOK.replace("    tool: get_user_details\n", "");
    let e = rejected("book_reservation.yaml", Some(&text));
    assert_names(&e, "book_reservation.yaml", Some("requirements[0].tool"));
    // An unknown alternative.
    let text = BOOK.replace(
        "    tool: get_user_details\n",
        "    tool: get_user_details\n    alternative_tools: [get_everything]\n",
    );
    let e = rejected("book_reservation.yaml", Some(&text));
    assert_names(
        &e,
        "book_reservation.yaml",
        Some("requirements[0].alternative_tools[0]"),
    );
    // A generic tool cannot prove a fact.
    let text = BOOK.replace("    tool: get_user_details\n", "    tool: calculate\n");
    let e = rejected("book_reservation.yaml", Some(&text));
    assert_names(&e, "book_reservation.yaml", Some("requirements[0].tool"));
    // A procedural requirement names no tool.
    let text = BOOK.replace(
        "    type: procedural\n",
        "    type: procedural\n    tool: get_user_details\n",
    );
    let e = rejected("book_reservation.yaml", Some(&text));
    assert_names(&e, "book_reservation.yaml", Some("requirements[1].tool"));
}

#[test]
fn file_tool_mismatch_is_rejected() {
    let e = rejected(
        "cancel_reservation.yaml",
        Some(&CANCEL.replace("tool: cancel_reservation", "tool: book_reservation")),
    );
    assert_names(&e, "cancel_reservation.yaml", Some("tool"));
    assert!(e.to_string().contains("file name"), "{e}");
}

#[test]
fn duplicate_and_badly_named_requirements_are_rejected() {
    let text = BOOK.replace("name: user_confirmation", "name: user_details_retrieved");
    let e = rejected("book_reservation.yaml", Some(&text));
    assert_names(&e, "book_reservation.yaml", Some("requirements[1].name"));
    assert!(e.to_string().contains("duplicate"), "{e}");

    let text = BOOK.replace("name: user_confirmation", "name: UserConfirmation");
    let e = rejected("book_reservation.yaml", Some(&text));
    assert_names(&e, "book_reservation.yaml", Some("requirements[1].name"));

    let e = rejected(
        "general_rules.yaml",
        Some("rules:\n  - name: a\n    rule: x\n  - name: a\n    rule: y\n"),
    );
    assert_names(&e, "general_rules.yaml", Some("rules[1].name"));
}

#[test]
fn broken_yaml_is_rejected_with_the_file() {
    let e = rejected(
        "cancel_reservation.yaml",
        Some("tool: cancel_reservation\nrequirements:\n  - name: [unclosed\n"),
    );
    assert_names(&e, "cancel_reservation.yaml", None);
    let e = rejected("cancel_reservation.yaml", Some("   \n"));
    assert_names(&e, "cancel_reservation.yaml", None);
}

#[test]
fn missing_files_are_rejected() {
    let e = rejected("general_rules.yaml", None);
    assert_names(&e, "general_rules.yaml", None);
    let e = rejected("cancel_reservation.yaml", None);
    assert_names(&e, "cancel_reservation.yaml", None);
    assert!(e.to_string().contains("needs a checklist"), "{e}");
}

#[test]
fn yml_extension_is_rejected() {
    let e = rejected("extra.yml", Some(GENERAL));
    assert_names(&e, "extra.yml", None);
}

#[test]
fn several_problems_are_reported_together() {
    let text = BOOK
        .replace("name: user_confirmation", "name: Bad")
        .replace("tool: get_user_details", "tool: book_reservation");
    let e = rejected("book_reservation.yaml", Some(&text));
    let fields: Vec<&str> = e.fields().collect();
    assert_eq!(
        fields,
        ["requirements[0].tool", "requirements[1].name"],
        "{e}"
    );
}

// ---------------------------------------------------------------------------------------------
// Consistency with the authored prerequisites (`tasks/<domain>/prerequisites.toml`)
// ---------------------------------------------------------------------------------------------

#[derive(serde::Deserialize)]
struct Prerequisites {
    tools: std::collections::BTreeMap<String, ToolPrerequisites>,
}

#[derive(serde::Deserialize)]
struct ToolPrerequisites {
    #[serde(default)]
    identity_reads: Vec<String>,
    #[serde(default)]
    required_reads: Vec<String>,
    #[serde(default)]
    required_any_reads: Vec<Vec<String>>,
    #[serde(default)]
    confirmation: bool,
}

/// Every read the prerequisites demand is proved by some `data` requirement of the same tool,
/// and a required confirmation has a procedural requirement.
#[test]
fn checklists_cover_the_authored_prerequisites() {
    for (domain, _) in MUTATING {
        let path = workspace_root()
            .join("tasks")
            .join(domain)
            .join("prerequisites.toml");
        let Ok(text) = std::fs::read_to_string(&path) else {
            eprintln!("{domain}: no prerequisites.toml");
            continue;
        };
        let prereq: Prerequisites =
            toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let set = load_domain_checklists(&checklist_dir(domain), &builtin_info(domain)).unwrap();
        for (tool, p) in &prereq.tools {
            let checklist = set
                .get(tool)
                .unwrap_or_else(|| panic!("{domain}: no checklist for {tool}"));
            let data: Vec<BTreeSet<&str>> = checklist
                .requirements
                .iter()
                .filter(|r| r.kind == RequirementType::Data)
                .map(|r| r.proving_tools().collect())
                .collect();
            let proved_by_one_of = |group: &[String]| {
                data.iter().any(|tools| {
                    tools.iter().all(|t| group.iter().any(|g| g == t)) && !tools.is_empty()
                })
            };
            if !p.identity_reads.is_empty() {
                assert!(
                    proved_by_one_of(&p.identity_reads),
                    "{domain}/{tool}: identity via {:?}",
                    p.identity_reads
                );
            }
            for read in &p.required_reads {
                assert!(
                    data.iter().any(|tools| tools.contains(read.as_str())),
                    "{domain}/{tool}: no data requirement proved by {read}"
                );
            }
            for group in &p.required_any_reads {
                assert!(
                    data.iter()
                        .any(|tools| tools.iter().any(|t| group.iter().any(|g| g == t))),
                    "{domain}/{tool}: no data requirement proved by one of {group:?}"
                );
            }
            if p.confirmation {
                assert!(
                    checklist
                        .requirements
                        .iter()
                        .any(|r| r.kind == RequirementType::Procedural
                            && (r.name.contains("confirmation") || r.name.contains("confirm"))),
                    "{domain}/{tool}: confirmation required but no procedural confirmation requirement"
                );
            }
        }
    }
}
