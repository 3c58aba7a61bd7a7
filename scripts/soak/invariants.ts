/**
 * The soak run's invariants, as pure functions of what it gathered: the database's rows after the run (`Snapshot`),
 * what the partner workload was answered (`Workload`), what the webhook receiver got (`Received`) and when replicas
 * were killed (`Kill`). Each returns a verdict with the count of what broke it and a few examples; the runner prints
 * them and exits non-zero when any fails. Tested with fabricated inputs in test/soak/invariants.test.ts.
 */

export interface Snapshot {
  /** Every payout: its id, the Idempotency-Key its create named (the workload writes it into the owner's name). */
  readonly payouts: ReadonlyArray<
    { readonly id: string; readonly key: string; readonly txHash: string | null; readonly feeTxHash: string | null }
  >
  /** Every swap intent: its id, the key of its create (written into its amount), its tx hash. */
  readonly swaps: ReadonlyArray<{ readonly id: string; readonly key: string; readonly txHash: string | null }>
  /** Every row of tx_hash_claims. */
  readonly claims: ReadonlyArray<
    { readonly txHash: string; readonly resourceKind: string; readonly resourceId: string; readonly state: string }
  >
  /** Every event of the soak's integration (outbox rows). */
  readonly events: ReadonlyArray<
    {
      readonly id: string
      readonly type: string
      readonly resourceId: string
      readonly sequence: number
      /** Recorded after the receiver's endpoint was registered (so a delivery to it is owed). */
      readonly afterEndpoint: boolean
    }
  >
  /** Every delivery row to the receiver's endpoint. */
  readonly deliveries: ReadonlyArray<{ readonly eventId: string; readonly state: string }>
}

export interface Workload {
  /** Every 201 a create got: the resource kind, the Idempotency-Key sent, the id answered. */
  readonly created: ReadonlyArray<{ readonly kind: "payout" | "swap"; readonly key: string; readonly id: string }>
  /** Every 200 a confirm got: the resource confirmed and the hash it was confirmed with. */
  readonly confirmed: ReadonlyArray<
    { readonly kind: "payout" | "swap"; readonly id: string; readonly txHash: string }
  >
  /** Every answer with a status of 500 or more: when, from which replica, and whether it carried Retry-After. */
  readonly serverErrors: ReadonlyArray<
    {
      readonly op: string
      readonly status: number
      readonly retryAfter: boolean
      readonly replica: number
      readonly at: number
    }
  >
  /** Every race: two resources confirmed at once, on two replicas, with one hash; what each was answered. */
  readonly races: ReadonlyArray<
    {
      readonly hash: string
      readonly startedAt: number
      readonly endedAt: number
      /** `undefined` status: no answer after every try. */
      readonly answers: ReadonlyArray<
        {
          readonly status: number | undefined
          readonly errorCode: string | undefined
          /** A codeless error answer's text (shortened). */
          readonly error?: string | undefined
        }
      >
    }
  >
  /** Every request that got no answer (connection refused, reset, timeout): when and to which replica. */
  readonly connectionErrors: ReadonlyArray<
    { readonly op: string; readonly replica: number; readonly at: number; readonly error: string }
  >
}

export interface ReceivedDelivery {
  readonly eventId: string
  readonly type: string
  readonly resourceId: string
  readonly sequence: number
  readonly signatureValid: boolean
  /** What the receiver answered: 2xx delivered it; 500, or 0 when it hung (the sender timed out), did not. */
  readonly answered: number
  readonly at: number
}

/** A replica SIGKILLed at `killedAt` and serving again from `readyAt` (undefined: it never came back). */
export interface Kill {
  readonly replica: number
  readonly killedAt: number
  readonly readyAt: number | undefined
}

export interface Verdict {
  readonly name: string
  readonly ok: boolean
  /** What broke it (0 when it holds). */
  readonly violations: number
  /** What was checked, for the report ("1203 keys"). */
  readonly checked: string
  readonly examples: ReadonlyArray<string>
}

const EXAMPLES = 5

const verdict = (name: string, checked: string, problems: ReadonlyArray<string>): Verdict => ({
  name,
  ok: problems.length === 0,
  violations: problems.length,
  checked,
  examples: problems.slice(0, EXAMPLES)
})

