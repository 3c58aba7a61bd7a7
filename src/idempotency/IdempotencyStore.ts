import { createHash, randomUUID } from "node:crypto"
import { PgClient } from "@effect/sql-pg"
import { docsPointer, IdempotencyKeyReused, IntegrationId } from "@cop-integrations/contracts"
import { Clock, Context, Data, Duration, Effect, Exit, Layer, Option, Schedule, Schema } from "effect"
import { SqlSchema } from "effect/sql"
import { SqlError } from "effect/sql/SqlError"

export interface StoredResponse {
  readonly status: number
  readonly body: unknown
  /** `JSON.stringify(body)`, when the caller has it already (it is stored as is instead of serialising again). */
  readonly bodyJson?: string
  readonly resourceId: string
}

export interface IdempotentResult extends StoredResponse {
  /** The answer's JSON text: the first response's bytes, which a replay repeats. */
  readonly bodyJson: string
  readonly replayed: boolean
}

const canonicalJson = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : 1))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`
  }
  return JSON.stringify(value)
}

/** What makes two requests "the same": method, path and the canonical JSON of the body. */
export const requestFingerprint = (method: string, path: string, body: unknown): string =>
  createHash("sha256").update(`${method} ${path}\n${canonicalJson(body)}`).digest("hex")

const KeyRow = Schema.Struct({
  request_hash: Schema.String,
  state: Schema.Literals(["started", "done"]),
  response_status: Schema.Number,
  response_body: Schema.Unknown,
  resource_id: Schema.String,
  provider_key: Schema.NullOr(Schema.String),
  attempt: Schema.NullOr(Schema.String),
  intent: Schema.Unknown,
  stale: Schema.Boolean
})
type KeyRow = typeof KeyRow.Type

/**
 * The body is kept as its JSON text (a jsonb string): a jsonb object would come back with its keys
 * reordered, and a replay must be byte for byte the first response.
 */
const storedJson = (stored: unknown): string => (typeof stored === "string" ? stored : JSON.stringify(stored))

const replayOf = (row: KeyRow): IdempotentResult => {
  const bodyJson = storedJson(row.response_body)
  return {
    status: row.response_status,
    body: JSON.parse(bodyJson),
    bodyJson,
    resourceId: row.resource_id,
    replayed: true
  }
}

/** The request holding the key did not finish within `IdempotencyWait`. */
export class IdempotencyKeyInProgress extends Data.TaggedError("IdempotencyKeyInProgress") {}

/** How long a duplicate waits for the request that holds its key (DESIGN §3: 10 s), polling the key's row. */
export const IdempotencyWait = Context.Reference<Duration.Duration>("IdempotencyWait", {
  defaultValue: () => Duration.seconds(10)
})

/**
 * How long a `started` row may go without a sign of life from its request before the next request with the same key
 * and body takes it over: its request is presumed dead (a crash between the provider call and the database write,
 * or a failure whose clean-up could not reach the database); a row its request handed back after a failure is
 * taken over at once. The rows a process's requests hold are refreshed (`started_at`) every third of this while
 * they work, all in one statement (rarely enough not to crowd the pool under load). A takeover while the first
 * request still lives is safe anyway: same resource id, same provider key, and the write step lets only one of them
 * write.
 */
export const IdempotencyStale = Context.Reference<Duration.Duration>("IdempotencyStale", {
  defaultValue: () => Duration.seconds(30)
})

/** The resource a request creates under its key: its id, allocated before any outside call, and the provider's key. */
export interface Claim {
  readonly resourceId: string
  readonly providerKey: string
  /** This request took over the `started` row of a request that stopped. */
  readonly takenOver: boolean
  /** On a takeover: what the request that stopped recorded before its outside calls (null if it recorded nothing). */
  readonly intent: unknown
  /** Records what this request fixed before its outside calls (one statement, committed), for a takeover to repeat. */
  readonly record: (intent: unknown) => Effect.Effect<void>
  /**
   * Runs an outside call whose effect outlasts this request (the provider's transfer). From its start, a failure or
   * an interruption of the request keeps the key's row, with its resource id and provider key, for the retry with
   * the same key and body (which takes it over at once) instead of freeing the key: the call may have acted even
   * though no answer came. Only the call's own failures that `madeNothing` accepts (the outside refused it) free
   * the key as before.
   */
  readonly outsideCall: <A, E, R>(
    call: Effect.Effect<A, E, R>,
    madeNothing: (error: E) => boolean
  ) => Effect.Effect<A, E, R>
}

type Acquired = Data.TaggedEnum<{
  Claimed: { readonly claim: Omit<Claim, "record" | "outsideCall"> }
  Replay: { readonly result: IdempotentResult }
}>
const Acquired = Data.taggedEnum<Acquired>()

const FIRST_POLL_MS = 10
const MAX_POLL_MS = 250

/**
 * `Idempotency-Key` semantics in three short steps, none of them held across the work's outside calls:
 *   1. claim: the key's row is inserted `started` with the pre-allocated resource id and provider key, committed;
 *   2. the work runs outside any transaction (it may call the payout provider), refreshing the row's `started_at`;
 *   3. finish: one transaction writes the resource and marks the row `done` with the response.
 * Only successes are stored. A request that fails before any outside call with a lasting effect deletes its
 * `started` row: the key is free again. One that fails (or is interrupted) once such a call may have acted (a
 * provider transfer without an answer) hands its row back instead (`attempt` NULL), keeping the resource id and
 * provider key: the retry with the same key and body takes it over at once, so the provider answers it with the
 * same object, and another body is 422 because the key is bound to that resource. A duplicate polls the row
 * (bounded backoff, at most IdempotencyWait): `done` replays, another body is 422, still `started` after the wait
 * is 409. A `started` row without a sign of life for IdempotencyStale is taken over the same way. Times are the
 * database's clock, the same for every replica.
 */
export class IdempotencyStore extends Context.Service<IdempotencyStore>()("IdempotencyStore", {
  make: Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    const waitMillis = Math.max(1, Math.round(Duration.toMillis(yield* IdempotencyWait)))
    const staleMillis = Math.max(1, Math.round(Duration.toMillis(yield* IdempotencyStale)))
    const heartbeat = Duration.millis(Math.max(1, Math.round(staleMillis / 3)))

    const Key = Schema.Struct({ integrationId: IntegrationId, key: Schema.String })

    const findRow = SqlSchema.findOneOption({
      Request: Key,
      Result: KeyRow,
      execute: ({ integrationId, key }) =>
        sql`SELECT request_hash, state, response_status, response_body, resource_id, provider_key, attempt, intent,
                   started_at < now() - ${staleMillis} * interval '1 millisecond' AS stale
            FROM idempotency_keys WHERE integration_id = ${integrationId} AND idempotency_key = ${key}`
    })

    const lockRow = SqlSchema.findOneOption({
      Request: Key,
      Result: KeyRow,
      execute: ({ integrationId, key }) =>
        sql`SELECT request_hash, state, response_status, response_body, resource_id, provider_key, attempt, intent,
                   false AS stale
            FROM idempotency_keys WHERE integration_id = ${integrationId} AND idempotency_key = ${key} FOR UPDATE`
    })

    interface Input {
      readonly integrationId: IntegrationId
      readonly key: string
      readonly fingerprint: string
      /** The resource id and provider key this request uses if the key is new. */
      readonly resourceId: string
      readonly providerKey: string
    }

    const whereMine = (input: Input, attempt: string) =>
      sql`integration_id = ${input.integrationId} AND idempotency_key = ${input.key}
          AND state = 'started' AND attempt = ${attempt}`

    const insertStarted = (input: Input, attempt: string) =>
      sql`INSERT INTO idempotency_keys
            (integration_id, idempotency_key, request_hash, state, response_status, response_body, resource_id,
             provider_key, attempt, started_at)
          VALUES (${input.integrationId}, ${input.key}, ${input.fingerprint}, 'started', 0, '{}'::jsonb, ${input.resourceId},
                  ${input.providerKey}, ${attempt}, now())
          ON CONFLICT DO NOTHING RETURNING 1 AS claimed`.pipe(Effect.map((rows) => rows.length > 0))

    /**
     * Moves a `started` row that was handed back or went stale to this attempt; false when another request took it
     * (or it changed) first.
     */
    const takeOver = (input: Input, row: KeyRow, attempt: string) =>
      sql`UPDATE idempotency_keys SET attempt = ${attempt}, started_at = now()
          WHERE integration_id = ${input.integrationId} AND idempotency_key = ${input.key}
            AND state = 'started' AND attempt IS NOT DISTINCT FROM ${row.attempt}
            AND (attempt IS NULL OR started_at < now() - ${staleMillis} * interval '1 millisecond')
          RETURNING 1 AS taken`.pipe(Effect.map((rows) => rows.length > 0))

    const inProgress = new IdempotencyKeyInProgress()
    const reused = new IdempotencyKeyReused({
      error: `Idempotency-Key was already used with a different request body; use a new key (see ${docsPointer(422)})`
    })

    /** Claims the key (new, or a stale `started` row), or finds the stored response; waits while another holds it. */
    const acquire = (input: Input, attempt: string) =>
      Effect.gen(function*() {
        const deadline = (yield* Clock.currentTimeMillis) + waitMillis
        let pause = FIRST_POLL_MS
        let waiting = false
        while (true) {
          if (yield* Effect.orDie(insertStarted(input, attempt))) {
            const claim = {
              resourceId: input.resourceId,
              providerKey: input.providerKey,
              takenOver: false,
              intent: null
            }
            return Acquired.Claimed({ claim })
          }
          const found = yield* Effect.orDie(findRow(input))
          if (Option.isNone(found)) continue // released between the two statements: claim it
          const row = found.value
          if (row.request_hash !== input.fingerprint) return yield* Effect.fail(reused)
          if (row.state === "done") return Acquired.Replay({ result: replayOf(row) })
          const handedBack = row.attempt === null
          if ((handedBack || row.stale) && row.provider_key !== null) {
            if (yield* Effect.orDie(takeOver(input, row, attempt))) {
              yield* (handedBack
                ? Effect.logInfo("retrying under an Idempotency-Key whose request failed after an outside call")
                : Effect.logWarning("taking over an Idempotency-Key whose request stopped before finishing")).pipe(
                  Effect.annotateLogs({ resourceId: row.resource_id })
                )
              const claim = {
                resourceId: row.resource_id,
                providerKey: row.provider_key,
                takenOver: true,
                intent: row.intent
              }
              return Acquired.Claimed({ claim })
            }
            continue
          }
          if (!waiting) {
            waiting = true
            yield* Effect.logInfo("a duplicate request waits for the request holding its Idempotency-Key")
          }
          const left = deadline - (yield* Clock.currentTimeMillis)
          if (left <= 0) return yield* Effect.fail(inProgress)
          yield* Effect.sleep(Duration.millis(Math.min(pause, left)))
          pause = Math.min(pause * 2, MAX_POLL_MS)
        }
      })

    /**
     * The `started` rows this process's requests hold, by attempt. One loop per process refreshes all of them every
     * heartbeat, in one statement: a request costs no fiber or timer of its own, and each row still shows a sign of
     * life at most a heartbeat after its claim and after every beat (as a beat per request would). A missed beat
     * only brings a (safe) takeover closer. A row locked by another transaction is skipped rather than waited for:
     * its holder is finishing it (or taking it over), and a skipped row is refreshed on the next beat.
     */
    const held = new Map<string, Input>()
    const refreshHeld = Effect.suspend((): Effect.Effect<unknown, SqlError> => {
      if (held.size === 0) return Effect.void
      const mine = Array.from(
        held,
        ([attempt, input]) =>
          sql`(integration_id = ${input.integrationId} AND idempotency_key = ${input.key} AND attempt = ${attempt})`
      )
      return sql`UPDATE idempotency_keys k SET started_at = now()
                 FROM (SELECT integration_id, idempotency_key FROM idempotency_keys
                       WHERE state = 'started' AND ${sql.or(mine)} FOR UPDATE SKIP LOCKED) alive
                 WHERE k.integration_id = alive.integration_id AND k.idempotency_key = alive.idempotency_key`
    }).pipe(Effect.ignoreCause)
    yield* refreshHeld.pipe(Effect.delay(heartbeat), Effect.forever, Effect.forkScoped)

    /** Keeps this attempt's row alive while `effect` runs. */
    const keepingAlive = <A, E, R>(input: Input, attempt: string, effect: Effect.Effect<A, E, R>) =>
      Effect.suspend(() => {
        held.set(attempt, input)
        return Effect.ensuring(effect, Effect.sync(() => held.delete(attempt)))
      })

    /** Writes the resource and marks the key `done`, in one transaction; a row already `done` is replayed. */
    const finish = <E, R>(input: Input, persist: Effect.Effect<StoredResponse, E, R>) =>
      Effect.gen(function*() {
        const locked = yield* Effect.orDie(lockRow(input))
        if (Option.isSome(locked) && locked.value.state === "done") return replayOf(locked.value)
        const created = yield* persist
        const bodyJson = created.bodyJson ?? JSON.stringify(created.body)
        yield* Effect.orDie(sql`INSERT INTO idempotency_keys
                     (integration_id, idempotency_key, request_hash, state, response_status, response_body, resource_id)
                   VALUES (${input.integrationId}, ${input.key}, ${input.fingerprint}, 'done', ${created.status},
                           ${JSON.stringify(bodyJson)}::jsonb, ${created.resourceId})
                   ON CONFLICT (integration_id, idempotency_key) DO UPDATE
                   SET state = 'done', response_status = EXCLUDED.response_status,
                       response_body = EXCLUDED.response_body, resource_id = EXCLUDED.resource_id`)
        return { ...created, bodyJson, replayed: false }
      }).pipe(sql.withTransaction)

    const record = (input: Input, attempt: string) => (intent: unknown) =>
      sql`UPDATE idempotency_keys SET intent = ${JSON.stringify(intent)}::jsonb WHERE ${whereMine(input, attempt)}`
        .pipe(
          Effect.asVoid,
          Effect.orDie
        )

    /**
     * After a failed or interrupted request, on this attempt's `started` row only (none if the claim itself failed):
     * frees the key (deletes the row) when nothing outside may have acted, else hands the row back for the retry.
     * Retried briefly, as the failure may have been a lost connection; if the database stays out of reach the row
     * stops showing signs of life and the next request with the key takes it over.
     */
    const release = (input: Input, attempt: string, mayHaveActed: boolean) =>
      (mayHaveActed
        ? sql`UPDATE idempotency_keys SET attempt = NULL WHERE ${whereMine(input, attempt)}`
        : sql`DELETE FROM idempotency_keys WHERE ${whereMine(input, attempt)}`).pipe(
          Effect.retry(Schedule.max([Schedule.spaced("100 millis"), Schedule.recurs(3)])),
          Effect.catch((error) =>
            Effect.logWarning(
              "could not release an Idempotency-Key after a failed request; the next request takes it over"
            ).pipe(
              Effect.annotateLogs({ error: String(error) })
            )
          )
        )

    const run = <A, E, R, E2, R2>(
      input: Input,
      work: (claim: Claim) => Effect.Effect<A, E, R>,
      persist: (prepared: A) => Effect.Effect<StoredResponse, E2, R2>
    ): Effect.Effect<IdempotentResult, E | E2 | IdempotencyKeyReused | IdempotencyKeyInProgress, R | R2> => {
      const attempt = randomUUID()
      // Whether something outside may have acted for this key: a taken-over row may carry the call of the request
      // before, so it counts from the start.
      let mayHaveActed = false
      const outsideCall = <A2, E3, R3>(call: Effect.Effect<A2, E3, R3>, madeNothing: (error: E3) => boolean) =>
        Effect.suspend(() => {
          const before = mayHaveActed
          mayHaveActed = true
          return Effect.tapError(call, (error) =>
            Effect.sync(() => {
              if (madeNothing(error)) mayHaveActed = before
            }))
        })
      return Effect.gen(function*() {
        const acquired = yield* acquire(input, attempt)
        if (acquired._tag === "Replay") return acquired.result
        mayHaveActed = acquired.claim.takenOver
        return yield* keepingAlive(
          input,
          attempt,
          work({ ...acquired.claim, record: record(input, attempt), outsideCall }).pipe(
            Effect.flatMap((prepared) => finish(input, persist(prepared)))
          )
        )
      }).pipe(
        Effect.onExit((exit) => (Exit.isSuccess(exit) ? Effect.void : release(input, attempt, mayHaveActed))),
        Effect.catchIf((error): error is SqlError => error instanceof SqlError, Effect.die)
      )
    }

    /**
     * A create that may carry an Idempotency-Key: with one, `run` (the request's fingerprint taken from `request`);
     * without one, `work` once, with a claim that records nothing and passes every outside call as it is, then
     * `persist`.
     */
    const runOptionally = <A, E, R, E2, R2>(
      input: Omit<Input, "key" | "fingerprint"> & {
        readonly key: string | undefined
        readonly request: { readonly method: string; readonly path: string; readonly body: unknown }
      },
      work: (claim: Claim) => Effect.Effect<A, E, R>,
      persist: (prepared: A) => Effect.Effect<StoredResponse, E2, R2>
    ): Effect.Effect<IdempotentResult, E | E2 | IdempotencyKeyReused | IdempotencyKeyInProgress, R | R2> => {
      const { key, request, ...rest } = input
      if (key !== undefined) {
        return run(
          { ...rest, key, fingerprint: requestFingerprint(request.method, request.path, request.body) },
          work,
          persist
        )
      }
      const unkeyed: Claim = {
        resourceId: input.resourceId,
        providerKey: input.providerKey,
        takenOver: false,
        intent: null,
        record: () => Effect.void,
        outsideCall: (call) => call
      }
      return Effect.map(
        Effect.flatMap(work(unkeyed), persist),
        (created) => ({ ...created, bodyJson: created.bodyJson ?? JSON.stringify(created.body), replayed: false })
      )
    }

    return { run, runOptionally } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
