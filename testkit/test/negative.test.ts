import { CreatePayoutRequest, ListPayoutsParams, RejectUnknownFields } from "@cop-integrations/contracts"
import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import type { WireSchema } from "../src/contract.ts"
import { fieldsOf, generateCases, isInvalid, showInput, simplerInputs, type Surface } from "../src/generate/negative.ts"
import { random } from "../src/generate/random.ts"

const payoutSurface: Surface = {
  location: "body",
  schema: Schema.make<WireSchema>(CreatePayoutRequest.ast),
  parseOptions: RejectUnknownFields,
  base: {
    userAddress: "0x52908400098527886E0F7030069857D2E4169EE7",
    destinationCop: "150000",
    breBKey: "@conf1234",
    accountOwnerName: "Conformance Kit"
  }
}

describe("generated negative inputs", () => {
  it("reads the fields and their constraints from the contract's schema", () => {
    const fields = fieldsOf(payoutSurface.schema)
    expect(fields.map((field) => [field.name, field.required])).toEqual([
      ["userAddress", true],
      ["destinationCop", true],
      ["breBKey", true],
      ["accountOwnerName", true],
      ["fromToken", false],
      ["quoteId", false],
      ["previewId", false]
    ])
    expect(fields.find((field) => field.name === "accountOwnerName")?.maxLength).toBe(140)
  })

  it("keeps only inputs the contract rejects: the base input itself is valid", () => {
    expect(isInvalid(payoutSurface, { kind: "json", value: payoutSurface.base })).toBe(false)
    const { cases, derived, discarded } = generateCases(payoutSurface, random(1, "x"), 1000)
    expect(derived).toBeGreaterThan(100)
    expect(discarded).toBeGreaterThan(0)
    expect(cases.length).toBe(derived - discarded)
    for (const item of cases) expect(isInvalid(payoutSurface, item.input), item.description).toBe(true)
  })

  it("breaks inputs every way the issue asks: missing, wrong type, boundary, oversized, bad encoding, malformed", () => {
    const descriptions = generateCases(payoutSurface, random(1, "x"), 1000).cases.map((item) => item.description)
    for (
      const expected of [
        "userAddress: missing",
        "destinationCop: a number",
        "accountOwnerName: one past maxLength 140",
        "breBKey: oversized (10000 characters)",
        "userAddress: bytes that are not UTF-8",
        "truncated JSON",
        "destinationCop: exponent notation"
      ]
    ) expect(descriptions).toContain(expected)
  })

  it("is reproducible: the same seed gives the same cases, another seed another order", () => {
    const run = (seed: number) =>
      generateCases(payoutSurface, random(seed, "NEG-PAYOUT-CREATE-001"), 30).cases.map((item) => showInput(item.input))
    expect(run(42)).toEqual(run(42))
    expect(run(42)).not.toEqual(run(43))
  })

  it("reads a repeated query parameter as the server does: a list, so invalid", () => {
    const surface: Surface = {
      location: "query",
      schema: Schema.make<WireSchema>(ListPayoutsParams.ast),
      base: { limit: "10" }
    }
    expect(isInvalid(surface, { kind: "query", query: "limit=10" })).toBe(false)
    expect(isInvalid(surface, { kind: "query", query: "limit=10&limit=10" })).toBe(true)
    expect(isInvalid(surface, { kind: "query", query: "limit=501" })).toBe(true)
  })

  it("shrinks by dropping the other fields and halving a long value", () => {
    const item = {
      description: "breBKey: oversized",
      field: "breBKey",
      input: { kind: "json", value: { ...payoutSurface.base, breBKey: "@".padEnd(400, "a") } }
    } as const
    const simpler = simplerInputs(item).map((
      candidate
    ) => (candidate.input.kind === "json" ? candidate.input.value : {}))
    expect(simpler[0]?.["breBKey"]).toHaveLength(200)
    expect(simpler.slice(1).map((value) => Object.keys(value).length)).toEqual([3, 3, 3])
  })
})
