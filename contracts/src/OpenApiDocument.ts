import { asideSchemas, withBatchItems } from "./AsideSchemas.ts"
import { MOCK_SCENARIOS } from "./Breb.ts"
import { type CodelessStatus, ERROR_CATALOGUE, errorAnchor, ERRORS_GUIDE } from "./ErrorCatalogue.ts"
import { ErrorCode } from "./Errors.ts"
import { IDEMPOTENCY_KEY_EXAMPLES, REQUEST_BODY_EXAMPLES } from "./RequestExamples.ts"
import { describeFromSchema, isObject, type Json, type JsonObject } from "./OpenApiJson.ts"
import { ListLimitJsonSchema } from "./Payout.ts"
import { REPORT_ROWS, reportContent } from "./ReportsSection.ts"
import { FAILURES_GUIDE } from "./PayoutFailure.ts"
import { WEBHOOKS_GUIDE, webhooksSection } from "./WebhooksSection.ts"

const DATA_KEYWORDS = new Set(["examples", "example", "default", "enum", "const"])

/** `{ not: {} }`: the schema no value matches. */
const isNever = (schema: Json) =>
  isObject(schema) && Object.keys(schema).length === 1 && isObject(schema["not"]) &&
  Object.keys(schema["not"]).length === 0

/**
 * Keeps the "never" `errorCode` (`{ not: {} }`) a code-less error declares, described: every error body then has an
 * `errorCode` property, so client code can test `error.errorCode === "needs_kyc"` on a union of them without
 * `"errorCode" in error` (openapi-typescript types it `unknown`; `false`, typed `never`, would narrow further, but
 * openapi-fetch 0.17 drops never-typed keys from `error`). The class's schema has it so a body with a code never
 * decodes as a code-less error.
 */
const withNeverDescribed = (node: Json): Json => {
  if (Array.isArray(node)) return node.map(withNeverDescribed)
  if (!isObject(node)) return node
  const out: JsonObject = {}
  for (const [key, value] of Object.entries(node)) {
    if (DATA_KEYWORDS.has(key)) {
      out[key] = value // instance data, not schema: kept as written
    } else if (key === "properties" && isObject(value)) {
      out[key] = Object.fromEntries(
        Object.entries(value).map((
          [name, schema]
        ) => [
          name,
          isNever(schema) ? { not: {}, description: "Never present on this error" } : withNeverDescribed(schema)
        ])
      )
    } else {
      out[key] = withNeverDescribed(value)
    }
  }
  return out
}

const ANNOTATIONS = ["title", "description", "default", "examples"]

/**
 * Puts a schema's description and examples on the schema itself: Effect writes them on its last check, which is an
 * `allOf` member when that check's keyword is already taken (a second `pattern`), where viewers and tools miss them.
 */
const withAnnotationsOnTop = (node: Json): Json => {
  if (Array.isArray(node)) return node.map(withAnnotationsOnTop)
  if (!isObject(node)) return node
  const out: JsonObject = {}
  for (const [key, value] of Object.entries(node)) {
    out[key] = DATA_KEYWORDS.has(key) ? value : withAnnotationsOnTop(value)
  }
  if (!Array.isArray(out["allOf"]) || out["$ref"] !== undefined) return out
  const members = (out["allOf"] as Array<Json>).map((member) => {
    if (!isObject(member) || member["$ref"] !== undefined) return member
    const rest: JsonObject = {}
    for (const [key, value] of Object.entries(member)) {
      if (ANNOTATIONS.includes(key)) out[key] = value // a later check's, so it wins, as a later annotation does
      else rest[key] = value
    }
    return rest
  }).filter((member) => !isObject(member) || Object.keys(member).length > 0)
  if (members.length === 0) delete out["allOf"]
  else out["allOf"] = members
  return out
}

const errorBodySchema = {
  type: "object",
  description:
    "Body of every non-2xx answer: a message for people, and for the documented cases a stable `errorCode` for programs",
  required: ["error"],
  properties: {
    error: { type: "string", description: "What went wrong, naming the field and the rule for invalid input" },
    errorCode: {
      type: "string",
      enum: ErrorCode.literals,
      description: "Present only for the documented business errors"
    }
  },
  additionalProperties: false,
  examples: [
    {
      error: "KYC is not approved for this userAddress: complete kyc/otp/send and kyc/otp/verify",
      errorCode: "needs_kyc"
    },
    { error: "destinationCop: must be a plain decimal string with at most 2 decimals (no sign, exponent or spaces)" }
  ]
}

