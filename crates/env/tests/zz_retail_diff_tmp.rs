use serde_json::Value;
use tauguard_core::Requestor;
use tauguard_env::environment::DomainBase;
use tauguard_env::hash::db_hash;
use tauguard_env::retail::RetailBase;
#[test]
fn diff() {
    let real = RetailBase::load(std::path::Path::new("/work/shared/tau2/retail")).unwrap();
    let fix = RetailBase::load(std::path::Path::new("/tmp/up/fixture")).unwrap();
    let text = std::fs::read_to_string(std::env::var("CASES").unwrap()).unwrap();
    let (mut bad, mut n, mut hbad) = (0, 0, 0);
    for line in text.lines() {
        let d: Value = serde_json::from_str(line).unwrap();
        let mut env = if d["db"] == "real" { real.fresh() } else { fix.fresh() };
        let mut seq_bad = false;
        for (c, r) in d["calls"].as_array().unwrap().iter().zip(d["results"].as_array().unwrap()) {
            n += 1;
            let got = match env.dispatch(Requestor::Assistant, c["name"].as_str().unwrap(), c["arguments"].as_object().unwrap()) {
                Ok(v) => format!("ok {}", v.content()),
                Err(e) => format!("err {}", e.qualified()),
            };
            let want = format!("{} {}", r[0].as_str().unwrap(), r[1].as_str().unwrap()).replace("pydantic.dev/2.13/", "pydantic.dev/2.12/");
            if got != want {
                bad += 1; seq_bad = true;
                if bad <= 25 { println!("MISMATCH {} {}\n  got  {}\n  want {}", c["name"], c["arguments"], &got[..got.len().min(400)], &want[..want.len().min(400)]); }
            }
        }
        if db_hash(&env.agent_db()) != d["hash"].as_str().unwrap() { hbad += 1; if !seq_bad && hbad < 10 { println!("HASH MISMATCH {}", d["calls"]); } }
    }
    println!("{bad}/{n} call mismatches, {hbad} hash mismatches");
}
