import { SqlClient, SqlSchema } from "effect/sql"
import {
  type EventType,
  IntegrationId,
  type Payout,
  PayoutBatchId,
  PayoutId,
  type PayoutStatus,
  type PayoutTimelineHop,
  type PayoutTimelineSource,
  type PayoutTimelineStatus,
  type TxHash
} from "@cop-integrations/contracts"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { atomically } from "../db/Atomically.ts"
import { creationTime } from "../db/ListHorizon.ts"
import { ownedTable } from "../db/OwnedTable.ts"
import { EXPIRY_BATCH, type PageRequest } from "../db/Pagination.ts"
import { Outbox } from "../outbox/Outbox.ts"
import { PreviousStatus, recordingStatusChanges, statusChangeOf } from "../outbox/StatusEvents.ts"
import { countTransition, IN_FLIGHT_STATUSES } from "./PayoutMetrics.ts"
import { isFinished, presentBatch } from "./BatchPresent.ts"
import { BatchRepo } from "./BatchRepo.ts"
import { PayoutRow } from "./PayoutRow.ts"
import { PayoutChainId, presentPayout } from "./Present.ts"

const Owned = Schema.Struct({ integrationId: IntegrationId, payoutId: PayoutId })

/** The payouts list's own filters, all optional; given ones must all hold. */
export interface PayoutFilters {
  readonly status?: PayoutStatus | undefined
  /** Lower case, as hashes are stored: the payout's `tx_hash` or `fee_tx_hash`. */
  readonly txHash?: TxHash | undefined
  /** The Bre-B key's last 4 characters, in any letter case. */
  readonly breBKeyLast4?: string | undefined
}

/** A payout row through its schema's type side: what decoding the row once stored gives back. */
const asStored = Schema.encodeEffect(Schema.toType(PayoutRow))

/** A payout just written: its row, its presentation, and the presentation's JSON. */
export interface InsertedPayout {
  readonly row: PayoutRow
  readonly payout: Payout
  readonly json: string
}

const eventTypeOf = (row: PayoutRow): EventType =>
  row.status === "awaiting_deposit" ? "payout.created" : `payout.${row.status}`

/** The timeline hop a status change writes: named after the status it moved to (`created` for a new payout). */
const hopNameOf = (status: PayoutStatus): PayoutTimelineStatus => status === "awaiting_deposit" ? "created" : status

/** One hop, as the timeline stores it. */
export const hop = (status: PayoutTimelineStatus, at: Date, source: PayoutTimelineSource): PayoutTimelineHop => ({
  status,
  at: at.toISOString(),
  source
})

/**
 * Who wrote a change (the source of the status hop, when the status changes), and the hops that led to it, written
 * before it (the deposit's block, the provider's word that the funds arrived).
 */
interface Stamp {
  readonly source: PayoutTimelineSource
  readonly hops?: ReadonlyArray<PayoutTimelineHop>
  /** Hops that follow from the change, written after its status hop (a refund's transaction named, say). */
  readonly after?: ReadonlyArray<PayoutTimelineHop>
}

/** A jsonb column's new value: the JSON text, or NULL (keep what is there). */
const jsonOrNull = (value: unknown) => (value === undefined || value === null ? null : JSON.stringify(value))

const UpdatedRow = Schema.Struct({ ...PayoutRow.fields, ...PreviousStatus.fields })
const DepositSeen = Schema.Struct({ provider_deposit_seen_at: Schema.NullOr(Schema.Date) })
const PickedPayout = Schema.Struct({ id: PayoutId, provider_transfer_id: Schema.String })
/** A payout the reconciler asks the provider about. */
export type PickedPayout = typeof PickedPayout.Type
const SentRefundsRequest = Schema.Struct({ at: Schema.Date, limit: Schema.Number })

const StaleRequest = Schema.Struct({
  at: Schema.Date,
  cutoff: Schema.Date,
  expiredSince: Schema.Date,
  limit: Schema.Number
})

/**
 * Every query names the integration: another integration's payout is simply not found. Every write that creates a
 * payout or changes its status records the matching event in the same transaction (the outbox): no status without
 * its event, no event without its status.
 */
