/**
 * The soak's database: a throw-away embedded PostgreSQL by default, or a fresh database on DATABASE_URL's server
 * (created for the run, dropped after). `snapshot` reads what the invariants check, after the replicas stopped.
 */
import { randomBytes } from "node:crypto"
import pg from "pg"
import { startThrowawayPostgres } from "../../src/db/EmbeddedPostgres.ts"
import type { Snapshot } from "./invariants.ts"

export interface SoakDatabase {
  readonly url: string
  /** What the report says the run used. */
  readonly description: string
  readonly drop: () => Promise<void>
}

const withClient = async <A>(url: string, f: (client: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await f(client)
  } finally {
    await client.end()
  }
}

export const soakDatabase = async (serverUrl: string | undefined): Promise<SoakDatabase> => {
  if (serverUrl === undefined || serverUrl === "") {
    const server = await startThrowawayPostgres({ maxConnections: 300 })
    return {
      url: server.url,
      description: `a throw-away embedded PostgreSQL on 127.0.0.1:${server.port}`,
      drop: server.stop
    }
  }
  const name = `soak_${randomBytes(5).toString("hex")}`
  await withClient(serverUrl, (client) => client.query(`CREATE DATABASE ${name}`))
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    description: `database ${name} on DATABASE_URL's server (created for the run, dropped after)`,
    drop: () =>
      withClient(serverUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() =>
        undefined
      )
  }
}

/** The owner's name a keyed payout create sends, which carries its key into the database. */
export const ownerNameOf = (key: string) => `Soak ${key}`
/** The key of a swap create, carried by its amount (`amountIn`), which is unique per key. */
export const swapKeyOf = (amountIn: string) => `sw-${amountIn}`

const normalAmount = (amount: string) => amount.includes(".") ? amount.replace(/\.?0+$/, "") : amount

export const pendingDeliveries = (url: string, endpointId: string): Promise<number> =>
  withClient(url, async (client) => {
    const { rows } = await client.query<{ n: string }>(
      `SELECT count(*) AS n FROM event_deliveries WHERE endpoint_id = $1 AND state = 'pending'`,
      [endpointId]
    )
    return Number(rows[0]?.n ?? "0")
  })

export const snapshot = (url: string, endpointId: string): Promise<Snapshot> =>
  withClient(url, async (client) => {
    const payouts = await client.query<
      { id: string; account_owner_name: string; tx_hash: string | null; fee_tx_hash: string | null }
    >(`SELECT id, account_owner_name, tx_hash, fee_tx_hash FROM payouts`)
    const swaps = await client.query<{ id: string; amount_in: string; tx_hash: string | null }>(
      `SELECT id, amount_in, tx_hash FROM swap_intents`
    )
    const claims = await client.query<{ tx_hash: string; resource_kind: string; resource_id: string; state: string }>(
      `SELECT tx_hash, resource_kind, resource_id, state FROM tx_hash_claims`
    )
    const events = await client.query<
      { id: string; type: string; resource_id: string; sequence: number; after_endpoint: boolean }
    >(
      `SELECT e.id, e.type, e.resource_id, e.sequence,
              e.created_at >= (SELECT created_at FROM webhook_endpoints WHERE id = $1) AS after_endpoint
       FROM events e`,
      [endpointId]
    )
    const deliveries = await client.query<{ event_id: string; state: string }>(
      `SELECT event_id, state FROM event_deliveries WHERE endpoint_id = $1`,
      [endpointId]
    )
    return {
      payouts: payouts.rows.map((r) => ({
        id: r.id,
        key: r.account_owner_name.replace(/^Soak /, ""),
        txHash: r.tx_hash,
        feeTxHash: r.fee_tx_hash
      })),
      swaps: swaps.rows.map((r) => ({ id: r.id, key: swapKeyOf(normalAmount(r.amount_in)), txHash: r.tx_hash })),
      claims: claims.rows.map((r) => ({
        txHash: r.tx_hash,
        resourceKind: r.resource_kind,
        resourceId: r.resource_id,
        state: r.state
      })),
      events: events.rows.map((r) => ({
        id: r.id,
        type: r.type,
        resourceId: r.resource_id,
        sequence: r.sequence,
        afterEndpoint: r.after_endpoint
      })),
      deliveries: deliveries.rows.map((r) => ({ eventId: r.event_id, state: r.state }))
    }
  })
