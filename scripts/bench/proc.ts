/** What a process costs, read from /proc (Linux): resident memory and CPU time so far. */
import { readFileSync } from "node:fs"

const CLOCK_TICKS_PER_SECOND = 100

export const rssMb = (pid: number): number => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8")
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? "0") / 1024)
}

/** User + system CPU time of `pid` in milliseconds (fields 14 and 15 of /proc/<pid>/stat, after the command). */
export const cpuMs = (pid: number): number => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND
}
