import type { OpenApi } from "@effect/platform"
import { ErrorCode } from "./Errors.ts"

type Json = unknown

const decodeErrorRefs = new Set([
  "#/components/schemas/HttpApiDecodeError",
  "#/components/schemas/Issue",
  "#/components/schemas/PropertyKey"
])

const isDecodeErrorRef = (node: Json): boolean =>
  typeof node === "object" && node !== null && decodeErrorRefs.has((node as { $ref?: string }).$ref ?? "")

/**
 * The platform adds its own `HttpApiDecodeError` to every 400 response; this service answers
 * validation failures with ErrorBody instead (see src/http/ErrorMapping.ts), so the document says so.
 */
const withoutPlatformDecodeError = (node: Json): Json => {
  if (Array.isArray(node)) return node.filter((item) => !isDecodeErrorRef(item)).map(withoutPlatformDecodeError)
  if (typeof node !== "object" || node === null) return node
  const out: Record<string, Json> = {}
  for (const [key, value] of Object.entries(node)) {
    if (key === "anyOf" && Array.isArray(value)) {
      const kept = value.filter((item) => !isDecodeErrorRef(item)).map(withoutPlatformDecodeError)
      if (kept.length === 1) Object.assign(out, kept[0])
      else out[key] = kept
    } else {
      out[key] = withoutPlatformDecodeError(value)
    }
  }
  return out
}

const errorBodySchema = {
  type: "object",
  description: "Body of every non-2xx response",
  required: ["error"],
  properties: {
    error: { type: "string", description: "Human-readable message" },
    errorCode: { type: "string", enum: ErrorCode.literals }
  },
  additionalProperties: false
}

/** Registered on the Api as its `OpenApi.Transform`, so every generator (file, /openapi.json, /docs) agrees. */
export const finishOpenApiDocument = (generated: Record<string, unknown>): Record<string, unknown> => {
  const spec = withoutPlatformDecodeError(generated) as OpenApi.OpenAPISpec
  const schemas = { ...spec.components.schemas } as Record<string, unknown>
  delete schemas["HttpApiDecodeError"]
  delete schemas["Issue"]
  delete schemas["PropertyKey"]
  schemas["ErrorBody"] = errorBodySchema
  return { ...spec, components: { ...spec.components, schemas } }
}
