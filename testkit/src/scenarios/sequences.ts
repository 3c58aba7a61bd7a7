/**
 * Stateful sequences (model-based, fast-check): random sequences of payout operations (create, with or without a
 * payee preview, get, confirm, confirm again, a hash of another payout, advance, cancel, list), several payouts
 * interleaved, checked step by step against a model of what the contract allows. After every step the payout it
 * touched keeps the state rules: its status only moves forward, a hash serves one payout, its amounts stay exact, and
 * its events are numbered 1, 2, 3 … with the current status among them. A failure is shrunk to the shortest sequence
 * that still fails, and the run's `--seed` generates the same sequences again.
 */
import type { Payout } from "@cop-integrations/contracts"
import { Cause, Effect, Exit, Option } from "effect"
import fc from "fast-check"
import { describeReply, ok, type Reply } from "../api.ts"
import { check } from "../check.ts"
import { approvedUser, payoutRequest, randomTxHash, uniqueSuffix } from "../fixtures.ts"
import { failure, ScenarioFailure, show } from "../failure.ts"
import { ahead, type PayoutStatus } from "../payoutStatuses.ts"
import { type Kit, scenario } from "../scenario.ts"

type Status = PayoutStatus

const FORWARD_RULE = "a payout's status only moves forward (R-SEQ-1)"
const HASH_RULE = "a txHash confirms one payout: another payout's hash is 409 tx_hash_reused (R-SEQ-1)"
const AMOUNTS_RULE = "a payout's amounts never change: sourceAmount, destinationCop, fee legs, totalPaid (R-SEQ-1)"
const EVENTS_RULE = "a payout's events are numbered 1, 2, 3 … without gap or repeat, its status among them (R-SEQ-1)"
const MOVES_RULE = "each operation answers as the payout's state allows (R-SEQ-1)"

interface Tracked {
  readonly id: string
  readonly created: Payout
  status: Status
  txHash: string | null
}

interface Model {
  readonly payouts: Array<Tracked>
}

interface Real {
  readonly kit: Kit
  /** Steps run, by kind, over every sequence (for the report). */
  readonly ran: Record<string, number>
  readonly user: string
  readonly startedAt: string
}

/** A step's broken rule, carried through fast-check to the report. */
class StepFailed extends Error {
  constructor(readonly failure: ScenarioFailure) {
    super(`${failure.message}: expected ${failure.expected}, got ${failure.actual}`)
  }
}

const step = async <A>(effect: Effect.Effect<A, ScenarioFailure>): Promise<A> => {
  const exit = await Effect.runPromiseExit(effect)
  if (Exit.isSuccess(exit)) return exit.value
  const error = Option.getOrUndefined(Cause.findErrorOption(exit.cause))
  throw error instanceof ScenarioFailure ? new StepFailed(error) : Cause.squash(exit.cause)
}

const broken = (rule: string, expected: string, reply: Reply<unknown>) =>
  failure(rule, { expected, actual: describeReply(reply), exchange: reply.exchange })

/**
 * The payout as the service has it now, held to the model: its status at or ahead of the last one seen, its amounts
 * those it was created with, and its events numbered without gap with its status among them.
 */
const verified = (kit: Kit, tracked: Tracked): Effect.Effect<Payout, ScenarioFailure> =>
  Effect.gen(function*() {
    const reply = yield* kit.call("getPayout", { path: { payoutId: tracked.id } })
    const payout = yield* ok(reply, "200 with the payout")
    yield* check(payout.status === tracked.status || ahead(tracked.status, payout.status), FORWARD_RULE, {
      expected: `${tracked.status} or a status after it`,
      actual: payout.status,
      exchange: reply.exchange
    })
    const amounts = (each: Payout) =>
      show([
        each.sourceAmount,
        each.destinationCop,
        each.fees.map((leg) => [leg.code, leg.amountUsd]),
        each.receipt.totalPaid
      ])
    yield* check(
      amounts(payout) === amounts(tracked.created) && payout.receipt.totalPaid.amount === payout.sourceAmount,
      AMOUNTS_RULE,
      { expected: amounts(tracked.created), actual: amounts(payout), exchange: reply.exchange }
    )
    if (tracked.txHash !== null) {
      yield* check(payout.txHash?.toLowerCase() === tracked.txHash.toLowerCase(), HASH_RULE, {
        expected: `txHash ${tracked.txHash}`,
        actual: String(payout.txHash),
        exchange: reply.exchange
      })
    }
    const eventsReply = yield* kit.call("listEvents", { query: { resourceId: tracked.id, limit: "100" } })
    const events = (yield* ok(eventsReply, "200 with the payout's events")).items
    const sequences = events.map((event) => event.sequence)
    const statusEvent = payout.status === "awaiting_deposit" ? "payout.created" : `payout.${payout.status}`
    yield* check(
      sequences.every((sequence, index) => sequence === index + 1) && events.some((e) => e.type === statusEvent),
      EVENTS_RULE,
      {
        expected: `sequences 1…${events.length} and a ${statusEvent} event`,
        actual: events.map((event) => `${event.sequence}:${event.type}`).join(", "),
        exchange: eventsReply.exchange
      }
    )
    tracked.status = payout.status
    return payout
  })

