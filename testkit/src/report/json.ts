import type { ConformanceReport } from "./types.ts"

/** The whole report: per scenario its id, status, duration, failure (with curl) and recorded evidence. */
export const toJson = (report: ConformanceReport): string => `${JSON.stringify(report, null, 2)}\n`
