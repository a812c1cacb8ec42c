//! A declared `params` schema, compiled, and a payload checked against it before the page sees
//! it: a payload that does not fit is `invalid_params` naming the JSON Pointer of the first bad
//! field. The schema is a page's: it is bounded (size, depth; the extension checked both, and
//! they are checked again here), its `$ref`s are never fetched (the crate is built without
//! remote resolving), and its `pattern`s run on the linear-time `regex` engine, so no schema can
//! make the bridge work long.

use jsonschema::{PatternOptions, Validator};
use serde_json::Value;
use tabwire_proto::wire::{self, code};

use crate::error::CallError;

/// JSON text of one declared schema (as `extension/lib/commands.js` `MAX_SCHEMA`).
pub const MAX_SCHEMA: usize = 16 * 1024;
/// Objects and arrays inside one another in one schema (`MAX_SCHEMA_DEPTH`).
pub const MAX_SCHEMA_DEPTH: usize = 16;

/// What a declared parameter may be named, as `extension/lib/commands.js` checks it (`PARAM_NAME`):
/// a name in an MCP tool's `inputSchema` is page text that no label can go beside.
pub const PARAM_NAME: &str = "^[A-Za-z_][A-Za-z0-9_]{0,63}$";
/// [`PARAM_NAME`] in words, for the errors that quote it.
pub const PARAM_NAME_RULE: &str =
    "a parameter name is a letter or _, then letters, digits or _, 64 characters at most";

/// Whether `name` matches [`PARAM_NAME`].
pub fn is_param_name(name: &str) -> bool {
    let mut chars = name.chars();
    name.len() <= 64
        && chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The validator of a declared `params` schema, or why it cannot be one.
pub fn compile(schema: &Value) -> Result<Validator, String> {
    let text = schema.to_string();
    if text.len() > MAX_SCHEMA {
        return Err(format!(
            "its params schema is {} bytes of JSON, over {MAX_SCHEMA}",
            text.len()
        ));
    }
    if wire::nesting_depth(&text) > MAX_SCHEMA_DEPTH {
        return Err(format!("its params schema nests deeper than {MAX_SCHEMA_DEPTH} levels"));
    }
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err("its params schema does not describe an object (type: \"object\")".into());
    }
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .with_pattern_options(PatternOptions::regex())
        .build(schema)
        .map_err(|e| format!("its params schema is not a valid JSON Schema: {e}"))
}

/// `invalid_params` unless `payload` fits the `params` schema `origin` declared for `kind`.
pub fn payload(schema: &Value, payload: &Value, kind: &str, origin: &str) -> Result<(), CallError> {
    let validator = compile(schema).map_err(|why| {
        CallError::new(
            code::INVALID_PARAMS,
            format!("{origin} declared command {kind:?} badly, so it cannot be sent: {why}"),
        )
    })?;
    match validator.validate(payload) {
        Ok(()) => Ok(()),
        Err(e) => {
            let at = e.instance_path().as_str();
            let at = if at.is_empty() { "/ (the payload itself)" } else { at };
            Err(CallError::new(
                code::INVALID_PARAMS,
                format!(
                    "the payload does not fit the params schema {origin} declared for {kind:?}, so \
                     the page was not asked: at {at}: {e}. list_commands shows the schema"
                ),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn colour() -> Value {
        json!({
            "type": "object",
            "properties": { "color": { "type": "string", "minLength": 1 }, "n": { "type": "integer" } },
            "required": ["color"],
            "additionalProperties": false
        })
    }

    #[test]
    fn a_payload_that_fits_passes() {
        payload(&colour(), &json!({ "color": "red" }), "change", "http://a").unwrap();
    }

    #[test]
    fn the_first_bad_field_is_named_by_its_pointer() {
        let e = payload(&colour(), &json!({ "color": 7 }), "change", "http://a").unwrap_err();
        assert_eq!(e.code(), code::INVALID_PARAMS);
        assert!(e.message().contains("at /color:"), "{}", e.message());
        let e = payload(&colour(), &json!({}), "change", "http://a").unwrap_err();
        assert!(e.message().contains("at / (the payload itself)"), "{}", e.message());
        assert!(e.message().contains("color"), "it names the missing field: {}", e.message());
    }

    #[test]
    fn the_limits_are_the_extensions() {
        let worker = include_str!("../../../extension/lib/commands.js");
        assert!(
            worker.contains("export const MAX_SCHEMA = 16 * 1024;"),
            "MAX_SCHEMA = {MAX_SCHEMA}"
        );
        assert!(
            worker.contains(&format!("export const MAX_SCHEMA_DEPTH = {MAX_SCHEMA_DEPTH};")),
            "MAX_SCHEMA_DEPTH = {MAX_SCHEMA_DEPTH}"
        );
        assert_eq!(MAX_SCHEMA, 16 * 1024);
        assert!(
            worker.contains(&format!("export const PARAM_NAME = /{PARAM_NAME}/;")),
            "PARAM_NAME = {PARAM_NAME}"
        );
        let ok = ["a", "_", "A_9", &"x".repeat(64)];
        assert!(ok.iter().all(|n| is_param_name(n)));
        let bad = ["", "9a", "a-b", "a b", "é", &"x".repeat(65)];
        assert!(!bad.iter().any(|n| is_param_name(n)));
    }

    #[test]
    fn huge_deep_or_remote_schemas_are_refused() {
        let mut deep = json!({ "type": "object" });
        for _ in 0..20 {
            deep = json!({ "type": "object", "properties": { "a": deep } });
        }
        assert!(compile(&deep).unwrap_err().contains("deeper"));
        let big = json!({ "type": "object", "description": "x".repeat(MAX_SCHEMA) });
        assert!(compile(&big).unwrap_err().contains("bytes"));
        let remote = json!({ "type": "object", "properties": { "a": { "$ref": "https://example.com/s.json" } } });
        assert!(compile(&remote).is_err(), "no schema is fetched");
        assert!(compile(&json!({ "type": "string" })).is_err());
    }
}