type Command = fc.AsyncCommand<Model, Real, false>

/** Counts a step by its kind and hands back the real side. */
const tally = (real: Real, kind: string): Real => {
  real.ran[kind] = (real.ran[kind] ?? 0) + 1
  return real
}

/** The payout a command's index names (commands hold indices, so a shrunk sequence still points somewhere). */
const nth = (model: Model, index: number): Tracked | undefined =>
  model.payouts[index % Math.max(1, model.payouts.length)]

class Create implements Command {
  constructor(readonly withPreview: boolean) {}
  check = (model: Readonly<Model>) => model.payouts.length < 4
  run = async (model: Model, real: Real) => {
    const { kit, user } = tally(real, "create")
    const destination = { breBKey: `@seq${uniqueSuffix()}`, accountOwnerName: "Conformance Kit" }
    let previewId: string | undefined
    if (this.withPreview) {
      const previewed = await step(kit.call("previewDestination", { json: { ...destination, userAddress: user } }))
      previewId = (await step(ok(previewed, "200 with a preview"))).previewId
    }
    const request = payoutRequest(user, { ...destination, ...(previewId === undefined ? {} : { previewId }) })
    const reply = await step(kit.call("createPayout", { json: request }))
    const created = await step(ok(reply, "201 with a prepared payout"))
    if (created.status !== "awaiting_deposit") {
      throw new StepFailed(broken(MOVES_RULE, "a new payout awaiting_deposit", reply))
    }
    const tracked: Tracked = { id: created.payoutId, created, status: created.status, txHash: null }
    model.payouts.push(tracked)
    await step(verified(kit, tracked))
  }
  toString = () => (this.withPreview ? "create(previewed)" : "create")
}

class Get implements Command {
  constructor(readonly index: number) {}
  check = (model: Readonly<Model>) => model.payouts.length > 0
  run = async (model: Model, real: Real) => void await step(verified(tally(real, "get").kit, nth(model, this.index)!))
  toString = () => `get(#${this.index})`
}

/**
 * What a confirm must answer (README, "Payout lifecycle"): the first hash of a payout awaiting its deposit, or of one
 * whose deposit the provider saw first, is accepted; the same hash again answers the payout unchanged; another hash
 * for a confirmed payout, or any for an expired one, is 409. A payout that failed before any deposit: either.
 */
const confirmAnswer = (tracked: Tracked, hash: "fresh" | "same"): "200" | "409" | "either" => {
  if (hash === "same") return "200"
  if (tracked.txHash !== null || tracked.status === "expired") return "409"
  return FUNDS_MAY_ARRIVE.includes(tracked.status) ? "200" : "either"
}
const FUNDS_MAY_ARRIVE: ReadonlyArray<Status> = ["awaiting_deposit", "deposit_confirmed", "processing", "completed"]

