/**
 * Payee preview in live mode, against the provider simulator (Bridge's API): the preview registers the Bre-B key
 * as the user's external account (the same call payout creation makes), the simulator's directory check answers
 * the match, and a payout given the `previewId` reuses that account: the simulator sees one registration.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { BREB, call, expectError, newAddress, PAYOUTS } from "../support/flows.ts"
import { completeLiveKyc, type LiveStack, simCall, startLiveStack } from "../support/liveStack.ts"

const PREVIEW = `${BREB}/destinations/preview`

let stack: LiveStack
let apiKey: string
let user: `0x${string}`

beforeAll(async () => {
  stack = await startLiveStack()
  apiKey = await stack.newLiveKey()
  user = newAddress()
  await completeLiveKyc(stack, apiKey, user, `preview-${user.slice(2, 10).toLowerCase()}@example.com`)
}, 60_000)
afterAll(() => stack?.close())

const post = (path: string, body: unknown) => call(stack.server.baseUrl, apiKey, "POST", path, { body })

/** The external-account registrations the simulator received. */
const registrations = async (): Promise<number> => {
  const { data } = (await simCall(stack, "/__sim/requests")) as {
    data: ReadonlyArray<{ method: string; path: string }>
  }
  return data.filter((entry) => entry.method === "POST" && /\/external_accounts$/.test(entry.path)).length
}

describe("live mode: payee preview through the provider", () => {
  it("needs the paying user: without userAddress it is needs_kyc (the provider keeps destinations per customer)", async () => {
    expectError(await post(PREVIEW, { breBKey: "@camila2024", accountOwnerName: "Camila Rojas" }), 409, "needs_kyc")
  })

  it("answers the provider's verification, and a payout with the previewId registers nothing again", async () => {
    const before = await registrations()
    const preview = await post(PREVIEW, { breBKey: "@camila2024", accountOwnerName: "Camila Rojas", userAddress: user })
    expect(preview.status, preview.text).toBe(200)
    const result = preview.json as {
      previewId: string
      match: boolean
      destinationPreview: { accountOwnerName: string; bankName: string | null; documentLast4: string | null }
    }
    expect(result.match).toBe(true)
    expect(result.destinationPreview.accountOwnerName).toBe("Camila Rojas")
    expect(result.destinationPreview.bankName).toEqual(expect.any(String))
    expect(result.destinationPreview.documentLast4).toMatch(/^[0-9]{4}$/)
    expect(await registrations()).toBe(before + 1)

    const created = await post(PAYOUTS, {
      userAddress: user,
      destinationCop: "250000",
      breBKey: "@camila2024",
      accountOwnerName: "Camila Rojas",
      previewId: result.previewId
    })
    expect(created.status, created.text).toBe(201)
    expect((created.json as { destinationPreview: unknown }).destinationPreview).toEqual(result.destinationPreview)
    expect(await registrations(), "the payout reused the previewed external account").toBe(before + 1)
  })

  it("answers match false when the provider's directory names another holder", async () => {
    const preview = await post(PREVIEW, {
      breBKey: "@camila2024",
      accountOwnerName: "Camila mismatch",
      userAddress: user
    })
    expect(preview.status, preview.text).toBe(200)
    expect(preview.json).toMatchObject({ match: false, destinationPreview: null })
  })
})