const headers = {
  "X-Request-Id": {
    description:
      "This request's id: the caller's `X-Request-Id` when it is 1-64 characters of `A-Za-z0-9._-` and cannot be a secret (no `cop_live_pk_`, `cop_test_pk_` or `whsec_`, no other vendor's key or token prefix such as Stripe `sk_live_`, AWS `AKIA`, GitHub `ghp_`, Slack `xoxb-`, Google `AIza`, a JWT's `eyJ` or `Bearer`, no run of 32 or more hex digits (a UUID with its dashes is kept, a 32-hex trace id is not), no stretch of more than 32 characters between `.`, `_`, `-`, none of 20 or more mixing upper case, lower case and digits), else a generated one. Quote it to support; it is in the service's log line.",
    schema: { type: "string", maxLength: 64 }
  },
  "Retry-After": {
    description:
      "Seconds to wait before retrying; on a 409 `mercado_cerrado`, the seconds until the market opens (present when the service knows)",
    schema: { type: "integer", minimum: 1 }
  },
  "Idempotent-Replayed": {
    description: "Present (`true`) when this answer replays the first request sent with the same Idempotency-Key",
    schema: { type: "string", enum: ["true"] }
  }
}

const headerRef = (name: keyof typeof headers) => ({ $ref: `#/components/headers/${name}` })

const STATUS_MEANING: Record<string, string> = {
  "200": "OK",
  "201": "Created",
  "202": "Accepted",
  "204": "No content",
  "400": "Invalid input: the message names the field and the rule it breaks",
  "401": "Not authenticated: missing, malformed, unknown or revoked credentials",
  "404": "No such resource for this integration (another integration's resources answer 404 too)",
  "409": "The request conflicts with the resource's state or a business rule",
  "413": "Request body over 64 KiB",
  "415": "Request body not sent as `application/json`",
  "422": "This Idempotency-Key was already used with a different request body",
  "429": "Too many requests (per API key, or failed authentications per address): wait Retry-After seconds",
  "502": "The payout provider or the swap router answered with an error; retry later",
  "503": "Temporarily unavailable (database, provider, or the service still starting): retry after Retry-After seconds"
}

/** The responses every operation of this kind can give, whatever its handler does (the middleware's answers). */
const errorResponse = (status: string) => ({
  description: STATUS_MEANING[status]!,
  content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorBody" } } }
})

const componentOf = (spec: JsonObject, ref: Json): JsonObject | undefined => {
  const name = isObject(ref) && typeof ref["$ref"] === "string"
    ? ref["$ref"].replace("#/components/schemas/", "")
    : undefined
  const schemas = (spec["components"] as JsonObject)["schemas"] as JsonObject
  return name === undefined ? undefined : (schemas[name] as JsonObject | undefined)
}

/** The schema of a response's `application/json` body, if any. */
const jsonSchemaOf = (response: JsonObject): Json =>
  ((response["content"] as JsonObject | undefined)?.["application/json"] as JsonObject | undefined)?.["schema"]

/** The errorCodes an error response's schema allows, and whether a code-less ErrorBody is possible too. */
const errorCodesOf = (spec: JsonObject, response: JsonObject) => {
  const schema = jsonSchemaOf(response)
  const alternatives = isObject(schema) && Array.isArray(schema["anyOf"]) ? schema["anyOf"] : [schema]
  const codes: Array<string> = []
  let codeless = false
  for (const alternative of alternatives) {
    if (isObject(alternative) && alternative["$ref"] === "#/components/schemas/ErrorBody") {
      codeless = true // the middleware's answers (413, 415, ...): never a code
      continue
    }
    const errorCode = (componentOf(spec, alternative)?.["properties"] as JsonObject | undefined)?.["errorCode"]
    const allowed = isObject(errorCode) && Array.isArray(errorCode["enum"]) ? errorCode["enum"] as Array<string> : []
    if (allowed.length === 0) codeless = true
    codes.push(...allowed)
  }
  return { codes, codeless }
}

