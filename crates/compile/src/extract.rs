//! Pulling a YAML or JSON document out of a model reply that may wrap it in code fences or
//! prose. Each function returns candidates, most likely first; the caller parses them in order
//! and keeps the first that parses ([`parse_json`] does so for a JSON reply).

use serde::de::DeserializeOwned;

/// A fenced code block: its info string (`yaml`, `json`, ...; lowercase, may be empty) and
/// body. An unclosed fence (a truncated reply) runs to the end of the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fenced {
    pub(crate) lang: String,
    pub(crate) body: String,
}

/// Every fenced code block of `text` (```` ``` ```` or `~~~`, up to three spaces of indent).
pub(crate) fn fenced_blocks(text: &str) -> Vec<Fenced> {
    let mut out = Vec::new();
    let mut open: Option<(String, String, Vec<&str>)> = None; // (fence, lang, lines)
    for line in text.lines() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        match &mut open {
            None => {
                if indent <= 3
                    && let Some(fence) = fence_of(trimmed)
                {
                    let lang = trimmed[fence.len()..].trim().to_ascii_lowercase();
                    open = Some((fence, lang, Vec::new()));
                }
            }
            Some((fence, lang, lines)) => {
                let t = trimmed.trim_end();
                if indent <= 3
                    && t.starts_with(fence.as_str())
                    && t.chars().all(|c| c == t.chars().next().unwrap_or('`'))
                {
                    out.push(Fenced {
                        lang: std::mem::take(lang),
                        body: lines.join("\n"),
                    });
                    open = None;
                } else {
                    lines.push(line);
                }
            }
        }
    }
    if let Some((_, lang, lines)) = open
        && !lines.is_empty()
    {
        out.push(Fenced {
            lang,
            body: lines.join("\n"),
        });
    }
    out
}

fn fence_of(line: &str) -> Option<String> {
    for ch in ['`', '~'] {
        let n = line.chars().take_while(|&c| c == ch).count();
        if n >= 3 {
            return Some(std::iter::repeat_n(ch, n).collect());
        }
    }
    None
}

fn push_unique(out: &mut Vec<String>, candidate: String) {
    let candidate = candidate.trim_matches('\n').to_string();
    if !candidate.trim().is_empty() && !out.contains(&candidate) {
        out.push(candidate);
    }
}

/// YAML candidates: fenced `yaml`/`yml` blocks, then other fenced blocks, then the document
/// starting at the first line that opens with one of `top_keys` (prose after it cut off), then
/// the whole reply.
pub(crate) fn yaml_candidates(text: &str, top_keys: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let blocks = fenced_blocks(text);
    for b in blocks
        .iter()
        .filter(|b| b.lang == "yaml" || b.lang == "yml")
    {
        push_unique(&mut out, b.body.clone());
    }
    for b in blocks
        .iter()
        .filter(|b| b.lang != "yaml" && b.lang != "yml" && b.lang != "json")
    {
        push_unique(&mut out, b.body.clone());
    }
    if let Some(doc) = unfenced_yaml(text, top_keys) {
        push_unique(&mut out, doc);
    }
    push_unique(&mut out, text.to_string());
    out
}

/// The YAML document that starts at the first column-0 line `key:` with `key` in `top_keys`,
/// up to the first line that cannot belong to it (column-0 prose).
fn unfenced_yaml(text: &str, top_keys: &[&str]) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let starts_doc = |l: &str| {
        top_keys
            .iter()
            .any(|k| l.strip_prefix(k).is_some_and(|r| r.starts_with(':')))
    };
    let start = lines.iter().position(|l| starts_doc(l))?;
    let mut end = start;
    for (i, line) in lines.iter().enumerate().skip(start) {
        let belongs = line.trim().is_empty()
            || line.starts_with(' ')
            || line.starts_with('\t')
            || line.starts_with("- ")
            || line.starts_with('#')
            || is_top_key_line(line);
        if !belongs {
            break;
        }
        end = i + 1;
    }
    Some(lines[start..end].join("\n"))
}

