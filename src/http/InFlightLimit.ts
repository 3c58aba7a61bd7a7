/**
 * How many requests one replica admits at once when MAX_REQUESTS_IN_FLIGHT is not set: as many as fit in a share of
 * the V8 heap at the most one admitted request can hold. Past the heap's limit the process aborts ("JavaScript heap out
 * of memory") and takes every partner's requests with it; past this limit a request is answered 503 at once instead.
 */
import { getHeapStatistics } from "node:v8"
import { MAX_BODY_BYTES } from "./BodyLimits.ts"

/**
 * The most heap one admitted request holds: its body (at most MAX_BODY_BYTES) as bytes, as a string and as the decoded
 * object, its fiber and the answer it builds. Measured: 30–50 KB for a create with a small body (scripts/bench/overload.ts
 * logs heap and requests in flight); a body at the limit triples its share.
 */
export const HEAP_PER_REQUEST_BYTES = 3 * MAX_BODY_BYTES

/** The share of the heap requests in flight may take; the rest is the service's own (about 30 MB at rest). */
const HEAP_SHARE = 0.5

/** At least this many, whatever the heap: a replica that admits fewer cannot keep its database pool busy. */
const MINIMUM = 32

export const inFlightLimitFor = (heapLimitBytes: number): number =>
  Math.max(MINIMUM, Math.floor((heapLimitBytes * HEAP_SHARE) / HEAP_PER_REQUEST_BYTES))

/** The limit for this process's heap (`--max-old-space-size` and the young generation: V8's heap_size_limit). */
export const defaultInFlightLimit = (): number => inFlightLimitFor(getHeapStatistics().heap_size_limit)