export class PayoutRepo extends Context.Service<PayoutRepo>()("PayoutRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const outbox = yield* Outbox
    const chainId = yield* PayoutChainId
    const batches = yield* BatchRepo

    const record = (row: PayoutRow, type: EventType, at: Date) =>
      outbox.record({
        integrationId: row.integration_id,
        type,
        resourceId: row.id,
        object: presentPayout(row, chainId),
        at
      })
    /** Counts the row's status change once its transaction commits (and never when it rolls back). */
    const countOnCommit = (row: PayoutRow) =>
      sql.afterCommit(Effect.sync(() => countTransition(row.status, row.failure?.category)))
    /** The event of the row's status, at its change, and the change counted. */
    const recordEvent = (row: PayoutRow) =>
      Effect.andThen(record(row, eventTypeOf(row), row.updated_at), countOnCommit(row))

    const ofBatch = SqlSchema.findAll({
      Request: Schema.String,
      Result: PayoutRow,
      execute: (batchId) => sql`SELECT * FROM payouts WHERE batch_id = ${batchId}`
    })

    /**
     * A batch whose payout just finished: `payout_batch.finished`, once, if that was its last one. The batch is locked
     * first, then its payouts read by a statement of their own: of two transactions finishing its last two payouts, the
     * second waits for the first and then reads both finished (each statement sees what committed before it).
     */
    const finishBatch = (batchId: PayoutBatchId, at: Date) =>
      Effect.gen(function*() {
        const batch = yield* batches.lockById(batchId)
        if (batch.finished_at !== null) return
        const rows = yield* ofBatch(batchId).pipe(Effect.orDie)
        if (!rows.every((row) => isFinished(row.status))) return
        yield* batches.markFinished(batchId, at)
        yield* outbox.record({
          integrationId: batch.integration_id,
          type: "payout_batch.finished",
          resourceId: batchId,
          object: presentBatch({ ...batch, finished_at: at }, rows, chainId),
          at
        })
      })

    /** The batches of payouts that just finished, each checked once, locked in id order (never two in opposite orders). */
    const finishBatches = (rows: ReadonlyArray<PayoutRow>) => {
      const finished = new Map<string, Date>()
      for (const row of rows) {
        if (row.batch_id === undefined || row.batch_id === null || !isFinished(row.status)) continue
        const seen = finished.get(row.batch_id)
        if (seen === undefined || seen < row.updated_at) finished.set(row.batch_id, row.updated_at)
      }
      return Effect.forEach(
        [...finished.keys()].sort(),
        (batchId) => finishBatch(PayoutBatchId.make(batchId), finished.get(batchId)!),
        { discard: true }
      )
    }

    /** A status change's event, and its batch's when it was the batch's last payout to finish. */
    const recordChange = (row: PayoutRow) =>
      row.batch_id === undefined || row.batch_id === null
        ? recordEvent(row)
        : Effect.andThen(recordEvent(row), finishBatches([row]))

    const owned = ownedTable(sql, {
      table: "payouts",
      Row: PayoutRow,
      Id: PayoutId,
      expiresWhile: "awaiting_deposit",
      // The payout's `expired` hop, in the expiry's own statement.
      alsoOnExpiry: (at) => sql`, timeline = timeline || ${JSON.stringify([hop("expired", at, "sweep")])}::jsonb`
    })

    const lockForConfirm = SqlSchema.findOneOption({
      Request: Owned,
      Result: Schema.Struct({ ...PayoutRow.fields, ...DepositSeen.fields }),
      execute: ({ integrationId, payoutId }) =>
        sql`SELECT * FROM payouts WHERE id = ${payoutId} AND integration_id = ${integrationId} FOR UPDATE`
    })

    const lockById = SqlSchema.findOneOption({
      Request: PayoutId,
      Result: PayoutRow,
      execute: (payoutId) => sql`SELECT * FROM payouts WHERE id = ${payoutId} FOR UPDATE`
    })

    const lockByTransfer = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: PayoutRow,
      execute: (transferId) => sql`SELECT * FROM payouts WHERE provider_transfer_id = ${transferId} FOR UPDATE`
    })

    /**
     * A new payout, written, with its `payout.created` event; its times are the database clock's in the inserting
     * transaction (`creationTime`: the list is safe to follow). Answers the row as a read of it would decode it, its
     * presentation and that presentation's JSON (serialised once: the response, the idempotency replay and the event
     * body carry these very bytes). The row is not read back (`RETURNING *`): every column is ours, no default or
     * trigger sets one, and the row is run through its schema's type side first (its checks; nested objects in the
     * schema's key order, unknown keys dropped; the optional columns as the NULL a read gives), which is exactly what
     * decoding the stored row would give.
     */
    const insert = (integrationId: IntegrationId, build: (createdAt: Date) => PayoutRow) =>
      Effect.gen(function*() {
        const checked = yield* asStored(build(yield* creationTime(sql, "payouts", integrationId)))
        const row: PayoutRow = {
          ...checked,
          total_received_cop: checked.total_received_cop ?? null,
          source_amount: checked.source_amount ?? null,
          failure: null,
          refund: null,
          canceled_at: null,
          batch_id: checked.batch_id ?? null,
          reference: checked.reference ?? null
        }
        yield* sql`INSERT INTO payouts ${
          sql.insert({
            ...row,
            timeline: JSON.stringify(row.timeline),
            fee_legs: JSON.stringify(row.fee_legs),
            transaction: JSON.stringify(row.transaction),
            fee_transaction: JSON.stringify(row.fee_transaction)
          })
        }`
        const payout = presentPayout(row, chainId)
        const json = JSON.stringify(payout)
        yield* outbox.record({
          integrationId: row.integration_id,
          type: eventTypeOf(row),
          resourceId: row.id,
          object: payout,
          objectJson: json,
          at: row.updated_at
        })
        yield* countOnCommit(row)
        return { row, payout, json } satisfies InsertedPayout
      }).pipe(atomically(sql), Effect.orDie)

    // `previous` reads the row as it was before this statement's change (its snapshot), so the status change is known.
    // The timeline is appended to, never replaced, and the status hop is decided by the row's status as this statement
    // finds it (a SET expression reads the old row): a hop is written by the very statement that makes its change.
    const update = SqlSchema.findOne({
      Request: Schema.Struct({ row: PayoutRow, statusHop: Schema.String, hops: Schema.String, after: Schema.String }),
      Result: UpdatedRow,
      execute: ({ after, hops, row, statusHop }) =>
        sql`WITH previous AS (SELECT status FROM payouts WHERE id = ${row.id})
            UPDATE payouts SET
              status = ${row.status},
              fee_legs = ${JSON.stringify(row.fee_legs)}::jsonb,
              tx_hash = ${row.tx_hash},
              fee_tx_hash = ${row.fee_tx_hash},
              updated_at = ${row.updated_at},
              expires_at = ${row.expires_at},
              completed_at = ${row.completed_at},
              total_received_cop = COALESCE(${row.total_received_cop ?? null}, total_received_cop),
              failure = COALESCE(failure, ${jsonOrNull(row.failure)}::jsonb),
              refund = COALESCE(${jsonOrNull(row.refund)}::jsonb, refund),
              canceled_at = COALESCE(canceled_at, ${row.canceled_at ?? null}),
              timeline = timeline || ${hops}::jsonb
                || CASE WHEN status = ${row.status} THEN '[]'::jsonb ELSE ${statusHop}::jsonb END
                || ${after}::jsonb
            WHERE id = ${row.id} RETURNING payouts.*, (SELECT status FROM previous) AS previous_status`
    })

    /** Writes `row`: its status change, if any, with its hop from `stamp.source`, after `stamp.hops`. */
    const updateStamped = (row: PayoutRow, stamp: Stamp) =>
      recordingStatusChanges(
        sql,
        (changed: PayoutRow) =>
          update({
            row: changed,
            statusHop: JSON.stringify([hop(hopNameOf(changed.status), changed.updated_at, stamp.source)]),
            hops: JSON.stringify(stamp.hops ?? []),
            after: JSON.stringify(stamp.after ?? [])
          }).pipe(Effect.map(statusChangeOf)),
        recordChange
      )(row)

    // Payouts in flight that have not moved since `cutoff` and were never reported delayed: marked, with their hop.
    const markDelayed = SqlSchema.findAll({
      Request: Schema.Struct({ at: Schema.Date, cutoff: Schema.Date }),
      Result: PayoutRow,
      execute: ({ at, cutoff }) =>
        sql`UPDATE payouts SET delayed_at = ${at},
              timeline = timeline || ${JSON.stringify([hop("delayed", at, "sweep")])}::jsonb
            WHERE id IN (SELECT id FROM payouts
                         WHERE status IN ('deposit_confirmed', 'processing') AND delayed_at IS NULL
                           AND updated_at < ${cutoff}
                         ORDER BY updated_at LIMIT ${EXPIRY_BATCH} FOR UPDATE SKIP LOCKED)
            RETURNING *`
    })

    // Sandbox time travel: a payout in flight, never reported delayed, made to look unchanged since `to`.
    const backdateUnchanged = SqlSchema.findOneOption({
      Request: Schema.Struct({ ...Owned.fields, to: Schema.Date }),
      Result: PayoutRow,
      execute: ({ integrationId, payoutId, to }) =>
        sql`UPDATE payouts SET updated_at = LEAST(updated_at, ${to})
            WHERE id = ${payoutId} AND integration_id = ${integrationId}
              AND status IN ('deposit_confirmed', 'processing') AND delayed_at IS NULL
            RETURNING *`
    })

    // A batch's payouts for its confirm: locked in id order, each with whether the provider reported its deposit.
    const lockBatch = SqlSchema.findAll({
      Request: Schema.String,
      Result: Schema.Struct({ ...PayoutRow.fields, ...DepositSeen.fields }),
      execute: (batchId) => sql`SELECT * FROM payouts WHERE batch_id = ${batchId} ORDER BY id FOR UPDATE`
    })

    const markDepositSeen = (id: string, at: Date) =>
      sql`UPDATE payouts SET provider_deposit_seen_at = COALESCE(provider_deposit_seen_at, ${at}) WHERE id = ${id}`

    // Every payout has a provider transfer (created with it); an expired one is asked about while its window closed
    // less than RECONCILE_EXPIRED_FOR_MS ago (one partial index each side of the OR). Payouts in flight come first:
    // expired ones pile up, most never see funds, and must not hold a stuck payout back behind them.
    const pickStale = SqlSchema.findAll({
      Request: StaleRequest,
      Result: PickedPayout,
      execute: ({ at, cutoff, expiredSince, limit }) =>
        sql`
      WITH picked AS (
        SELECT id FROM payouts
        WHERE (status IN ('awaiting_deposit', 'deposit_confirmed', 'processing')
               OR (status = 'expired' AND expires_at > ${expiredSince}))
          AND GREATEST(updated_at, reconciled_at) < ${cutoff}
        ORDER BY status = 'expired', GREATEST(updated_at, reconciled_at), id
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED)
      UPDATE payouts SET reconciled_at = ${at} FROM picked WHERE payouts.id = picked.id
      RETURNING payouts.id, payouts.provider_transfer_id`
    })

    // Round robin on `reconciled_at` (free on refunded payouts: the provider is no longer asked about them), so a
    // refund that never shows up onchain does not starve the others.
    const pickSentRefunds = SqlSchema.findAll({
      Request: SentRefundsRequest,
      Result: PayoutRow,
      execute: ({ at, limit }) =>
        sql`
      WITH picked AS (
        SELECT id FROM payouts
        WHERE status = 'refunded' AND refund->>'status' = 'sent'
        ORDER BY reconciled_at NULLS FIRST, id
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED)
      UPDATE payouts SET reconciled_at = ${at} FROM picked WHERE payouts.id = picked.id
      RETURNING payouts.*`
    })

    // The payouts in flight by status, for the metrics: each branch reads the in-flight partial index (migration 0028)
    // for one status, a literal, so the planner can use it; no finished payout is read.
    const inFlight = SqlSchema.findAll({
      Request: Schema.Date,
      Result: Schema.Struct({
        status: Schema.Literals(IN_FLIGHT_STATUSES),
        count: Schema.FiniteFromString,
        stuck: Schema.FiniteFromString,
        oldest: Schema.NullOr(Schema.Date)
      }),
      execute: (cutoff) =>
        sql`SELECT 'deposit_confirmed' AS status, count(*)::text AS count,
                   count(*) FILTER (WHERE updated_at < ${cutoff})::text AS stuck, min(updated_at) AS oldest
            FROM payouts WHERE status = 'deposit_confirmed'
            UNION ALL
            SELECT 'processing', count(*)::text, count(*) FILTER (WHERE updated_at < ${cutoff})::text, min(updated_at)
            FROM payouts WHERE status = 'processing'`
    })

    return {
      /**
       * The payouts in flight (deposit_confirmed, processing) by status: how many, how many unchanged since before
       * `cutoff` (stuck), and the oldest last change.
       */
      inFlight: (cutoff: Date) => inFlight(cutoff).pipe(Effect.catchTag("SchemaError", Effect.die)),
      findOwned: owned.findOwned,
      lockOwned: owned.lockOwned,
      /** The row locked, and whether the provider reported its deposit arriving (one statement for the confirm). */
      lockForConfirm: (integrationId: IntegrationId, payoutId: PayoutId) =>
        lockForConfirm({ integrationId, payoutId }).pipe(
          Effect.orDie,
          Effect.map(Option.map(({ provider_deposit_seen_at, ...row }) => ({
            row,
            depositSeenByProvider: provider_deposit_seen_at !== null
          })))
        ),
      lockByTransfer: (transferId: string) => lockByTransfer(transferId).pipe(Effect.orDie),
      lockById: (payoutId: PayoutId) => lockById(payoutId).pipe(Effect.orDie),
      /**
       * One page of the integration's payouts, narrowed by the payout filters given: each is served by an index (the
       * status and key-suffix ones from migration 0024, the hashes' unique ones), so a filter never reads an
       * integration's every payout.
       */
      page: (request: typeof PageRequest.Type, filters: PayoutFilters = {}) =>
        owned.page(
          request,
          sql`${filters.status === undefined ? sql`` : sql`AND status = ${filters.status}`}
              ${
            filters.txHash === undefined
              ? sql``
              : sql`AND (tx_hash = ${filters.txHash} OR fee_tx_hash = ${filters.txHash})`
          }
              ${
            filters.breBKeyLast4 === undefined
              ? sql``
              : sql`AND lower(right(bre_b_key, 4)) = ${filters.breBKeyLast4.toLowerCase()}`
          }`
        ),
      insert,
      /** The payouts made for a batch (its items' own). */
      ofBatch: (batchId: string) => ofBatch(batchId).pipe(Effect.orDie),
      /**
       * A batch's payouts locked for its confirm, in id order (before the batch itself: see BatchRepo), each with
       * whether the provider reported its deposit arriving.
       */
      lockBatch: (batchId: PayoutBatchId) =>
        lockBatch(batchId).pipe(
          Effect.orDie,
          Effect.map((rows) =>
            rows.map(({ provider_deposit_seen_at, ...row }) => ({
              row,
              depositSeenByProvider: provider_deposit_seen_at !== null
            }))
          )
        ),
      update: updateStamped,
      markDepositSeen: (id: string, at: Date) => markDepositSeen(id, at).pipe(Effect.orDie, Effect.asVoid),
      closeWindow: owned.closeWindow,
      /**
       * Sandbox only: a payout in flight (deposit_confirmed, processing) never reported delayed, made to look
       * unchanged since `to`, so the delay sweep reports it; none when it is not the integration's or not such a one.
       */
      backdateUnchanged: (integrationId: IntegrationId, payoutId: PayoutId, to: Date) =>
        backdateUnchanged({ integrationId, payoutId, to }).pipe(Effect.orDie),
      /** Expires one batch of payouts past their deposit window (EXPIRY_BATCH), each with its hop and its event. */
      expireOverdue: owned.expireOverdue(recordEvent, finishBatches),
      /**
       * One batch of payouts in flight (deposit_confirmed, processing) unchanged since `cutoff` and never reported
       * delayed: each marked (so never again), with its `delayed` hop and its `payout.delayed` event. How many.
       */
      markDelayed: (at: Date, cutoff: Date) =>
        markDelayed({ at, cutoff }).pipe(
          Effect.tap(Effect.forEach((row) => record(row, "payout.delayed", at))),
          Effect.map((rows) => rows.length),
          atomically(sql),
          Effect.orDie
        ),
      /**
       * Up to `limit` payouts for the reconciler, stamped `reconciled_at = at` so the next run takes the next ones:
       * in flight, or expired after `expiredSince`, and untouched since `cutoff`.
       */
      pickStale,
      /** Up to `limit` refunded payouts whose refund is `sent` (not yet seen onchain), least recently checked first. */
      pickSentRefunds: (at: Date, limit: number) => pickSentRefunds({ at, limit }).pipe(Effect.orDie)
    } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make).pipe(Layer.provide(BatchRepo.Default))
}
