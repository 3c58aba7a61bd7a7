import { checksumAddress } from "@cop-integrations/contracts"
import { Effect } from "effect"
import { contractProblem, endpoint, type EndpointName, type EndpointSpec } from "../contract.ts"
import { failure, type ScenarioFailure } from "../failure.ts"
import {
  generateCases,
  type Input,
  isInvalid,
  type NegativeCase,
  showInput,
  simplerInputs,
  type Surface
} from "../generate/negative.ts"
import { random, type Random } from "../generate/random.ts"
import type { Answered, HttpRequest } from "../http.ts"
import { type Kit, scenario } from "../scenario.ts"

interface Target {
  readonly id: string
  readonly endpoint: EndpointName
  readonly location: Surface["location"]
  readonly moneyMoving: boolean
  /** A valid input for the surface, from the run's seed. */
  readonly base: (rng: Random) => Readonly<Record<string, string>>
}

const hex = (rng: Random, bytes: number) =>
  Array.from(rng.bytes(bytes), (byte) => byte.toString(16).padStart(2, "0")).join("")
const address = (rng: Random) => checksumAddress(`0x${hex(rng, 20)}`)

/** A payoutId no deployment has: body and path cases of the payout routes use it. */
const UNKNOWN_PAYOUT = "po_conformance_negative"
/** An intentId no deployment has: body and path cases of the swap routes use it. */
const UNKNOWN_SWAP = "sw_conformance_negative"

const targets: ReadonlyArray<Target> = [
  {
    id: "NEG-QUOTE-001",
    endpoint: "quote",
    location: "query",
    moneyMoving: false,
    base: () => ({ destinationCop: "250000", fromToken: "USDC" })
  },
  {
    id: "NEG-OTP-SEND-001",
    endpoint: "sendOtp",
    location: "body",
    moneyMoving: true,
    base: (rng) => ({ email: `conformance+${hex(rng, 3)}@example.com`, userAddress: address(rng) })
  },
  {
    id: "NEG-OTP-VERIFY-001",
    endpoint: "verifyOtp",
    location: "body",
    moneyMoving: false,
    base: (rng) => ({ userAddress: address(rng), code: String(rng.int(900_000) + 100_000) })
  },
  {
    id: "NEG-PAYOUT-CREATE-001",
    endpoint: "createPayout",
    location: "body",
    moneyMoving: true,
    base: (rng) => ({
      userAddress: address(rng),
      destinationCop: "150000",
      breBKey: `@conf${hex(rng, 3)}`,
      accountOwnerName: "Conformance Kit",
      fromToken: "USDC"
    })
  },
  {
    id: "NEG-PAYOUT-CONFIRM-001",
    endpoint: "confirmPayout",
    location: "body",
    moneyMoving: false,
    base: (rng) => ({ txHash: `0x${hex(rng, 32)}`, feeTxHash: `0x${hex(rng, 32)}` })
  },
  {
    id: "NEG-PAYOUT-LIST-001",
    endpoint: "listPayouts",
    location: "query",
    moneyMoving: false,
    base: () => ({ createdFrom: "2026-01-01T00:00:00.000Z", limit: "10" })
  },
  {
    id: "NEG-PAYOUT-GET-001",
    endpoint: "getPayout",
    location: "path",
    moneyMoving: false,
    base: () => ({ payoutId: UNKNOWN_PAYOUT })
  },
  {
    id: "NEG-SWAP-PREPARE-001",
    endpoint: "prepareSwap",
    location: "body",
    moneyMoving: false,
    base: (rng) => ({ userAddress: address(rng), fromToken: "COPm", toToken: "USDC", amountIn: "1000" })
  },
  {
    id: "NEG-SWAP-CONFIRM-001",
    endpoint: "confirmSwap",
    location: "body",
    moneyMoving: false,
    base: (rng) => ({ txHash: `0x${hex(rng, 32)}` })
  },
  {
    id: "NEG-SWAP-LIST-001",
    endpoint: "listSwaps",
    location: "query",
    moneyMoving: false,
    base: () => ({ createdFrom: "2026-01-01T00:00:00.000Z", limit: "10" })
  },
  {
    id: "NEG-SWAP-GET-001",
    endpoint: "getSwap",
    location: "path",
    moneyMoving: false,
    base: () => ({ intentId: UNKNOWN_SWAP })
  }
]

const surfaceSchema = (spec: EndpointSpec, location: Surface["location"]) => {
  const input = location === "body" ? "payload" : location === "query" ? "urlParams" : "pathParams"
  const schema = spec[input]
  if (schema === undefined) throw new Error(`${spec.name} has no ${location} schema in the contract`)
  return { schema, parseOptions: spec.parseOptions[input] }
}

