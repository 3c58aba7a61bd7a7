/** The little the SDK needs from its runtime: Web Crypto and a timer. Node 18 has Web Crypto only as
 *  `node:crypto`'s `webcrypto`; everywhere else (Node 20+, Deno, Bun, browsers) it is `globalThis.crypto`. */

// A specifier in a variable, so bundlers for browsers leave the Node-only fallback alone.
const nodeCrypto = "node:crypto"

export const webCrypto = async (): Promise<Crypto> =>
  globalThis.crypto?.subtle !== undefined
    ? globalThis.crypto
    : ((await import(/* @vite-ignore */ nodeCrypto)) as { readonly webcrypto: Crypto }).webcrypto

/** A new `Idempotency-Key`: a random UUID. */
export const newIdempotencyKey = async (): Promise<string> => (await webCrypto()).randomUUID()

/** Waits `ms`, or rejects with the signal's reason once it aborts. */
export const sleep = (ms: number, signal: AbortSignal | undefined): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted === true) return reject(signal.reason as unknown)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal?.reason as unknown)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort)
      resolve()
    }, ms)
    signal?.addEventListener("abort", onAbort, { once: true })
  })
