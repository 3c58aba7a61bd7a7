/**
 * Fast, never-hanging check for a Docker engine, done before testcontainers is
 * touched (testcontainers' own discovery can take a long time to give up).
 */
import { existsSync } from "node:fs"
import { request } from "node:http"
import { connect } from "node:net"
import { homedir } from "node:os"
import { join } from "node:path"

const PING_TIMEOUT_MS = 1000

type Endpoint =
  | { readonly kind: "unix"; readonly socketPath: string }
  | { readonly kind: "tcp"; readonly host: string; readonly port: number; readonly tls: boolean }

/** The same places testcontainers looks (minus config files), in its order. */
const candidateSockets = (): Array<string> => {
  const candidates = ["/var/run/docker.sock", join(homedir(), ".docker/run/docker.sock")]
  const runtimeDir = process.env["XDG_RUNTIME_DIR"]
  if (runtimeDir) candidates.push(join(runtimeDir, ".docker/run/docker.sock"), join(runtimeDir, "docker.sock"))
  candidates.push(join(homedir(), ".docker/desktop/docker.sock"))
  return candidates
}

const findEndpoint = (): Endpoint | string => {
  const dockerHost = process.env["DOCKER_HOST"]
  if (dockerHost) {
    if (dockerHost.startsWith("unix://")) return { kind: "unix", socketPath: dockerHost.slice("unix://".length) }
    if (dockerHost.startsWith("tcp://")) {
      const url = new URL(dockerHost)
      const tls = process.env["DOCKER_TLS_VERIFY"] === "1"
      return { kind: "tcp", host: url.hostname, port: Number(url.port || (tls ? 2376 : 2375)), tls }
    }
    return `unsupported DOCKER_HOST ${dockerHost}`
  }
  const socketPath = candidateSockets().find((path) => existsSync(path))
  return socketPath ? { kind: "unix", socketPath } : "no DOCKER_HOST and no docker socket"
}

const httpPing = (options: { socketPath: string } | { host: string; port: number }): Promise<boolean> =>
  new Promise((resolve) => {
    const req = request({ ...options, path: "/_ping", method: "GET", timeout: PING_TIMEOUT_MS }, (res) => {
      res.resume()
      resolve(res.statusCode === 200)
    })
    req.on("timeout", () => req.destroy())
    req.on("error", () => resolve(false))
    req.end()
  })

/** With TLS we would need the client certificates; a TCP handshake is a good enough "it answers". */
const tcpAnswers = (host: string, port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = connect({ host, port, timeout: PING_TIMEOUT_MS })
    socket.once("connect", () => {
      socket.destroy()
      resolve(true)
    })
    socket.once("timeout", () => socket.destroy())
    socket.once("error", () => resolve(false))
    socket.once("close", () => resolve(false))
  })

export type DockerProbe = { readonly available: true } | { readonly available: false; readonly reason: string }

/**
 * Resolves within ~1 s. When the engine was found on a non-default socket,
 * DOCKER_HOST is set so testcontainers connects to the same one.
 */
export const probeDocker = async (): Promise<DockerProbe> => {
  const endpoint = findEndpoint()
  if (typeof endpoint === "string") return { available: false, reason: endpoint }
  const answers = endpoint.kind === "unix"
    ? await httpPing({ socketPath: endpoint.socketPath })
    : endpoint.tls
    ? await tcpAnswers(endpoint.host, endpoint.port)
    : await httpPing({ host: endpoint.host, port: endpoint.port })
  if (!answers) {
    const where = endpoint.kind === "unix" ? endpoint.socketPath : `${endpoint.host}:${endpoint.port}`
    return { available: false, reason: `docker engine at ${where} does not answer` }
  }
  if (endpoint.kind === "unix" && !process.env["DOCKER_HOST"]) {
    process.env["DOCKER_HOST"] = `unix://${endpoint.socketPath}`
  }
  return { available: true }
}

export const POSTGRES_IMAGE = "postgres:16-alpine"

/** Starts a throw-away PostgreSQL container. testcontainers is only imported here, lazily. */
export const startPostgresContainer = async (): Promise<
  { readonly url: string; readonly stop: () => Promise<void> }
> => {
  const { PostgreSqlContainer } = await import("@testcontainers/postgresql")
  const container = await new PostgreSqlContainer(POSTGRES_IMAGE).start()
  return {
    url: container.getConnectionUri(),
    stop: async () => {
      await container.stop()
    }
  }
}
