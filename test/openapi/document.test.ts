/**
 * The OpenAPI document generated from the contract is the committed contracts/openapi.json, and the contract's
 * schemas keep what the document and the server promise. Each `trap:` test guards a way Effect 4 silently changes
 * the document or the wire where Effect 3 did not (found while migrating): it fails if the trap springs again.
 * No server: the contract alone.
 */
import { readFileSync } from "node:fs"
import {
  BadGateway,
  BadGatewayError,
  BadRequest,
  BadRequestError,
  BelowMinimum,
  BelowMinimumError,
  Conflict,
  ConflictError,
  DestinationMismatch,
  DestinationMismatchError,
  IdempotencyKeyReused,
  IdempotencyKeyReusedError,
  IntegrationsApi,
  InvalidWebhookSignature,
  InvalidWebhookSignatureError,
  ListLimitJsonSchema,
  matching,
  MercadoCerrado,
  MercadoCerradoError,
  NeedsKyc,
  NeedsKycError,
  NotFound,
  NotFoundError,
  openApiDocument,
  OtpInvalid,
  OtpInvalidError,
  Requote,
  RequoteError,
  ServiceUnavailable,
  ServiceUnavailableError,
  TooManyRequests,
  TooManyRequestsError,
  TxHashReused,
  TxHashReusedError,
  Unauthorized,
  UnauthorizedError
} from "@cop-integrations/contracts"
import { Context, Exit, Schema, type SchemaAST, SchemaIssue } from "effect"
import { HttpApi, type HttpApiEndpoint, OpenApi } from "effect/http-api"
import { describe, expect, it } from "vitest"
import { repoRoot } from "../support/process.ts"

type Json = unknown
type JsonObject = Record<string, Json>

const isObject = (value: Json): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Every difference between two JSON values, as `pointer: committed → generated`; object key order is ignored. */
const differences = (committed: Json, generated: Json, pointer = ""): Array<string> => {
  if (isObject(committed) && isObject(generated)) {
    const keys = [...new Set([...Object.keys(committed), ...Object.keys(generated)])].sort()
    return keys.flatMap((key) => {
      const at = `${pointer}/${key.replaceAll("~", "~0").replaceAll("/", "~1")}`
      if (!(key in generated)) return [`${at}: only in the committed document`]
      if (!(key in committed)) return [`${at}: only in the generated document`]
      return differences(committed[key], generated[key], at)
    })
  }
  if (Array.isArray(committed) && Array.isArray(generated) && committed.length === generated.length) {
    return committed.flatMap((item, index) => differences(item, generated[index], `${pointer}/${index}`))
  }
  return JSON.stringify(committed) === JSON.stringify(generated)
    ? []
    : [`${pointer}: ${JSON.stringify(committed)} → ${JSON.stringify(generated)}`]
}

/** The same JSON with every object's keys sorted: the form the two documents are compared in. */
const sortedKeys = (value: Json): Json =>
  Array.isArray(value)
    ? value.map(sortedKeys)
    : isObject(value)
    ? Object.fromEntries(Object.keys(value).sort().map((key) => [key, sortedKeys(value[key])]))
    : value

const committed = JSON.parse(readFileSync(`${repoRoot}/contracts/openapi.json`, "utf8")) as JsonObject
const generated = JSON.parse(JSON.stringify(openApiDocument())) as JsonObject

type Operation = { readonly parameters?: Array<JsonObject>; readonly responses: Record<string, JsonObject> }
const operations = (document: JsonObject): Array<[string, Operation]> =>
  Object.entries(document["paths"] as Record<string, Record<string, Operation>>).flatMap(([path, item]) =>
    Object.entries(item).map((
      [method, operation]
    ): [string, Operation] => [`${method.toUpperCase()} ${path}`, operation])
  )

const schemasOf = (document: JsonObject) => (document["components"] as JsonObject)["schemas"] as JsonObject

/** Every value of `key` anywhere in a JSON value, with its pointer. */
const collect = (value: Json, key: string, pointer = ""): Array<[string, Json]> =>
  Array.isArray(value)
    ? value.flatMap((item, index) => collect(item, key, `${pointer}/${index}`))
    : isObject(value)
    ? Object.entries(value).flatMap(([name, item]) => [
      ...(name === key ? [[pointer, item] as [string, Json]] : []),
      ...collect(item, key, `${pointer}/${name}`)
    ])
    : []

