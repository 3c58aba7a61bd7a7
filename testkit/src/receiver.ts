/**
 * The kit's webhook receiver: an HTTP server the deployment posts events to. Each scenario registers its endpoints
 * under a path of its own (`/<channel>`), so it sees only its deliveries; waiting is driven by arrivals and
 * bounded by the scenario's deadline, never a blind sleep. Every delivery is answered 200 without a body unless the
 * scenario says otherwise.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"

export interface ReceivedDelivery {
  readonly channel: string
  readonly id: string
  readonly timestamp: string
  readonly signature: string
  readonly body: string
  readonly receivedAt: number
  /** The body as JSON, or undefined when it is not JSON. */
  readonly json: unknown
}

export interface Channel {
  /** The URL to register for this channel. */
  readonly url: string
  readonly deliveries: () => ReadonlyArray<ReceivedDelivery>
  /** Resolves with the deliveries once `count` match; undefined when `deadline` (epoch ms) passes first. */
  readonly await: (
    match: (delivery: ReceivedDelivery) => boolean,
    count: number,
    deadline: number
  ) => Promise<ReadonlyArray<ReceivedDelivery> | undefined>
  /** What to answer (default 200). */
  answer: (delivery: ReceivedDelivery) => number
  /** The body of the answer (default none). */
  answerBody: (delivery: ReceivedDelivery) => string
}

export interface WebhookReceiver {
  /** The base URL the deployment reaches the receiver at. */
  readonly baseUrl: string
  readonly channel: () => Channel
  readonly close: () => Promise<void>
}

const headerOf = (value: string | ReadonlyArray<string> | undefined): string =>
  Array.isArray(value) ? value.join(",") : typeof value === "string" ? value : ""

const parse = (body: string): unknown => {
  try {
    return JSON.parse(body)
  } catch {
    return undefined
  }
}

/**
 * Listens on `host:port` (port 0: any free one) and reaches itself at `publicUrl` when given (a tunnel or a
 * public name), else at `http://host:port`.
 */
export const startWebhookReceiver = async (
  options: { readonly host: string; readonly port: number; readonly publicUrl?: string | undefined }
): Promise<WebhookReceiver> => {
  const channels = new Map<
    string,
    { deliveries: Array<ReceivedDelivery>; waiters: Set<() => void>; channel: Channel }
  >()
  let counter = 0

  const server: Server = createServer((request, response) => {
    let body = ""
    request.setEncoding("utf8")
    request.on("data", (chunk: string) => {
      if (body.length < 1_000_000) body += chunk
    })
    request.on("end", () => {
      const name = (request.url ?? "/").split("?")[0]!.split("/").filter((part) => part !== "").at(-1) ?? ""
      const entry = channels.get(name)
      const delivery: ReceivedDelivery = {
        channel: name,
        id: headerOf(request.headers["webhook-id"]),
        timestamp: headerOf(request.headers["webhook-timestamp"]),
        signature: headerOf(request.headers["webhook-signature"]),
        body,
        receivedAt: Date.now(),
        json: parse(body)
      }
      if (entry === undefined) return void response.writeHead(410).end()
      entry.deliveries.push(delivery)
      response.writeHead(entry.channel.answer(delivery), { "content-type": "text/plain" }).end(
        entry.channel.answerBody(delivery)
      )
      for (const waiter of [...entry.waiters]) waiter()
    })
  })
  server.listen(options.port, options.host)
  await new Promise<void>((resolve, reject) => {
    server.once("listening", resolve)
    server.once("error", reject)
  })
  const address = server.address() as AddressInfo
  const host = options.host.includes(":") ? `[${options.host}]` : options.host
  const baseUrl = (options.publicUrl ?? `http://${host}:${address.port}`).replace(/\/+$/, "")

  const channel = (): Channel => {
    const name = `c${++counter}${Math.random().toString(36).slice(2, 8)}`
    const deliveries: Array<ReceivedDelivery> = []
    const waiters = new Set<() => void>()
    const created: Channel = {
      url: `${baseUrl}/hooks/${name}`,
      deliveries: () => deliveries,
      answer: () => 200,
      answerBody: () => "",
      await: (match, count, deadline) =>
        new Promise((resolve) => {
          const settle = (value: ReadonlyArray<ReceivedDelivery> | undefined) => {
            waiters.delete(waiter)
            clearTimeout(timer)
            resolve(value)
          }
          const waiter = () => {
            const found = deliveries.filter(match)
            if (found.length >= count) settle(found)
          }
          const timer = setTimeout(() => settle(undefined), Math.max(0, deadline - Date.now()))
          waiters.add(waiter)
          waiter()
        })
    }
    channels.set(name, { deliveries, waiters, channel: created })
    return created
  }

  return {
    baseUrl,
    channel,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
