//! The CEL layer of ToolGuard: one shared interpreter environment, JSON ↔ CEL conversion,
//! the load-time check of the names an expression reads, and evaluation.
//!
//! Interpreter: the `cel` crate (cel-rust; the maintained successor of `cel-interpreter`),
//! standard library plus the `lists` and `math` extensions, timestamps and durations (the
//! `chrono` feature). Three functions are added to every evaluation: `max(list)` and
//! `min(list)` (cel-rust's own helpers) and `sum(list)` (numbers; ints stay ints).

use cel::common::ast::{EntryExpr, Expr, IdedExpr};
use cel::extractors::Arguments;
use cel::objects::{Key, Map as CelMap};
use cel::{Context, Env, ExecutionError, Program, Value};
use serde_json::Value as Json;
use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, OnceLock};

/// Identifiers that are not variables: CEL type names and extension namespaces.
const BUILTIN_IDENTS: &[&str] = &[
    "int",
    "uint",
    "double",
    "bool",
    "string",
    "bytes",
    "list",
    "map",
    "null_type",
    "type",
    "duration",
    "timestamp",
    "math",
    "lists",
    "strings",
    "optional",
    "dyn",
];

fn env() -> &'static Arc<Env> {
    static ENV: OnceLock<Arc<Env>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Env::stdlib();
        env.add_extension(cel::extensions::lists)
            .expect("lists extension registers once");
        env.add_extension(cel::extensions::math)
            .expect("math extension registers once");
        Arc::new(env)
    })
}

/// A compiled expression with its source, for messages.
#[derive(Debug)]
pub(crate) struct Expression {
    pub source: String,
    program: Program,
}

impl Expression {
    /// Parses `source`; on failure the interpreter's message (position included).
    pub(crate) fn compile(source: &str) -> Result<Expression, String> {
        if source.trim().is_empty() {
            return Err("empty expression".into());
        }
        let program = env()
            .compile(source)
            .map_err(|e| e.to_string().replace('\n', "; "))?;
        Ok(Expression {
            source: source.to_string(),
            program,
        })
    }

    /// Variables the expression reads that no comprehension binds (type names and extension
    /// namespaces excluded).
    pub(crate) fn free_variables(&self) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        collect_free(self.program.expression(), &mut Vec::new(), &mut out);
        out
    }

    pub(crate) fn eval(&self, scope: &Context<'_, '_>) -> Result<Value, String> {
        self.program.execute(scope).map_err(|e| describe_error(&e))
    }

    /// Evaluates and requires a boolean.
    pub(crate) fn eval_bool(&self, scope: &Context<'_, '_>) -> Result<bool, String> {
        match self.eval(scope)? {
            Value::Bool(b) => Ok(b),
            other => Err(format!("expected a bool, got {}", type_name(&other))),
        }
    }
}

fn describe_error(e: &ExecutionError) -> String {
    e.to_string()
}

fn type_name(v: &Value) -> String {
    v.type_of().to_string()
}

fn collect_free(e: &IdedExpr, bound: &mut Vec<String>, out: &mut BTreeSet<String>) {
    match &e.expr {
        Expr::Unspecified | Expr::Literal(_) => {}
        Expr::Ident(name) => {
            if !name.starts_with('@')
                && !bound.iter().any(|b| b == name)
                && !BUILTIN_IDENTS.contains(&name.as_str())
            {
                out.insert(name.clone());
            }
        }
        Expr::Call(call) => {
            if let Some(t) = &call.target {
                collect_free(t, bound, out);
            }
            for a in &call.args {
                collect_free(a, bound, out);
            }
        }
        Expr::Comprehension(c) => {
            collect_free(&c.iter_range, bound, out);
            collect_free(&c.accu_init, bound, out);
            let depth = bound.len();
            bound.push(c.iter_var.clone());
            if let Some(v2) = &c.iter_var2 {
                bound.push(v2.clone());
            }
            bound.push(c.accu_var.clone());
            collect_free(&c.loop_cond, bound, out);
            collect_free(&c.loop_step, bound, out);
            collect_free(&c.result, bound, out);
            bound.truncate(depth);
        }
        Expr::List(l) => {
            for x in &l.elements {
                collect_free(x, bound, out);
            }
        }
        Expr::Map(m) => {
            for entry in &m.entries {
                collect_entry(&entry.expr, bound, out);
            }
        }
        Expr::Struct(s) => {
            for entry in &s.entries {
                collect_entry(&entry.expr, bound, out);
            }
        }
        Expr::Select(s) => collect_free(&s.operand, bound, out),
    }
}

fn collect_entry(e: &EntryExpr, bound: &mut Vec<String>, out: &mut BTreeSet<String>) {
    match e {
        EntryExpr::MapEntry(m) => {
            collect_free(&m.key, bound, out);
            collect_free(&m.value, bound, out);
        }
        EntryExpr::StructField(f) => collect_free(&f.value, bound, out),
    }
}

/// A root evaluation scope with the helper functions registered.
pub(crate) fn new_scope<'v>() -> Context<'static, 'v> {
    let mut ctx = Context::with_env(Arc::clone(env()));
    // The names are not overloads of the environment, so registering cannot conflict.
    let _ = ctx.add_function("max", cel::functions::max);
    let _ = ctx.add_function("min", cel::functions::min);
    let _ = ctx.add_function("sum", sum);
    ctx
}

