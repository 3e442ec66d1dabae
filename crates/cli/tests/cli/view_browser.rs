//! The viewer in headless Chromium (from the system; `.ci/run` installs it): the site built
//! from the offline guarded run opens from `file://` under its Content-Security-Policy, the
//! overview leads to a cell's grid and on to a simulation with a blocked call, whose verdict,
//! NOT MET requirement and remediation are shown; the pair page lists McNemar's discordant
//! pairs; a record carrying markup shows it as text
//! and none of it runs. Writes screenshots under `target/view-test/` (paths printed).

use crate::view::{INJECTED, fixture, index};
use serde_json::Value;
use std::io::Write;
use std::time::Duration;
use tauguard_testkit::chromium::{Browser, chromium_or_skip, file_url};

const WAIT: Duration = Duration::from_secs(20);

fn say(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// Waits for the page to report `route` rendered.
fn rendered(b: &mut Browser, route: &str) {
    let expr = format!(
        "document.body.getAttribute('data-rendered') === {}",
        serde_json::to_string(route).unwrap()
    );
    if let Err(e) = b.wait_for(&expr, WAIT) {
        let shown = b.eval("document.body.getAttribute('data-rendered') + ' | ' + document.getElementById('main').innerText.slice(0, 400)");
        panic!("{e}; page shows {shown:?}");
    }
}

fn text(b: &mut Browser) -> String {
    b.eval("document.getElementById('main').innerText")
        .unwrap()
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn the_viewer_shows_a_blocked_call_and_runs_no_record_markup() {
    let Some(exe) = chromium_or_skip() else {
        return;
    };
    let Some(f) = fixture() else { return };
    let mut b = Browser::launch(&exe, 1280, 900).unwrap();
    b.navigate(&file_url(&f.site.join("index.html"))).unwrap();
    rendered(&mut b, "overview");
    let overview = text(&mut b);
    for want in [
        "Overview",
        "Pass^1",
        "pg-checklist",
        "baseline",
        "Floors",
        "refuse-all",
    ] {
        assert!(
            overview.contains(want),
            "overview lacks {want:?}:\n{overview}"
        );
    }

    // The pg-checklist cell's grid, from the overview's link.
    let index = index(&f.site);
    let cell = index["cells"]
        .as_array()
        .unwrap()
        .iter()
        .position(|c| c["guard"] == "pg-checklist")
        .unwrap();
    b.eval(&format!(
        "document.querySelector('a.cell-link[data-cell=\"{cell}\"]').click()"
    ))
    .unwrap();
    rendered(&mut b, "grid");
    // A simulation with a blocked call whose decision has a NOT MET requirement.
    let (sim, event) = f
        .records
        .iter()
        .enumerate()
        .skip(1)
        .find_map(|(i, r)| {
            let e = r["guard_events"].as_array()?.iter().find(|e| {
                e["verdict"] == "block"
                    && e["requirements"]
                        .as_array()
                        .is_some_and(|q| q.iter().any(|q| q["met"] == false))
            })?;
            Some((i, e.clone()))
        })
        .expect("some pg-checklist decision blocks with a NOT MET requirement");
    b.eval(&format!(
        "document.querySelector('a.sq[data-sim=\"{sim}\"]').click()"
    ))
    .unwrap();
    rendered(&mut b, &format!("sim:{sim}"));
    let page = text(&mut b);
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let page_sq = squash(&page);
    for want in [
        "BLOCK",
        "NOT MET",
        "not executed",
        "Remediation:",
        "Reward",
        "ACTION: gold actions",
    ] {
        assert!(page.contains(want), "simulation page lacks {want:?}");
    }
    // The start time reads as a UTC date and time, not the record's Unix seconds.
    let started = f.records[sim]["started_at"].as_str().unwrap();
    let shown = b
        .eval("(function(){var d=[].slice.call(document.querySelectorAll('dl.kv dt')).find(function(x){return x.textContent==='started'});return d?d.nextElementSibling.textContent:''})()")
        .unwrap();
    let shown = shown.as_str().unwrap();
    assert!(
        shown.ends_with(" UTC") && shown.len() == 23 && !shown.contains(started),
        "started {started:?} shown as {shown:?}"
    );
    for (raw, want) in [
        ("86400", "1970-01-02 00:00:00 UTC"),
        ("2025-06-01T12:30:00+02:00", "2025-06-01 10:30:00 UTC"),
        ("2025-06-01T12:30:00.123456", "2025-06-01 12:30:00"),
        ("soon", "soon"),
    ] {
        let got = b.eval(&format!("TG.utcTime({raw:?})")).unwrap();
        assert_eq!(got, want, "TG.utcTime({raw:?})");
    }
    let remediation = event["remediation"].as_str().unwrap();
    assert!(
        page_sq.contains(&squash(remediation)),
        "remediation {remediation:?} not shown"
    );
    let not_met = event["requirements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["met"] == false)
        .unwrap();
    assert!(
        page.contains(not_met["name"].as_str().unwrap()),
        "NOT MET requirement {not_met} not shown"
    );
    // The blocked call sits where the agent made it: after message at_message - 1.
    let placed = b
        .eval(&format!(
            "(function(){{var g=document.querySelector('.guard.blocked[data-call=\"{}\"]');var prev=g.closest('.bubble').previousElementSibling;while(prev&&!prev.hasAttribute('data-msg'))prev=prev.previousElementSibling;return prev?+prev.getAttribute('data-msg'):-1}})()",
            event["call_id"].as_str().unwrap()
        ))
        .unwrap();
    // The last message bubble before it is the last non-tool message before at_message.
    let at = event["at_message"].as_u64().unwrap() as usize;
    let msgs = f.records[sim]["messages"].as_array().unwrap();
    let expect = (0..at.min(msgs.len()))
        .rev()
        .find(|&i| msgs[i]["role"] == "user" || msgs[i]["role"] == "assistant");
    assert_eq!(
        placed.as_i64().unwrap(),
        expect.map_or(-1, |i| i as i64),
        "blocked call recorded at message {at} placed after the wrong bubble"
    );
    b.eval("document.querySelector('.guard.blocked').scrollIntoView({block: 'start'}); window.scrollBy(0, -120); true").unwrap();
    let shot = f.dir.join("blocked-call.png");
    b.screenshot(&shot).unwrap();
    say(&format!("screenshot of a blocked call: {}", shot.display()));

    // The pair page lists McNemar's discordant pairs, as many as the index counts.
    let pair = &index["pairs"][0];
    b.eval(&format!(
        "location.hash = '#/pair/{}/{}'; true",
        pair["a"], pair["b"]
    ))
    .unwrap();
    rendered(&mut b, "pair");
    for (list, key) in [("pairs-b", "b"), ("pairs-c", "c")] {
        let n = b
            .eval(&format!("document.querySelectorAll('ul.{list} li').length"))
            .unwrap();
        assert_eq!(n, pair["test"][key], "{list}");
    }

    // The record carrying markup: shown as text, nothing of it executed, even expanded.
    b.eval("location.hash = '#/sim/0'; true").unwrap();
    rendered(&mut b, "sim:0");
    b.eval("document.querySelectorAll('details').forEach(function(d){ d.open = true; }); true")
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let pwned = b.eval("typeof window.__pwned").unwrap();
    assert_eq!(
        pwned,
        Value::String("undefined".into()),
        "record markup executed"
    );
    assert_eq!(
        b.eval("document.querySelectorAll('main script, main img').length")
            .unwrap(),
        Value::from(0)
    );
    let shown = b
        .eval("document.getElementById('main').textContent")
        .unwrap();
    let visible = INJECTED.split('\u{2028}').next().unwrap();
    assert!(
        shown.as_str().unwrap().contains(visible),
        "the markup is visible as text"
    );
    b.eval("document.querySelector('.bubble.user').scrollIntoView(); true")
        .unwrap();
    let shot = f.dir.join("escaped-markup.png");
    b.screenshot(&shot).unwrap();
    say(&format!(
        "screenshot of record markup shown as text: {}",
        shot.display()
    ));
}
