/**
 * Run by http.test.ts in a node started with `--expose-gc`: one request of the kit to the URL in argv[2] (a server
 * that never answers) with the timeout in argv[3], collecting garbage every few milliseconds while it waits. Prints
 * the recorded error and how long it took as one JSON line, then exits.
 */
import { Effect } from "effect"
import { makeHttp } from "../../src/http.ts"

const collect = (globalThis as { gc?: () => void }).gc
if (collect === undefined) throw new Error("run with node --expose-gc")
const [baseUrl = "", timeoutMs = "0"] = process.argv.slice(2)

const collector = setInterval(collect, 10)
const startedAt = Date.now()
const errors: Array<string | undefined> = []
const http = makeHttp(
  { baseUrl, apiKey: "k", secondApiKey: undefined, fetch, requestTimeoutMs: Number(timeoutMs) },
  (exchange) => errors.push(exchange.error)
)
await Effect.runPromise(Effect.result(http.send({ method: "GET", path: "/hang" })))
clearInterval(collector)
process.stdout.write(`${JSON.stringify({ error: errors[0], elapsedMs: Date.now() - startedAt })}\n`)
process.exit(0)
