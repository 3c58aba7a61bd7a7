/**
 * A partner's webhook receiver: a real HTTP server on 127.0.0.1 that records every delivery and answers as the
 * test scripts it (status, or hold the request open). Waiting is event-driven: `next` resolves when a matching
 * delivery arrives (bounded), never by sleeping. `receiverForTests()` gives a file (or a describe) one receiver.
 */
import { once } from "node:events"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, afterEach, beforeAll } from "vitest"

export interface Delivery {
  readonly id: string
  readonly timestamp: string
  readonly signature: string
  readonly body: string
  readonly headers: Record<string, string>
  readonly event: {
    readonly id: string
    readonly type: string
    readonly data: { readonly object: Record<string, unknown> }
  }
  /** When it arrived (ms since the epoch). */
  readonly receivedAt: number
  /** What the receiver answered (0: it held the request and never answered). */
  readonly answered: number
}

/** How to answer one delivery: a status, or `hold` to keep the request open (a receiver that hangs). */
export type Answer = number | "hold"

export interface Receiver {
  readonly url: string
  readonly deliveries: ReadonlyArray<Delivery>
  /** Decides the answer to each delivery (default: 200). */
  answer: (delivery: Omit<Delivery, "answered">, sameIdSeen: number) => Answer
  /** Resolves with the first delivery (already received or arriving later) that matches; rejects after `timeoutMs`. */
  readonly next: (match: (delivery: Delivery) => boolean, timeoutMs?: number) => Promise<Delivery>
  /** Resolves when `count` deliveries match. */
  readonly count: (
    match: (delivery: Delivery) => boolean,
    count: number,
    timeoutMs?: number
  ) => Promise<ReadonlyArray<Delivery>>
  /** Requests received while held open (to check what a hung receiver saw). */
  readonly onHeld: (listener: (delivery: Delivery) => void) => void
  /** How many held requests are still open (the sender has not given up on them). */
  readonly holding: () => number
  readonly close: () => Promise<void>
}

const readBody = async (request: IncomingMessage): Promise<string> => {
  let text = ""
  request.setEncoding("utf8")
  for await (const chunk of request) text += chunk as string
  return text
}

const header = (request: IncomingMessage, name: string): string => {
  const value = request.headers[name]
  return Array.isArray(value) ? value.join(",") : value ?? ""
}

/** A receiver that does not listen yet: `listen` starts it on a free port of 127.0.0.1 and sets its `url`. */
const unstartedReceiver = (): { readonly receiver: Receiver; readonly listen: () => Promise<void> } => {
  const deliveries: Array<Delivery> = []
  const waiters = new Set<() => void>()
  const heldListeners: Array<(delivery: Delivery) => void> = []
  const held = new Set<ServerResponse>()

  const receiver: Receiver = {
    url: "",
    deliveries,
    answer: () => 200,
    next: (match, timeoutMs = 15_000) => receiver.count(match, 1, timeoutMs).then((found) => found[0] as Delivery),
    count: (match, count, timeoutMs = 15_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const found = deliveries.filter(match)
          if (found.length < count) return false
          waiters.delete(waiter)
          clearTimeout(timer)
          resolve(found)
          return true
        }
        const waiter = () => void check()
        const timer = setTimeout(() => {
          waiters.delete(waiter)
          reject(
            new Error(
              `receiver: ${
                deliveries.filter(match).length
              } of ${count} matching deliveries within ${timeoutMs} ms; got ${
                deliveries.map((d) => `${d.event.type}(${d.answered})`).join(", ")
              }`
            )
          )
        }, timeoutMs)
        if (!check()) waiters.add(waiter)
      }),
    onHeld: (listener) => void heldListeners.push(listener),
    holding: () => held.size,
    close: async () => {
      for (const response of held) response.destroy()
      server.closeAllConnections()
      server.close()
      await once(server, "close")
    }
  }

  const receive = async (request: IncomingMessage, response: ServerResponse) => {
    const body = await readBody(request)
    const base = {
      receivedAt: Date.now(),
      id: header(request, "webhook-id"),
      timestamp: header(request, "webhook-timestamp"),
      signature: header(request, "webhook-signature"),
      body,
      headers: Object.fromEntries(
        Object.entries(request.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(",") : v ?? ""])
      ),
      event: JSON.parse(body) as Delivery["event"]
    }
    const sameIdSeen = deliveries.filter((d) => d.id === base.id).length
    const answer = receiver.answer(base, sameIdSeen)
    const delivery: Delivery = { ...base, answered: answer === "hold" ? 0 : answer }
    if (answer === "hold") {
      held.add(response)
      response.on("close", () => held.delete(response))
      for (const listener of heldListeners) listener(delivery)
      return
    }
    deliveries.push(delivery)
    response.writeHead(answer, { "content-type": "text/plain" }).end("ok")
    for (const waiter of [...waiters]) waiter()
  }
  const server = createServer((request, response) => void receive(request, response))
  const listen = async () => {
    server.listen(0, "127.0.0.1")
    await once(server, "listening")
    ;(receiver as { url: string }).url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`
  }
  return { receiver, listen }
}

export const startReceiver = async (): Promise<Receiver> => {
  const { listen, receiver } = unstartedReceiver()
  await listen()
  return receiver
}

/**
 * One receiver for the tests of the file (or the describe) that calls this: listening before they run, closed after
 * them, and answering 200 again after each test, so that a test scripting failures leaves none to the next.
 */
export const receiverForTests = (): Receiver => {
  const { listen, receiver } = unstartedReceiver()
  beforeAll(listen)
  afterAll(() => receiver.close())
  afterEach(() => {
    receiver.answer = () => 200
  })
  return receiver
}
