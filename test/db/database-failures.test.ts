/**
 * Database failures by SQLSTATE class (src/db/DatabaseFailures.ts): which mean the database is unavailable (503)
 * and which are bugs (500). A refusal of a new session is told apart from the same SQLSTATE raised by a statement:
 * the refusals here come from a server on a real socket that answers the pool's start-up message with an
 * ErrorResponse, as PostgreSQL does for a database that is not accepting connections.
 */
import { SqlError, UnknownError } from "effect/sql/SqlError"
import { once } from "node:events"
import { createServer, type Server } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  classifyDatabaseFailure,
  describeDatabaseFailure,
  isDatabaseUnavailable
} from "../../src/db/DatabaseFailures.ts"
import { makePool } from "../../src/db/PgPool.ts"

const withCode = (code: string, message = "boom") => Object.assign(new Error(message), { code })
const sqlError = (cause: unknown) =>
  new SqlError({ reason: new UnknownError({ cause, message: "Failed to execute statement" }) })

/** A PostgreSQL ErrorResponse message ('E'): severity, SQLSTATE and message fields. */
const errorResponse = (code: string, message: string) => {
  const fields = Buffer.concat([
    ...[["S", "FATAL"], ["V", "FATAL"], ["C", code], ["M", message]].map(([field, value]) =>
      Buffer.from(`${field}${value}\0`)
    ),
    Buffer.from([0])
  ])
  const header = Buffer.alloc(5)
  header.write("E", 0)
  header.writeInt32BE(fields.length + 4, 1)
  return Buffer.concat([header, fields])
}

/** Refuses every session with the SQLSTATE and message of the database name the client asks for (`code:message`). */
let refusing: Server
let port = 0
beforeAll(async () => {
  refusing = createServer((socket) => {
    socket.once("data", (startup: Buffer) => {
      const database = /database\0([^\0]*)\0/.exec(startup.toString("latin1"))?.[1] ?? "XX000:no database"
      const [code = "XX000", message = ""] = decodeURIComponent(database).split(":")
      socket.end(errorResponse(code, message))
    })
  }).listen(0, "127.0.0.1")
  await once(refusing, "listening")
  const address = refusing.address()
  port = typeof address === "object" && address !== null ? address.port : 0
})
afterAll(() => new Promise<void>((resolve) => refusing.close(() => resolve())))

/** What the app's pool fails with when the server refuses the session with `code`. */
const refusedAtConnect = async (code: string, message: string) => {
  const pool = makePool({
    url: `postgres://app@127.0.0.1:${port}/${encodeURIComponent(`${code}:${message}`)}`,
    size: 1,
    applicationName: "test",
    connectTimeoutMs: 2_000,
    statementTimeoutMs: 2_000,
    lockTimeoutMs: 1_000,
    idleInTransactionTimeoutMs: 5_000,
    queryTimeoutMs: 3_000,
    keepAliveDelayMs: 1_000,
    prepare: true
  })
  try {
    const cause = await pool.connect().then(() => undefined, (error: unknown) => error)
    expect(cause).toMatchObject({ code, message })
    return new SqlError({ reason: new UnknownError({ cause, message: "Failed to acquire connection" }) })
  } finally {
    await pool.end()
  }
}

describe("a session the server refuses to open", () => {
  it.each([
    ["55000", "database \"app\" is not currently accepting connections"],
    ["57P03", "the database system is starting up"],
    ["53300", "sorry, too many clients already"],
    ["08004", "server rejected the connection"],
    ["58000", "could not open file"]
  ])("%s (%s) is the database unavailable: a read may run again", async (code, message) => {
    const error = await refusedAtConnect(code, message)
    expect(classifyDatabaseFailure(error)).toBe("lost")
    expect(describeDatabaseFailure(error)).toBe(`${code} ${message}`)
  })

  it.each([
    ["28P01", "password authentication failed for user \"app\""],
    ["3D000", "database \"app\" does not exist"],
    ["42501", "permission denied for database \"app\""]
  ])("%s (%s) is a configuration mistake a retry does not fix: a 500", async (code, message) => {
    expect(classifyDatabaseFailure(await refusedAtConnect(code, message))).toBe("bug")
  })
})

describe("a statement's failure, by SQLSTATE", () => {
  it.each([
    "08006",
    "08003",
    "08P01",
    "53100",
    "53200",
    "57P01",
    "57P02",
    "57P04",
    "57P05",
    "58030",
    "25P03",
    "25P04"
  ])("%s: the session is gone or the server cannot go on: unavailable, a read may run again", (code) => {
    expect(classifyDatabaseFailure(sqlError(withCode(code)))).toBe("lost")
  })

  it.each(["57014", "57000", "55P03", "40001", "40P01", "40003"])(
    "%s: refused for now on an intact session: unavailable, not run again",
    (code) => expect(classifyDatabaseFailure(sqlError(withCode(code)))).toBe("busy")
  )

  it.each([
    ["55000", "currval of sequence \"s\" is not yet defined in this session"],
    ["55006", "cannot DROP TABLE \"payouts\" because it is being used by active queries in this session"],
    ["23505", "duplicate key value violates unique constraint"],
    ["23503", "insert or update violates foreign key constraint"],
    ["42601", "syntax error"],
    ["42P01", "relation does not exist"],
    ["22P02", "invalid input syntax for type uuid"],
    ["40002", "integrity constraint violation at commit"],
    ["XX000", "internal error"]
  ])("%s (%s) raised by a statement is a bug (500)", (code, message) => {
    expect(isDatabaseUnavailable(sqlError(withCode(code, message)))).toBe(false)
  })
})

describe("failures without a SQLSTATE", () => {
  it.each(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "EAI_AGAIN"])(
    "the driver's socket error %s is a lost connection",
    (code) => expect(classifyDatabaseFailure(sqlError(withCode(code, `connect ${code}`)))).toBe("lost")
  )

  it.each([
    "Connection terminated",
    "Connection terminated unexpectedly",
    "Connection terminated due to connection timeout",
    "timeout exceeded when trying to connect",
    "Client has encountered a connection error and is not queryable"
  ])("pg's own message %j is a lost connection", (message) => {
    expect(classifyDatabaseFailure(sqlError(new Error(message)))).toBe("lost")
  })

  it("pg's query read timeout is unavailable but not run again (the statement may have run)", () => {
    expect(classifyDatabaseFailure(sqlError(new Error("Query read timeout")))).toBe("busy")
  })

  it.each([
    "connection terminated by the application: invalid state",
    "Cannot use a pool after calling end on the pool",
    "Query values must be an array"
  ])("any other message (%j) is a bug", (message) => {
    expect(classifyDatabaseFailure(sqlError(new Error(message)))).toBe("bug")
  })

  it("a failure that is not the database's is a bug, whatever its code", () => {
    expect(classifyDatabaseFailure(withCode("57P01", "terminating connection due to administrator command"))).toBe(
      "bug"
    )
  })
})
