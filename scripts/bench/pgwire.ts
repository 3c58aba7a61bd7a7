/**
 * A loopback TCP proxy in front of PostgreSQL that reads the frontend side of the wire protocol, so the bench can
 * count what a server really sends per request (not what its code seems to send): statements executed (`Q` simple
 * queries and `E` executes), statements parsed (`P`, i.e. not served from a prepared statement), and the SQL text of
 * each, prepared or not (a connection's `P` names a statement, its `B` binds a portal to one, `E` runs a portal).
 * Only the client → server direction is parsed; both directions are forwarded untouched.
 */
import { createConnection, createServer, type Server, type Socket } from "node:net"

export interface WireCounts {
  /** Statements run: one per `Q` message and one per `E` (extended protocol execute). */
  executed: number
  /** `P` messages: statements the server had to parse (an unnamed or a new prepared statement). */
  parsed: number
  /** SQL text of every statement run (`Q`, and `E` by the prepared statement its portal was bound to), in order. */
  readonly texts: Array<string>
}

export interface WireProxy {
  readonly url: string
  readonly counts: WireCounts
  readonly reset: () => void
  readonly close: () => Promise<void>
}

const STARTUP_CODES = new Set([80877103, /* SSLRequest */ 80877104, /* GSSENCRequest */ 80877102 /* CancelRequest */])

/** Parses one connection's frontend stream, calling `onMessage` per typed message. */
const frontendParser = (onMessage: (type: string, body: Buffer) => void) => {
  let buffered: Buffer = Buffer.alloc(0)
  let startup = true
  return (chunk: Buffer) => {
    buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk])
    while (true) {
      if (startup) {
        if (buffered.length < 8) return
        const length = buffered.readInt32BE(0)
        if (buffered.length < length) return
        const code = buffered.readInt32BE(4)
        buffered = buffered.subarray(length)
        // After an SSL/GSS request the real startup message follows; after the startup message, typed messages.
        if (!STARTUP_CODES.has(code)) startup = false
        continue
      }
      if (buffered.length < 5) return
      const length = buffered.readInt32BE(1)
      if (buffered.length < 1 + length) return
      onMessage(String.fromCharCode(buffered[0]!), buffered.subarray(5, 1 + length))
      buffered = buffered.subarray(1 + length)
    }
  }
}

const cString = (body: Buffer, from: number) => {
  const end = body.indexOf(0, from)
  return { text: body.toString("utf8", from, end), next: end + 1 }
}

/** Starts the proxy on 127.0.0.1 (a free port) in front of `databaseUrl`; `url` is the same URL through the proxy. */
export const startWireProxy = async (databaseUrl: string): Promise<WireProxy> => {
  const target = new URL(databaseUrl)
  const counts: WireCounts = { executed: 0, parsed: 0, texts: [] }
  const sockets = new Set<Socket>()
  const server: Server = createServer((client) => {
    const upstream = createConnection({ host: target.hostname, port: Number(target.port || 5432) })
    sockets.add(client).add(upstream)
    const statements = new Map<string, string>()
    const portals = new Map<string, string>()
    const parse = frontendParser((type, body) => {
      if (type === "Q") {
        counts.executed += 1
        counts.texts.push(cString(body, 0).text)
      } else if (type === "P") {
        counts.parsed += 1
        const name = cString(body, 0)
        statements.set(name.text, cString(body, name.next).text)
      } else if (type === "B") {
        const portal = cString(body, 0)
        portals.set(portal.text, statements.get(cString(body, portal.next).text) ?? "(unknown statement)")
      } else if (type === "E") {
        counts.executed += 1
        counts.texts.push(portals.get(cString(body, 0).text) ?? "(unknown portal)")
      }
    })
    client.on("data", (chunk: Buffer) => {
      parse(chunk)
      upstream.write(chunk)
    })
    upstream.on("data", (chunk: Buffer) => client.write(chunk))
    const closeBoth = () => {
      client.destroy()
      upstream.destroy()
      sockets.delete(client)
      sockets.delete(upstream)
    }
    client.on("close", closeBoth).on("error", closeBoth)
    upstream.on("close", closeBoth).on("error", closeBoth)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  const proxied = new URL(databaseUrl)
  proxied.hostname = "127.0.0.1"
  proxied.port = String(typeof address === "object" && address !== null ? address.port : 0)
  return {
    url: proxied.toString(),
    counts,
    reset: () => {
      counts.executed = 0
      counts.parsed = 0
      counts.texts.length = 0
    },
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