class Confirm implements Command {
  constructor(readonly index: number, readonly hash: "fresh" | "same") {}
  check = (model: Readonly<Model>) =>
    model.payouts.length > 0 && (this.hash === "fresh" || nth(model, this.index)!.txHash !== null)
  run = async (model: Model, real: Real) => {
    const { kit } = tally(real, "confirm")
    const tracked = nth(model, this.index)!
    const txHash = this.hash === "same" && tracked.txHash !== null ? tracked.txHash : randomTxHash()
    const reply = await step(kit.call("confirmPayout", { path: { payoutId: tracked.id }, json: { txHash } }))
    const accepted = confirmAnswer(tracked, this.hash)
    if (accepted === "200" || (accepted === "either" && reply._tag === "Success")) {
      const payout = await step(ok(reply, "200 with the confirmed payout"))
      if (!(payout.status === "deposit_confirmed" || ahead("deposit_confirmed", payout.status))) {
        throw new StepFailed(broken(MOVES_RULE, "deposit_confirmed or later", reply))
      }
      tracked.txHash = txHash
    } else if (accepted === "409" && (reply._tag === "Success" || reply.status !== 409)) {
      throw new StepFailed(
        broken(MOVES_RULE, `409: a ${tracked.status} payout with hash ${tracked.txHash} takes no other`, reply)
      )
    }
    await step(verified(kit, tracked))
  }
  toString = () => `confirm(#${this.index}, ${this.hash} hash)`
}

/** A confirm of one payout with the hash another payout was confirmed with. */
class ReuseHash implements Command {
  constructor(readonly index: number) {}
  check = (model: Readonly<Model>) => sourceFor(model, this.index) !== undefined
  run = async (model: Model, real: Real) => {
    const { kit } = tally(real, "reuse hash")
    const target = nth(model, this.index)!
    const source = sourceFor(model, this.index)!
    const reply = await step(
      kit.call("confirmPayout", { path: { payoutId: target.id }, json: { txHash: source.txHash } })
    )
    // would take a first hash: refused for this one's being taken; else refused anyway
    const claimable = target.txHash === null && FUNDS_MAY_ARRIVE.includes(target.status)
    if (reply._tag === "Success" || reply.status !== 409 || (claimable && reply.error.errorCode !== "tx_hash_reused")) {
      throw new StepFailed(
        broken(HASH_RULE, `409 ErrorBody${claimable ? " with errorCode tx_hash_reused" : ""}`, reply)
      )
    }
    await step(verified(kit, target))
  }
  toString = () => `confirm(#${this.index}, another payout's hash)`
}

/** The first payout other than the `index`th with a hash. */
const sourceFor = (model: Readonly<Model>, index: number): (Tracked & { txHash: string }) | undefined => {
  const target = nth(model, index)
  return model.payouts.find((each): each is Tracked & { txHash: string } => each !== target && each.txHash !== null)
}

class Advance implements Command {
  constructor(readonly index: number, readonly to: "processing" | "completed" | "failed" | "refunded") {}
  check = (model: Readonly<Model>) => model.payouts.length > 0
  run = async (model: Model, real: Real) => {
    const { kit } = tally(real, "advance")
    const tracked = nth(model, this.index)!
    const reply = await step(kit.call("advancePayout", { path: { payoutId: tracked.id }, json: { to: this.to } }))
    if (reply._tag === "Success") {
      if (reply.value.status !== this.to || !ahead(tracked.status, this.to)) {
        throw new StepFailed(broken(FORWARD_RULE, `from ${tracked.status}: ${this.to}, a status ahead`, reply))
      }
    } else if (reply.status !== 409) {
      throw new StepFailed(broken(MOVES_RULE, "200, or 409 when the move is not forward", reply))
    }
    // a 409 (a move the sandbox does not make from here) changes nothing: the payout is held to the model as ever
    await step(verified(kit, tracked))
  }
  toString = () => `advance(#${this.index}, ${this.to})`
}

class Cancel implements Command {
  constructor(readonly index: number) {}
  check = (model: Readonly<Model>) => model.payouts.length > 0
  run = async (model: Model, real: Real) => {
    const { kit } = tally(real, "cancel")
    const tracked = nth(model, this.index)!
    const reply = await step(kit.call("cancelPayout", { path: { payoutId: tracked.id } }))
    const cancelable = tracked.status === "awaiting_deposit" ||
      (tracked.status === "expired" && tracked.txHash === null)
    if (cancelable && (reply._tag !== "Success" || reply.value.status !== "expired")) {
      throw new StepFailed(broken(MOVES_RULE, `200 expired: the payout was ${tracked.status}`, reply))
    }
    if (!cancelable && (reply._tag === "Success" || reply.status !== 409)) {
      throw new StepFailed(broken(MOVES_RULE, `409: a ${tracked.status} payout cannot be canceled`, reply))
    }
    await step(verified(kit, tracked))
  }
  toString = () => `cancel(#${this.index})`
}