fn is_top_key_line(line: &str) -> bool {
    match line.split_once(':') {
        Some((key, _)) => {
            !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        None => false,
    }
}

/// JSON candidates: the whole reply, fenced blocks (`json` first), then the span from the
/// first `{` to the last `}`.
pub(crate) fn json_candidates(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    push_unique(&mut out, text.trim().to_string());
    let blocks = fenced_blocks(text);
    for b in blocks.iter().filter(|b| b.lang == "json") {
        push_unique(&mut out, b.body.clone());
    }
    for b in blocks.iter().filter(|b| b.lang != "json") {
        push_unique(&mut out, b.body.clone());
    }
    if let (Some(start), Some(end)) = (text.find('{'), text.rfind('}'))
        && start < end
    {
        push_unique(&mut out, text[start..=end].to_string());
    }
    out
}

/// The first JSON candidate of `reply` (fences and prose stripped) that deserializes as `T`.
/// Otherwise the error of the first candidate that is JSON at all — located by its JSON path,
/// e.g. ``at `nodes[2].kind`: unknown variant …`` — or a syntax error when none is.
pub(crate) fn parse_json<T: DeserializeOwned>(reply: &str, shape: &str) -> Result<T, String> {
    if reply.trim().is_empty() {
        return Err(format!("the reply was empty; expected {shape}"));
    }
    let mut schema_error = None;
    let mut syntax_error = None;
    for candidate in json_candidates(reply) {
        let de = &mut serde_json::Deserializer::from_str(&candidate);
        match serde_path_to_error::deserialize::<_, T>(de) {
            Ok(v) => return Ok(v),
            Err(e) => {
                let at = e.path().to_string();
                let inner = e.into_inner();
                if inner.is_data() {
                    schema_error.get_or_insert(format!("at `{at}`: {inner}"));
                } else {
                    syntax_error.get_or_insert(inner.to_string());
                }
            }
        }
    }
    Err(match (schema_error, syntax_error) {
        (Some(e), _) => e,
        (None, Some(e)) => format!("no JSON object found in the reply ({e}); expected {shape}"),
        (None, None) => format!("no JSON object found in the reply; expected {shape}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fenced_yaml_in_prose() {
        let text =
            "Here is the checklist:\n\n```yaml\ntool: a\nrequirements: []\n```\n\nLet me know!";
        let c = yaml_candidates(text, &["tool"]);
        assert_eq!(c[0], "tool: a\nrequirements: []");
    }

    #[test]
    fn unlabeled_and_tilde_fences() {
        let text = "~~~\nrules: []\n~~~";
        assert_eq!(yaml_candidates(text, &["rules"])[0], "rules: []");
        let text = "```\nrules: []\n```";
        assert_eq!(yaml_candidates(text, &["rules"])[0], "rules: []");
    }

    #[test]
    fn unclosed_fence_runs_to_end() {
        let text = "```yaml\ntool: a\nconstraints: []";
        assert_eq!(
            yaml_candidates(text, &["tool"])[0],
            "tool: a\nconstraints: []"
        );
    }

    #[test]
    fn unfenced_yaml_drops_surrounding_prose() {
        let text = "Sure, the rules are below.\nrules:\n  - name: a\n    rule: b\n\nThese cover the policy.";
        let c = yaml_candidates(text, &["rules"]);
        assert_eq!(c[0], "rules:\n  - name: a\n    rule: b");
    }

    #[test]
    fn json_in_fence_and_prose() {
        let text = "Result:\n```json\n{\"a\": 1}\n```";
        let c = json_candidates(text);
        assert!(c.contains(&"{\"a\": 1}".to_string()));
        let text = "The answer is {\"a\": {\"b\": 2}} as requested.";
        assert!(json_candidates(text).contains(&"{\"a\": {\"b\": 2}}".to_string()));
    }

    #[test]
    fn a_schema_error_names_its_json_path() {
        use tauguard_guards::Graph;
        let reply = "Here:\n```json\n{\"id\": \"x\", \"nodes\": [{\"id\": \"a\", \"kind\": \"fork\", \"actor\": \"agent\", \"action\": \"a\", \"condition\": \"c\"}], \"edges\": []}\n```";
        let err = parse_json::<Graph>(reply, "a graph").unwrap_err();
        assert!(err.starts_with("at `nodes[0].kind`"), "{err}");
        let err = parse_json::<Graph>(
            "{\"id\": \"x\", \"nodes\": [], \"edges\": [], \"next\": 1}",
            "a graph",
        )
        .unwrap_err();
        assert!(err.contains("unknown field `next`"), "{err}");
        let err = parse_json::<Graph>("I could not do it.", "a graph").unwrap_err();
        assert!(
            err.contains("no JSON object") && err.contains("a graph"),
            "{err}"
        );
    }
}
