import { createHash } from "node:crypto"
import {
  BadRequest,
  type BelowMinimum,
  type CreatePayoutBatchRequest,
  type CreatePayoutRequest,
  type DestinationMismatch,
  type ErrorBody,
  type IntegrationId,
  NotFound,
  type PayoutBatch,
  PayoutBatchId,
  PayoutBatchItemRequest,
  PayoutId,
  PayoutReference,
  type PayoutStatus,
  type Requote,
  UserAddress
} from "@cop-integrations/contracts"
import { BigDecimal, Context, Effect, Layer, Option, Result, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { addSeconds, now } from "../base/Clock.ts"
import { base62, newId } from "../base/ids.ts"
import { describeIssue } from "../base/IssueText.ts"
import { Chain } from "../chain/Chain.ts"
import { erc20Transfer } from "../chain/Erc20.ts"
import { AppConfig } from "../config/Config.ts"
import { atomically } from "../db/Atomically.ts"
import { PageBudget } from "../db/PageBudget.ts"
import { filterDigest, instantOf, keysetPage, type ListRequest, rowsFetched } from "../db/Pagination.ts"
import { DestinationPreviews } from "../destinations/DestinationPreviews.ts"
import { type Claim, IdempotencyStore } from "../idempotency/IdempotencyStore.ts"
import { toBaseUnits } from "../money/index.ts"
import { parseDestinationCop } from "../pricing/Pricing.ts"
import { providerIdempotencyKey } from "../provider/IdempotencyKeys.ts"
import { type BatchItemRecord, batchTotals, presentBatch, summarizeBatch } from "./BatchPresent.ts"
import { BatchRepo } from "./BatchRepo.ts"
import { PayoutRepo } from "./PayoutRepo.ts"
import type { PayoutRow } from "./PayoutRow.ts"
import { PayoutService } from "./PayoutService.ts"
import { PayoutChainId } from "./Present.ts"
import type { CreateOutcome } from "./PayoutService.ts"
import { quoteReasons } from "./quoteReasons.ts"

export const PAYOUT_BATCHES_PATH = "/api/integrations/breb/payout-batches"

const COPM_REFUSED =
  "fromToken: COPm batches are not offered: the router's swap pays one recipient an exact amount, so one swap cannot feed several deposits; pay a batch from USDC, or make COPm payouts one by one"

/**
 * Item `index`'s payout id, derived from the batch's: a retry of the batch (the same Idempotency-Key, after a crash)
 * reaches the same payouts, and through their transfer keys the same provider transfers.
 */
const itemPayoutId = (batchId: string, index: number): PayoutId =>
  PayoutId.make(`po_${base62(createHash("sha256").update(`${batchId}:${index}`).digest().subarray(0, 16))}`)

/** What refuses one item (and not the batch): the ErrorBody a payout would have answered, naming the item. */
type ItemRefusal = BadRequest | Requote | BelowMinimum | DestinationMismatch

const ERROR_CODES: { readonly [Tag in ItemRefusal["_tag"]]: ErrorBody["errorCode"] } = {
  BadRequest: undefined,
  Requote: "requote",
  BelowMinimum: "below_minimum",
  DestinationMismatch: "destination_mismatch"
}

/** `destinationCop: must …` of item 3 reads `items.3.destinationCop: must …`; a message naming no field `items.3: …`. */
const itemError = (index: number, refusal: ItemRefusal): ErrorBody => {
  const named = /^[A-Za-z]+: /.test(refusal.error)
  const error = named ? `items.${index}.${refusal.error}` : `items.${index}: ${refusal.error}`
  const errorCode = ERROR_CODES[refusal._tag]
  return errorCode === undefined ? { error } : { error, errorCode }
}

const decodeItem = Schema.decodeUnknownResult(PayoutBatchItemRequest)

/** Terms recorded with the batch's Idempotency-Key before the provider is called, by item index (PayoutService). */
const Pinned = Schema.Struct({ items: Schema.Record(Schema.String, Schema.Unknown) })

/** Nothing in the batch can be paid out: the 400, with the first items' reasons. */
const nothingValid = (errors: ReadonlyArray<ErrorBody>) =>
  new BadRequest({
    error: `items: no item can be paid out (${quoteReasons(errors.map((body) => body.error))})`
  })

/**
 * Batches of payouts: each valid item a payout made as `POST payouts` makes one (the same steps, one after the other
 * for the batch's items), written together in one transaction with the batch; each invalid item its error.
 */
export class PayoutBatches extends Context.Service<PayoutBatches>()("PayoutBatches", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const config = yield* AppConfig
    const chain = yield* Chain
    const chainId = yield* PayoutChainId
    const payouts = yield* PayoutRepo
    const batches = yield* BatchRepo
    const previews = yield* DestinationPreviews
    const idempotency = yield* IdempotencyStore
    const { steps } = yield* PayoutService
    const pageBudget = yield* PageBudget
    const usdc = chain.token("USDC")

    /** Each item decoded on its own: the request of its payout, or its error. */
    const readItems = (request: CreatePayoutBatchRequest) =>
      request.items.map((raw, index) => {
        const decoded = decodeItem(raw, { onExcessProperty: "error", errors: "all" })
        if (Result.isFailure(decoded)) {
          const error = describeIssue(decoded.failure.issue, {
            at: ["items", index],
            whole: `items.${index}: must be a JSON object`
          })
          // Its reference still names it, when that part of it is valid.
          const reference = Schema.is(PayoutReference)(raw["reference"]) ? raw["reference"] : null
          return { index, reference, outcome: Result.fail<ErrorBody>({ error }) }
        }
        const item = decoded.success
        const payout: CreatePayoutRequest = {
          userAddress: request.userAddress,
          destinationCop: item.destinationCop,
          breBKey: item.breBKey,
          accountOwnerName: item.accountOwnerName,
          fromToken: "USDC",
          ...(item.quoteId === undefined ? {} : { quoteId: item.quoteId }),
          ...(item.previewId === undefined ? {} : { previewId: item.previewId })
        }
        return { index, reference: item.reference ?? null, outcome: Result.succeed(payout) }
      })

    /**
     * The batch's payouts prepared: items checked and priced, the terms recorded, then the provider's side of each
     * (`claim.outsideCall`: from the first transfer on, a failure keeps the key for the retry, which reaches the same
     * payouts). What refuses one item is that item's error; what would refuse any payout (KYC, the market, the
     * provider unreachable) refuses the batch.
     */
    const prepare = (
      integrationId: IntegrationId,
      request: CreatePayoutBatchRequest,
      claim: {
        readonly batchId: PayoutBatchId
        readonly pinned: unknown
        readonly record: (terms: unknown) => Effect.Effect<void>
        readonly outsideCall: Claim["outsideCall"]
      }
    ) =>
      Effect.gen(function*() {
        const items = readItems(request)
        const errors = new Map<number, ErrorBody>()
        for (const item of items) if (Result.isFailure(item.outcome)) errors.set(item.index, item.outcome.failure)
        const valid = items.flatMap((item) =>
          Result.isSuccess(item.outcome) ? [{ ...item, payout: item.outcome.success }] : []
        )
        if (valid.length === 0) return yield* Effect.fail(nothingValid([...errors.values()]))

        const providerCustomerId = yield* steps.payerReady(integrationId, request.userAddress)
        const at = yield* now
        const pinned = Option.getOrUndefined(Schema.decodeUnknownOption(Pinned)(claim.pinned))?.items ?? {}
        const refused = (index: number) => (refusal: ItemRefusal) =>
          Effect.sync(() => {
            errors.set(index, itemError(index, refusal))
            return undefined
          })

        const priced = yield* Effect.forEach(valid, (item) =>
          Effect.gen(function*() {
            const previewed = yield* previews.destinationFor(integrationId, item.payout)
            const destinationCop = yield* parseDestinationCop(item.payout.destinationCop, config.brebMaxCop)
            const price = yield* steps.priceOne(integrationId, item.payout, destinationCop, pinned[item.index], at)
            return { ...item, previewed, destinationCop, price }
          }).pipe(
            Effect.catchTags({
              BadRequest: refused(item.index),
              Requote: refused(item.index),
              BelowMinimum: refused(item.index)
            })
          ))
        const payable = priced.filter((item) => item !== undefined)
        if (payable.length === 0) return yield* Effect.fail(nothingValid([...errors.values()]))

        const terms = Object.fromEntries(payable.map((item) => [item.index, item.price.record ?? pinned[item.index]]))
        if (payable.some((item) => item.price.record !== undefined)) yield* claim.record({ items: terms })

        const provisioned = yield* Effect.forEach(payable, (item) => {
          const payoutId = itemPayoutId(claim.batchId, item.index)
          return steps.provisionOne(
            integrationId,
            item.payout,
            item.destinationCop,
            item.price,
            item.previewed,
            providerCustomerId,
            {
              payoutId,
              transferKey: providerIdempotencyKey("transfer", payoutId),
              outsideCall: claim.outsideCall
            }
          ).pipe(
            Effect.map((row) => ({ index: item.index, reference: item.reference, payoutId, row })),
            Effect.catchTag("DestinationMismatch", refused(item.index))
          )
        })
        const made = provisioned.filter((item) => item !== undefined)
        if (made.length === 0) return yield* Effect.fail(nothingValid([...errors.values()]))

        const records: ReadonlyArray<BatchItemRecord> = items.map((item) => {
          const payout = made.find((candidate) => candidate.index === item.index)
          return {
            index: item.index,
            reference: item.reference,
            payoutId: payout?.payoutId ?? null,
            error: payout === undefined ? errors.get(item.index) ?? null : null
          }
        })
        return { integrationId, batchId: claim.batchId, userAddress: request.userAddress, records, made }
      })

    /** The batch and its payouts written in one transaction (the batch first: they refer to it), with their events. */
    const persist = (prepared: Effect.Success<ReturnType<typeof prepare>>) =>
      Effect.gen(function*() {
        const rows: Array<PayoutRow> = []
        const batch = yield* batches.insert(prepared.integrationId, (createdAt) => {
          const totals = batchTotals(prepared.made.map((item) => item.row(createdAt)), usdc.decimals)
          return {
            id: prepared.batchId,
            integration_id: prepared.integrationId,
            user_address: UserAddress.make(prepared.userAddress),
            from_token: "USDC",
            items: prepared.records,
            totals,
            // One transfer of the summed fee: exactly the sum of the payouts' own fee transfers.
            fee_transaction: erc20Transfer(
              usdc.address,
              config.feeWalletAddress,
              toBaseUnits(BigDecimal.fromStringUnsafe(totals.serviceFee), usdc.decimals)
            ),
            tx_hash: null,
            created_at: createdAt,
            updated_at: createdAt,
            expires_at: addSeconds(createdAt, config.payoutWindowMinutes * 60),
            finished_at: null
          }
        })
        for (const item of prepared.made) {
          const inserted = yield* payouts.insert(prepared.integrationId, (createdAt) => ({
            ...item.row(createdAt),
            batch_id: prepared.batchId,
            reference: item.reference
          }))
          rows.push(inserted.row)
        }
        const body = presentBatch(batch, rows, chainId)
        return { status: 201, body, bodyJson: JSON.stringify(body), resourceId: prepared.batchId }
      }).pipe(atomically(sql), Effect.orDie)

    const create = Effect.fn("PayoutBatches.create")(function*(input: {
      readonly integrationId: IntegrationId
      readonly request: CreatePayoutBatchRequest
      readonly idempotencyKey: string | undefined
    }) {
      if (input.request.fromToken === "COPm") return yield* Effect.fail(new BadRequest({ error: COPM_REFUSED }))
      const batchId = newId("pb")
      const outcome: CreateOutcome = yield* idempotency.runOptionally(
        {
          integrationId: input.integrationId,
          key: input.idempotencyKey,
          request: { method: "POST", path: PAYOUT_BATCHES_PATH, body: input.request },
          resourceId: batchId,
          providerKey: batchId
        },
        (claim) =>
          prepare(input.integrationId, input.request, {
            batchId: PayoutBatchId.make(claim.resourceId),
            pinned: claim.intent,
            record: claim.record,
            outsideCall: claim.outsideCall
          }),
        persist
      )
      return outcome
    })

    const get = Effect.fn("PayoutBatches.get")(function*(integrationId: IntegrationId, batchId: PayoutBatchId) {
      const found = yield* batches.findOwned(integrationId, batchId)
      if (Option.isNone(found)) return yield* Effect.fail(new NotFound({ error: `no payout batch ${batchId}` }))
      return presentBatch(found.value, yield* payouts.ofBatch(batchId), chainId) satisfies PayoutBatch
    })

    /** A page of the integration's batches, each summed up from its payouts' statuses as they are now. */
    const list = Effect.fn("PayoutBatches.list")(function*(request: ListRequest) {
      const digest = filterDigest(
        { createdFrom: instantOf(request.createdFrom), createdTo: instantOf(request.createdTo) },
        {}
      )
      return yield* keysetPage(
        { ...request, filterDigest: digest },
        (page) =>
          Effect.gen(function*() {
            const rows = yield* batches.page(page)
            const statuses = new Map<string, Array<PayoutStatus>>()
            for (const { batch_id, status } of yield* batches.statusesOf(rows.map((row) => row.id))) {
              statuses.set(batch_id, [...(statuses.get(batch_id) ?? []), status])
            }
            return rows.map((row) => ({ ...row, statuses: statuses.get(row.id) ?? [] }))
          }),
        (row) => summarizeBatch(row, row.statuses)
      ).pipe(pageBudget.withRows(rowsFetched(request.limit)))
    })

    return { create, get, list } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
