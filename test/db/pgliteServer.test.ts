/**
 * The PGlite socket server lends the single PGlite session to one connection at
 * a time. These tests speak the wire protocol directly to check what happens
 * when clients vanish mid-transaction or while queued.
 */
import type { PGlite } from "@electric-sql/pglite"
import { SqlClient } from "@effect/sql"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { connect, type Socket } from "node:net"
import { type RunningPgliteServer, startPgliteServer } from "../../src/db/PgliteServer.ts"
import { createMemoryPglite } from "../support/pglite.ts"
import { sqlLayerFor } from "../support/database.ts"

const startup = (): Buffer => {
  const params = Buffer.from("user\0postgres\0database\0postgres\0\0")
  const message = Buffer.alloc(8 + params.length)
  message.writeInt32BE(message.length, 0)
  message.writeInt32BE(196608, 4)
  params.copy(message, 8)
  return message
}

const query = (text: string): Buffer => {
  const body = Buffer.from(`${text}\0`)
  const message = Buffer.alloc(5 + body.length)
  message.write("Q")
  message.writeInt32BE(4 + body.length, 1)
  body.copy(message, 5)
  return message
}

/** Writes a message and resolves with the ReadyForQuery status ('I', 'T' or 'E') that ends the reply. */
const send = (socket: Socket, message: Buffer): Promise<string> =>
  new Promise((resolve, reject) => {
    let received = Buffer.alloc(0)
    const onData = (data: Buffer) => {
      received = Buffer.concat([received, data])
      const n = received.length
      if (n >= 6 && received[n - 6] === 0x5a && received.readInt32BE(n - 5) === 5) {
        socket.off("data", onData)
        resolve(String.fromCharCode(received[n - 1]!))
      }
    }
    socket.on("data", onData)
    socket.once("error", reject)
    socket.write(message)
  })

const openSession = async (server: RunningPgliteServer): Promise<Socket> => {
  const socket = await new Promise<Socket>((resolve, reject) => {
    const s = connect({ host: server.host, port: server.port }, () => resolve(s))
    s.once("error", reject)
  })
  expect(await send(socket, startup())).toBe("I")
  return socket
}

const closed = (socket: Socket) => new Promise<void>((resolve) => socket.once("close", () => resolve()))

describe("PGlite socket server", () => {
  let db: PGlite
  let server: RunningPgliteServer

  beforeEach(async () => {
    db = await createMemoryPglite()
    server = await startPgliteServer(db)
    await db.exec("CREATE TABLE items (id integer)")
  }, 30_000)

  afterEach(async () => {
    await server.stop()
    await db.close()
  })

  const countItems = () =>
    Effect.runPromise(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM items`).pipe(
        Effect.map(([row]) => row?.n),
        Effect.timeout("5 seconds"),
        Effect.provide(sqlLayerFor(server.url))
      )
    )

  it("rolls back the transaction of a client that disconnects mid-way, and serves the others", async () => {
    const socket = await openSession(server)
    expect(await send(socket, query("BEGIN"))).toBe("T")
    expect(await send(socket, query("INSERT INTO items VALUES (1)"))).toBe("T")
    socket.destroy()
    await closed(socket)
    expect(await countItems()).toBe(0)
  })

  it("holds other connections back until the transaction ends", async () => {
    const owner = await openSession(server)
    const other = await openSession(server)
    expect(await send(owner, query("BEGIN"))).toBe("T")
    expect(await send(owner, query("INSERT INTO items VALUES (1)"))).toBe("T")
    let otherDone = false
    const otherReply = send(other, query("INSERT INTO items VALUES (2)")).then((status) => {
      otherDone = true
      return status
    })
    expect(await send(owner, query("SELECT count(*) FROM items"))).toBe("T")
    expect(otherDone).toBe(false)
    expect(await send(owner, query("COMMIT"))).toBe("I")
    expect(await otherReply).toBe("I")
    expect(await countItems()).toBe(2)
    owner.destroy()
    other.destroy()
  })

  it("forgets a queued connection that disconnects before its turn", async () => {
    const owner = await openSession(server)
    const queued = await openSession(server)
    expect(await send(owner, query("BEGIN"))).toBe("T")
    queued.write(query("INSERT INTO items VALUES (2)"))
    queued.destroy()
    await closed(queued)
    expect(await send(owner, query("INSERT INTO items VALUES (1)"))).toBe("T")
    expect(await send(owner, query("COMMIT"))).toBe("I")
    expect(await countItems()).toBe(1)
    owner.destroy()
  })

  it("stops while a client holds an open transaction, leaving PGlite idle", async () => {
    const socket = await openSession(server)
    expect(await send(socket, query("BEGIN"))).toBe("T")
    expect(await send(socket, query("INSERT INTO items VALUES (1)"))).toBe("T")
    await server.stop()
    expect(db.isInTransaction()).toBe(false)
    expect((await db.query<{ n: number }>("SELECT count(*)::int AS n FROM items")).rows).toEqual([{ n: 0 }])
    server = await startPgliteServer(db) // for afterEach
  })
})