fn sum(Arguments(args): Arguments) -> Result<Value, ExecutionError> {
    let items: &[Value] = match args.as_slice() {
        [Value::List(l)] => l.as_slice(),
        other => other,
    };
    let mut int: i64 = 0;
    let mut float: Option<f64> = None;
    for v in items {
        match v {
            Value::Int(i) => match float.as_mut() {
                Some(f) => *f += *i as f64,
                None => {
                    int = int
                        .checked_add(*i)
                        .ok_or_else(|| ExecutionError::function_error("sum", "overflow"))?
                }
            },
            Value::UInt(u) => match float.as_mut() {
                Some(f) => *f += *u as f64,
                None => {
                    let i = i64::try_from(*u)
                        .map_err(|_| ExecutionError::function_error("sum", "overflow"))?;
                    int = int
                        .checked_add(i)
                        .ok_or_else(|| ExecutionError::function_error("sum", "overflow"))?;
                }
            },
            Value::Float(x) => *float.get_or_insert(int as f64) += x,
            other => {
                return Err(ExecutionError::function_error(
                    "sum",
                    format!("not a number: {}", type_name(other)),
                ));
            }
        }
    }
    Ok(float.map_or(Value::Int(int), Value::Float))
}

/// JSON → CEL: integers that fit become `int`, other numbers `double`; objects become maps
/// with string keys.
pub(crate) fn to_cel(v: &Json) -> Value {
    match v {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => match n.as_i64() {
            Some(i) => Value::Int(i),
            None => match n.as_u64() {
                Some(u) => Value::UInt(u),
                None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
        },
        Json::String(s) => Value::String(Arc::new(s.clone())),
        Json::Array(a) => Value::List(Arc::new(a.iter().map(to_cel).collect())),
        Json::Object(o) => {
            let map: HashMap<Key, Value> = o
                .iter()
                .map(|(k, v)| (Key::String(Arc::new(k.clone())), to_cel(v)))
                .collect();
            Value::Map(CelMap { map: Arc::new(map) })
        }
    }
}

/// CEL → JSON, for lookup arguments. Timestamps become RFC 3339 strings, durations seconds.
pub(crate) fn to_json(v: &Value) -> Result<Json, String> {
    Ok(match v {
        Value::Null => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(i) => Json::from(*i),
        Value::UInt(u) => Json::from(*u),
        Value::Float(f) => serde_json::Number::from_f64(*f)
            .map(Json::Number)
            .unwrap_or(Json::Null),
        Value::String(s) => Json::String(s.as_ref().clone()),
        Value::List(l) => Json::Array(l.iter().map(to_json).collect::<Result<_, _>>()?),
        Value::Map(m) => {
            let mut out = serde_json::Map::new();
            for (k, v) in m.map.iter() {
                let key = match k {
                    Key::String(s) => s.as_ref().clone(),
                    Key::Int(i) => i.to_string(),
                    Key::Uint(u) => u.to_string(),
                    Key::Bool(b) => b.to_string(),
                };
                out.insert(key, to_json(v)?);
            }
            Json::Object(out)
        }
        Value::Timestamp(t) => Json::String(t.to_rfc3339()),
        Value::Duration(d) => Json::from(d.num_seconds()),
        other => {
            return Err(format!(
                "a {} cannot be passed as a tool argument",
                type_name(other)
            ));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn eval_with(src: &str, vars: &[(&str, Json)]) -> Result<Value, String> {
        let e = Expression::compile(src)?;
        let mut ctx = new_scope();
        for (k, v) in vars {
            ctx.add_variable_from_value(*k, to_cel(v));
        }
        e.eval(&ctx)
    }

    #[test]
    fn interpreter_behaviour_the_rules_rely_on() {
        let r = json!({"cabin": "economy", "status": null, "passengers": [{"a": 1}, {"a": 2}],
            "created_at": "2024-05-14T16:00:00", "pm": {"gift_card_1": {"amount": 10.5}}});
        let v = |s: &str| {
            eval_with(
                s,
                &[("r", r.clone()), ("now", json!("2024-05-15T15:00:00"))],
            )
        };
        let holds = [
            "r.status != 'cancelled'",
            "size(r.passengers) <= 5",
            "r.pm['gift_card_1'].amount >= 10",
            "r.pm.gift_card_1.amount < 11",
            "'gift_card_1' in r.pm",
            "timestamp(now + 'Z') - timestamp(r.created_at + 'Z') <= duration('24h')",
            "r.passengers.all(p, p.a > 0)",
            "r.passengers.map(p, p.a).exists(x, x == 2)",
            "sum(r.passengers.map(p, p.a)) == 3",
            "max(r.passengers.map(p, p.a)) == 2",
            "lists.range(2).all(i, r.passengers[i].a == i + 1)",
            "{'regular': {'economy': 1}}['regular'][r.cabin] == 1",
            "has(r.status) && r.status == null",
            "2.0 <= 2 && 1 < 1.5",
        ];
        for src in holds {
            assert_eq!(v(src), Ok(Value::Bool(true)), "{src}");
        }
        assert!(v("r.status.x").is_err());
        assert!(v("r.nope").is_err());
        assert!(v("nope").is_err());
        let e = Expression::compile("r.passengers.all(p, p.a > x) && math.greatest(1, 2) == 2")
            .unwrap();
        assert_eq!(
            e.free_variables().into_iter().collect::<Vec<_>>(),
            vec!["r".to_string(), "x".to_string()]
        );
        assert!(Expression::compile("r.cabin ==").is_err());
        assert_eq!(
            to_json(&v("{'a': [1, 'x', 2.5]}").unwrap()).unwrap(),
            json!({"a": [1, "x", 2.5]})
        );
    }

    #[test]
    fn programs_are_shareable() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Expression>();
    }
}
