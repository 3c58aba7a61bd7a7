/**
 * The soak's webhook receiver: a real HTTP server on 127.0.0.1, registered as the integration's endpoint. It answers
 * some deliveries 500, holds some open past the delivery timeout, answers some slowly, and records every one: event
 * id, type, resource, sequence, whether its Standard Webhooks signature checks with the endpoint's secret, and what
 * it answered. `calm()` makes it answer 200 at once (while the run lets deliveries drain).
 */
import { createHmac, timingSafeEqual } from "node:crypto"
import { once } from "node:events"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import type { ReceivedDelivery } from "./invariants.ts"
import type { Random } from "./random.ts"

export interface ReceiverChaos {
  /** Share of deliveries answered 500. */
  readonly fail: number
  /** Share held open without an answer (the sender times out). */
  readonly hang: number
  /** Share answered 200 after `slowMs`. */
  readonly slow: number
  readonly slowMs: number
  /** How long a held request is kept open before the receiver drops it (past the sender's timeout). */
  readonly holdMs: number
}

export interface SoakReceiver {
  readonly url: string
  readonly deliveries: ReadonlyArray<ReceivedDelivery>
  /** The endpoint's signing secret (`whsec_…`), once registered. */
  secret: string
  readonly calm: () => void
  readonly close: () => Promise<void>
}

/** Standard Webhooks: `v1,<base64 HMAC-SHA256(secret bytes, "<id>.<timestamp>.<body>")>`, several space-separated. */
export const signatureValid = (secret: string, id: string, timestamp: string, body: string, header: string) => {
  if (!secret.startsWith("whsec_")) return false
  const key = Buffer.from(secret.slice("whsec_".length), "base64")
  const expected = createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest()
  return header.split(" ").some((part) => {
    const [version, value] = part.split(",")
    if (version !== "v1" || value === undefined) return false
    const given = Buffer.from(value, "base64")
    return given.length === expected.length && timingSafeEqual(given, expected)
  })
}

const header = (request: IncomingMessage, name: string): string => {
  const value = request.headers[name]
  return Array.isArray(value) ? value.join(",") : value ?? ""
}

interface Envelope {
  readonly id?: unknown
  readonly type?: unknown
  readonly sequence?: unknown
  readonly data?: { readonly object?: Record<string, unknown> }
}

/** The resource an event is about: the id field of its object (payout, swap, customer, endpoint). */
const resourceOf = (object: Record<string, unknown> | undefined): string => {
  if (object === undefined) return ""
  for (const field of ["payoutId", "intentId", "endpointId", "userAddress"]) {
    const value = object[field]
    if (typeof value === "string") return value
  }
  return ""
}

export const startReceiver = async (random: Random, chaos: ReceiverChaos): Promise<SoakReceiver> => {
  const deliveries: Array<ReceivedDelivery> = []
  const held = new Set<ServerResponse>()
  let calm = false

  const receive = async (request: IncomingMessage, response: ServerResponse) => {
    let body = ""
    request.setEncoding("utf8")
    for await (const chunk of request) body += chunk as string
    let envelope: Envelope = {}
    try {
      envelope = JSON.parse(body) as Envelope
    } catch {
      // recorded with empty fields: the invariants find no such event
    }
    const roll = random.next()
    const answer = calm ?
      "ok" :
      roll < chaos.fail
      ? "fail"
      : roll < chaos.fail + chaos.hang
      ? "hang"
      : roll < chaos.fail + chaos.hang + chaos.slow
      ? "slow"
      : "ok"
    const record = (answered: number) =>
      deliveries.push({
        eventId: header(request, "webhook-id"),
        type: typeof envelope.type === "string" ? envelope.type : "",
        resourceId: resourceOf(envelope.data?.object),
        sequence: typeof envelope.sequence === "number" ? envelope.sequence : 0,
        signatureValid: signatureValid(
          receiver.secret,
          header(request, "webhook-id"),
          header(request, "webhook-timestamp"),
          body,
          header(request, "webhook-signature")
        ) && envelope.id === header(request, "webhook-id"),
        answered,
        at: Date.now()
      })
    if (answer === "hang") {
      record(0)
      held.add(response)
      const timer = setTimeout(() => response.destroy(), chaos.holdMs)
      response.on("close", () => {
        clearTimeout(timer)
        held.delete(response)
      })
      return
    }
    if (answer === "slow") await new Promise((resolve) => setTimeout(resolve, chaos.slowMs))
    const status = answer === "fail" ? 500 : 200
    // Recorded before the answer leaves: a 2xx the sender reads is always in the record.
    record(status)
    response.writeHead(status, { "content-type": "text/plain" }).end(status === 200 ? "ok" : "try again")
  }

  const server = createServer((request, response) => void receive(request, response))
  server.listen(0, "127.0.0.1")
  await once(server, "listening")
  const receiver: SoakReceiver = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    deliveries,
    secret: "",
    calm: () => {
      calm = true
    },
    close: async () => {
      for (const response of held) response.destroy()
      server.closeAllConnections()
      server.close()
      await once(server, "close")
    }
  }
  return receiver
}
