/**
 * An address in one letter case (what many wallets hand over) is still refused, as the specification asks for EIP-55
 * checksummed addresses, but the 400 names the checksummed form in full, ready to copy. A mixed-case address with a
 * wrong checksum may be a typo: it gets the rule only, no guess.
 */
import { describe, expect } from "vitest"
import { httpTest } from "../support/fixture.ts"
import { BREB, call, expectErrorBody, newAddress, withBadChecksum } from "../support/http.ts"
import type { TestServer } from "../support/server.ts"

const it = httpTest()

const RULE = "userAddress: must be an EIP-55 checksummed address (mixed case, correct checksum)"

/** An address with at least one letter among its hex digits, so its case can be wrong. */
const addressWithLetters = (): `0x${string}` => {
  for (;;) {
    const address = newAddress()
    if (/[a-fA-F]/.test(address.slice(2))) return address
  }
}

/** A checksummed address with the case of one letter flipped, still mixed case: a typo, not a one-case wallet. */
const mixedCaseTypo = (): string => {
  for (;;) {
    const typo = withBadChecksum(addressWithLetters())
    if (/[a-f]/.test(typo.slice(2)) && /[A-F]/.test(typo.slice(2))) return typo
  }
}

const requests = {
  "OTP send": (userAddress: string) => ({
    path: `${BREB}/kyc/otp/send`,
    body: { email: "ana@example.com", userAddress }
  }),
  "payout create": (userAddress: string) => ({
    path: `${BREB}/payouts`,
    body: { userAddress, destinationCop: "250000", breBKey: "@maria2024", accountOwnerName: "Maria Perez" }
  }),
  "swap prepare": (userAddress: string) => ({
    path: "/api/integrations/swaps",
    body: { userAddress, fromToken: "USDC", toToken: "COPm", amountIn: "10" }
  })
}

const errorFor = async (server: TestServer, apiKey: string, request: { path: string; body: unknown }) =>
  expectErrorBody(await call(server, request.path, { apiKey, body: request.body }), 400).error

describe("a userAddress that is not checksummed", () => {
  for (const [name, request] of Object.entries(requests)) {
    it(`${name}: all lower case or all upper case is 400 naming the field, the rule and the checksummed form`, async ({ server, partner }) => {
      const checksummed = addressWithLetters()
      const lower = `0x${checksummed.slice(2).toLowerCase()}`
      const upper = `0x${checksummed.slice(2).toUpperCase()}`
      for (const sent of [lower, upper]) {
        expect(await errorFor(server, partner.apiKey, request(sent))).toContain(`${RULE}; did you mean ${checksummed}?`)
      }
    })

    it(`${name}: mixed case with a wrong checksum is 400 with the rule and no guess (it may be a typo)`, async ({ server, partner }) => {
      const message = await errorFor(server, partner.apiKey, request(mixedCaseTypo()))
      expect(message).toContain(RULE)
      expect(message).not.toContain("did you mean")
    })
  }
})