class List implements Command {
  check = (model: Readonly<Model>) => model.payouts.length > 0
  run = async (model: Model, real: Real) => {
    const { kit, startedAt } = tally(real, "list")
    const listed = new Map<string, Array<Status>>()
    let cursor: string | null = null
    for (let page = 0; page < 20; page++) {
      const query: Record<string, string> = {
        createdFrom: startedAt,
        limit: "100",
        ...(cursor === null ? {} : { cursor })
      }
      const body = await step(
        Effect.flatMap(kit.call("listPayouts", { query }), (reply) => ok(reply, "200 with a page"))
      )
      for (const payout of body.items) {
        listed.set(payout.payoutId, [...(listed.get(payout.payoutId) ?? []), payout.status])
      }
      cursor = body.nextCursor
      if (cursor === null) break
    }
    for (const tracked of model.payouts) {
      const statuses = listed.get(tracked.id) ?? []
      const [status] = statuses
      if (statuses.length !== 1 || !(status === tracked.status || ahead(tracked.status, status!))) {
        throw new StepFailed(failure("the list shows each payout once, at its status or later (R-SEQ-1)", {
          expected: `${tracked.id} once, ${tracked.status} or later`,
          actual: statuses.length === 0 ? "not listed" : statuses.join(", ")
        }))
      }
    }
  }
  toString = () => "list"
}

const commandsFor = (kit: Kit) => {
  const index = fc.nat({ max: 3 })
  const create = fc.boolean().map((withPreview) => new Create(withPreview))
  // creates three times as likely and confirms twice: a sequence needs payouts, and hashes, before the other steps
  // mean much
  const always = [
    create,
    create,
    create,
    index.map((i) => new Get(i)),
    index.map((i) => new Confirm(i, "fresh")),
    fc.tuple(index, fc.constantFrom("fresh" as const, "same" as const)).map(([i, hash]) => new Confirm(i, hash)),
    index.map((i) => new ReuseHash(i)),
    index.map((i) => new ReuseHash(i)),
    index.map((i) => new Cancel(i)),
    fc.constant(new List())
  ]
  const sandbox = fc.tuple(index, fc.constantFrom("processing", "completed", "failed", "refunded" as const))
    .map(([i, to]) => new Advance(i, to))
  return fc.commands<Model, Real, false>(kit.mode === "mock" ? [...always, sandbox] : always, {
    maxCommands: 16,
    size: "max"
  })
}

export const sequenceScenarios = [
  scenario({
    id: "SEQ-001",
    title:
      "random sequences of payout operations (several payouts interleaved) keep the state rules after every step; a failure is shrunk to the shortest sequence",
    rules: ["R-SEQ-1"],
    tags: ["payout", "stateful", "generated"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const user = yield* approvedUser(kit)
        let sequences = 0
        let steps = 0
        const ran: Record<string, number> = {}
        const property = fc.asyncProperty(commandsFor(kit), async (commands) => {
          sequences++
          steps += [...commands].length
          const startedAt = new Date(Date.now() - 1000).toISOString()
          await fc.asyncModelRun(() => ({ model: { payouts: [] }, real: { kit, ran, user, startedAt } }), commands)
        })
        const details = yield* Effect.promise(() =>
          fc.check(property, {
            seed: kit.seed,
            numRuns: Math.max(1, kit.sequences),
            interruptAfterTimeLimit: Math.max(1000, kit.deadline - Date.now() - 3000),
            markInterruptAsFailure: false
          })
        )
        kit.note("sequences", { seed: kit.seed, tried: sequences, commands: steps, ran, shrinks: details.numShrinks })
        if (!details.failed) return
        const [shortest] = details.counterexample ?? []
        const cause = details.errorInstance
        const found = cause instanceof StepFailed ? cause.failure : undefined
        return yield* Effect.fail(failure(found?.message ?? "a sequence failed", {
          expected: found?.expected ?? "every step to keep the rules",
          actual: found?.actual ?? String(cause),
          exchange: found?.exchange,
          details: {
            sequence: fc.stringify(shortest),
            shrinks: details.numShrinks,
            reproduce: `--seed ${kit.seed} --grep SEQ-001`
          },
          rootCause: found === undefined ? undefined : `${found.message}\n${found.expected}`
        }))
      })
  })
]
