import { Clock, Effect } from "effect"

/** Now, truncated to milliseconds: what PostgreSQL stores and the API returns, so filters are exact. */
export const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))

export const addSeconds = (date: Date, seconds: number) => new Date(date.getTime() + seconds * 1000)
