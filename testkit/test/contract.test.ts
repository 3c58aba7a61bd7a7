import { IntegrationsApi } from "@cop-integrations/contracts"
import { SchemaAST } from "effect"
import { HttpApi } from "effect/http-api"
import { describe, expect, it } from "vitest"
import { contractProblem, endpoint, endpoints, successSchemas } from "../src/contract.ts"
import { allScenarios } from "../src/scenarios/index.ts"
import { KIT_NAME, KIT_VERSION } from "../src/version.ts"
import packageJson from "../package.json" with { type: "json" }

describe("the kit reads the contract", () => {
  it("knows every endpoint of IntegrationsApi, with the contract's own success schema", () => {
    const names: Array<string> = []
    HttpApi.reflect(IntegrationsApi, {
      onGroup: () => {},
      onEndpoint: ({ endpoint: e }) => void names.push(e.identifier)
    })
    expect([...endpoints.keys()].sort()).toEqual(names.sort())
    // The contract may re-annotate a schema (e.g. with its status): the fields (of each member of a union) are the
    // same objects; a 204 has no body (void).
    const members = (ast: SchemaAST.AST): ReadonlyArray<unknown> =>
      SchemaAST.isObjects(ast)
        ? [ast.propertySignatures]
        : SchemaAST.isUnion(ast)
        ? ast.types.flatMap(members)
        : SchemaAST.isVoid(ast)
        ? ["void"]
        : []
    for (const [name, schema] of Object.entries(successSchemas)) {
      const reflected = members(endpoint(name as keyof typeof successSchemas).successAst)
      const own = members(schema.ast)
      expect(reflected.length, name).toBeGreaterThan(0)
      expect(reflected.length, name).toBe(own.length)
      reflected.forEach((part, i) => expect(part, name).toBe(own[i]))
    }
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
