/**
 * Helpers for the request-log tests: the raw rows of the table, waiting (by condition) for requests to be written,
 * and the recorder's counters.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { expect } from "vitest"
import { RequestLogRecorder } from "../../src/requestLogs/RequestLogRecorder.ts"
import type { TestServer } from "../support/server.ts"

type Services = SqlClient.SqlClient | RequestLogRecorder

/** `server.run` over the services named here: the runtime behind it is the whole app, so widening is sound. */
const runApp = <A, E>(server: TestServer, effect: Effect.Effect<A, E, Services>): Promise<A> =>
  (server.run as <A1, E1>(e: Effect.Effect<A1, E1, Services>) => Promise<A1>)(effect)

/** Every row of request_logs, each as PostgreSQL's text of the whole row (every column, JSON included). */
export const rawRows = (server: TestServer): Promise<ReadonlyArray<string>> =>
  runApp(
    server,
    Effect.flatMap(
      SqlClient.SqlClient,
      (sql) => sql<{ readonly row: string }>`SELECT r::text AS row FROM request_logs r`
    )
      .pipe(Effect.map((rows) => rows.map((r) => r.row)), Effect.orDie)
  )

/** The request ids among `requestIds` that have a row. */
export const loggedIds = (server: TestServer, requestIds: ReadonlyArray<string>): Promise<ReadonlyArray<string>> =>
  runApp(
    server,
    Effect.flatMap(
      SqlClient.SqlClient,
      (sql) =>
        sql<{ readonly request_id: string }>`SELECT DISTINCT request_id FROM request_logs
                                          WHERE request_id = ANY(${requestIds}::text[])`
    )
      .pipe(Effect.map((rows) => rows.map((r) => r.request_id)), Effect.orDie)
  )

/** Waits (generously, by condition) until every one of `requestIds` has a row. */
export const untilLogged = (server: TestServer, requestIds: ReadonlyArray<string>) =>
  expect.poll(async () => [...await loggedIds(server, requestIds)].sort(), { timeout: 20_000, interval: 50 })
    .toEqual([...new Set(requestIds)].sort())

export const recorderCounts = (server: TestServer) =>
  runApp(
    server,
    Effect.flatMap(
      RequestLogRecorder,
      (recorder) => Effect.all({ dropped: recorder.dropped, failed: recorder.failed })
    )
  )