const describeResponse = (spec: JsonObject, status: string, response: JsonObject): string => {
  const meaning = STATUS_MEANING[status] ?? `HTTP ${status}`
  if (status.startsWith("2")) {
    const schema = jsonSchemaOf(response)
    const description = (componentOf(spec, schema) ?? (isObject(schema) ? schema : undefined))?.["description"]
    return typeof description === "string" && / /.test(description) ? `${meaning}: ${description}` : meaning
  }
  const { codeless, codes } = errorCodesOf(spec, response)
  // Links to the rows of "Errors and what to do next" (ErrorCatalogue.ts) in the description.
  const codelessStatus = ERROR_CATALOGUE.find((entry) => entry.errorCode === undefined && `${entry.status}` === status)
  const without = codelessStatus === undefined
    ? "without errorCode"
    : `[without errorCode](#${errorAnchor(codelessStatus.status as CodelessStatus)})`
  if (codes.length === 0) return `${meaning} (ErrorBody ${without})`
  const listed = codes.map((code) => `[\`${code}\`](#${errorAnchor(code as ErrorCode)})`).join(", ")
  return `${meaning}. ErrorBody with errorCode ${listed}${codeless ? `, or ${without} in other cases` : ""}`
}

type Operation = JsonObject & {
  responses: Record<string, JsonObject>
  parameters?: Array<JsonObject>
  security?: Array<Json>
}

const HEALTH_PATHS = new Set(["/healthz", "/readyz"])

/** Pre-filled by the docs page, which would otherwise send an empty (refused) key. */
const idempotencyKeyExample = (operationId: string): string => {
  const example = IDEMPOTENCY_KEY_EXAMPLES[operationId]
  if (example === undefined) {
    throw new Error(`${operationId} takes an Idempotency-Key: give it an example in Examples.ts`)
  }
  return example
}

/**
 * A parameter says what its schema says (describeFromSchema); `limit` is
 * documented as the integer it decodes to, not as the digits it is sent as (see ListLimitJsonSchema), and
 * `x-mock-scenario` with the values a mock deployment takes (the contract decodes any short text: live ignores it).
 */
const finishParameter = (operationId: string, parameter: JsonObject) => {
  if (parameter["in"] === "query" && parameter["name"] === "limit") parameter["schema"] = { ...ListLimitJsonSchema }
  if (parameter["name"] === "idempotency-key") {
    // The page's snippets read the parameter's example, its request editor the schema's.
    const example = idempotencyKeyExample(operationId)
    parameter["example"] = example
    parameter["schema"] = { ...(parameter["schema"] as JsonObject), examples: [example] }
  }
  if (parameter["in"] === "header" && parameter["name"] === "x-mock-scenario" && isObject(parameter["schema"])) {
    parameter["schema"] = { ...parameter["schema"], enum: [...MOCK_SCENARIOS] }
  }
  describeFromSchema(parameter)
}

const finishOperation = (spec: JsonObject, path: string, method: string, operation: Operation) => {
  for (const parameter of operation.parameters ?? []) finishParameter(String(operation["operationId"]), parameter)
  const responses = operation.responses
  const reportRow = REPORT_ROWS[String(operation["operationId"])]
  if (reportRow !== undefined) responses["200"]!["content"] = reportContent(reportRow)
  // Probes take no input: nothing they are sent can be invalid.
  if (HEALTH_PATHS.has(path)) delete responses["400"]
  // Every POST reads a body if one is sent: one that takes none answers a non-empty one that is too large or not JSON
  // as the others do (an empty body, whatever its Content-Type, is no body).
  if (operation["requestBody"] !== undefined || method === "post") {
    responses["413"] ??= errorResponse("413")
    responses["415"] ??= errorResponse("415")
  }
  if (Array.isArray(operation.security) && operation.security.length > 0) responses["429"] ??= errorResponse("429")
  responses["503"] ??= errorResponse("503")
  const idempotent = (operation.parameters ?? []).some((parameter) => parameter["name"] === "idempotency-key")
  for (const [status, response] of Object.entries(responses)) {
    // A closed market's 409 says when it opens again, when the service knows.
    const retryAfter = status === "429" || status === "503" ||
      (status === "409" && errorCodesOf(spec, response).codes.includes("mercado_cerrado"))
    response["description"] = describeResponse(spec, status, response)
    response["headers"] = {
      "X-Request-Id": headerRef("X-Request-Id"),
      ...(retryAfter ? { "Retry-After": headerRef("Retry-After") } : {}),
      ...(idempotent && status.startsWith("2") ? { "Idempotent-Replayed": headerRef("Idempotent-Replayed") } : {})
    }
  }
  operation.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)))
}

const servers = [
  { url: "http://127.0.0.1:8787", description: "Local development server (`npm start`, mock mode)" },
  {
    url: "https://{host}",
    description: "Production server: your deployment's host",
    variables: { host: { default: "api.example.com", description: "The host name of the deployment" } }
  }
]

