/**
 * The conformance kit checks the unknown-field rule (DESIGN §3 Errors) in every run: each generated body
 * sample carries a misspelled copy of a body's last field (`previewId` → `previewID`), which the contract rejects.
 */
import { ConfirmPayoutRequest, CreatePayoutRequest, RejectUnknownFields } from "@cop-integrations/contracts"
import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { generateCases, isInvalid, type Surface } from "../../testkit/src/generate/negative.ts"
import { random } from "../../testkit/src/generate/random.ts"

const payoutSurface: Surface = {
  location: "body",
  schema: Schema.make<Surface["schema"]>(CreatePayoutRequest.ast),
  // a v4 schema carries no parse options: the API decodes bodies with these
  parseOptions: RejectUnknownFields,
  base: {
    userAddress: "0x52908400098527886E0F7030069857D2E4169EE7",
    destinationCop: "150000",
    breBKey: "@conf1234",
    accountOwnerName: "Conformance Kit"
  }
}

describe("generated negative bodies: unknown fields", () => {
  it("always include a misspelled field, in samples of any size and seed", () => {
    for (const seed of [1, 2, 3]) {
      const unknown = generateCases(payoutSurface, random(seed, "x"), 3).cases.filter((item) =>
        item.field === "previewID"
      )
      expect(unknown.map((item) => item.description)).toEqual([
        "previewID: not a field of the contract (misspelled previewId)"
      ])
      expect(isInvalid(payoutSurface, unknown[0]!.input)).toBe(true)
    }
  })

  it("misspell the last field of other bodies too", () => {
    const surface: Surface = {
      location: "body",
      schema: Schema.make<Surface["schema"]>(ConfirmPayoutRequest.ast),
      parseOptions: RejectUnknownFields,
      base: { txHash: `0x${"a".repeat(64)}` }
    }
    const fields = generateCases(surface, random(1, "x"), 1).cases.map((item) => item.field)
    expect(fields).toEqual(["feeTxHasH"])
  })
})
