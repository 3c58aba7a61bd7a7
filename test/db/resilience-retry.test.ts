/**
 * Which database failures are 503 (retry) rather than 500 (bug), and which requests the service retries
 * itself: a read whose connection was lost runs once more; a write, or a timeout, does not.
 */
import { SqlError, UnknownError } from "effect/sql/SqlError"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Result } from "effect"
import { isConnectionLost, isDatabaseUnavailable } from "../../src/db/DatabaseFailures.ts"
import { retryReadsOnLostConnection } from "../../src/http/DatabaseUnavailable.ts"

const withCode = (code: string, message = "boom") => Object.assign(new Error(message), { code })
const sqlError = (cause: unknown) =>
  new SqlError({ reason: new UnknownError({ cause, message: "Failed to execute statement" }) })

const lost = [
  sqlError(withCode("ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:5432")),
  sqlError(withCode("ECONNRESET", "read ECONNRESET")),
  sqlError(new Error("Connection terminated unexpectedly")),
  sqlError(new Error("timeout exceeded when trying to connect")),
  sqlError(new Error("Client has encountered a connection error and is not queryable")),
  sqlError(withCode("57P01", "terminating connection due to administrator command")),
  sqlError(withCode("08006", "connection failure")),
  sqlError(withCode("53300", "sorry, too many clients already")),
  sqlError(withCode("25P03", "terminating connection due to idle-in-transaction timeout"))
]
const busy = [
  sqlError(withCode("57014", "canceling statement due to statement timeout")),
  sqlError(withCode("55P03", "canceling statement due to lock timeout")),
  sqlError(withCode("40P01", "deadlock detected")),
  sqlError(new Error("Query read timeout"))
]
const bugs = [
  sqlError(withCode("42601", "syntax error")),
  sqlError(withCode("23505", "duplicate key value violates unique constraint")),
  sqlError(new TypeError("Cannot read properties of undefined")),
  new Error("Connection terminated unexpectedly")
]

describe("database failure classes", () => {
  it.each(lost)("a lost connection is unavailable and retryable: %s", (error) => {
    expect(isConnectionLost(error)).toBe(true)
    expect(isDatabaseUnavailable(error)).toBe(true)
  })
  it.each(busy)("a timeout or conflict is unavailable but not retried: %s", (error) => {
    expect(isConnectionLost(error)).toBe(false)
    expect(isDatabaseUnavailable(error)).toBe(true)
  })
  it.each(bugs)("anything else stays a bug (500): %s", (error) => {
    expect(isDatabaseUnavailable(error)).toBe(false)
  })
})

/** Dies with each given defect in turn, then succeeds; counts the runs. */
const flaky = (defects: ReadonlyArray<unknown>) => {
  let runs = 0
  const effect = Effect.suspend(() => {
    const defect = defects[runs++]
    return defect === undefined ? Effect.succeed("ok") : Effect.die(defect)
  })
  return { effect, runs: () => runs }
}

/** The defect the request died with, the very object (undefined when it did not die). */
const defectOf = <A, E>(request: Effect.Effect<A, E>) =>
  Effect.map(Effect.exit(request), (exit) => Result.getOrUndefined(Exit.findDefect(exit)))

describe("retryReadsOnLostConnection", () => {
  it.effect("runs a GET once more when its connection was lost", () =>
    Effect.gen(function*() {
      const request = flaky([lost[1]])
      expect(yield* retryReadsOnLostConnection("GET")(request.effect)).toBe("ok")
      expect(request.runs()).toBe(2)
    }))

  it.effect("retries only once", () =>
    Effect.gen(function*() {
      const request = flaky([lost[0], lost[1]])
      expect(yield* defectOf(retryReadsOnLostConnection("GET")(request.effect))).toBe(lost[1])
      expect(request.runs()).toBe(2)
    }))

  it.effect.each(["POST", "PUT", "PATCH", "DELETE"])("does not repeat a %s", (method) =>
    Effect.gen(function*() {
      const request = flaky([lost[1]])
      expect(yield* defectOf(retryReadsOnLostConnection(method)(request.effect))).toBe(lost[1])
      expect(request.runs()).toBe(1)
    }))

  it.effect("does not repeat a GET that timed out", () =>
    Effect.gen(function*() {
      const request = flaky([busy[0]])
      expect(yield* defectOf(retryReadsOnLostConnection("GET")(request.effect))).toBe(busy[0])
      expect(request.runs()).toBe(1)
    }))
})
