/**
 * The soak's replicas: each the service as `npm start` runs it (scripts/bench/service.ts), on a port of its own, all on
 * one database. `kill` SIGKILLs one and starts it again; the workload sends only to replicas that are up.
 */
import { once } from "node:events"
import { type Service, startService, stopService } from "../bench/service.ts"
import type { Kill } from "./invariants.ts"

export interface Replica {
  readonly index: number
  service: Service
  up: boolean
}

export interface Replicas {
  readonly all: ReadonlyArray<Replica>
  /** The demo integration's test key, printed by the first replica on the fresh database. */
  readonly key: string
  readonly kills: ReadonlyArray<Kill>
  /** SIGKILLs replica `index` and starts it again; resolves once it serves (or throws when it does not start). */
  readonly kill: (index: number) => Promise<void>
  readonly stop: () => Promise<void>
}

export const startReplicas = async (count: number, env: Record<string, string>): Promise<Replicas> => {
  const first = await startService(env)
  const rest = await Promise.all(Array.from({ length: count - 1 }, () => startService(env, false)))
  const all: Array<Replica> = [first, ...rest].map((service, index) => ({ index, service, up: true }))
  const kills: Array<Kill & { readyAt: number | undefined }> = []
  return {
    all,
    key: first.key,
    kills,
    kill: async (index) => {
      const replica = all[index]
      if (replica === undefined) throw new Error(`no replica ${index}`)
      replica.up = false
      const exited = once(replica.service.child, "exit")
      const record: { replica: number; killedAt: number; readyAt: number | undefined } = {
        replica: index,
        killedAt: Date.now(),
        readyAt: undefined
      }
      kills.push(record)
      replica.service.child.kill("SIGKILL")
      await exited
      replica.service = await startService(env, false)
      record.readyAt = Date.now()
      replica.up = true
    },
    stop: async () => {
      await Promise.all(all.map((replica) => stopService(replica.service.child)))
    }
  }
}
