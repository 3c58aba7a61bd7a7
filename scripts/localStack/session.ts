/**
 * What `npm run live:local` hands to `npm run live:pay` while it runs: where the service and anvil are, the live API
 * key and the funded test wallet. Written to LIVE_LOCAL_DATA_DIR/session.json (mode 0600) once the stack is up,
 * deleted when it stops.
 */
import { rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Schema } from "effect"

export const LiveLocalSession = Schema.Struct({
  base: Schema.String,
  apiKey: Schema.String,
  rpcUrl: Schema.String,
  chainId: Schema.Int,
  wallet: Schema.Struct({ address: Schema.String, privateKey: Schema.String }),
  tokens: Schema.Struct({ USDC: Schema.String, COPm: Schema.String })
})
export type LiveLocalSession = typeof LiveLocalSession.Type

export const sessionFile = (dataDir: string) => join(dataDir, "session.json")

export const writeSession = (dataDir: string, session: LiveLocalSession) =>
  writeFileSync(sessionFile(dataDir), `${JSON.stringify(session, null, 2)}\n`, { mode: 0o600 })

export const removeSession = (dataDir: string) => rmSync(sessionFile(dataDir), { force: true })
