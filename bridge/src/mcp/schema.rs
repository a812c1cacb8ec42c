//! Every tool's schemas, made clean for every client once, where the router is built.
//!
//! schemars describes Rust types exactly, but says it in words no JSON Schema validator knows
//! (`"format": "uint64"`, `"int32"`, …): the official TypeScript SDK client printed 66 warnings
//! per listing and spent most of its time on them. Here the schemas keep what constrains a value
//! (`type`, `minimum`, `enum`, `required`, …) and every description, and lose what constrains
//! nothing or is unknown: non-standard formats, `$schema` (2020-12 is MCP's default dialect),
//! `"default": null`, `"additionalProperties": true`. A definition used once is written where it
//! is used. Output schemas also lose their descriptions (see [`drop_words`]). tests/tests/schemas.rs checks the result with Ajv in strict mode.

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::JsonObject;
use serde_json::{Map, Value};

/// The formats of JSON Schema 2020-12 (§7.3) that validators know; any other is dropped.
const STANDARD_FORMATS: [&str; 19] = [
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// The router with every tool's input and output schema cleaned, and each output schema named
/// by an `$id` that changes with its content: clients compile a validator for each output
/// schema (the TypeScript SDK does on every `tools/list`), and one with an `$id` is compiled
/// once per connection instead of once per listing.
pub fn clean_router<S: Send + Sync + 'static>(router: ToolRouter<S>) -> ToolRouter<S> {
    let mut clean = ToolRouter::new();
    for mut route in router {
        route.attr.input_schema = Arc::new(clean_schema(&route.attr.input_schema));
        if let Some(output) = &route.attr.output_schema {
            let mut output = clean_schema(output);
            drop_words(&mut output);
            let id = format!("urn:tabwire:{}:output:{:08x}", route.attr.name, fnv(&output));
            output.insert("$id".into(), Value::String(id));
            route.attr.output_schema = Some(Arc::new(output));
        }
        clean.add_route(route);
    }
    clean
}

/// An output schema without its `description`s and `title`s: it is for the client to check
/// `structuredContent` against (the model reads the tool's description, its input schema and
/// the result itself), and they were half of the bytes of `tools/list`. The fields are
/// documented in specs/tools.md.
fn drop_words(schema: &mut JsonObject) {
    fn walk(value: &mut Value, in_properties: bool) {
        match value {
            Value::Object(map) => {
                if !in_properties {
                    for word in ["description", "title"] {
                        if map.get(word).is_some_and(Value::is_string) {
                            map.remove(word);
                        }
                    }
                }
                // Under `properties` and `$defs` the keys are names (a field may be called
                // `description`), and each value is a schema again.
                for (key, v) in map.iter_mut() {
                    walk(v, !in_properties && (key == "properties" || key == "$defs"));
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| walk(v, false)),
            _ => {}
        }
    }
    let mut root = Value::Object(std::mem::take(schema));
    walk(&mut root, false);
    if let Value::Object(map) = root {
        *schema = map;
    }
}

/// One schema, cleaned (see the module's doc).
pub fn clean_schema(schema: &JsonObject) -> JsonObject {
    let mut root = Value::Object(schema.clone());
    inline_single_use(&mut root);
    strip(&mut root);
    if let Value::Object(map) = &mut root {
        map.remove("$schema");
    }
    match root {
        Value::Object(map) => map,
        _ => unreachable!("a schema object stays an object"),
    }
}

/// Drop what validates nothing or is unknown, everywhere in the schema.
fn strip(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if map
                .get("format")
                .and_then(Value::as_str)
                .is_some_and(|f| !STANDARD_FORMATS.contains(&f))
            {
                map.remove("format");
            }
            if map.get("default") == Some(&Value::Null) {
                map.remove("default");
            }
            if map.get("additionalProperties") == Some(&Value::Bool(true)) {
                map.remove("additionalProperties");
            }
            // Keys of `properties` and `$defs` are names, not keywords: walk their values only.
            map.values_mut().for_each(strip);
        }
        Value::Array(items) => items.iter_mut().for_each(strip),
        _ => {}
    }
}

