import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { mkdtemp, rm } from "node:fs/promises"
import { createServer as createHttpServer } from "node:http"
import { createServer as createNetServer, type Server, type Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { probeDocker } from "../support/docker.ts"

const listen = (server: Server, path: string) =>
  new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(path, resolve)
  })
const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()))

describe("docker probe", () => {
  const saved = process.env["DOCKER_HOST"]
  let dir: string

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "docker-probe-"))
  })
  afterEach(async () => {
    if (saved === undefined) delete process.env["DOCKER_HOST"]
    else process.env["DOCKER_HOST"] = saved
    await rm(dir, { recursive: true, force: true })
  })

  it("reports a missing socket without waiting", async () => {
    process.env["DOCKER_HOST"] = `unix://${join(dir, "missing.sock")}`
    const started = Date.now()
    expect((await probeDocker()).available).toBe(false)
    expect(Date.now() - started).toBeLessThan(500)
  })

  it("gives up within the ping timeout on an engine that accepts but never answers", async () => {
    const path = join(dir, "silent.sock")
    const sockets: Array<Socket> = []
    const server = createNetServer((socket) => void sockets.push(socket))
    await listen(server, path)
    process.env["DOCKER_HOST"] = `unix://${path}`
    const started = Date.now()
    const probe = await probeDocker()
    const elapsed = Date.now() - started
    for (const socket of sockets) socket.destroy()
    await close(server)
    expect(probe.available).toBe(false)
    expect(elapsed).toBeLessThan(2000)
  })

  it("accepts an engine that answers /_ping", async () => {
    const path = join(dir, "docker.sock")
    const server = createHttpServer((req, res) => {
      res.statusCode = req.url === "/_ping" ? 200 : 404
      res.end("OK")
    })
    await listen(server, path)
    process.env["DOCKER_HOST"] = `unix://${path}`
    const probe = await probeDocker()
    await close(server)
    expect(probe).toEqual({ available: true })
  })
})
