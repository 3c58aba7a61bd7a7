import { Context } from "effect"

/** How far behind the database is, for shedding load before requests pile up waiting for it (src/db/PgPool.ts). */
export class DatabasePressure extends Context.Service<DatabasePressure, {
  /** How long the oldest request for a connection has been waiting, in ms (0 when a connection is free). */
  readonly oldestWaitMs: () => number
}>()("DatabasePressure") {}
