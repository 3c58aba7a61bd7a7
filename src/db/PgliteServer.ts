/**
 * Serves one embedded PGlite instance over the PostgreSQL wire protocol on TCP,
 * so ordinary `pg` clients (our PgClient pool, or server processes started by
 * tests) can use it.
 *
 * Why not `PGLiteSocketServer` from @electric-sql/pglite-socket? PGlite is a
 * single backend session, and that server interleaves *individual wire
 * messages* from different connections. An extended-protocol query is several
 * messages (Parse, Bind, Describe, Execute, Sync), so with more than one client
 * connection two parameterised queries overwrite each other's unnamed
 * statement/portal ("unnamed prepared statement does not exist",
 * `portal "" does not exist`) and the connections then hang.
 *
 * This server hands the backend to one connection at a time and only switches
 * at a transaction boundary: ownership is released when PGlite answers with
 * ReadyForQuery in state 'I' (idle). A connection that goes away while owning
 * the backend is rolled back first. Consequences of the single session: all
 * connections share session state (SET, temp tables, named prepared
 * statements, session advisory locks), and throughput is one transaction at a
 * time.
 */
import type { PGlite } from "@electric-sql/pglite"
import { SqlError } from "@effect/sql/SqlError"
import { Effect, Runtime, type Scope } from "effect"
import { createServer, type Server, type Socket } from "node:net"

const SSL_REQUEST = 80877103
const GSSENC_REQUEST = 80877104
const CANCEL_REQUEST = 80877102
const PROTOCOL_MAJOR = 3
const TERMINATE = 0x58 // 'X'
const READY_FOR_QUERY = 0x5a // 'Z'
const IDLE = 0x49 // 'I'

const SYNC = Buffer.from([0x53, 0, 0, 0, 4])

const simpleQuery = (text: string): Buffer => {
  const body = Buffer.from(`${text}\0`, "utf8")
  const message = Buffer.alloc(5 + body.length)
  message.write("Q", 0, "latin1")
  message.writeInt32BE(4 + body.length, 1)
  body.copy(message, 5)
  return message
}
const ROLLBACK = simpleQuery("ROLLBACK")

/** Follows backend message framing across chunks; remembers the last ReadyForQuery status. */
class ReadyForQueryWatcher {
  private header: Array<number> = []
  private type = 0
  private bodyLeft = 0
  status: number | undefined = undefined

  feed(chunk: Uint8Array): void {
    let i = 0
    while (i < chunk.length) {
      if (this.bodyLeft === 0) {
        this.header.push(chunk[i++]!)
        if (this.header.length === 5) {
          const [type, a, b, c, d] = this.header as [number, number, number, number, number]
          this.type = type
          this.bodyLeft = ((a << 24) | (b << 16) | (c << 8) | d) - 4
          this.header = []
        }
        continue
      }
      if (this.type === READY_FOR_QUERY) this.status = chunk[i]
      const take = Math.min(this.bodyLeft, chunk.length - i)
      i += take
      this.bodyLeft -= take
    }
  }
}

/** The single PGlite session, lent to one connection at a time. */
class Backend {
  private owner: Connection | undefined = undefined
  private readonly waiting: Array<{ readonly connection: Connection; readonly resume: (granted: boolean) => void }> =
    []

  constructor(private readonly db: PGlite) {}

  /** Runs one client message; keeps the session for this connection until it is idle again. */
  async run(connection: Connection, message: Uint8Array): Promise<void> {
    if (!(await this.acquire(connection))) return
    let status: number | undefined
    try {
      status = await this.exec(message, (chunk) => connection.write(chunk))
    } catch (error) {
      this.release(connection)
      throw error
    }
    if (status === IDLE) this.release(connection)
  }

  /** Called once a connection is gone and its pending work has settled: roll back what it left open. */
  async disconnect(connection: Connection): Promise<void> {
    this.cancel(connection)
    if (this.owner !== connection) return
    try {
      await this.resetToIdle()
    } finally {
      this.release(connection)
    }
  }

  /** Abandons a waiter without running anything (its socket closed while it queued). */
  cancel(connection: Connection): void {
    const index = this.waiting.findIndex((w) => w.connection === connection)
    if (index !== -1) this.waiting.splice(index, 1)[0]!.resume(false)
  }

  private acquire(connection: Connection): Promise<boolean> {
    if (this.owner === undefined || this.owner === connection) {
      this.owner = connection
      return Promise.resolve(true)
    }
    return new Promise((resume) => this.waiting.push({ connection, resume }))
  }

  private release(connection: Connection): void {
    if (this.owner !== connection) return
    const next = this.waiting.shift()
    this.owner = next?.connection
    next?.resume(true)
  }

  // Covers an explicit transaction, an unsynced extended-protocol batch, and the
  // "ignore until Sync" state after an error (where the ROLLBACK is discarded).
  private async resetToIdle(): Promise<void> {
    let status = await this.exec(ROLLBACK)
    if (status !== IDLE) status = await this.exec(SYNC)
    if (status !== IDLE) status = await this.exec(ROLLBACK)
    if (status !== IDLE) {
      throw new Error(`PGlite session did not return to idle (ReadyForQuery status ${String(status)})`)
    }
  }

  private async exec(message: Uint8Array, onData?: (chunk: Uint8Array) => void): Promise<number | undefined> {
    const watcher = new ReadyForQueryWatcher()
    await this.db.runExclusive(() =>
      this.db.execProtocolRawStream(message, {
        onRawData: (chunk) => {
          watcher.feed(chunk)
          onData?.(chunk)
        }
      })
    )
    return watcher.status
  }
}