const groupBy = <A>(items: ReadonlyArray<A>, key: (a: A) => string): Map<string, Array<A>> => {
  const groups = new Map<string, Array<A>>()
  for (const item of items) {
    const k = key(item)
    const group = groups.get(k)
    if (group === undefined) groups.set(k, [item])
    else group.push(item)
  }
  return groups
}

/** One resource per Idempotency-Key: in the database (one payout or swap per key) and in the answers (one id). */
export const oneResourcePerKey = (snapshot: Snapshot, workload: Workload): Verdict => {
  const problems: Array<string> = []
  const stored = [
    ...snapshot.payouts.map((p) => ({ kind: "payout", key: p.key, id: p.id })),
    ...snapshot.swaps.map((s) => ({ kind: "swap", key: s.key, id: s.id }))
  ]
  for (const [key, rows] of groupBy(stored, (r) => `${r.kind} ${r.key}`)) {
    if (rows.length > 1) {
      problems.push(`${key}: ${rows.length} rows in the database (${rows.map((r) => r.id).join(", ")})`)
    }
  }
  for (const [key, answers] of groupBy(workload.created, (c) => `${c.kind} ${c.key}`)) {
    const ids = new Set(answers.map((a) => a.id))
    if (ids.size > 1) problems.push(`${key}: answered with ${ids.size} ids (${[...ids].join(", ")})`)
  }
  const keys = new Set(workload.created.map((c) => `${c.kind} ${c.key}`)).size
  return verdict("one resource per Idempotency-Key", `${keys} keys, ${stored.length} resources`, problems)
}

/** A transaction hash confirms one resource: in the database, in the claims, and in the 200s the workload got. */
export const oneUsePerHash = (snapshot: Snapshot, workload: Workload): Verdict => {
  const problems: Array<string> = []
  const uses = [
    ...snapshot.payouts.flatMap((p) => [
      ...(p.txHash === null ? [] : [{ hash: p.txHash, owner: `payout ${p.id}` }]),
      ...(p.feeTxHash === null ? [] : [{ hash: p.feeTxHash, owner: `payout ${p.id} (fee)` }])
    ]),
    ...snapshot.swaps.flatMap((s) => (s.txHash === null ? [] : [{ hash: s.txHash, owner: `swap ${s.id}` }]))
  ]
  for (const [hash, owners] of groupBy(uses, (u) => u.hash.toLowerCase())) {
    if (owners.length > 1) problems.push(`${hash}: recorded on ${owners.map((o) => o.owner).join(" and ")}`)
  }
  for (const [hash, claims] of groupBy(snapshot.claims, (c) => c.txHash.toLowerCase())) {
    if (claims.length > 1) problems.push(`${hash}: claimed ${claims.length} times`)
  }
  for (const [hash, confirms] of groupBy(workload.confirmed, (c) => c.txHash.toLowerCase())) {
    const owners = new Set(confirms.map((c) => `${c.kind} ${c.id}`))
    if (owners.size > 1) problems.push(`${hash}: confirm answered 200 for ${[...owners].join(" and ")}`)
  }
  const hashes = new Set(uses.map((u) => u.hash.toLowerCase())).size
  return verdict(
    "one use per tx hash",
    `${hashes} hashes, ${workload.confirmed.length} confirms answered 200`,
    problems
  )
}

/** Every 201 names a resource that exists, and every confirm answered 200 left its hash on the resource. */
export const acknowledgedWritesPresent = (snapshot: Snapshot, workload: Workload): Verdict => {
  const problems: Array<string> = []
  const payouts = new Map(snapshot.payouts.map((p) => [p.id, p]))
  const swaps = new Map(snapshot.swaps.map((s) => [s.id, s]))
  const seen = new Set<string>()
  for (const created of workload.created) {
    const id = `${created.kind} ${created.id}`
    if (seen.has(id)) continue
    seen.add(id)
    const row = created.kind === "payout" ? payouts.get(created.id) : swaps.get(created.id)
    if (row === undefined) problems.push(`${id} (key ${created.key}) was answered 201 but is not in the database`)
    else if (row.key !== created.key) {
      problems.push(`${id} was answered for key ${created.key} but belongs to ${row.key}`)
    }
  }
  for (const confirmed of workload.confirmed) {
    const row = confirmed.kind === "payout" ? payouts.get(confirmed.id) : swaps.get(confirmed.id)
    if (row?.txHash?.toLowerCase() !== confirmed.txHash.toLowerCase()) {
      problems.push(
        `${confirmed.kind} ${confirmed.id} was confirmed (200) with ${confirmed.txHash} but holds ${
          row?.txHash ?? "none"
        }`
      )
    }
  }
  return verdict(
    "every acknowledged write present",
    `${seen.size} creates, ${workload.confirmed.length} confirms`,
    problems
  )
}

