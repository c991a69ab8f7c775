//! A task's concurrency key written as a template, `"user-{user_id}"` or
//! `"{tenant.region}/{order}"`: text with `{field}` parts filled in from
//! the job's input (a field of the top-level object, or a dotted path into
//! nested ones). Checked when the task is defined, filled in at enqueue.

use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    Text(String),
    /// A path of object keys into the input.
    Field(Vec<String>),
}

/// Whether a key is a template (and not plain text or a JSON pointer).
pub fn is_template(key: &str) -> bool {
    !key.starts_with('/') && (key.contains('{') || key.contains('}'))
}

/// The parts of a template, or what is wrong with it.
pub fn parse(template: &str) -> Result<Vec<Part>, String> {
    let mut parts = Vec::new();
    let mut rest = template;
    while !rest.is_empty() {
        let open = rest.find('{');
        if rest
            .find('}')
            .is_some_and(|close| open.is_none_or(|o| close < o))
        {
            return Err(format!(
                "a '}}' without its '{{' in {template:?}; a template is text with {{field}} parts"
            ));
        }
        let Some(open) = open else {
            parts.push(Part::Text(rest.to_owned()));
            break;
        };
        if open > 0 {
            parts.push(Part::Text(rest[..open].to_owned()));
        }
        let after = &rest[open + 1..];
        let close = after
            .find('}')
            .ok_or_else(|| format!("a '{{' without its '}}' in {template:?}"))?;
        let field = &after[..close];
        if field.contains('{') {
            return Err(format!("a '{{' inside a {{field}} in {template:?}"));
        }
        let path: Vec<String> = field.split('.').map(str::to_owned).collect();
        if path.iter().any(|p| p.trim().is_empty()) {
            return Err(format!(
                "an empty field name in {{{field}}} of {template:?}; write e.g. {{user_id}} or {{customer.id}}"
            ));
        }
        parts.push(Part::Field(path));
        rest = &after[close + 1..];
    }
    if !parts.iter().any(|p| matches!(p, Part::Field(_))) {
        return Err(format!("{template:?} has no {{field}} part"));
    }
    Ok(parts)
}

/// The key for `input`, or the JSON pointer of the field at fault and why.
pub fn render(parts: &[Part], input: &Value) -> Result<String, (String, String)> {
    let mut out = String::new();
    for p in parts {
        match p {
            Part::Text(t) => out.push_str(t),
            Part::Field(path) => {
                let pointer: String = path
                    .iter()
                    .map(|k| format!("/{}", k.replace('~', "~0").replace('/', "~1")))
                    .collect();
                match input.pointer(&pointer) {
                    Some(Value::String(s)) => out.push_str(s),
                    Some(v @ (Value::Number(_) | Value::Bool(_))) => out.push_str(&v.to_string()),
                    Some(Value::Null) | None => {
                        return Err((
                            pointer,
                            "the task's concurrency key is made with this field, and the input has no value at it".into(),
                        ))
                    }
                    Some(_) => {
                        return Err((
                            pointer,
                            "the task's concurrency key is made with this field; it must be a string, number or boolean".into(),
                        ))
                    }
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn templates_fill_in_fields_of_the_input() {
        let parts = parse("user-{user_id}/{order.region}").unwrap();
        assert_eq!(
            parts,
            [
                Part::Text("user-".into()),
                Part::Field(vec!["user_id".into()]),
                Part::Text("/".into()),
                Part::Field(vec!["order".into(), "region".into()]),
            ]
        );
        let input = json!({"user_id": 42, "order": {"region": "eu"}});
        assert_eq!(render(&parts, &input).unwrap(), "user-42/eu");
        let (pointer, why) = render(&parts, &json!({"user_id": "a"})).unwrap_err();
        assert_eq!(pointer, "/order/region");
        assert!(why.contains("no value"), "{why}");
        let (_, why) =
            render(&parts, &json!({"user_id": [1], "order": {"region": "x"}})).unwrap_err();
        assert!(why.contains("string, number or boolean"), "{why}");
    }

    #[test]
    fn bad_templates_are_named() {
        for bad in ["a{b", "a}b", "{}", "{a.}", "plain{{x}}", "x{a{b}}"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert!(is_template("k-{a}"));
        assert!(!is_template("/a/b") && !is_template("customer"));
    }
}