/// Write each `$defs` entry that is referenced exactly once, and not from inside itself, in
/// place of its `{"$ref": …}`; drop `$defs` when it ends up empty.
fn inline_single_use(root: &mut Value) {
    let Some(defs) = root.get("$defs").and_then(Value::as_object).cloned() else { return };
    let mut counts: HashMap<String, usize> = HashMap::new();
    count_refs(root, &mut counts);
    let once: Map<String, Value> = defs
        .into_iter()
        .filter(|(name, def)| {
            counts.get(name) == Some(&1) && {
                let mut inner = HashMap::new();
                count_refs(def, &mut inner);
                inner.is_empty() // keeps it simple: only leaves of the reference graph move
            }
        })
        .collect();
    if once.is_empty() {
        return;
    }
    replace_refs(root, &once);
    if let Some(Value::Object(defs)) = root.get_mut("$defs") {
        defs.retain(|name, _| !once.contains_key(name));
        if defs.is_empty() {
            root.as_object_mut().map(|m| m.remove("$defs"));
        }
    }
}

/// A short hash of a schema's JSON text (FNV-1a, 32 bits): its `$id` changes when it does.
fn fnv(schema: &JsonObject) -> u32 {
    let text = serde_json::to_string(schema).unwrap_or_default();
    text.bytes().fold(0x811c_9dc5, |h, b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193))
}

fn def_name(reference: &str) -> Option<&str> {
    reference.strip_prefix("#/$defs/")
}

fn count_refs(value: &Value, counts: &mut HashMap<String, usize>) {
    match value {
        Value::Object(map) => {
            if let Some(name) = map.get("$ref").and_then(Value::as_str).and_then(def_name) {
                *counts.entry(name.to_owned()).or_default() += 1;
            }
            map.values().for_each(|v| count_refs(v, counts));
        }
        Value::Array(items) => items.iter().for_each(|v| count_refs(v, counts)),
        _ => {}
    }
}

fn replace_refs(value: &mut Value, once: &Map<String, Value>) {
    match value {
        Value::Object(map) => {
            let target = map.get("$ref").and_then(Value::as_str).and_then(def_name);
            if let Some(def) = target.and_then(|name| once.get(name)).and_then(Value::as_object) {
                // The referring object's own keys (a field's description) win over the
                // definition's (the type's doc), as they would for a reader of the reference.
                let mut merged = def.clone();
                map.remove("$ref");
                for (k, v) in std::mem::take(map) {
                    merged.insert(k, v);
                }
                *map = merged;
                return;
            }
            map.values_mut().for_each(|v| replace_refs(v, once));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| replace_refs(v, once)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn clean(v: Value) -> Value {
        Value::Object(clean_schema(v.as_object().unwrap()))
    }

    #[test]
    fn unknown_formats_and_empty_words_go_and_constraints_stay() {
        let got = clean(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "additionalProperties": true,
            "properties": {
                "n": { "type": "integer", "format": "uint64", "minimum": 0, "default": null },
                "at": { "type": "string", "format": "date-time", "default": "now" },
                "format": { "type": "string", "format": "int32" }
            }
        }));
        assert_eq!(
            got,
            json!({
                "type": "object",
                "properties": {
                    "n": { "type": "integer", "minimum": 0 },
                    "at": { "type": "string", "format": "date-time", "default": "now" },
                    "format": { "type": "string" }
                }
            })
        );
    }

    #[test]
    fn output_schemas_lose_their_words_but_not_fields_named_like_them() {
        let mut schema = json!({
            "type": "object",
            "description": "a result",
            "properties": {
                "description": { "type": "string", "description": "the page's" },
                "title": { "type": "string" }
            },
            "required": ["description"]
        })
        .as_object()
        .unwrap()
        .clone();
        drop_words(&mut schema);
        assert_eq!(
            Value::Object(schema),
            json!({
                "type": "object",
                "properties": { "description": { "type": "string" }, "title": { "type": "string" } },
                "required": ["description"]
            })
        );
    }

    #[test]
    fn a_definition_used_once_moves_to_where_it_is_used() {
        let got = clean(json!({
            "type": "object",
            "properties": {
                "a": { "$ref": "#/$defs/One", "description": "the field" },
                "b": { "$ref": "#/$defs/Two" },
                "c": { "$ref": "#/$defs/Two" }
            },
            "$defs": {
                "One": { "type": "string", "description": "the type" },
                "Two": { "type": "integer" }
            }
        }));
        assert_eq!(
            got,
            json!({
                "type": "object",
                "properties": {
                    "a": { "type": "string", "description": "the field" },
                    "b": { "$ref": "#/$defs/Two" },
                    "c": { "$ref": "#/$defs/Two" }
                },
                "$defs": { "Two": { "type": "integer" } }
            })
        );
    }
}
