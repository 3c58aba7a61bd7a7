/**
 * A loopback TCP proxy in front of the test PostgreSQL, for resilience tests: the app connects to the
 * proxy, and the test makes the database misbehave on the wire.
 *
 *   pass    forward bytes both ways on connections opened while passing
 *   refuse  close every new connection at once (existing ones keep working until `resetAll`)
 *   stall   keep every socket open, new ones too, but forward nothing: a black hole, like a network
 *           partition or a failed-over server whose old sessions vanished. A stalled connection stays
 *           silent after `pass` returns (no RST ever comes); only new connections work again.
 *
 * `resetAll` destroys every open connection (RST to the app, close to the server), as a restarted
 * server or a dropped NAT entry would.
 */
import { createConnection, createServer, type Socket } from "node:net"

export type ProxyMode = "pass" | "refuse" | "stall"

export interface TcpProxy {
  readonly port: number
  /** `url` with its host and port replaced by the proxy's. */
  readonly urlFor: (url: string) => string
  readonly mode: () => ProxyMode
  readonly setMode: (mode: ProxyMode) => void
  /** Destroys every open connection; returns how many there were. */
  readonly resetAll: () => number
  /** Connections accepted so far (refused ones included). */
  readonly accepted: () => number
  /** Connections currently open (stalled ones included). */
  readonly open: () => number
  readonly close: () => Promise<void>
}

interface Pair {
  readonly app: Socket
  readonly server: Socket
  blackholed: boolean
}

export const startTcpProxy = async (target: { readonly host: string; readonly port: number }): Promise<TcpProxy> => {
  let mode: ProxyMode = "pass"
  let accepted = 0
  const pairs = new Set<Pair>()

  const destroy = (pair: Pair) => {
    pairs.delete(pair)
    if (!pair.app.destroyed) pair.app.resetAndDestroy()
    pair.server.destroy()
  }

  const listener = createServer((app) => {
    accepted += 1
    if (mode === "refuse") {
      app.resetAndDestroy()
      return
    }
    const server = createConnection(target)
    const pair: Pair = { app, server, blackholed: mode === "stall" }
    pairs.add(pair)
    app.on("data", (chunk) => pair.blackholed || server.write(chunk))
    server.on("data", (chunk) => pair.blackholed || app.write(chunk))
    for (const socket of [app, server]) {
      socket.on("error", () => destroy(pair))
      socket.on("close", () => destroy(pair))
    }
  })
  await new Promise<void>((resolve, reject) => {
    listener.once("error", reject)
    listener.listen(0, "127.0.0.1", () => resolve())
  })
  const address = listener.address()
  if (address === null || typeof address === "string") throw new Error("proxy: expected a TCP address")

  return {
    port: address.port,
    urlFor: (url) => {
      const parsed = new URL(url)
      parsed.hostname = "127.0.0.1"
      parsed.port = String(address.port)
      return parsed.toString()
    },
    mode: () => mode,
    setMode: (next) => {
      mode = next
      if (next === "stall") { for (const pair of pairs) pair.blackholed = true }
    },
    resetAll: () => {
      const count = pairs.size
      for (const pair of [...pairs]) destroy(pair)
      return count
    },
    accepted: () => accepted,
    open: () => pairs.size,
    close: async () => {
      for (const pair of [...pairs]) destroy(pair)
      await new Promise<void>((resolve) => listener.close(() => resolve()))
    }
  }
}

/** Host and port of a postgres:// URL. */
export const targetOf = (url: string) => {
  const parsed = new URL(url)
  return { host: parsed.hostname, port: Number(parsed.port || "5432") }
}