/**
 * Every event owed to the receiver's endpoint has its delivery, delivered or still pending (none failed, canceled or
 * missing), and each one the database calls delivered reached the receiver, answered 2xx, with a valid signature.
 * Everything the receiver got is an event of the database, signed.
 */
export const noEventLost = (snapshot: Snapshot, received: ReadonlyArray<ReceivedDelivery>): Verdict => {
  const problems: Array<string> = []
  const deliveries = groupBy(snapshot.deliveries, (d) => d.eventId)
  const acknowledged = new Set(received.filter((r) => r.answered >= 200 && r.answered < 300).map((r) => r.eventId))
  const owed = snapshot.events.filter((e) => e.afterEndpoint)
  let pending = 0
  for (const event of owed) {
    const rows = deliveries.get(event.id) ?? []
    if (rows.length === 0) problems.push(`${event.id} (${event.type}): no delivery to the endpoint`)
    for (const row of rows) {
      if (row.state === "pending") pending++
      else if (row.state !== "delivered") problems.push(`${event.id} (${event.type}): delivery ${row.state}`)
      else if (!acknowledged.has(event.id)) {
        problems.push(`${event.id} (${event.type}): delivered in the database, never acknowledged by the receiver`)
      }
    }
  }
  const known = new Set(snapshot.events.map((e) => e.id))
  for (const r of received) {
    if (!known.has(r.eventId)) problems.push(`receiver got ${r.eventId} (${r.type}), which the database does not hold`)
    if (!r.signatureValid) problems.push(`receiver got ${r.eventId} (${r.type}) with a bad signature`)
  }
  return verdict(
    "every event delivered or pending",
    `${owed.length} events owed, ${pending} still pending, ${received.length} deliveries received`,
    problems
  )
}

/**
 * Per resource, the database's sequences are 1..n, and the receiver acknowledged a gap-free run of them in order:
 * sequence n+1 first acknowledged only after n was.
 */
export const sequencesGapFree = (snapshot: Snapshot, received: ReadonlyArray<ReceivedDelivery>): Verdict => {
  const problems: Array<string> = []
  const byResource = groupBy(snapshot.events, (e) => e.resourceId)
  for (const [resource, events] of byResource) {
    const sequences = events.map((e) => e.sequence).sort((a, b) => a - b)
    sequences.forEach((sequence, i) => {
      if (sequence !== i + 1) problems.push(`${resource}: database sequences ${sequences.join(",")} are not 1..n`)
    })
  }
  // The database names each event's resource; the receiver's own reading of the body is the fallback.
  const resourceOf = new Map(snapshot.events.map((e) => [e.id, e.resourceId]))
  const acknowledged = received.filter((r) => r.answered >= 200 && r.answered < 300)
  for (const [resource, deliveries] of groupBy(acknowledged, (r) => resourceOf.get(r.eventId) ?? r.resourceId)) {
    const firstAck = new Map<number, number>()
    for (const d of [...deliveries].sort((a, b) => a.at - b.at)) {
      if (!firstAck.has(d.sequence)) firstAck.set(d.sequence, d.at)
    }
    const owed = (byResource.get(resource) ?? []).filter((e) => e.afterEndpoint).map((e) => e.sequence)
    const start = owed.length === 0 ? 1 : Math.min(...owed)
    const got = [...firstAck.keys()].sort((a, b) => a - b)
    got.forEach((sequence, i) => {
      if (sequence !== start + i) problems.push(`${resource}: receiver acknowledged ${got.join(",")}, a gap`)
    })
    for (const [sequence, at] of firstAck) {
      const before = firstAck.get(sequence - 1)
      if (sequence > start && before !== undefined && before > at) {
        problems.push(`${resource}: sequence ${sequence} acknowledged before ${sequence - 1}`)
      }
    }
  }
  return verdict(
    "per-resource sequences gap-free and in order",
    `${byResource.size} resources, ${acknowledged.length} acknowledged deliveries`,
    dedupe(problems)
  )
}

