/**
 * One HTTP/1.1 connection kept open across requests, over a raw socket, so a test controls exactly which requests
 * share a connection and sees what became of each: a whole answer (status, headers, body), or how the connection
 * failed before one arrived (reset, closed, refused).
 */
import { connect, type Socket } from "node:net"

export interface RawAnswer {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

/** What became of a request: its answer, or the socket's failure (`ECONNRESET`, `ECONNREFUSED`, `closed`, ...). */
export type Outcome = RawAnswer | { readonly failure: string }

export const isAnswer = (outcome: Outcome): outcome is RawAnswer => !("failure" in outcome)

export interface RawRequest {
  readonly method: string
  readonly path: string
  readonly headers?: Record<string, string>
  readonly body?: string
}

const requestBytes = ({ body, headers = {}, method, path }: RawRequest) => {
  const lines = [
    `${method} ${path} HTTP/1.1`,
    "Host: 127.0.0.1",
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)
  ]
  if (body !== undefined) lines.push(`Content-Length: ${Buffer.byteLength(body)}`)
  return `${lines.join("\r\n")}\r\n\r\n${body ?? ""}`
}

/** The first whole response in `buffer` (bodies by Content-Length) and the bytes after it, or undefined. */
const takeResponse = (buffer: Buffer): { readonly answer: RawAnswer; readonly rest: Buffer } | undefined => {
  const end = buffer.indexOf("\r\n\r\n")
  if (end < 0) return undefined
  const [statusLine = "", ...lines] = buffer.subarray(0, end).toString("latin1").split("\r\n")
  const headers = Object.fromEntries(lines.map((line) => {
    const colon = line.indexOf(":")
    return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()]
  }))
  const length = Number(headers["content-length"] ?? "0")
  if (buffer.length < end + 4 + length) return undefined
  return {
    answer: {
      status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1] ?? "0"),
      headers,
      body: buffer.subarray(end + 4, end + 4 + length).toString("utf8")
    },
    rest: buffer.subarray(end + 4 + length)
  }
}

export interface KeepAliveConnection {
  /** Writes the request at once and resolves with its outcome (one request at a time per connection). */
  readonly send: (request: RawRequest) => Promise<Outcome>
  readonly close: () => void
}

/** Opens a connection; resolves once it is established, or with the connect failure. */
export const openConnection = (port: number): Promise<KeepAliveConnection | { readonly failure: string }> =>
  new Promise((resolve) => {
    const socket: Socket = connect(port, "127.0.0.1")
    let received: Buffer = Buffer.alloc(0)
    let waiting: ((outcome: Outcome) => void) | undefined
    let failure: string | undefined
    const settle = (outcome: Outcome) => {
      const resolveWaiting = waiting
      waiting = undefined
      resolveWaiting?.(outcome)
    }
    socket.on("data", (chunk: Buffer) => {
      received = Buffer.concat([received, chunk])
      const taken = takeResponse(received)
      if (taken === undefined) return
      received = taken.rest
      settle(taken.answer)
    })
    socket.on("error", (error: NodeJS.ErrnoException) => {
      failure ??= error.code ?? "error"
      settle({ failure })
    })
    socket.on("close", () => {
      failure ??= "closed"
      settle({ failure })
    })
    socket.once("error", (error: NodeJS.ErrnoException) => resolve({ failure: error.code ?? "error" }))
    socket.once("connect", () =>
      resolve({
        send: (request) =>
          new Promise<Outcome>((resolveOutcome) => {
            if (failure !== undefined) return resolveOutcome({ failure })
            waiting = resolveOutcome
            socket.write(requestBytes(request))
          }),
        close: () => socket.destroy()
      }))
  })
