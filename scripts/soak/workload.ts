/**
 * The soak's partner workload, run by a few concurrent workers until the deadline: keyed creates (with retries of the
 * same Idempotency-Key, sent again to another replica or at the same time to two), confirms racing over shared
 * transaction hashes, lists, payee previews, quotes, swaps, and the mock-mode test helpers that move payouts to
 * completed or failed so events flow. It remembers every 201 and every 200 confirm for the invariants.
 */
import { type Answer, errorCodeOf, type SoakClient } from "./client.ts"
import { ownerNameOf, swapKeyOf } from "./database.ts"
import type { Workload } from "./invariants.ts"
import type { Random } from "./random.ts"

const BREB = "/api/integrations/breb"

export type WorkloadKind = "all" | "creates"

export interface WorkloadState {
  readonly created: Array<Workload["created"][number]>
  readonly confirmed: Array<Workload["confirmed"][number]>
  readonly raceRecords: Array<Workload["races"][number]>
  /** Hash races: confirms of two resources with one hash at the same time, by how many of them won. */
  readonly races: { total: number; oneWinner: number; noWinner: number; losers: Map<string, number> }
  /** Logical operations done, by name (one may be several requests). */
  readonly operations: Map<string, number>
}

/** An error answer's text, shortened (a codeless 409 is told apart by it). */
const errorTextOf = (answer: Answer) => {
  const error = (answer.body as { error?: unknown } | undefined)?.error
  return typeof error === "string" ? error.slice(0, 80) : undefined
}

interface Created {
  readonly kind: "payout" | "swap"
  readonly id: string
}

