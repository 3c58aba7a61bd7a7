/**
 * Run by test/partnerEvents/sender-timeout.test.ts in a node started with `--expose-gc`: `postWebhook` to the URL in
 * argv[2] (a receiver that never answers) with the timeout in argv[3], argv[4] times one after the other,
 * collecting garbage every few milliseconds while each waits. Prints each outcome and how long it took as one JSON
 * line, then exits.
 */
import { Effect } from "effect"
import { postWebhook } from "../../src/partnerEvents/Sender.ts"

const collect = (globalThis as { gc?: () => void }).gc
if (collect === undefined) throw new Error("run with node --expose-gc")
const [url = "", timeoutMs = "0", attempts = "1"] = process.argv.slice(2)

const collector = setInterval(collect, 10)
for (let attempt = 0; attempt < Number(attempts); attempt++) {
  const startedAt = Date.now()
  const outcome = await Effect.runPromise(
    postWebhook({ url: new URL(url), headers: {}, body: "{}", timeoutMs: Number(timeoutMs), lookup: undefined })
  )
  process.stdout.write(`${JSON.stringify({ outcome, elapsedMs: Date.now() - startedAt })}\n`)
}
clearInterval(collector)
process.exit(0)