const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1()

/** What a failed decode reports: each issue's path and message. */
const issuesOf = (exit: Exit.Exit<unknown, Schema.SchemaError>) =>
  Exit.isSuccess(exit)
    ? []
    : exit.cause.reasons.flatMap((reason) => reason._tag === "Fail" ? formatIssues(reason.error.issue).issues : [])

/** A reflected endpoint's schema, decoded as the server does (its services are none: the contract needs none). */
const decoderOf = (schema: Schema.Top) => Schema.decodeUnknownExit(schema as Schema.Decoder<unknown>)

const endpoints: Array<HttpApiEndpoint.Top> = []
HttpApi.reflect(IntegrationsApi, { onGroup: () => {}, onEndpoint: ({ endpoint }) => endpoints.push(endpoint) })

/** Every AST reachable from `ast`: through checks' schemas, encodings, members, properties and declarations. */
const reachable = (roots: ReadonlyArray<SchemaAST.AST>): Array<SchemaAST.AST> => {
  const seen = new Set<SchemaAST.AST>()
  const visit = (ast: SchemaAST.AST): void => {
    if (seen.has(ast)) return
    seen.add(ast)
    for (const link of ast.encoding ?? []) visit(link.to)
    switch (ast._tag) {
      case "Objects":
        for (const property of ast.propertySignatures) visit(property.type)
        for (const index of ast.indexSignatures) visit(index.type)
        break
      case "Arrays":
        for (const element of ast.elements) visit(element)
        for (const rest of ast.rest) visit(rest)
        break
      case "Union":
        for (const member of ast.types) visit(member)
        break
      case "Declaration":
        for (const parameter of ast.typeParameters) visit(parameter)
        break
      case "Suspend":
        visit(ast.thunk())
        break
      default:
        break // no schema inside
    }
  }
  roots.forEach(visit)
  return [...seen]
}

const endpointSchemas = endpoints.flatMap((endpoint) => [
  ...[endpoint.params, endpoint.query, endpoint.headers].filter((schema) => schema !== undefined),
  ...[...endpoint.payload.values()].flatMap(({ schemas }) => schemas),
  ...endpoint.success,
  ...endpoint.error
])

const filtersOf = (check: SchemaAST.Check<unknown>): Array<SchemaAST.Filter<unknown>> =>
  check._tag === "Filter" ? [check] : check.checks.flatMap(filtersOf)

/** The source of every RegExp a contract schema checks strings with (`Schema.isPattern` and `matching`). */
const patternSources = [
  ...new Set(
    reachable(endpointSchemas.map((schema) => schema.ast)).flatMap((ast) =>
      (ast.checks ?? []).flatMap(filtersOf).flatMap((filter) => {
        const representation = filter.annotations?.representation
        return representation?.id === "effect/schema/isPattern"
          ? [(representation.payload as { readonly source: string }).source]
          : []
      })
    )
  )
]

describe("contracts/openapi.json", () => {
  it("is the document generated from the contract: no difference after normalising key order", () => {
    expect(differences(sortedKeys(committed), sortedKeys(generated))).toEqual([])
  })

  it("is what OpenApi.fromApi makes of IntegrationsApi (its finishing step is the API's OpenApi.Transform)", () => {
    expect(sortedKeys(JSON.parse(JSON.stringify(OpenApi.fromApi(IntegrationsApi))))).toEqual(sortedKeys(generated))
  })
})

