/**
 * The attempt timeout must fire whatever the garbage collector does. On Node 20 a signal made by
 * `AbortSignal.any([AbortSignal.timeout(ms), …])` could be collected while the request hung, and then nothing ever
 * ended the attempt: one receiver that never answers held every delivery slot for good. The sender runs in its own
 * node with `--expose-gc`, collecting garbage while it waits on a real receiver that holds every request open.
 */
import { spawn } from "node:child_process"
import { once } from "node:events"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Receiver, startReceiver } from "../support/webhookReceiver.ts"

const TIMEOUT_MS = 300
const ATTEMPTS = 5
/** Generous: every outcome is due TIMEOUT_MS after its attempt starts; this only bounds a sender that never gives up. */
const DEADLINE_MS = 20_000
const script = fileURLToPath(new URL("../support/senderUnderGc.ts", import.meta.url))

interface Reported {
  readonly outcome: {
    readonly ok: boolean
    readonly status: number | null
    readonly error?: string
    readonly responseExcerpt: string | null
  }
  readonly elapsedMs: number
}

/**
 * Runs the attempts in a node with `--expose-gc`; resolves with what each printed and whether the child finished
 * before the deadline (else it is killed).
 */
const sendUnderGc = async (
  url: string
): Promise<{ readonly finished: boolean; readonly reported: ReadonlyArray<Reported> }> => {
  const child = spawn(process.execPath, [
    "--expose-gc",
    "--import",
    "tsx",
    script,
    url,
    String(TIMEOUT_MS),
    String(ATTEMPTS)
  ], {
    cwd: fileURLToPath(new URL("../..", import.meta.url))
  })
  let out = ""
  let err = ""
  child.stdout.on("data", (chunk: Buffer) => void (out += chunk.toString("utf8")))
  child.stderr.on("data", (chunk: Buffer) => void (err += chunk.toString("utf8")))
  const deadline = setTimeout(() => child.kill("SIGKILL"), DEADLINE_MS)
  const [code] = await once(child, "exit")
  clearTimeout(deadline)
  const reported = out.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as Reported)
  if (code !== null) expect(code, err).toBe(0)
  return { finished: code !== null, reported }
}

describe("a webhook attempt to a receiver that never answers", () => {
  let receiver: Receiver
  let held = 0
  beforeAll(async () => {
    receiver = await startReceiver()
    receiver.answer = () => "hold"
    receiver.onHeld(() => held++)
  })
  afterAll(() => receiver?.close())

  it(`times out, ${ATTEMPTS} of ${ATTEMPTS} attempts, although garbage is collected while each waits`, async () => {
    const { finished, reported } = await sendUnderGc(receiver.url)
    const timedOut = reported.filter((r) => r.outcome.error === `timed out after ${TIMEOUT_MS} ms`)
    console.info(
      `${timedOut.length}/${ATTEMPTS} attempts timed out (timeout ${TIMEOUT_MS} ms, gc every 10 ms): ${
        reported.map((r) => `${r.elapsedMs} ms`).join(", ") || "none within the deadline"
      }`
    )
    expect(
      finished,
      `the sender gave no outcome within ${DEADLINE_MS} ms (${reported.length}/${ATTEMPTS} attempts ended)`
    ).toBe(true)
    expect(reported.map((r) => r.outcome)).toEqual(
      Array.from({ length: ATTEMPTS }, () => ({
        ok: false,
        status: null,
        error: `timed out after ${TIMEOUT_MS} ms`,
        responseExcerpt: null
      }))
    )
    expect(held, "every attempt reached the receiver").toBe(ATTEMPTS)
  })
})
