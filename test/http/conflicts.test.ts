/**
 * Issue #30, item 3: every 409 a service answers is a tagged error of its own, written as the contract's `Conflict`
 * at the HTTP edge (src/http/Conflicts.ts). The partner reads exactly the body it read when the services failed with
 * `Conflict` themselves: `{ error }` with the same text, no `_tag`, no `errorCode`. Each row's text is the one the
 * service wrote before the change.
 */
import { ConflictError, EndpointId, NotFound, NotFoundError } from "@cop-integrations/contracts"
import { Effect, Layer, Schema } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { afterAll, describe, expect, it } from "vitest"
import { ConfirmReleased, ConfirmStillVerifying } from "../../src/chain/ConfirmByTxHash.ts"
import { DepositNotMined, DepositRefused } from "../../src/chain/Verification.ts"
import { answerConflicts, conflictMessages, type ServiceConflict } from "../../src/http/Conflicts.ts"
import { IdempotencyKeyInProgress } from "../../src/idempotency/IdempotencyStore.ts"
import { WebhookEndpointDisabled, WebhookEndpointLimit } from "../../src/partnerEvents/WebhookEndpoints.ts"
import { PayoutBatchAlreadyConfirmed, PayoutBatchConfirmInProgress } from "../../src/payouts/BatchConfirm.ts"
import { PayoutNotCancelable } from "../../src/payouts/PayoutCancel.ts"
import {
  PayoutAlreadyConfirmed,
  PayoutConfirmInProgress,
  PayoutNotConfirmable
} from "../../src/payouts/PayoutConfirm.ts"
import { NoSwapRoute } from "../../src/router/SwapRouter.ts"
import { SwapAlreadyConfirmed, SwapConfirmInProgress, SwapNotConfirmable } from "../../src/swaps/SwapService.ts"

const endpointId = EndpointId.make("we_3kTMd9Qv7xWc2LpZ8hR1sA")

const table: ReadonlyArray<readonly [ServiceConflict, string]> = [
  [new IdempotencyKeyInProgress(), "a request with this Idempotency-Key is still in progress; retry later"],
  [new ConfirmReleased(), "this confirmation took too long and was released; confirm again"],
  [
    new DepositNotMined({ field: "txHash", reason: "no receipt yet" }),
    "txHash: not mined yet (no receipt yet); confirm again once it is mined"
  ],
  [
    new DepositRefused({ field: "txHash", kind: "mismatch", reason: "no Transfer of USDC to the deposit address" }),
    "txHash: no Transfer of USDC to the deposit address"
  ],
  [
    new DepositRefused({ field: "txHash", kind: "unconfirmed", reason: "1 of 3 confirmations" }),
    "txHash: 1 of 3 confirmations"
  ],
  [new NoSwapRoute({ reason: "no pool for COPm" }), "no swap route: no pool for COPm"],
  [new WebhookEndpointLimit({ max: 16 }), "an integration has at most 16 webhook endpoints; delete one first"],
  [
    new WebhookEndpointDisabled({ endpointId, reason: "failing for 3 days" }),
    `webhook endpoint ${endpointId} is disabled: failing for 3 days`
  ],
  [new WebhookEndpointDisabled({ endpointId, reason: null }), `webhook endpoint ${endpointId} is disabled: `],
  [new PayoutAlreadyConfirmed(), "this payout is already confirmed with a different txHash"],
  [new PayoutNotConfirmable({ status: "failed" }), "this payout is failed and can no longer be confirmed"],
  [
    new ConfirmStillVerifying({ resource: "payout" }),
    "this payout's confirmation with this txHash is still being verified; retry shortly"
  ],
  [new PayoutConfirmInProgress(), "another confirmation of this payout is being verified; retry once it has finished"],
  [
    new PayoutNotCancelable({ because: "status", status: "processing" }),
    "this payout is processing: it can no longer be canceled"
  ],
  [
    new PayoutNotCancelable({ because: "deposit_seen", status: "awaiting_deposit" }),
    "the provider already received its deposit: it can no longer be canceled"
  ],
  [
    new PayoutNotCancelable({ because: "deposit_confirmed", status: "awaiting_deposit" }),
    "its deposit was already confirmed (or is being confirmed): it can no longer be canceled"
  ],
  [new PayoutBatchAlreadyConfirmed(), "this batch is already confirmed with a different txHash"],
  [
    new PayoutBatchConfirmInProgress(),
    "another confirmation of this batch is being verified; retry once it has finished"
  ],
  [
    new ConfirmStillVerifying({ resource: "payout batch" }),
    "this payout batch's confirmation with this txHash is still being verified; retry shortly"
  ],
  [new SwapAlreadyConfirmed(), "this swap is already confirmed with a different txHash"],
  [new SwapNotConfirmable({ status: "failed" }), "this swap is failed and can no longer be confirmed"],
  [new SwapConfirmInProgress(), "another confirmation of this swap is being verified; retry once it has finished"]
]

/** One endpoint declaring the contract's 409 (and a 404), whose handler fails with row `index`'s conflict. */
const ProbeApi = HttpApi.make("ConflictProbe").add(
  HttpApiGroup.make("probe").add(
    HttpApiEndpoint.post("refuse", "/refuse/:index", {
      params: { index: Schema.NumberFromString },
      error: [ConflictError, NotFoundError]
    })
  )
)

const ProbeLive = HttpApiBuilder.group(ProbeApi, "probe", (handlers) =>
  Effect.succeed(
    handlers.handle("refuse", ({ params }) => {
      const row = table[params.index]
      const failure: Effect.Effect<never, ServiceConflict | NotFound> = row === undefined
        ? Effect.fail(new NotFound({ error: "no such row" }))
        : Effect.fail(row[0])
      return answerConflicts(failure)
    })
  ))

const probe = HttpRouter.toWebHandler(
  HttpApiBuilder.layer(ProbeApi).pipe(Layer.provide(ProbeLive), Layer.provide(HttpServer.layerServices)),
  { disableLogger: true }
)
afterAll(() => probe.dispose())

const refuse = (index: number) => probe.handler(new Request(`http://probe/refuse/${index}`, { method: "POST" }))

describe("a service's conflict on the wire", () => {
  it("the table has a row for every conflict the edge writes", () => {
    expect(new Set(table.map(([error]) => error._tag))).toEqual(new Set(Object.keys(conflictMessages)))
  })

  it.each(table.map(([error, text], index) => [error._tag, index, text] as const))(
    "%s (row %i): 409 with exactly { error } and today's text",
    async (_tag, index, text) => {
      const response = await refuse(index)
      expect(response.status).toBe(409)
      expect(await response.text()).toBe(JSON.stringify({ error: text }))
    }
  )

  it("an error that is not a service's conflict passes the edge unchanged", async () => {
    const response = await refuse(table.length)
    expect(response.status).toBe(404)
    expect(await response.text()).toBe(JSON.stringify({ error: "no such row" }))
  })
})