describe("traps of Effect 4 the contract avoids", () => {
  it("trap: a pattern check without the RegExp `u` flag drops `pattern` from the JSON Schema (matching keeps it)", () => {
    const plain = Schema.toJsonSchemaDocument(Schema.String.check(Schema.isPattern(/^a+$/))).schema
    const kept = Schema.toJsonSchemaDocument(Schema.String.check(matching(/^a+$/))).schema
    expect({ plain: plain["pattern"], kept: kept["pattern"] }).toEqual({ plain: undefined, kept: "^a+$" })
  })

  it("trap: every pattern a contract schema checks is in the document (except limit's, documented as an integer)", () => {
    const documented = new Set(collect(generated, "pattern").map(([, pattern]) => pattern))
    const limitDigits = "^(0|[1-9][0-9]*)$"
    expect(patternSources).toContain(limitDigits)
    expect(patternSources.length).toBeGreaterThanOrEqual(9)
    expect(patternSources.filter((source) => source !== limitDigits && !documented.has(source))).toEqual([])
    // The committed document's patterns, each in its place.
    expect(collect(generated, "pattern")).toEqual(expect.arrayContaining(collect(committed, "pattern")))
    expect(collect(generated, "pattern").length).toBe(collect(committed, "pattern").length)
  })

  it("trap: error schemas are published under their own names, never as `<name>Encoded`", () => {
    const names = Object.keys(schemasOf(generated))
    expect(names.filter((name) => name.endsWith("Encoded"))).toEqual([])
    const errorNames = [
      "BadRequestError",
      "UnauthorizedError",
      "NotFoundError",
      "ConflictError",
      "IdempotencyKeyReusedError",
      "TooManyRequestsError",
      "ServiceUnavailableError",
      "BadGatewayError",
      "BelowMinimumError",
      "NeedsKycError",
      "DestinationMismatchError",
      "RequoteError",
      "TxHashReusedError",
      "OtpInvalidError",
      "MercadoCerradoError",
      "InvalidWebhookSignatureError"
    ]
    expect(names).toEqual(expect.arrayContaining(errorNames))
    // Every error response refers to a component that exists.
    const refs = operations(generated).flatMap(([, operation]) =>
      Object.entries(operation.responses).filter(([status]) => !status.startsWith("2")).flatMap(([, response]) =>
        collect(response["content"], "$ref").map(([, ref]) => String(ref).replace("#/components/schemas/", ""))
      )
    )
    expect(refs.filter((name) => !names.includes(name))).toEqual([])
    expect(schemasOf(generated)["NeedsKycError"]).toEqual({
      type: "object",
      required: ["error", "errorCode"],
      properties: { error: { type: "string" }, errorCode: { type: "string", enum: ["needs_kyc"] } },
      additionalProperties: false,
      description: "HTTP 409, errorCode `needs_kyc`"
    })
  })

  it("trap: every list's `limit` query parameter is documented as an integer from 1 to 500, not as text", () => {
    const limits = operations(generated).flatMap(([name, operation]) =>
      (operation.parameters ?? []).filter((parameter) => parameter["name"] === "limit").map((parameter) => [
        name,
        parameter
      ])
    )
    expect(limits.map(([name]) => name)).toEqual([
      "GET /api/integrations/breb/payouts",
      "GET /api/integrations/breb/payout-batches",
      "GET /api/integrations/swaps",
      "GET /api/integrations/events",
      "GET /api/integrations/request-logs",
      "GET /api/integrations/audit-log"
    ])
    for (const [, parameter] of limits) {
      expect(parameter).toEqual({
        name: "limit",
        in: "query",
        required: false,
        schema: {
          type: "integer",
          minimum: 1,
          maximum: 500,
          default: 50,
          description: "Page size, 1 to 500 (default 50)"
        },
        description: "Page size, 1 to 500 (default 50)"
      })
    }
    expect(ListLimitJsonSchema.type).toBe("integer")
  })

  it("trap: `limit` never decodes to NaN: text that is not plain digits is refused naming the rule", () => {
    const lists = endpoints.filter((endpoint) =>
      ["listPayouts", "listPayoutBatches", "listSwaps", "listEvents"].includes(endpoint.identifier)
    )
    expect(lists).toHaveLength(4)
    for (const endpoint of lists) {
      // The codec the server decodes the query string with.
      const decode = decoderOf(endpoint.query!)
      const refused = (limit: string) => {
        const exit = decode({ limit }, { reportInput: true })
        if (Exit.isSuccess(exit)) return `accepted ${JSON.stringify(exit.value)}`
        return issuesOf(exit).map((issue) => `${issue.path?.map(String).join(".")}: ${issue.message}`).join("; ")
      }
      const digits =
        "limit: must be an integer in plain decimal digits (no sign, exponent, hex prefix, leading zeros or spaces)"
      for (const limit of ["abc", "NaN", "Infinity", "-1", "1e2", "0x10", " 100", "10.0", "", "٣"]) {
        expect(`${endpoint.identifier} ${JSON.stringify(limit)} → ${refused(limit)}`).toBe(
          `${endpoint.identifier} ${JSON.stringify(limit)} → ${digits}`
        )
      }
      for (const limit of ["0", "501", "99999999999999999999"]) {
        expect(refused(limit)).toBe("limit: must be between 1 and 500")
      }
      expect(refused("500")).toBe("accepted {\"limit\":500}")
    }
  })

  it("trap: request bodies refuse unknown fields, naming them (the API's payload parse options)", () => {
    const options = Context.getOrUndefined(IntegrationsApi.annotations, HttpApi.PayloadParseOptions)
    expect(options).toMatchObject({ onExcessProperty: "error" })
    const bodies = endpoints.flatMap((endpoint) =>
      [...endpoint.payload.values()].flatMap(({ schemas }) => schemas).map((schema) =>
        [endpoint.identifier, schema] as const
      )
    )
    expect(bodies.map(([name]) => name).sort()).toEqual([
      "advancePayout",
      "confirmPayout",
      "confirmPayoutBatch",
      "confirmSwap",
      "createPayout",
      "createPayoutBatch",
      "createWebhookEndpoint",
      "prepareSwap",
      "previewDestination",
      "replayWebhookEvents",
      "sendOtp",
      "triggerEvent",
      "updateWebhookEndpoint",
      "verifyOtp"
    ])
    for (const [name, schema] of bodies) {
      const exit = decoderOf(schema)({ quoteID: "q_1" }, options)
      expect(Exit.isFailure(exit), name).toBe(true)
      expect(issuesOf(exit).map((issue) => issue.path), name).toEqual([["quoteID"]])
    }
  })
})

