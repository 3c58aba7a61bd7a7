/**
 * The e-mail capture server as a process:
 *   node --import tsx scripts/simulators/email/main.ts
 * Environment (all optional):
 *   EMAIL_CAPTURE_PORT      port on 127.0.0.1, default 4020 (0 = any free port)
 *   EMAIL_CAPTURE_API_KEY   the bearer key POST /emails must carry, default re_test_capture
 * Prints its URL and the settings the service needs (EMAIL_API_URL=..., EMAIL_API_KEY=..., one per line);
 * captured messages are at GET /__mail/messages. Stops on SIGINT/SIGTERM with exit code 0.
 */
import { DEFAULT_API_KEY, startEmailCapture } from "./server.ts"

const env = (name: string): string | undefined => {
  const value = process.env[name]
  return value !== undefined && value !== "" ? value : undefined
}

const fail = (message: string): never => {
  process.stderr.write(`e-mail capture: ${message}\n`)
  process.exit(2)
}

const rawPort = env("EMAIL_CAPTURE_PORT") ?? "4020"
const port = Number(rawPort)
if (!/^[0-9]+$/.test(rawPort) || port > 65535) {
  fail(`EMAIL_CAPTURE_PORT must be 0 (any free port) to 65535, got ${rawPort}`)
}
const apiKey = env("EMAIL_CAPTURE_API_KEY") ?? DEFAULT_API_KEY
if (/\s/.test(apiKey)) fail("EMAIL_CAPTURE_API_KEY must not contain whitespace")

const capture = await startEmailCapture({
  port,
  apiKey,
  log: (line) => process.stdout.write(`${line}\n`)
}).catch((cause: unknown) => fail(`could not start: ${cause instanceof Error ? cause.message : String(cause)}`))

process.stdout.write(
  [
    `e-mail capture listening on ${capture.url}`,
    "  settings for the service:",
    `  EMAIL_API_URL=${capture.url}`,
    `  EMAIL_API_KEY=${capture.apiKey}`,
    `  captured mail: GET ${capture.url}/__mail/messages?to=<address>, GET ${capture.url}/__mail/messages/latest?to=<address>, DELETE ${capture.url}/__mail/messages`,
    ""
  ].join("\n")
)

let stopping = false
const stop = (signal: NodeJS.Signals) => {
  if (stopping) return
  stopping = true
  process.stdout.write(`e-mail capture: ${signal}, stopping\n`)
  void capture.close().then(() => process.exit(0))
}
process.on("SIGINT", stop)
process.on("SIGTERM", stop)