const conventions = [
  "",
  "",
  "Conventions: amounts are exact decimal strings; every answer carries `X-Request-Id`; a method a path does not serve answers 405 with `Allow` listing the ones it does; POSTs take an optional `Idempotency-Key`; 429 and 503 answers carry `Retry-After`; every answer to an API key states where its rate limit stands in the IETF `RateLimit-Policy` (`\"api_key\";q=<burst>;w=<seconds to refill it>`) and `RateLimit` (`\"api_key\";r=<requests left>;t=<seconds until full again>`) headers, per replica.",
  "",
  "Clients: the TypeScript SDK `@cop-integrations/sdk` is generated from this document and has no runtime dependency: typed calls and errors (`errorCode`), retries of 429 and 503 after their `Retry-After` with one `Idempotency-Key` per call, every list as an async iterator, and `webhooks.verify` for `v1` and `v1a` signatures. For other languages, any OpenAPI 3.1 generator works on this document."
].join("\n")

/** The same JSON, whatever the order of object keys. */
const sameJson = (a: Json, b: Json): boolean => {
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((item, i) => sameJson(item, b[i]))
  if (!isObject(a) || !isObject(b)) return a === b
  const keys = Object.keys(a)
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && sameJson(a[key], b[key]))
}

/**
 * The paths' component schemas with the ones `what` refers to (the webhooks' bodies, the reports' rows). All are
 * compiled from the same Effect schemas, so a name in both is the same schema; a difference would be two schemas
 * under one name, refused here.
 */
const withSchemasOf = (what: string, schemas: JsonObject, more: JsonObject): JsonObject => {
  const merged = { ...schemas }
  for (const [name, schema] of Object.entries(more)) {
    if (merged[name] !== undefined && !sameJson(merged[name], schema)) {
      throw new Error(`The ${what}' component schema ${name} differs from the paths' one of the same name`)
    }
    merged[name] = schema
  }
  return merged
}

/** Each request body's example on its schema (Examples.ts), where viewers take the body they pre-fill from. */
const withRequestExamples = (schemas: JsonObject): JsonObject => {
  const out = { ...schemas }
  for (const [name, example] of Object.entries(REQUEST_BODY_EXAMPLES)) {
    const schema = out[name]
    if (!isObject(schema)) throw new Error(`Examples.ts has an example for ${name}, which the document does not have`)
    out[name] = { ...schema, examples: [example] }
  }
  return out
}

/** The finishing of schemas the paths and the webhooks both get: never described, annotations on top. */
const finishSchemas = (node: Json): Json => withAnnotationsOnTop(withNeverDescribed(node))

/** Registered on the Api as its `OpenApi.Transform`, so every generator (file, /openapi.json, /docs) agrees. */
export const finishOpenApiDocument = (generated: Record<string, unknown>): Record<string, unknown> => {
  const spec = finishSchemas(generated) as JsonObject
  const components = spec["components"] as JsonObject
  const { webhooks, schemas: webhookSchemas } = webhooksSection(finishSchemas)
  // ErrorBody is written by hand (its codes inline); the ErrorCode component Effect registers for a schema that embeds
  // an ErrorBody (a batch's item, in a path's answer or an event's object) has no other use.
  const { ErrorCode: _embeddedCodes, ...pathSchemas } = components["schemas"] as JsonObject
  const { ErrorCode: _eventCodes, ...eventSchemas } = webhookSchemas
  const schemas = {
    ...withRequestExamples(
      withBatchItems(
        withSchemasOf(
          "aside",
          withSchemasOf("webhooks", pathSchemas, eventSchemas),
          asideSchemas(finishSchemas)
        )
      )
    ),
    ErrorBody: errorBodySchema
  }
  const info = spec["info"] as JsonObject
  const description = typeof info["description"] === "string" ? info["description"] : ""
  const finished: JsonObject = {
    ...spec,
    info: {
      ...info,
      description: `${description}${conventions}${ERRORS_GUIDE}${FAILURES_GUIDE}${WEBHOOKS_GUIDE}`,
      license: { name: "Apache 2.0", identifier: "Apache-2.0" },
      contact: {
        name: "Integrations API maintainers",
        url: "https://github.com/cop-integrations/integrations-api/issues"
      }
    },
    servers,
    webhooks,
    components: { ...components, schemas, headers }
  }
  for (const [path, item] of Object.entries(finished["paths"] as Record<string, Record<string, Operation>>)) {
    for (const [method, operation] of Object.entries(item)) finishOperation(finished, path, method, operation)
  }
  return finished
}
