/**
 * The Effect client the contract package gives partners (`makeIntegrationsClient`, built on
 * `HttpApiClient.make(IntegrationsApi)`), as a partner writes it: no `headers: {}` or `query: {}` where nothing in
 * them is required, token enums typed as the enums they are, and failures told apart by the error class's `_tag`.
 * tsc (`npm run check`) type-checks these calls; running them checks what they send.
 */
import {
  type FundingToken,
  makeIntegrationsClient,
  type NeedsKyc,
  type Payout,
  type PayoutStatus,
  TxHash,
  UserAddress
} from "@cop-integrations/contracts"
import { Effect } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "effect/http"
import { describe, expect } from "vitest"
import { httpTest } from "../support/fixture.ts"
import type { Partner } from "../support/flows.ts"
import { newAddress, newTxHash } from "../support/http.ts"
import type { TestServer } from "../support/server.ts"

const it = httpTest()

/** Runs `program` with the partner's client of `server`. */
const run = <A, E>(
  server: TestServer,
  partner: Partner,
  program: (client: Effect.Success<ReturnType<typeof makeIntegrationsClient>>) => Effect.Effect<A, E>
) =>
  Effect.runPromise(
    makeIntegrationsClient({
      baseUrl: server.baseUrl,
      transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(partner.apiKey))
    }).pipe(Effect.flatMap(program), Effect.provide(FetchHttpClient.layer))
  )

const payoutRequest = (userAddress: string) => ({
  userAddress: UserAddress.make(userAddress),
  destinationCop: "250000",
  breBKey: "@maria2024",
  accountOwnerName: "Maria Perez"
})

describe("the contract's Effect client", () => {
  it("calls every step of a payout without empty headers or query, and types its enums as enums", async ({ server, partner }) => {
    const seen = await run(server, partner, (client) =>
      Effect.gen(function*() {
        const quote = yield* client.breb.quote()
        const priced = yield* client.breb.quote({ query: { destinationCop: "250000" } })
        const userAddress = UserAddress.make(newAddress())
        const sent = yield* client.breb.sendOtp({ payload: { email: "ana@example.com", userAddress } })
        const verified = yield* client.breb.verifyOtp({ payload: { userAddress, code: sent.debugCode ?? "" } })
        const created: Payout = yield* client.breb.createPayout({
          payload: { ...payoutRequest(userAddress), quoteId: priced.quoteId }
        })
        const confirmed = yield* client.breb.confirmPayout({
          params: { payoutId: created.payoutId },
          payload: { txHash: TxHash.make(newTxHash()) }
        })
        const page = yield* client.breb.listPayouts()
        const swap = yield* client.swaps.prepareSwap({
          payload: { userAddress, fromToken: "USDC", toToken: "COPm", amountIn: "10" }
        })
        // Enums, not `string`: these assignments are what tsc checks.
        const quoteToken: FundingToken = quote.fromToken
        const payoutToken: FundingToken = created.fromToken
        const status: PayoutStatus = confirmed.status
        return {
          quoteToken,
          payoutToken,
          status,
          kycStatus: verified.kycStatus,
          listed: page.items.map((payout) => payout.payoutId),
          createdId: created.payoutId,
          swapStatus: swap.status
        }
      }))
    expect(seen).toMatchObject({
      quoteToken: "USDC",
      payoutToken: "USDC",
      status: "deposit_confirmed",
      kycStatus: "approved",
      listed: [seen.createdId],
      swapStatus: "prepared"
    })
  })

  it("still sends the headers it is given: an Idempotency-Key replays the payout", async ({ server, partner }) => {
    const replayed = await run(server, partner, (client) =>
      Effect.gen(function*() {
        const userAddress = newAddress()
        const sent = yield* client.breb.sendOtp({
          payload: { email: "ana@example.com", userAddress: UserAddress.make(userAddress) }
        })
        yield* client.breb.verifyOtp({
          payload: { userAddress: UserAddress.make(userAddress), code: sent.debugCode ?? "" }
        })
        const request = { payload: payoutRequest(userAddress), headers: { "idempotency-key": `ec-${userAddress}` } }
        const first = yield* client.breb.createPayout(request)
        const [again, response] = yield* client.breb.createPayout({ ...request, responseMode: "decoded-and-response" })
        return { same: again.payoutId === first.payoutId, header: response.headers["idempotent-replayed"] }
      }))
    expect(replayed).toEqual({ same: true, header: "true" })
  })

  it("fails with the contract's error class, told apart by its _tag", async ({ server, partner }) => {
    const message = await run(
      server,
      partner,
      (client) =>
        client.breb.createPayout({ payload: payoutRequest(newAddress()) }).pipe(
          Effect.map(() => "created"),
          Effect.catchTag("NeedsKyc", (error: NeedsKyc) => Effect.succeed(error.error))
        )
    )
    expect(message).toContain("KYC is not approved")
  })
})
