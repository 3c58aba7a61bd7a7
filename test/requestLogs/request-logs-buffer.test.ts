/**
 * The request log never holds a request back: with the writer stalled on a lock a test holds on the table, requests
 * still answer; the bounded buffer fills, and what does not fit is dropped and counted (with a warning), never waited
 * for. Once the lock goes, the writer goes on.
 */
import { describe, expect } from "vitest"
import { httpTest } from "../support/fixture.ts"
import { BREB, call } from "../support/http.ts"
import { holdLock, lockWaiters, patientDatabase } from "../support/locks.ts"
import { rawRows, recorderCounts, untilLogged } from "./support.ts"

const BUFFER = 3
const REQUESTS = 20

const it = httpTest({ env: { REQUEST_LOG_BUFFER_SIZE: String(BUFFER) }, captureLogs: true, overrides: patientDatabase })

describe("a full request-log buffer", () => {
  it("drops and counts; requests answer while the writer is stalled", async ({ server, partner }) => {
    const quote = (requestId?: string) =>
      call(server, `${BREB}/quote`, {
        apiKey: partner.apiKey,
        ...(requestId === undefined ? {} : { headers: { "x-request-id": requestId } })
      })
    const writerStalled = () => lockWaiters(server.direct, "INSERT INTO request_logs")

    const lock = await holdLock(server.direct, "LOCK TABLE request_logs IN ACCESS EXCLUSIVE MODE")
    try {
      // one request gets the writer going: its INSERT now waits on the lock
      expect((await quote()).status).toBe(200)
      await expect.poll(writerStalled, { timeout: 20_000, interval: 20 }).toBe(1)

      const statuses: Array<number> = []
      for (let i = 0; i < REQUESTS; i++) void quote().then((answer) => statuses.push(answer.status))
      await expect.poll(() => statuses.length, { timeout: 20_000, interval: 20 }).toBe(REQUESTS)
      expect(statuses).toEqual(Array(REQUESTS).fill(200))

      // every request answered while the writer was stalled: it is still waiting, and has given up no batch
      expect(await writerStalled()).toBe(1)
      const counts = await recorderCounts(server)
      expect(counts.failed).toBe(0)
      expect(counts.dropped).toBeGreaterThanOrEqual(REQUESTS - BUFFER)
      expect(server.logs.some((line) => line.includes("request logs: buffer full (3 entries)"))).toBe(true)
    } finally {
      await lock.release()
    }

    // the writer goes on: what it held and what the buffer held is written, and a request made after that too
    await expect.poll(async () => (await rawRows(server)).length, { timeout: 20_000, interval: 50 }).toBe(1 + BUFFER)
    const after = `buffer-after-${Date.now()}`
    expect((await quote(after)).status).toBe(200)
    await untilLogged(server, [after])
    expect((await recorderCounts(server)).failed).toBe(0)
  })
})
