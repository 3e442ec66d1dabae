//! Config parsing: unknown keys name the file and the key, sampling settings reach the
//! model spec, the sim user's behaviour is checked, and the token-limit and truncation
//! settings parse and refuse nonsense, and the outage and stall limits keep old config hashes.

use super::*;
use tauguard_sim::faults::FaultProfile;

fn with_llm(llm: &str) -> String {
    format!(
        r#"
[run]
name = "t"
domain = "airline"

[models.agent]
provider = "local"
model = "qwen3-8b"
top_p = 0.8
timeout_secs = 30
extra = {{ top_k = 20 }}

[models.user]
provider = "sim"
model = "sim-user"

{llm}
"#
    )
}

#[test]
fn unknown_llm_keys_name_the_file_and_the_key() {
    let provider =
        "[llm.providers.local]\nkind = \"openai\"\nbase_url = \"http://localhost:8000/v1\"\n";
    for (table, key) in [
        (format!("{provider}timout_secs = 5"), "timout_secs"),
        (
            format!("{provider}[llm.providers.local.retry]\nmax_attempt = 3"),
            "max_attempt",
        ),
        (
            format!(
                "{provider}[llm.prices.m]\ninput_per_mtok = 1\noutput_per_mtok = 1\ncache_read_per_mtok = 1"
            ),
            "cache_read_per_mtok",
        ),
        (
            format!("{provider}[llm.cache]\ndir = \"c\"\nmod = \"off\""),
            "mod",
        ),
        (
            format!("{provider}[llm.capabilities.\"qwen*\"]\ntemprature = false"),
            "temprature",
        ),
        (format!("{provider}[llm.cahce]\ndir = \"c\""), "cahce"),
    ] {
        let err = RunConfig::parse(Path::new("runs/typo.toml"), &with_llm(&table))
            .expect_err(key)
            .to_string();
        assert!(err.contains("runs/typo.toml"), "{key}: {err}");
        assert!(err.contains(&format!("`{key}`")), "{key}: {err}");
        assert!(err.contains("llm."), "{key}: no key path in {err}");
    }
}

#[test]
fn model_sections_carry_every_sampling_setting_into_the_spec() {
    let provider = "[llm.providers.local]\nkind = \"openai\"\nbase_url = \"http://localhost:8000/v1\"\nempty_tool_call_content = true\n[llm.capabilities.\"qwen*\"]\ntoken_limit = \"max_tokens\"";
    let cfg = RunConfig::parse(Path::new("ok.toml"), &with_llm(provider)).expect("valid");
    let spec = cfg.models.agent.as_ref().unwrap().spec();
    assert_eq!(spec.top_p, Some(0.8));
    assert_eq!(spec.timeout_secs, Some(30.0));
    assert_eq!(spec.extra.get("top_k"), Some(&serde_json::json!(20)));
    assert!(cfg.llm.providers["local"].empty_tool_call_content);
}

#[test]
fn the_user_behaviour_belongs_to_the_sim_user_and_holds_probabilities() {
    let cfg = |agent: &str, user: &str| {
        format!(
            "[run]\nname = \"t\"\ndomain = \"airline\"\n[models.agent]\nprovider = \"sim\"\nmodel = \"sim-agent\"\n{agent}\n[models.user]\nprovider = \"sim\"\nmodel = \"sim-user\"\n{user}\n"
        )
    };
    let ok = RunConfig::parse(
        Path::new("b.toml"),
        &cfg(
            "[models.agent.faults]\nretry_unchanged = 0.5\nabandon_after_block = 0.1",
            "[models.user.behaviour]\ndecline = 0.1\nhesitate = 0.2\ncorrect = 0.3",
        ),
    )
    .expect("valid");
    assert_eq!(ok.models.user.behaviour.unwrap().correct, 0.3);
    assert_eq!(
        ok.models.agent.unwrap().faults.unwrap().retry_unchanged,
        0.5
    );
    for (agent, user, needle) in [
        (
            "",
            "[models.user.behaviour]\nhesitate = 1.5",
            "`models.user.behaviour`: behaviour probability `hesitate` = 1.5",
        ),
        (
            "[models.agent.behaviour]\ndecline = 0.1",
            "",
            "`models.agent.behaviour`: only the sim user",
        ),
        (
            "[models.agent.faults]\nabandon_after_block = -1",
            "",
            "`abandon_after_block` = -1",
        ),
    ] {
        let err = RunConfig::parse(Path::new("b.toml"), &cfg(agent, user))
            .expect_err(needle)
            .to_string();
        assert!(err.contains(needle), "{err}");
    }
    // Zero reactions are left out of the serialised profile: cell hashes stay as they were.
    let json = serde_json::to_value(FaultProfile::default()).unwrap();
    assert!(json.get("retry_unchanged").is_none() && json.get("abandon_after_block").is_none());
}