export const runWorkload = async (options: {
  readonly client: Pick<SoakClient, "request">
  readonly random: Random
  readonly users: ReadonlyArray<string>
  readonly replicas: number
  readonly kind: WorkloadKind
  readonly concurrency: number
  readonly until: number
  /** Stop after this many operations too (a test's bound; a run has only its deadline). */
  readonly maxOperations?: number
  /** Makes keys and hashes unique to this run. */
  readonly run: string
}): Promise<WorkloadState> => {
  const { client, random, users } = options
  const state: WorkloadState = {
    created: [],
    confirmed: [],
    raceRecords: [],
    races: { total: 0, oneWinner: 0, noWinner: 0, losers: new Map() },
    operations: new Map()
  }
  const unconfirmed: Array<Created> = []
  const confirmedPayouts: Array<string> = []
  let counter = 0
  let hashes = 0
  const txHash = () => `0x${options.run}${(hashes++).toString(16).padStart(64 - options.run.length, "0")}`
  const count = (name: string) => state.operations.set(name, (state.operations.get(name) ?? 0) + 1)
  const anyReplica = () => random.int(0, options.replicas - 1)

  /** A keyed create, as a partner retries one: once; again after the answer to another replica; or twice at once. */
  const keyed = async (op: string, kind: "payout" | "swap", path: string, key: string, body: unknown) => {
    const headers = { "idempotency-key": key }
    const roll = random.next()
    const first = anyReplica()
    const answers = options.kind === "creates" || roll < 0.6
      ? [await client.request(op, "POST", path, { body, headers, replica: first })]
      : roll < 0.8
      ? [
        await client.request(op, "POST", path, { body, headers, replica: first }),
        await client.request(op, "POST", path, { body, headers, avoid: first })
      ]
      : await Promise.all([
        client.request(op, "POST", path, { body, headers, replica: first }),
        client.request(op, "POST", path, { body, headers, avoid: first })
      ])
    let id: string | undefined
    for (const answer of answers) {
      if (answer?.status !== 201) continue
      const object = answer.body as { payoutId?: string; intentId?: string }
      const answered = kind === "payout" ? object.payoutId : object.intentId
      if (answered === undefined) continue
      state.created.push({ kind, key, id: answered })
      id ??= answered
    }
    if (id !== undefined) unconfirmed.push({ kind, id })
  }

  const createPayout = async () => {
    const key = `po-${options.run}-${counter++}`
    await keyed("create payout", "payout", `${BREB}/payouts`, key, {
      userAddress: random.pick(users),
      destinationCop: String(random.int(20_000, 400_000)),
      breBKey: `@soak${random.int(1, 99)}`,
      accountOwnerName: ownerNameOf(key)
    })
    count("create payout")
  }

  const createSwap = async () => {
    const amountIn = String(1_000 + counter++)
    await keyed("create swap", "swap", "/api/integrations/swaps", swapKeyOf(amountIn), {
      userAddress: random.pick(users),
      fromToken: "COPm",
      toToken: "USDC",
      amountIn
    })
    count("create swap")
  }

  const confirmPath = (resource: Created) =>
    resource.kind === "payout"
      ? `${BREB}/payouts/${resource.id}/confirm`
      : `/api/integrations/swaps/${resource.id}/confirm`

  const confirmOne = async (resource: Created, hash: string, replica?: number) => {
    const answer = await client.request(`confirm ${resource.kind}`, "POST", confirmPath(resource), {
      body: { txHash: hash },
      ...(replica === undefined ? {} : { replica })
    })
    if (answer?.status === 200) {
      state.confirmed.push({ kind: resource.kind, id: resource.id, txHash: hash })
      if (resource.kind === "payout") confirmedPayouts.push(resource.id)
    }
    return answer
  }

  /** A confirm with a new hash (sometimes repeated: the same hash again is answered 200 unchanged). */
  const confirm = async () => {
    const resource = unconfirmed.splice(random.int(0, unconfirmed.length - 1), 1)[0]
    if (resource === undefined) return createPayout()
    const hash = txHash()
    await confirmOne(resource, hash)
    if (random.chance(0.2)) await confirmOne(resource, hash, anyReplica())
    count("confirm")
  }

  /** Two resources confirmed at once with one hash, on two replicas: exactly one may win. */
  const race = async () => {
    if (unconfirmed.length < 2) return createPayout()
    const a = unconfirmed.splice(random.int(0, unconfirmed.length - 1), 1)[0] as Created
    const b = unconfirmed.splice(random.int(0, unconfirmed.length - 1), 1)[0] as Created
    const hash = txHash()
    const first = anyReplica()
    const startedAt = Date.now()
    const answers = await Promise.all([
      confirmOne(a, hash, first),
      confirmOne(b, hash, (first + 1) % options.replicas)
    ])
    state.raceRecords.push({
      hash,
      startedAt,
      endedAt: Date.now(),
      answers: answers.map((answer) => {
        const errorCode = errorCodeOf(answer?.body)
        return {
          status: answer?.status,
          errorCode,
          ...(answer === undefined || errorCode !== undefined ? {} : { error: errorTextOf(answer) })
        }
      })
    })
    const winners = answers.filter((answer) => answer?.status === 200).length
    state.races.total++
    if (winners === 1) {
      state.races.oneWinner++
      const loser = answers.find((answer) => answer?.status !== 200)
      const code = errorCodeOf(loser?.body)
      const label = loser === undefined ? "no answer" : `${loser.status}${code === undefined ? "" : ` ${code}`}`
      state.races.losers.set(label, (state.races.losers.get(label) ?? 0) + 1)
    }
    if (winners === 0) state.races.noWinner++
    // A loser answered tx_hash_reused is surely unconfirmed: it may be confirmed later with a hash of its own. Any
    // other loser (no answer, a codeless 409 while still verifying) may have been confirmed: it is not raced again.
    for (const [i, answer] of answers.entries()) {
      if (answer?.status === 409 && errorCodeOf(answer.body) === "tx_hash_reused") unconfirmed.push(i === 0 ? a : b)
    }
    count("confirm race")
  }

  const advance = async () => {
    if (confirmedPayouts.length === 0) return createPayout()
    const payout = random.pick(confirmedPayouts)
    await client.request("advance (test helper)", "POST", `/api/integrations/test-helpers/payouts/${payout}/advance`, {
      body: { to: random.chance(0.7) ? "completed" : "failed" }
    })
    count("advance")
  }

  const list = async () => {
    const path = random.pick([
      `${BREB}/payouts?limit=50`,
      "/api/integrations/events?limit=50",
      "/api/integrations/swaps?limit=20"
    ])
    await client.request(`list ${path.split("?")[0]?.split("/").pop()}`, "GET", path)
    count("list")
  }

  const preview = async () => {
    await client.request("preview", "POST", `${BREB}/destinations/preview`, {
      body: { breBKey: `@soak${random.int(1, 99)}`, accountOwnerName: "Soak Preview", userAddress: random.pick(users) }
    })
    count("preview")
  }

  const quote = async () => {
    await client.request("quote", "GET", `${BREB}/quote?destinationCop=${random.int(20_000, 400_000)}`)
    count("quote")
  }

  const mix: ReadonlyArray<readonly [number, () => Promise<unknown>]> = options.kind === "creates"
    ? [[1, createPayout]]
    : [[28, createPayout], [14, confirm], [8, race], [10, advance], [14, list], [8, preview], [6, quote], [
      12,
      createSwap
    ]]
  const total = mix.reduce((sum, [weight]) => sum + weight, 0)
  const choose = () => {
    let roll = random.next() * total
    for (const [weight, op] of mix) {
      roll -= weight
      if (roll < 0) return op
    }
    return createPayout
  }

  let operations = 0
  const more = () => Date.now() < options.until && operations++ < (options.maxOperations ?? Infinity)
  const worker = async () => {
    while (more()) await choose()()
  }
  await Promise.all(Array.from({ length: options.concurrency }, worker))
  return state
}
