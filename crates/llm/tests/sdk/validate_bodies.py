"""Validates request bodies captured by the conformance tests against the official SDKs'
own request types (openai, anthropic, google-genai), so a body tauguard sends is one the
vendor's client library could have sent.

Usage: validate_bodies.py openai|openai-embeddings|anthropic|gemini  < body.json
Exit 0 when the body conforms; 1 with the validation errors on stderr otherwise.

- OpenAI: `CompletionCreateParamsNonStreaming` (embeddings: `EmbeddingCreateParams`); Anthropic: `MessageCreateParamsNonStreaming`.
  Both are TypedDicts, which pydantic validates leniently (extra keys ignored, `Iterable`
  fields validated lazily, i.e. never); their core schema is rewritten so every TypedDict
  forbids unknown keys and every iterable is validated as a list.
- Gemini: the REST `generateContent` body has no single SDK type; each top-level field is
  validated with the SDK's pydantic model for it (`Content`, `Tool`, `ToolConfig`,
  `GenerationConfig`, which forbid unknown keys and accept the REST camelCase names). On top,
  the documented API rule the type cannot express: an OBJECT schema must have properties.
"""

import json
import sys


def strict_validator(typed_dict):
    from pydantic import TypeAdapter
    from pydantic_core import SchemaValidator

    schema = TypeAdapter(typed_dict).core_schema

    def walk(node):
        if isinstance(node, dict):
            if node.get("type") == "typed-dict":
                node["extra_behavior"] = "forbid"
            if node.get("type") == "generator":
                node["type"] = "list"
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    return SchemaValidator(schema)


def validate_openai(body):
    from openai.types.chat.completion_create_params import (
        CompletionCreateParamsNonStreaming,
    )

    strict_validator(CompletionCreateParamsNonStreaming).validate_python(body)


def validate_openai_embeddings(body):
    from openai.types.embedding_create_params import EmbeddingCreateParams

    strict_validator(EmbeddingCreateParams).validate_python(body)


def validate_anthropic(body):
    from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

    strict_validator(MessageCreateParamsNonStreaming).validate_python(body)


def property_less_objects(schema, path):
    """Paths of OBJECT schemas without properties (the API rejects them)."""
    found = []
    if isinstance(schema, dict):
        kind = str(schema.get("type", "")).lower()
        if kind == "object" and not schema.get("properties"):
            found.append(path)
        for key, value in schema.items():
            if key == "properties" and isinstance(value, dict):
                for name, sub in value.items():
                    found += property_less_objects(sub, f"{path}.properties.{name}")
            elif key in ("items",):
                found += property_less_objects(value, f"{path}.{key}")
            elif key == "anyOf" and isinstance(value, list):
                for i, sub in enumerate(value):
                    found += property_less_objects(sub, f"{path}.anyOf[{i}]")
    return found


def validate_gemini(body):
    from google.genai import types

    allowed = {
        "contents": None,
        "systemInstruction": types.Content,
        "tools": None,
        "toolConfig": types.ToolConfig,
        "generationConfig": types.GenerationConfig,
        "safetySettings": None,
        "cachedContent": None,
    }
    unknown = sorted(set(body) - set(allowed))
    if unknown:
        raise ValueError(f"unknown generateContent fields: {unknown}")
    if "contents" not in body:
        raise ValueError("`contents` is required")
    for content in body["contents"]:
        types.Content.model_validate(content)
    for key, model in allowed.items():
        if model is not None and key in body:
            model.model_validate(body[key])
    errors = []
    for i, tool in enumerate(body.get("tools", [])):
        types.Tool.model_validate(tool)
        for j, decl in enumerate(tool.get("functionDeclarations", [])):
            if "parameters" in decl:
                errors += property_less_objects(
                    decl["parameters"], f"tools[{i}].functionDeclarations[{j}]({decl.get('name')}).parameters"
                )
    if errors:
        raise ValueError(
            "OBJECT schemas without properties (Gemini: 'should be non-empty for OBJECT type'): "
            + ", ".join(errors)
        )


def main():
    kind = sys.argv[1]
    body = json.load(sys.stdin)
    validate = {
        "openai": validate_openai,
        "openai-embeddings": validate_openai_embeddings,
        "anthropic": validate_anthropic,
        "gemini": validate_gemini,
    }[kind]
    try:
        validate(body)
    except Exception as e:  # the validation report is the output
        print(f"{kind} body does not conform: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