describe("error bodies on the wire", () => {
  const cases = [
    [BadRequestError, BadRequest, undefined],
    [UnauthorizedError, Unauthorized, undefined],
    [NotFoundError, NotFound, undefined],
    [ConflictError, Conflict, undefined],
    [IdempotencyKeyReusedError, IdempotencyKeyReused, undefined],
    [TooManyRequestsError, TooManyRequests, undefined],
    [ServiceUnavailableError, ServiceUnavailable, undefined],
    [BadGatewayError, BadGateway, undefined],
    [BelowMinimumError, BelowMinimum, "below_minimum"],
    [NeedsKycError, NeedsKyc, "needs_kyc"],
    [DestinationMismatchError, DestinationMismatch, "destination_mismatch"],
    [RequoteError, Requote, "requote"],
    [TxHashReusedError, TxHashReused, "tx_hash_reused"],
    [OtpInvalidError, OtpInvalid, "otp_invalid"],
    [MercadoCerradoError, MercadoCerrado, "mercado_cerrado"],
    [InvalidWebhookSignatureError, InvalidWebhookSignature, "invalid_webhook_signature"]
  ] as const

  it("are exactly { error, errorCode? }, never the _tag, and decode back to the class (what typed clients get)", () => {
    for (const [codec, cls, code] of cases) {
      // The JSON codec HttpApi encodes and decodes error bodies with.
      const json = Schema.toCodecJson(codec)
      const body = Schema.encodeUnknownSync(json)(new cls({ error: "why" }))
      expect(body).toStrictEqual(code === undefined ? { error: "why" } : { error: "why", errorCode: code })
      const decoded = Schema.decodeUnknownSync(json)(body)
      expect(decoded).toBeInstanceOf(cls)
      expect(decoded).toMatchObject({ error: "why" })
    }
  })

  it("a body with another errorCode (or a code where there is none) is not that error", () => {
    for (const [codec, , code] of cases) {
      const decode = Schema.decodeUnknownExit(Schema.toCodecJson(codec))
      expect(Exit.isFailure(decode({ error: "why", errorCode: code === "requote" ? "needs_kyc" : "requote" }))).toBe(
        true
      )
      if (code !== undefined) expect(Exit.isFailure(decode({ error: "why" }))).toBe(true)
    }
  })
})
