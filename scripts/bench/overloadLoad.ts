/**
 * Keyed creates for overload runs (scripts/bench/overload.ts and test/process/overload.test.ts): each on a connection of
 * its own (`Connection: close`), so a burst of N is N requests in flight at once, answered or failed, never queued in
 * the client. Written as raw HTTP/1.1 bytes and read up to the status line and headers: the load generator shares the
 * machine's CPU with the service, and Node's HTTP client costs several times more per request, enough to make the
 * generator itself fall behind its schedule on a busy machine (its requests then reach the service late or in part).
 */
import { connect } from "node:net"

const API = "/api/integrations/breb"

export interface Answer {
  readonly status: number | undefined
  readonly retryAfter: string | undefined
  /** A 2xx, or a 503 with a Retry-After: what an overloaded replica may answer. */
  readonly acceptable: boolean
  readonly error: string | undefined
}

const REQUEST_DEADLINE_MS = 120_000

const createRequest = (base: URL, key: string, userAddress: string, idempotencyKey: string) => {
  const body = JSON.stringify({ userAddress, destinationCop: "250000", breBKey: "@overload", accountOwnerName: "Ana" })
  return [
    `POST ${API}/payouts HTTP/1.1`,
    `Host: ${base.host}`,
    `Authorization: Bearer ${key}`,
    "Content-Type: application/json",
    `Content-Length: ${Buffer.byteLength(body)}`,
    `Idempotency-Key: ${idempotencyKey}`,
    "Connection: close",
    "",
    body
  ].join("\r\n")
}

const answerOf = (head: string): Answer => {
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? Number.NaN)
  const retryAfter = /\r\nretry-after: *([^\r]*)/i.exec(head)?.[1]
  if (Number.isNaN(status)) return { status: undefined, retryAfter, acceptable: false, error: "not an HTTP answer" }
  const ok = status >= 200 && status < 300
  return { status, retryAfter, acceptable: ok || (status === 503 && retryAfter !== undefined), error: undefined }
}

/** One POST payouts with `idempotencyKey`; resolves with its answer or its connection error, never rejects. */
export const fireCreate = (base: URL, key: string, userAddress: string, idempotencyKey: string): Promise<Answer> =>
  new Promise((resolve) => {
    let received = ""
    let settled = false
    const settle = (answer: Answer) => {
      if (settled) return
      settled = true
      socket.destroy()
      resolve(answer)
    }
    const socket = connect(
      { host: base.hostname, port: Number(base.port) },
      () => socket.write(createRequest(base, key, userAddress, idempotencyKey))
    )
    socket.setEncoding("latin1")
    socket.setTimeout(
      REQUEST_DEADLINE_MS,
      () =>
        settle({ status: undefined, retryAfter: undefined, acceptable: false, error: "no answer within the deadline" })
    )
    socket.on("data", (chunk: string) => {
      received += chunk
      const end = received.indexOf("\r\n\r\n")
      if (end !== -1) settle(answerOf(received.slice(0, end + 2)))
    })
    socket.once(
      "error",
      (error) => settle({ status: undefined, retryAfter: undefined, acceptable: false, error: error.message })
    )
    socket.once(
      "close",
      () => settle({ status: undefined, retryAfter: undefined, acceptable: false, error: "closed without an answer" })
    )
  })

/**
 * An open loop: `rate` requests a second for `seconds`, each sent on schedule whatever became of the earlier ones (a
 * closed loop would slow down with the server and never overload it); resolves with every answer.
 */
export const openLoop = async (
  rate: number,
  seconds: number,
  send: (i: number) => Promise<Answer>
): Promise<ReadonlyArray<Answer>> => {
  const started = performance.now()
  const pending: Array<Promise<Answer>> = []
  const total = rate * seconds
  await new Promise<void>((resolve) => {
    const tick = setInterval(() => {
      const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * rate))
      while (pending.length < due) pending.push(send(pending.length))
      if (pending.length >= total) {
        clearInterval(tick)
        resolve()
      }
    }, 10)
  })
  return Promise.all(pending)
}

export interface Tally {
  readonly ok: number
  readonly shed: number
  readonly other: number
  readonly errors: number
  /** A few distinct unacceptable answers, to show what went wrong. */
  readonly examples: ReadonlyArray<string>
}

export const tally = (answers: ReadonlyArray<Answer>): Tally => {
  const examples = new Set<string>()
  let ok = 0
  let shed = 0
  let other = 0
  let errors = 0
  for (const answer of answers) {
    if (answer.status === undefined) errors += 1
    else if (answer.status >= 200 && answer.status < 300) ok += 1
    else if (answer.acceptable) shed += 1
    else other += 1
    if (!answer.acceptable && examples.size < 5) {
      examples.add(answer.error ?? `${answer.status} (Retry-After ${answer.retryAfter ?? "absent"})`)
    }
  }
  return { ok, shed, other, errors, examples: [...examples] }
}

/**
 * Polls until a create (with a fresh Idempotency-Key) is answered 201, at most `deadlineMs`: how long after a load
 * the replica serves normally again.
 */
export const serveAgain = async (
  baseUrl: string,
  key: string,
  userAddress: string,
  deadlineMs: number
): Promise<{ readonly ok: boolean; readonly ms: number; readonly last: string }> => {
  const started = performance.now()
  const base = new URL(baseUrl)
  let last = "nothing answered"
  for (let attempt = 0; performance.now() - started < deadlineMs; attempt++) {
    const answer = await fireCreate(base, key, userAddress, `serve-again-${process.pid}-${Date.now()}-${attempt}`)
    if (answer.status === 201) return { ok: true, ms: Math.round(performance.now() - started), last: "201" }
    last = answer.error ?? String(answer.status)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return { ok: false, ms: Math.round(performance.now() - started), last }
}