/**
 * No 5xx but 503 with Retry-After; a request that got no answer went to a replica killed at most `graceMs` before
 * (or still down).
 */
export const noServerErrors = (workload: Workload, kills: ReadonlyArray<Kill>, graceMs = 2000): Verdict => {
  const problems: Array<string> = []
  for (const e of workload.serverErrors) {
    if (!(e.status === 503 && e.retryAfter)) {
      problems.push(`${e.op}: ${e.status}${e.status === 503 ? " without Retry-After" : ""} from replica ${e.replica}`)
    }
  }
  const aroundKill = (replica: number, at: number) =>
    kills.some((k) => k.replica === replica && at >= k.killedAt && at <= (k.readyAt ?? Infinity) + graceMs)
  let excused = 0
  for (const e of workload.connectionErrors) {
    if (aroundKill(e.replica, e.at)) excused++
    else problems.push(`${e.op}: no answer from replica ${e.replica} (${e.error}) away from any kill`)
  }
  const retryable = workload.serverErrors.length - problems.filter((p) => !p.includes("no answer")).length
  return verdict(
    "no 5xx but 503 with Retry-After, no lost connection away from a kill",
    `${retryable} 503s with Retry-After, ${excused} connection errors around kills`,
    problems
  )
}

/**
 * A race over one hash has exactly one winner (200), and the other is answered 409 `tx_hash_reused` (or `requote`, when
 * its deposit window had closed). A race a kill overlapped (a confirm cut off mid-claim is answered otherwise until
 * the reconciler releases its claim) may end otherwise, but never with two winners.
 */
export const hashRacesOneWinner = (workload: Workload, kills: ReadonlyArray<Kill>, graceMs = 2000): Verdict => {
  const problems: Array<string> = []
  const overlapsKill = (startedAt: number, endedAt: number) =>
    kills.some((k) => k.killedAt <= endedAt && (k.readyAt ?? Infinity) + graceMs >= startedAt)
  const lost = (a: { status: number | undefined; errorCode: string | undefined }) =>
    a.status === 409 && (a.errorCode === "tx_hash_reused" || a.errorCode === "requote")
  const label = (a: Workload["races"][number]["answers"][number]) =>
    a.status === undefined
      ? "no answer"
      : `${a.status}${a.errorCode === undefined ? "" : ` ${a.errorCode}`}${
        a.error === undefined ? "" : ` "${a.error}"`
      }`
  let excused = 0
  for (const race of workload.races) {
    const winners = race.answers.filter((a) => a.status === 200).length
    const answered = race.answers.map(label).join(" / ")
    if (winners > 1) {
      problems.push(`${race.hash}: ${winners} winners`)
      continue
    }
    const losers = race.answers.filter((a) => a.status !== 200)
    const requoted = losers.every((a) => a.status === 409 && a.errorCode === "requote")
    if ((winners === 1 && losers.every(lost)) || (winners === 0 && requoted)) continue
    if (overlapsKill(race.startedAt, race.endedAt)) excused++
    else problems.push(`${race.hash}: answered ${answered}`)
  }
  return verdict(
    "hash races: one winner, the other tx_hash_reused",
    `${workload.races.length} races, ${excused} ended otherwise around a kill`,
    problems
  )
}

const dedupe = (items: ReadonlyArray<string>) => [...new Set(items)]

export const allInvariants = (
  snapshot: Snapshot,
  workload: Workload,
  received: ReadonlyArray<ReceivedDelivery>,
  kills: ReadonlyArray<Kill>
): ReadonlyArray<Verdict> => [
  oneResourcePerKey(snapshot, workload),
  oneUsePerHash(snapshot, workload),
  hashRacesOneWinner(workload, kills),
  acknowledgedWritesPresent(snapshot, workload),
  noEventLost(snapshot, received),
  sequencesGapFree(snapshot, received),
  noServerErrors(workload, kills)
]
