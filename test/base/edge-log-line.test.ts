/**
 * The stdout logger's line for a plain entry (every access line) is built without Effect's structured formatter:
 * it must be byte for byte the line `jsonLogger` (the service's JSON shape, which tests capture) writes.
 */
import { it } from "@effect/vitest"
import { Cause, Effect } from "effect"
import { describe, expect } from "vitest"
import { jsonLogger, plainJsonLine } from "../../src/base/Logging.ts"

/** Both formatters' lines for a log entry made in the calling fiber (its annotations and spans). */
const bothLines = (message: unknown, cause: Cause.Cause<unknown> = Cause.empty) =>
  Effect.withFiber((fiber) => {
    const options = { message, logLevel: "Info" as const, cause, fiber, date: new Date(1_700_000_000_123) }
    return Effect.succeed({ plain: plainJsonLine(options), structured: jsonLogger.log(options) })
  })

describe("the plain JSON log line", () => {
  it.effect("is jsonLogger's line for an access entry", () =>
    Effect.gen(function*() {
      const { plain, structured } = yield* bothLines(["request"]).pipe(
        Effect.annotateLogs({
          requestId: "req_abc",
          method: "GET",
          path: "/api/integrations/breb/payouts",
          status: 200,
          durationMs: 3,
          integrationId: "int_1",
          errorCode: "needs_kyc"
        })
      )
      expect(plain).toBeDefined()
      expect(plain).toBe(structured)
      expect(JSON.parse(plain!)).toMatchObject({ message: "request", logLevel: "INFO", spans: {} })
    }))

  it.effect("is jsonLogger's line with log spans, booleans, odd numbers and characters JSON escapes", () =>
    Effect.gen(function*() {
      const { plain, structured } = yield* bothLines("quote \"x\"\n\u2028é").pipe(
        Effect.annotateLogs({ ok: true, nan: Number.NaN, big: 1e21, negativeZero: -0, "odd \"key\"": "\u0000" }),
        Effect.withLogSpan("outer"),
        Effect.withLogSpan("inner")
      )
      expect(plain).toBeDefined()
      expect(plain).toBe(structured)
    }))

  it.effect("leaves any other entry to jsonLogger (a cause, several messages, an object annotation)", () =>
    Effect.gen(function*() {
      expect((yield* bothLines(["request"], Cause.fail("boom"))).plain).toBeUndefined()
      expect((yield* bothLines(["a", "b"])).plain).toBeUndefined()
      expect((yield* bothLines({ a: 1 })).plain).toBeUndefined()
      expect((yield* bothLines("x").pipe(Effect.annotateLogs({ nested: { a: 1 } }))).plain).toBeUndefined()
    }))
})