const requestFor = (spec: EndpointSpec, input: Input): HttpRequest => {
  const path = spec.path
    .replace(":payoutId", input.kind === "path" ? input.segment : UNKNOWN_PAYOUT)
    .replace(":intentId", input.kind === "path" ? input.segment : UNKNOWN_SWAP)
  switch (input.kind) {
    case "json":
      return { method: spec.method, path, json: input.value }
    case "raw":
      return { method: spec.method, path, body: input.bytes, headers: { "Content-Type": "application/json" } }
    case "query":
      return { method: spec.method, path: `${path}?${input.query}` }
    case "path":
      return { method: spec.method, path }
  }
}

/** 400 for a schema-invalid body or query; a path (or a body on a payout that does not exist) may also be 404. */
const acceptedStatuses = (spec: EndpointSpec, location: Surface["location"]): ReadonlyArray<number> =>
  location === "path" || spec.path.includes(":payoutId") || spec.path.includes(":intentId") ? [400, 404] : [400]

const MAX_BODY_BYTES = 64 * 1024

const judge = (
  spec: EndpointSpec,
  location: Surface["location"],
  item: NegativeCase,
  exchange: Answered
): string | undefined => {
  const { response } = exchange
  const statuses = acceptedStatuses(spec, location)
  const oversizedBody = response.status === 413 && exchange.request.bodyBytes > MAX_BODY_BYTES
  if (!statuses.includes(response.status) && !oversizedBody) {
    return `answered ${response.status} (expected ${statuses.join(" or ")}): ${response.body.slice(0, 300)}`
  }
  const problem = contractProblem(spec, response)
  if (problem !== undefined) return problem
  const error = response.json as { readonly error: string }
  if (response.status === 400 && item.field !== undefined && !error.error.includes(item.field)) {
    return `the 400 does not name ${item.field}: ${JSON.stringify(error.error)}`
  }
  return undefined
}

interface Failing {
  readonly index: number
  readonly item: NegativeCase
  readonly exchange: Answered
  readonly problem: string
}

const SHRINK_BUDGET = 25

/** Greedy shrinking: take the first simpler input that the schema still rejects and the deployment still mishandles. */
const shrink = (
  kit: Kit,
  spec: EndpointSpec,
  surface: Surface,
  failing: Failing
): Effect.Effect<{ readonly failing: Failing; readonly steps: number }, ScenarioFailure> =>
  Effect.gen(function*() {
    let current = failing
    let steps = 0
    let budget = SHRINK_BUDGET
    let progressed = true
    while (progressed && budget > 0) {
      progressed = false
      for (const candidate of simplerInputs(current.item)) {
        if (budget-- <= 0) break
        if (!isInvalid(surface, candidate.input)) continue
        const exchange = yield* kit.send(requestFor(spec, candidate.input))
        const problem = judge(spec, surface.location, candidate, exchange)
        if (problem !== undefined) {
          current = { ...current, item: candidate, exchange, problem }
          steps++
          progressed = true
          break
        }
      }
    }
    return { failing: current, steps }
  })

const negativeScenario = (target: Target) => {
  const spec = endpoint(target.endpoint)
  return scenario({
    id: target.id,
    title: `generated invalid ${
      target.location === "body" ? "bodies" : target.location === "query" ? "queries" : "paths"
    } for ${spec.method} ${spec.path} are answered 4xx ErrorBody`,
    rules: ["R-ERR-2"],
    tags: ["negative", "generated", "validation"],
    requires: { moneyMoving: target.moneyMoving },
    run: (kit) =>
      Effect.gen(function*() {
        const rng = random(kit.seed, target.id)
        const surface: Surface = {
          location: target.location,
          ...surfaceSchema(spec, target.location),
          base: target.base(rng)
        }
        const generated = generateCases(surface, rng, kit.negativeCases)
        kit.note("generatedChecks", generated.cases.length)
        kit.note("derivedCases", generated.derived)
        kit.note("seed", kit.seed)
        const outcomes = yield* Effect.forEach(generated.cases, (item, index) =>
          Effect.map(kit.send(requestFor(spec, item.input)), (exchange) => ({
            index,
            item,
            exchange,
            problem: judge(spec, target.location, item, exchange)
          })), { concurrency: 4 })
        const failures = outcomes.filter((outcome): outcome is Failing =>
          outcome.problem !== undefined
        )
        const first = failures[0]
        if (first === undefined) {
          return
        }
        const shrunk = yield* shrink(kit, spec, surface, first)
        return yield* Effect.fail(failure(
          `${failures.length} of ${generated.cases.length} generated invalid inputs were not answered with a 4xx ErrorBody naming the field`,
          {
            expected: `${
              acceptedStatuses(spec, target.location).join(" or ")
            } with an ErrorBody for ${first.item.description}`,
            actual: shrunk.failing.problem,
            exchange: shrunk.failing.exchange,
            details: {
              seed: kit.seed,
              case: first.index,
              description: first.item.description,
              input: showInput(first.item.input),
              shrunkInput: showInput(shrunk.failing.item.input),
              shrinkSteps: shrunk.steps,
              otherFailures: failures.slice(1, 10).map((other) =>
                `#${other.index} ${other.item.description}: ${other.problem}`
              )
            }
          }
        ))
      })
  })
}

export const negativeScenarios = targets.map(negativeScenario)
