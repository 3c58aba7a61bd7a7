/** The soak run's command line (see main.ts). */
import type { WorkloadKind } from "./workload.ts"

export interface SoakOptions {
  readonly minutes: number
  readonly replicas: number
  readonly seed: number
  readonly kills: boolean
  readonly workload: WorkloadKind
  readonly concurrency: number
  readonly drainSeconds: number
}

const positive = (name: string, value: string | undefined, integer: boolean): number => {
  const n = Number(value)
  if (value === undefined || !Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) {
    throw new Error(`${name} needs a positive ${integer ? "integer" : "number"}, got ${value ?? "nothing"}`)
  }
  return n
}

export const parseOptions = (argv: ReadonlyArray<string>): SoakOptions => {
  let options: SoakOptions = {
    minutes: 1,
    replicas: 2,
    seed: Date.now() % 1_000_000,
    kills: true,
    workload: "all",
    concurrency: 8,
    drainSeconds: 60
  }
  const args = argv.filter((arg) => arg !== "--")
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]
    const value = args[i + 1]
    switch (arg) {
      case "--minutes":
        options = { ...options, minutes: positive(arg, value, false) }
        i++
        break
      case "--replicas":
        options = { ...options, replicas: positive(arg, value, true) }
        i++
        break
      case "--seed":
        options = { ...options, seed: positive(arg, value, true) }
        i++
        break
      case "--concurrency":
        options = { ...options, concurrency: positive(arg, value, true) }
        i++
        break
      case "--drain-seconds":
        options = { ...options, drainSeconds: positive(arg, value, false) }
        i++
        break
      case "--no-kills":
        options = { ...options, kills: false }
        break
      case "--workload":
        if (value !== "all" && value !== "creates") throw new Error(`--workload is all or creates, got ${value}`)
        options = { ...options, workload: value }
        i++
        break
      default:
        throw new Error(
          `unknown option ${arg}; options: --minutes N --replicas N --seed N --no-kills --workload all|creates --concurrency N --drain-seconds N`
        )
    }
  }
  return options
}
