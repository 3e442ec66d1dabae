//! Data files as `<script>`-loadable JavaScript. A page opened from `file://` cannot `fetch()`
//! its data, so each data file is a script calling a loader with the JSON text; the text is
//! passed as a JavaScript string to `JSON.parse` (a `__proto__` key in a record stays a plain
//! key, as it would in JSON) and made unable to leave its wrapper: no `<` survives (so no
//! `</script` or `<!--`), and U+2028 / U+2029 are escaped.

use serde::Serialize;

/// `callee(arg, JSON.parse("<json>"));` with `json` escaped as a script-safe string literal.
/// `json` must be JSON text; `arg` is a JavaScript literal the caller controls (a number).
pub(crate) fn script_call(callee: &str, arg: &str, json: &str) -> String {
    let mut out = String::with_capacity(json.len() + json.len() / 8 + callee.len() + 32);
    out.push_str(callee);
    out.push('(');
    if !arg.is_empty() {
        out.push_str(arg);
        out.push(',');
    }
    out.push_str("JSON.parse(");
    push_js_string(&mut out, json);
    out.push_str("));\n");
    out
}

/// [`script_call`] over a serializable value.
pub(crate) fn script_call_value<T: Serialize>(callee: &str, arg: &str, value: &T) -> String {
    let json = serde_json::to_string(value).expect("view data serializes to JSON");
    script_call(callee, arg, &json)
}

/// Appends `s` as a double-quoted JavaScript string literal that is also safe inside an HTML
/// `<script>` element: quotes, backslashes and control characters escaped, `<`, `>` and `&`
/// as `\u` escapes, and the two line terminators JavaScript string literals once rejected.
pub(crate) fn push_js_string(out: &mut String, s: &str) {
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_and_line_terminators_cannot_leave_the_wrapper() {
        let json = serde_json::to_string(&serde_json::json!({
            "content": "</script><script>alert(1)</script><!-- \u{2028}\u{2029} & \"q\" \\ \n\u{1}"
        }))
        .unwrap();
        let js = script_call("window.__tg_sim", "7", &json);
        for bad in ["</script", "<!--", "<", ">", "\u{2028}", "\u{2029}", "\n\""] {
            assert!(!js.trim_end().contains(bad), "{bad:?} in {js}");
        }
        assert!(js.starts_with("window.__tg_sim(7,JSON.parse(\""));
        // Decoding the string literal (JSON string syntax is the same here) gives the text back.
        let lit = js
            .trim_end()
            .strip_prefix("window.__tg_sim(7,JSON.parse(")
            .and_then(|s| s.strip_suffix("));"))
            .unwrap();
        let back: String = serde_json::from_str(lit).unwrap();
        assert_eq!(back, json);
    }
}