#[test]
fn truncated_replies_and_role_token_limits_parse_and_zero_limits_are_refused() {
    let cfg = |extra_run: &str, guard: &str| {
        format!(
            "[run]\nname = \"t\"\ndomain = \"airline\"\n{extra_run}\n[models.agent]\nprovider = \"sim\"\nmodel = \"sim-agent\"\n[models.user]\nprovider = \"sim\"\nmodel = \"sim-user\"\n[guard]\n{guard}\n"
        )
    };
    let plain = RunConfig::parse(Path::new("t.toml"), &cfg("", "")).expect("valid");
    assert_eq!(plain.run.truncated_replies, TruncatedReplies::Record);
    assert_eq!(plain.guard.verifier_max_tokens, None);
    for (text, mode) in [
        ("record", TruncatedReplies::Record),
        ("agent_error", TruncatedReplies::AgentError),
        ("retry", TruncatedReplies::Retry),
    ] {
        let c = RunConfig::parse(
            Path::new("t.toml"),
            &cfg(&format!("truncated_replies = \"{text}\""), ""),
        )
        .expect(text);
        assert_eq!(
            (c.run.truncated_replies, c.run.truncated_replies.as_str()),
            (mode, text)
        );
    }
    let bad = RunConfig::parse(
        Path::new("t.toml"),
        &cfg("truncated_replies = \"drop\"", ""),
    )
    .expect_err("unknown mode")
    .to_string();
    assert!(bad.contains("run.truncated_replies"), "{bad}");
    let limits = RunConfig::parse(
        Path::new("t.toml"),
        &cfg("", "verifier_max_tokens = 3000\nguide_max_tokens = 1500"),
    )
    .expect("valid");
    assert_eq!(
        (
            limits.guard.verifier_max_tokens,
            limits.guard.guide_max_tokens
        ),
        (Some(3000), Some(1500))
    );
    for key in ["verifier_max_tokens", "guide_max_tokens"] {
        let err = RunConfig::parse(Path::new("t.toml"), &cfg("", &format!("{key} = 0")))
            .expect_err(key)
            .to_string();
        assert!(
            err.contains(&format!("`guard.{key}`: must be at least 1")),
            "{err}"
        );
    }
    // Unset, neither key is serialised: the hash of a config without them is unchanged.
    let identity = plain.identity_json();
    assert!(identity["run"].get("truncated_replies").is_none());
    assert!(identity["guard"].get("verifier_max_tokens").is_none());
}

#[test]
fn outage_limits_and_the_stall_limit_leave_old_hashes_alone() {
    let text = |extra: &str, provider: &str| {
        format!(
            "[run]\nname = \"x\"\ndomain = \"airline\"\n{extra}\n\
             [models.agent]\nprovider = \"p\"\nmodel = \"m\"\n\
             [models.user]\nprovider = \"sim\"\nmodel = \"sim-user\"\n\
             [llm.providers.p]\nkind = \"openai\"\nbase_url = \"http://h\"\n{provider}\n"
        )
    };
    let parse =
        |extra: &str, provider: &str| RunConfig::parse(Path::new("t.toml"), &text(extra, provider));
    let plain = parse("", "").unwrap();
    let json = serde_json::to_value(&plain).unwrap();
    for key in [
        "max_consecutive_server_errors",
        "max_consecutive_rate_limited",
        "max_consecutive_timeouts",
    ] {
        assert!(
            json["run"].get(key).is_none(),
            "{key} serialised at its default"
        );
    }
    assert!(json["llm"]["providers"]["p"].get("stall_secs").is_none());
    let limits = plain.run.outage_limits();
    assert_eq!(
        (
            limits.connect,
            limits.server_errors,
            limits.rate_limited,
            limits.timeouts
        ),
        (20, 50, 10, 10)
    );
    // The limits cannot change a result: the hash ignores them; the stall limit can.
    let set = parse(
        "max_consecutive_server_errors = 0\nmax_consecutive_rate_limited = 1\nmax_consecutive_timeouts = 2",
        "",
    )
    .unwrap();
    assert_eq!(set.run.outage_limits().timeouts, 2);
    assert_eq!(set.identity_json(), plain.identity_json());
    assert_eq!(set.hash(), plain.hash());
    assert_ne!(parse("", "stall_secs = 30").unwrap().hash(), plain.hash());
    let err = parse("", "stall_secs = 0")
        .expect_err("zero stall")
        .to_string();
    assert!(
        err.contains("`stall_secs` must be a positive number"),
        "{err}"
    );
}