type Incoming =
  | { readonly kind: "encryption-request" }
  | { readonly kind: "cancel-request" }
  | { readonly kind: "unsupported-protocol" }
  | { readonly kind: "terminate" }
  | { readonly kind: "forward"; readonly bytes: Uint8Array }

class Connection {
  private buffer: Buffer = Buffer.alloc(0)
  private startedUp = false
  private closed = false
  private work: Promise<void> = Promise.resolve()
  /** Settles once the connection is closed and the backend cleaned up after it. */
  readonly done: Promise<void>
  private resolveDone!: () => void

  constructor(
    private readonly socket: Socket,
    private readonly backend: Backend,
    private readonly onError: (error: unknown) => void
  ) {
    this.done = new Promise((resolve) => (this.resolveDone = resolve))
    socket.setNoDelay(true)
    socket.on("data", (data) => this.receive(data))
    // A client reset (ECONNRESET) is an ordinary disconnect; 'close' follows and cleans up.
    socket.on("error", () => {})
    socket.on("close", () => this.close())
  }

  write(chunk: Uint8Array): void {
    if (!this.closed && this.socket.writable) this.socket.write(chunk)
  }

  destroy(): void {
    this.socket.destroy()
  }

  private receive(data: Buffer): void {
    this.buffer = this.buffer.length === 0 ? data : Buffer.concat([this.buffer, data])
    for (let message = this.next(); message !== undefined; message = this.next()) {
      const incoming = message
      this.work = this.work.then(() => this.handle(incoming))
    }
  }

  private next(): Incoming | undefined {
    if (!this.startedUp) {
      if (this.buffer.length < 8) return undefined
      const length = this.buffer.readInt32BE(0)
      if (this.buffer.length < length) return undefined
      const code = this.buffer.readInt32BE(4)
      const bytes = this.take(length)
      if (code === SSL_REQUEST || code === GSSENC_REQUEST) return { kind: "encryption-request" }
      if (code === CANCEL_REQUEST) return { kind: "cancel-request" }
      // Any 3.x startup goes to PGlite, which negotiates minor versions itself.
      if (code >> 16 !== PROTOCOL_MAJOR) return { kind: "unsupported-protocol" }
      this.startedUp = true
      return { kind: "forward", bytes }
    }
    if (this.buffer.length < 5) return undefined
    const length = 1 + this.buffer.readInt32BE(1)
    if (this.buffer.length < length) return undefined
    const type = this.buffer[0]
    const bytes = this.take(length)
    return type === TERMINATE ? { kind: "terminate" } : { kind: "forward", bytes }
  }

  private take(length: number): Uint8Array {
    const bytes = this.buffer.subarray(0, length)
    this.buffer = this.buffer.subarray(length)
    return bytes
  }

  private async handle(incoming: Incoming): Promise<void> {
    if (this.closed) return
    switch (incoming.kind) {
      case "encryption-request":
        this.write(Buffer.from("N")) // no TLS / GSS: the client continues in plain text
        return
      case "cancel-request": // PGlite cannot interrupt a running statement
      case "terminate":
        this.socket.end()
        return
      case "unsupported-protocol":
        this.socket.destroy()
        return
      case "forward":
        try {
          await this.backend.run(this, incoming.bytes)
        } catch (error) {
          this.onError(error)
          this.socket.destroy()
        }
    }
  }

  private close(): void {
    if (this.closed) return
    this.closed = true
    this.backend.cancel(this)
    this.work = this.work
      .then(() => this.backend.disconnect(this))
      .catch(this.onError)
      .finally(this.resolveDone)
  }
}

export interface PgliteServerOptions {
  readonly host?: string
  /** 0 (default) picks a free port. */
  readonly port?: number
  /** Backend failures (PGlite itself failing, not SQL errors, which go to the client). */
  readonly onError?: (error: unknown) => void
}

export interface RunningPgliteServer {
  readonly host: string
  readonly port: number
  /** `postgres://postgres@host:port/postgres` (PGlite ignores user and database names). */
  readonly url: string
  readonly stop: () => Promise<void>
}

export const startPgliteServer = async (
  db: PGlite,
  options: PgliteServerOptions = {}
): Promise<RunningPgliteServer> => {
  await db.waitReady
  const host = options.host ?? "127.0.0.1"
  const onError = options.onError ?? ((error: unknown) => console.error("[pglite-server]", error))
  const backend = new Backend(db)
  const connections = new Set<Connection>()
  const server: Server = createServer((socket) => {
    const connection = new Connection(socket, backend, onError)
    connections.add(connection)
    void connection.done.then(() => connections.delete(connection))
  })
  const port = await new Promise<number>((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject)
      const address = server.address()
      if (address === null || typeof address === "string") reject(new Error("PGlite server has no TCP address"))
      else resolve(address.port)
    })
  })
  server.on("error", onError)

  const stop = async (): Promise<void> => {
    const closed = new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())))
    const open = [...connections]
    for (const connection of open) connection.destroy()
    await Promise.all(open.map((connection) => connection.done))
    await closed
  }

  return { host, port, url: `postgres://postgres@${host}:${port}/postgres`, stop }
}

/** Scoped variant: the server stops when the scope closes. Backend errors go to the Effect logger. */
export const servePglite = (
  db: PGlite,
  options: Omit<PgliteServerOptions, "onError"> = {}
): Effect.Effect<RunningPgliteServer, SqlError, Scope.Scope> =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<never>()
    const onError = (error: unknown) =>
      Runtime.runFork(runtime)(Effect.logError("PGlite socket server error", error))
    return yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => startPgliteServer(db, { ...options, onError }),
        catch: (cause) => new SqlError({ cause, message: "Failed to start the PGlite socket server" })
      }),
      (running) => Effect.promise(running.stop)
    )
  })
