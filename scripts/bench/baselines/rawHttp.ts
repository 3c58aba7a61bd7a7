/**
 * Baseline: raw `node:http` answering fixed JSON bodies by path (given as JSON in BASELINE_BODIES), the floor of
 * what any Node server can do for a response the service computes (a cached quote, healthz).
 */
import { createServer } from "node:http"

const bodies = new Map(Object.entries(JSON.parse(process.env["BASELINE_BODIES"] ?? "{}") as Record<string, string>))

const server = createServer((request, response) => {
  const body = bodies.get((request.url ?? "").split("?")[0] ?? "")
  if (body === undefined) return void response.writeHead(404).end()
  response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) }).end(body)
})
server.listen(0, "127.0.0.1", () => {
  const address = server.address()
  process.stdout.write(
    `listening on http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}\n`
  )
})
process.on("SIGTERM", () => server.close(() => process.exit(0)))
