import type { Payout } from "@cop-integrations/contracts"
import { readFileSync } from "node:fs"
import { describe, expect, expectTypeOf, it } from "vitest"
import { contractProblem, endpoint, type EndpointName, endpoints, type SuccessOf } from "../src/contract.ts"
import { allScenarios } from "../src/scenarios/index.ts"
import { KIT_NAME, KIT_VERSION } from "../src/version.ts"
import packageJson from "../package.json" with { type: "json" }

interface DocumentOperation {
  readonly operationId: string
  readonly responses: Record<string, { readonly content?: Record<string, { readonly schema?: { $ref?: string } }> }>
}

/** The committed OpenAPI document partners read: written from the same contract, by another path than the kit's. */
const document = JSON.parse(readFileSync(new URL("../../contracts/openapi.json", import.meta.url), "utf8")) as {
  readonly paths: Record<string, Record<string, DocumentOperation>>
  readonly components: { readonly schemas: Record<string, { readonly examples?: ReadonlyArray<unknown> }> }
}

const documentOperations = Object.entries(document.paths).flatMap(([path, item]) =>
  Object.entries(item).map(([method, operation]) => ({ method: method.toUpperCase(), path, operation }))
)

describe("the kit reads the contract", () => {
  it("knows every operation of the contract's document, with its method, path, success status and schema", () => {
    expect([...endpoints.keys()].sort()).toEqual(
      documentOperations.map(({ operation }) => operation.operationId.split(".").at(-1)).sort()
    )
    for (const { method, operation, path } of documentOperations) {
      const spec = endpoint(operation.operationId.split(".").at(-1) as EndpointName)
      const statuses = Object.keys(operation.responses).map(Number)
      const [successStatus] = statuses.filter((status) => status < 300)
      expect([spec.method, spec.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}"), spec.successStatus], spec.name).toEqual([
        method,
        path,
        successStatus
      ])
      for (const status of spec.errors.keys()) expect(statuses, `${spec.name} ${status}`).toContain(status)
      const ref = operation.responses[String(successStatus)]?.content?.["application/json"]?.schema?.$ref
      const example = ref === undefined ? undefined : document.components.schemas[ref.split("/").at(-1)!]?.examples?.[0]
      if (example !== undefined) {
        expect(contractProblem(spec, { status: successStatus!, isJson: true, json: example })).toBeUndefined()
      }
    }
  })

  it("types each endpoint's name and success as the contract declares them", () => {
    expectTypeOf<"cancelPayout">().toExtend<EndpointName>()
    expectTypeOf<"noSuchEndpoint">().not.toExtend<EndpointName>()
    expectTypeOf<SuccessOf<"cancelPayout">>().toEqualTypeOf<Payout>()
    expectTypeOf<SuccessOf<"deleteWebhookEndpoint">>().toEqualTypeOf<void>()
    expect(endpoint("deleteWebhookEndpoint").successStatus).toBe(204)
  })

  it("holds a response to its declared status, its schema and the errorCodes allowed at that status", () => {
    const create = endpoint("createPayout")
    const answer = (status: number, json: unknown) => contractProblem(create, { status, isJson: true, json })
    expect(answer(409, { error: "x", errorCode: "needs_kyc" })).toBeUndefined()
    expect(answer(409, { error: "x", errorCode: "otp_invalid" })).toMatch(
      /not one the contract declares with status 409/
    )
    expect(answer(409, { error: "x", errorCode: "needs_kyc", _tag: "NeedsKyc" })).toMatch(/not an ErrorBody/)
    expect(answer(500, { error: "x" })).toMatch(/status 500 is not one the contract declares/)
    expect(answer(200, { error: "x" })).toMatch(/status 200 is not one the contract declares/)
    expect(answer(413, { error: "too large" })).toBeUndefined()
    expect(contractProblem(create, { status: 400, isJson: false, json: undefined })).toMatch(/not JSON/)
  })
})

describe("the kit's scenarios", () => {
  it("have unique, stable ids of the form AREA-NNN", () => {
    const ids = allScenarios.map((scenario) => scenario.id)
    expect(new Set(ids).size).toBe(ids.length)
    for (const id of ids) expect(id).toMatch(/^[A-Z]+(-[A-Z]+)*-\d{3}$/)
  })

  it("carry the package's name and version", () => {
    expect([KIT_NAME, KIT_VERSION]).toEqual([packageJson.name, packageJson.version])
  })
})
