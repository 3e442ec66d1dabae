//! A model judges the process view's dialogue predicates the offline stand-in cannot
//! (`--process-judge PROVIDER/MODEL`, here a loopback OpenAI-style server): its verdicts are
//! violations judged `model`, asked with τ²-bench's NL-assertion judge prompt over the
//! transcript, and without the flag the same predicate stays unjudged. `view` takes the flag
//! as `evaluate` and `report` do, and simulations are judged as many at once as the
//! provider's `max_concurrency` allows: the requests overlap, and the verdicts equal those of
//! one-at-a-time judging.

use crate::support::{s, tauguard_ok, tauguard_status as tauguard, toy_requirement, toy_spec};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tauguard_testkit::{Loopback, MockProvider, SimConfig, assistant_text, chat_completion};
use wiremock::{Request, Respond, ResponseTemplate};

/// The toy spec with one predicate only a model can judge.
fn spec() -> String {
    let check = "{ kind = \"dialogue\", predicate = \"rule_applies\", question = \"The agent made one tool call at a time.\", before = [\"*\"] }";
    toy_spec(
        "",
        &[toy_requirement(
            "one_call_at_a_time",
            "W",
            "Make one tool call at a time",
            check,
        )],
    )
}

fn judge_says(met: bool) -> ResponseTemplate {
    let reply =
        json!({"results": [{"expectedOutcome": "x", "reasoning": "test", "metExpectation": met}]});
    let message = assistant_text(&reply.to_string());
    ResponseTemplate::new(200).set_body_json(chat_completion("m", "stop", message, (9, 1)))
}

/// A toy run (`trials` per task) and a project whose toy procedure spec has one predicate
/// only a model can judge.
fn toy_run_and_project(tmp: &Path, trials: u32) -> (PathBuf, PathBuf) {
    let root = tauguard_testkit::workspace_root();
    let cfg = SimConfig::new("toy", "toy", &tauguard_testkit::fixtures_dir())
        .trials(trials)
        .write(&tmp.join("toy.toml"));
    let run = tmp.join("run");
    let args = ["run", s(&cfg), "--out", s(&run)];
    assert_eq!(tauguard(&args).0, 0);
    let project = tmp.join("project");
    std::fs::create_dir_all(project.join("tasks/toy")).unwrap();
    std::os::unix::fs::symlink(root.join("configs"), project.join("configs")).unwrap();
    std::fs::write(project.join("tasks/toy/procedure.toml"), spec()).unwrap();
    (run, project)
}

/// An `--llm-config` naming the loopback server with `max_concurrency` slots.
fn llm_config(tmp: &Path, server: &Loopback, max_concurrency: usize) -> PathBuf {
    let llm = tmp.join(format!("llm-{max_concurrency}.toml"));
    std::fs::write(
        &llm,
        MockProvider::new("local", &format!("{}/v1", server.uri()))
            .lines(&format!("max_concurrency = {max_concurrency}"))
            .toml("providers"),
    )
    .unwrap();
    llm
}

/// Answers each judge request after `delay`, met or not by a hash of the request body (so
/// answers differ between simulations and a mix-up of their order would show), noting when
/// each request arrived.
struct Slow {
    delay: Duration,
    arrivals: Arc<Mutex<Vec<Instant>>>,
}

impl Respond for Slow {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        self.arrivals.lock().unwrap().push(Instant::now());
        let hash = req.body.iter().fold(0xcbf29ce484222325u64, |h, b| {
            (h ^ u64::from(*b)).wrapping_mul(0x100000001b3)
        });
        judge_says(hash % 2 == 0).set_delay(self.delay)
    }
}

fn evaluate(project: &Path, run: &Path, extra: &[&str]) -> Value {
    let mut args = vec![
        "--project-dir",
        s(project),
        "evaluate",
        s(run),
        "--format",
        "json",
        "--data-dir",
    ];
    let fixtures = tauguard_testkit::fixtures_dir();
    args.push(s(&fixtures));
    args.extend(extra);
    let json = tauguard_ok(&args);
    serde_json::from_str(&json).unwrap()
}

