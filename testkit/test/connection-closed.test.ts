/**
 * The kit sends a GET, HEAD or OPTIONS once more when its connection was closed before any answer: HTTP/1.1
 * keep-alive's race, where the server closes an idle connection just as the client sends on it. A busy run of the
 * kit against this service met it (CONTRACT-002's "Transport error": a stalled event loop let the server's idle timer
 * fire before it read the request, and it reset the connection). Anything else is never sent twice.
 */
import { createServer, type Server, type Socket } from "node:net"
import { afterAll, expect, it } from "vitest"
import { fetchBounded, MAX_API_ANSWER_BYTES } from "../src/boundedFetch.ts"

const servers: Array<Server> = []
afterAll(() => Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve)))))

/** A server that resets the connection of its first `resets` requests (before any answer) and answers 200 after. */
const resetting = async (resets: number) => {
  const seen: Array<string> = []
  const sockets = new Set<Socket>()
  const server = createServer((socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
    socket.on("error", () => undefined)
    socket.once("data", (chunk) => {
      seen.push(chunk.toString("latin1").split(" ", 1)[0]!)
      if (seen.length <= resets) return void socket.resetAndDestroy()
      socket.end("HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok")
    })
  })
  servers.push(server)
  server.on("close", () => sockets.forEach((socket) => socket.destroy()))
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as { port: number }
  return { url: `http://127.0.0.1:${port}/api/integrations/events`, seen }
}

const bounds = { timeoutMs: 30_000, maxBytes: MAX_API_ANSWER_BYTES, what: "an API answer", advice: "-" }

it("a GET whose connection is reset before any answer is sent once more, and answered", async () => {
  const server = await resetting(1)
  const answer = await fetchBounded(globalThis.fetch, server.url, {}, bounds)
  expect(answer.status).toBe(200)
  expect(server.seen).toEqual(["GET", "GET"])
})

it("only once: a GET reset again fails as fetch does", async () => {
  const server = await resetting(Number.POSITIVE_INFINITY)
  await expect(fetchBounded(globalThis.fetch, server.url, {}, bounds)).rejects.toThrow("fetch failed")
  expect(server.seen).toEqual(["GET", "GET"])
})

it("a POST is never sent twice", async () => {
  const server = await resetting(1)
  const init = { method: "POST", body: "{}", headers: { "content-type": "application/json" } }
  await expect(fetchBounded(globalThis.fetch, server.url, init, bounds)).rejects.toThrow("fetch failed")
  expect(server.seen).toEqual(["POST"])
})
