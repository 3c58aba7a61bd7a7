import { FailureCategory, INTERFACE_VERSION, KNOWN_FAILURE_CODES } from "@cop-integrations/contracts"
import { Effect } from "effect"
import { check, checkVersion } from "../check.ts"
import { endpoints } from "../contract.ts"
import { withCause } from "../exchange.ts"
import { failure, show } from "../failure.ts"
import { scenario } from "../scenario.ts"

interface OpenApiShape {
  readonly info?: { readonly version?: unknown }
  readonly paths?: Readonly<Record<string, Readonly<Record<string, unknown>>>>
  readonly components?: {
    readonly schemas?: Readonly<Record<string, { readonly description?: unknown; readonly enum?: unknown }>>
  }
}

const openApiPath = (path: string): string => path.replace(/:([A-Za-z0-9_]+)/g, "{$1}")

/** A typed client's failure: its tag and message, and for a transport failure why the request got no answer. */
export const describeError = (error: unknown): string => {
  if (error === null || typeof error !== "object" || !("_tag" in error)) return String(error)
  const message = "message" in error ? String(error.message) : "error" in error ? String(error.error) : show(error)
  return `${String(error._tag)}: ${error instanceof Error ? withCause(message, error) : message}`
}

export const contractScenarios = [
  scenario({
    id: "CONTRACT-001",
    title:
      `GET /openapi.json is the contract's document: version ${INTERFACE_VERSION} (or a later one of its line) and every operation`,
    rules: ["R-CONTRACT-1"],
    tags: ["contract", "read-only"],
    run: (kit) =>
      Effect.gen(function*() {
        const exchange = yield* kit.send({ method: "GET", path: "/openapi.json", auth: "none" })
        const document = (exchange.response.isJson ? exchange.response.json : {}) as OpenApiShape
        yield* checkVersion(
          kit,
          "GET /openapi.json",
          "info.version",
          document.info?.version,
          "the served OpenAPI document carries a version of the kit's compatibility line",
          exchange
        )
        const missing = [...endpoints.values()]
          .filter((spec) => document.paths?.[openApiPath(spec.path)]?.[spec.method.toLowerCase()] === undefined)
          .map((spec) => `${spec.method} ${spec.path}`)
        yield* check(missing.length === 0, "the served OpenAPI document describes every operation of the contract", {
          expected: "every contract operation under paths",
          actual: `missing: ${missing.join(", ")}`,
          exchange
        })
      })
  }),
  scenario({
    id: "CONTRACT-002",
    title:
      "the typed client derived from the contract reads the deployment and decodes its errors into the contract's classes",
    rules: ["R-CONTRACT-2"],
    tags: ["contract", "read-only"],
    run: (kit) =>
      Effect.gen(function*() {
        const client = yield* kit.typedClient
        const attempt = <A, E>(what: string, effect: Effect.Effect<A, E>) =>
          Effect.mapError(effect, (error) =>
            failure("the typed client works against the deployment", {
              expected: `${what} to decode with the contract's schemas`,
              actual: describeError(error)
            }))
        const health = yield* attempt("healthz", client.healthz())
        yield* check(health.mode === kit.mode, "healthz through the typed client", {
          expected: kit.mode,
          actual: health.mode
        })
        yield* attempt("a quote", client.breb.quote({ query: { destinationCop: "100000" }, headers: {} }))
        yield* attempt("a page of payouts", client.breb.listPayouts({ query: { limit: 5 } }))
        if (kit.mode !== "mock") return
        const closed = yield* Effect.result(
          client.breb.quote({ query: {}, headers: { "x-mock-scenario": "market_closed" } })
        )
        yield* check(
          closed._tag === "Failure" && closed.failure._tag === "MercadoCerrado",
          "a 409 mercado_cerrado decodes as the contract's MercadoCerrado error",
          {
            expected: "the typed client to fail with MercadoCerrado",
            actual: closed._tag === "Failure" ? describeError(closed.failure) : `a quote: ${show(closed.success)}`
          }
        )
      })
  }),
  scenario({
    id: "CONTRACT-003",
    title: "GET /openapi.json documents every failure code of the contract, and the closed set of failure categories",
    rules: ["R-FAILURE-2"],
    tags: ["contract", "read-only", "failure"],
    run: (kit) =>
      Effect.gen(function*() {
        const exchange = yield* kit.send({ method: "GET", path: "/openapi.json", auth: "none" })
        const schemas = ((exchange.response.isJson ? exchange.response.json : {}) as OpenApiShape).components?.schemas
        const codes = schemas?.["FailureCode"]?.description
        const missing = KNOWN_FAILURE_CODES.filter((code) =>
          typeof codes !== "string" || !codes.includes(`\`${code}\``)
        )
        yield* check(missing.length === 0, "the served document names every failure code the contract documents", {
          expected: KNOWN_FAILURE_CODES.join(", "),
          actual: `missing: ${missing.join(", ")}`,
          exchange
        })
        const categories = schemas?.["FailureCategory"]?.enum
        yield* check(
          JSON.stringify(categories) === JSON.stringify(FailureCategory.literals),
          "the served document's failure categories are the contract's closed set",
          { expected: JSON.stringify(FailureCategory.literals), actual: show(categories), exchange }
        )
      })
  })
]
