/**
 * A keep-alive connection whose next request has already arrived is not closed by the server's idle timer, even when
 * the process was busy past that timer (a loaded machine). After a busy stretch Node runs the timers that fell due
 * before it reads the sockets, so without `createHttpServer`'s guard the idle timer destroyed the connection with the
 * request unread and the client got a reset instead of an answer: the packed kit's run met it as `ECONNRESET` on an
 * OTP send under two CPU burners.
 *
 * The server is `createHttpServer()` with a plain handler and its idle timer shortened (the mechanism is the same at
 * any length). The client runs in a worker thread and sends its second request while the server's thread is busy.
 */
import type { Server } from "node:http"
import { Worker } from "node:worker_threads"
import { afterAll, beforeAll, expect, it } from "vitest"
import { createHttpServer } from "../../src/http/NodeServer.ts"

const IDLE_MS = 1_000
/** How far past the idle limit the server's thread stays busy (at least; and until the client has sent again). */
const BUSY_PAST_LIMIT_MS = 300
/** Longest the server's thread waits for the client's second request, so a broken client fails the test, not hangs it. */
const CLIENT_DEADLINE_MS = 60_000

let server: Server
let port: number

/** Shared with the client's thread: 0 at first, BUSY once the server's thread is busy, SENT once the client sent again. */
const phase = new Int32Array(new SharedArrayBuffer(4))
const BUSY = 1
const SENT = 2

/**
 * After answering `/busy`, the thread is busy (the event loop does nothing else, as when the machine gives the process
 * no CPU) until the client has sent its next request and the idle limit is BUSY_PAST_LIMIT_MS behind.
 */
const busyAfterAnswering = (path: string | undefined, answeredAt: number) => {
  if (path !== "/busy") return
  setImmediate(() => {
    Atomics.store(phase, 0, BUSY)
    Atomics.notify(phase, 0)
    const giveUpAt = performance.now() + CLIENT_DEADLINE_MS
    while (
      (Atomics.load(phase, 0) !== SENT || performance.now() < answeredAt + IDLE_MS + BUSY_PAST_LIMIT_MS) &&
      performance.now() < giveUpAt
    ) {
      // Busy.
    }
  })
}

beforeAll(async () => {
  server = createHttpServer()
  server.keepAliveTimeout = IDLE_MS
  server.keepAliveTimeoutBuffer = 0
  server.on("request", (request, response) => {
    response.once("finish", () => busyAfterAnswering(request.url, performance.now()))
    response.writeHead(200, { "content-type": "text/plain", "content-length": "2" }).end("ok")
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("expected a TCP address")
  port = address.port
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
})

/**
 * On one connection: GET `first`, then (if `second`) GET `second` once the server's thread is busy. Reports
 * how many answers arrived and how the connection ended ("closed" by the server, or the socket error's code).
 */
const CLIENT = `
const { connect } = require("node:net")
const { parentPort, workerData } = require("node:worker_threads")
const { port, first, second, phase } = workerData
const socket = connect(port, "127.0.0.1")
let received = ""
const answers = () => received.split("HTTP/1.1 200 OK").length - 1
const request = (path) => socket.write("GET " + path + " HTTP/1.1\\r\\nHost: localhost\\r\\n\\r\\n")
const report = (ended) => { parentPort.postMessage({ answers: answers(), ended }); socket.destroy() }
socket.on("data", (chunk) => {
  received += chunk.toString("latin1")
  if (!received.endsWith("ok")) return
  if (answers() === 1 && second !== undefined) {
    Atomics.wait(phase, 0, 0)
    request(second)
    Atomics.store(phase, 0, ${SENT})
  }
  else if (answers() === 2) report("not yet")
})
socket.on("error", (error) => report(error.code ?? error.message))
socket.on("close", () => report("closed"))
request(first)
`

const onOneConnection = (first: string, second: string | undefined) =>
  new Promise<{ readonly answers: number; readonly ended: string }>((resolve, reject) => {
    const worker = new Worker(CLIENT, { eval: true, workerData: { port, first, second, phase } })
    worker.once("message", (outcome: { readonly answers: number; readonly ended: string }) => {
      resolve(outcome)
      void worker.terminate()
    })
    worker.once("error", reject)
  })

it("answers a request that arrived on an idle connection while the server was busy past the idle limit", async () => {
  Atomics.store(phase, 0, 0)
  expect(await onOneConnection("/busy", "/next")).toEqual({ answers: 2, ended: "not yet" })
})

it("still closes a connection left idle past the limit", async () => {
  // The client never closes it: without the server's close this would time out.
  expect(await onOneConnection("/quiet", undefined)).toEqual({ answers: 1, ended: "closed" })
})