#[test]
fn a_model_judges_the_predicates_the_stand_in_leaves_unjudged() {
    let tmp = tempfile::tempdir().unwrap();
    let (run, project) = toy_run_and_project(tmp.path(), 1);

    // The stand-in has no cues for it: every simulation stays process-valid.
    let v = evaluate(&project, &run, &[]);
    let sims = v["simulations"].as_array().unwrap();
    assert!(!sims.is_empty());
    assert!(sims.iter().all(|s| s["process_valid"] == true), "{v}");

    let server = Loopback::serve(judge_says(false));
    let llm = llm_config(tmp.path(), &server, 8);
    let llm_arg = s(&llm);
    let v = evaluate(
        &project,
        &run,
        &["--process-judge", "local/judge", "--llm-config", llm_arg],
    );
    let sims = v["simulations"].as_array().unwrap();
    let judged: Vec<&Value> = sims
        .iter()
        .filter(|s| s["process_valid"] == false)
        .collect();
    assert!(!judged.is_empty(), "{v}");
    for s in judged {
        let d = &s["violations"][0];
        assert_eq!(d["judge"], "model", "{s}");
        assert_eq!(d["requirement"], "one_call_at_a_time");
    }
    // The model was asked with the question as an assertion.
    let bodies = server.received();
    assert!(!bodies.is_empty());
    let body = String::from_utf8_lossy(&bodies[0].body);
    assert!(
        body.contains("The agent made one tool call at a time."),
        "{body}"
    );
}

#[test]
fn judging_runs_concurrently_and_gives_the_sequential_verdicts() {
    let tmp = tempfile::tempdir().unwrap();
    let (run, project) = toy_run_and_project(tmp.path(), 3);
    let delay = Duration::from_millis(300);
    let arrivals = Arc::new(Mutex::new(Vec::new()));
    let server = Loopback::serve(Slow {
        delay,
        arrivals: arrivals.clone(),
    });
    let judged = |max_concurrency: usize| {
        arrivals.lock().unwrap().clear();
        let llm = llm_config(tmp.path(), &server, max_concurrency);
        let v = evaluate(
            &project,
            &run,
            &["--process-judge", "local/judge", "--llm-config", s(&llm)],
        );
        let mut times = arrivals.lock().unwrap().clone();
        times.sort();
        let closest = times
            .windows(2)
            .map(|w| w[1] - w[0])
            .min()
            .expect("several judge requests");
        (v["simulations"].clone(), times.len(), closest)
    };
    let (one, n_one, closest_one) = judged(1);
    let (four, n_four, closest_four) = judged(4);
    assert!(n_one >= 4, "{n_one} judge requests");
    assert_eq!(n_one, n_four, "the same predicates are judged");
    // One slot: each request waits for the previous answer, so none arrives within the
    // server's delay of another. Four: some arrive while an earlier one is still answered.
    assert!(
        closest_one >= delay,
        "sequential requests overlapped: {closest_one:?}"
    );
    assert!(
        closest_four < delay / 2,
        "no two of {n_four} requests overlapped: closest {closest_four:?}"
    );
    assert_eq!(one, four, "concurrent judging changes no verdict or order");
    let sims = four.as_array().unwrap();
    let valid = sims.iter().filter(|s| s["process_valid"] == true).count();
    assert!(
        valid > 0 && valid < sims.len(),
        "the hashed answers mix met and not met: {valid} of {} valid",
        sims.len()
    );
}

#[test]
fn view_takes_the_process_judge_and_shows_its_verdicts() {
    let tmp = tempfile::tempdir().unwrap();
    let (run, project) = toy_run_and_project(tmp.path(), 1);
    let server = Loopback::serve(judge_says(false));
    let llm = llm_config(tmp.path(), &server, 2);
    let site = tmp.path().join("site");
    tauguard_ok(&[
        "--project-dir",
        s(&project),
        "view",
        s(&run),
        "--out",
        s(&site),
        "--no-floors",
        "--process-judge",
        "local/judge",
        "--llm-config",
        s(&llm),
    ]);
    let index = crate::view::index(&site);
    let rows = index["sims"].as_array().unwrap();
    let mut judged = 0;
    for (i, row) in rows.iter().enumerate() {
        let v = crate::view::decode_data_file(&site.join(tauguard_view::process_file(i)));
        assert_eq!(row[9], v["process_valid"], "sim {i}");
        for x in v["violations"].as_array().unwrap() {
            assert_eq!(x["judge"], "model", "sim {i}: {x}");
            assert_eq!(x["requirement"], "one_call_at_a_time");
            judged += 1;
        }
    }
    assert!(judged > 0, "the model's `not met` shows as violations");
    assert!(!server.received().is_empty());
}
