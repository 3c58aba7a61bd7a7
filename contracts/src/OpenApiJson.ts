/** The generated OpenAPI document as plain JSON, and what its paths and its webhooks both do to it. */

export type Json = unknown
export type JsonObject = Record<string, Json>

export const isObject = (node: Json): node is JsonObject =>
  typeof node === "object" && node !== null && !Array.isArray(node)

/** A parameter says what its schema says (as v3 wrote it, and as viewers show it beside the name). */
export const describeFromSchema = (parameter: JsonObject) => {
  const schema = parameter["schema"]
  if (isObject(schema) && typeof schema["description"] === "string") parameter["description"] ??= schema["description"]
}
