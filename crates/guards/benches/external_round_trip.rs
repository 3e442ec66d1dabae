//! What an external guard costs per call over stdio (run with `cargo bench -p tauguard-guards
//! --bench external_round_trip`): the same pending mutating call on the fixture airline
//! domain decided many times by the built-in `block-all` guard (a guard that does no work, so
//! its time is the seam's own) and by a trivial Python guard through the SDK
//! (`crates/guards/benches/trivial_guard.py`, passing every call), one call at a time on the
//! runtime `tauguard run` uses. Prints each median and 90th percentile, the difference of the
//! medians — the round trip the protocol adds, target ≤ 0.2 ms — and the ratio.
//! `TAUGUARD_BENCH_CALLS` sets the calls per guard (default 5,000); the SDK is taken from
//! `sdk/python` unless `tauguard_guard` is importable already.

use serde_json::{Value, json};
use std::time::{Duration, Instant};
use tauguard_core::message::ParticipantMessage;
use tauguard_core::{Message, ToolCall};
use tauguard_env::{DataDir, DomainData};
use tauguard_guards::{
    ExternalGuard, ExternalSpec, FailMode, Guard, GuardContext, GuardState, Verdict,
};

fn times(guard: &dyn Guard, ctx: &GuardContext<'_>, call: &ToolCall, n: usize) -> Vec<Duration> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        // Warm-up: the Python side's first calls start its worker threads.
        for _ in 0..200 {
            guard.on_mutating_call(ctx, call).await.unwrap();
        }
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let t = Instant::now();
            let d = guard.on_mutating_call(ctx, call).await.unwrap();
            out.push(t.elapsed());
            assert!(d.fail.is_none(), "{:?}", d.info);
        }
        out.sort();
        out
    })
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let root = tauguard_testkit::workspace_root();
    let n: usize = std::env::var("TAUGUARD_BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5000);
    let dir = DataDir::resolve(Some(&root.join("tasks/fixtures"))).unwrap();
    let data = DomainData::load(&dir, "airline").unwrap();
    let env = data.fresh_env();
    let Value::Object(arguments) = json!({"reservation_id": "ABC123"}) else {
        unreachable!()
    };
    let call = ToolCall {
        id: "c1".into(),
        name: "cancel_reservation".into(),
        arguments,
        requestor: Default::default(),
    };
    let history = vec![
        Message::User(ParticipantMessage {
            content: Some("Please cancel my reservation ABC123.".into()),
            ..Default::default()
        }),
        Message::Assistant(ParticipantMessage {
            tool_calls: Some(vec![call.clone()]),
            ..Default::default()
        }),
    ];
    let state = GuardState::new();
    let ctx = GuardContext {
        domain: "airline",
        policy: &data.policy,
        task_id: "bench",
        trial: 0,
        seed: 0,
        history: &history,
        env: env.as_ref(),
        state: &state,
        at_message: 2,
    };
    let importable = std::process::Command::new("python3")
        .args(["-c", "import tauguard_guard"])
        .status()
        .is_ok_and(|s| s.success());
    let script = root.join("crates/guards/benches/trivial_guard.py");
    let mut command: Vec<String> = Vec::new();
    if !importable {
        let path = root.join("sdk/python");
        command.extend(["env".into(), format!("PYTHONPATH={}", path.display())]);
    }
    command.extend(["python3".into(), script.display().to_string()]);
    let spec = ExternalSpec {
        command: Some(command),
        url: None,
        timeout_secs: Some(10.0),
        max_restarts: Some(0),
    };
    let external = ExternalGuard::build(&spec, FailMode::Closed, &data).unwrap();
    let builtin = tauguard_guards::BlockAll;
    let b = times(&builtin, &ctx, &call, n);
    let e = times(&external, &ctx, &call, n);
    assert_eq!(
        futures_verdict(&external, &ctx, &call),
        Verdict::Pass,
        "the trivial guard passes"
    );
    let (bm, em) = (b[n / 2], e[n / 2]);
    println!("{n} calls each, one at a time");
    println!(
        "built-in block-all : median {:.4} ms, p90 {:.4} ms",
        ms(bm),
        ms(b[n * 9 / 10])
    );
    println!(
        "external (stdio)   : median {:.4} ms, p90 {:.4} ms",
        ms(em),
        ms(e[n * 9 / 10])
    );
    println!(
        "round trip added   : {:.4} ms at the median (target <= 0.2 ms); ratio external / built-in {:.1}",
        ms(em.saturating_sub(bm)),
        em.as_secs_f64() / bm.as_secs_f64().max(1e-9)
    );
}

fn futures_verdict(guard: &dyn Guard, ctx: &GuardContext<'_>, call: &ToolCall) -> Verdict {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(guard.on_mutating_call(ctx, call))
        .unwrap()
        .verdict
}
