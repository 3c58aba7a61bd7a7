/**
 * vitest globalSetup: one real PostgreSQL server for the whole run, unless TEST_DATABASE_URL names
 * one already. Each test file then gets a fresh database on it (./database.ts). Meanwhile the bundle `npm start`
 * runs (dist/server.mjs) is built if stale, once, rather than by whichever tests start the service first.
 *
 * Default: the project's embedded PostgreSQL (src/db/EmbeddedPostgres.ts) in a temporary directory,
 * no network needed. With TEST_DATABASE_DOCKER=1 and a Docker engine: a testcontainers container.
 */
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { startThrowawayPostgres } from "../../src/db/EmbeddedPostgres.ts"

const buildBundle = () =>
  promisify(execFile)(process.execPath, [fileURLToPath(new URL("../../scripts/build.mjs", import.meta.url))])

const startServer = async () => {
  if (process.env["TEST_DATABASE_DOCKER"] === "1") {
    const { probeDocker, POSTGRES_IMAGE, startPostgresContainer } = await import("./docker.ts")
    const docker = await probeDocker()
    if (!docker.available) throw new Error(`TEST_DATABASE_DOCKER=1 but no Docker engine answers: ${docker.reason}`)
    process.stderr.write(`[test-db] starting one ${POSTGRES_IMAGE} container for this run\n`)
    const container = await startPostgresContainer()
    return { url: container.url, kind: "docker", stop: container.stop }
  }
  const started = performance.now()
  const server = await startThrowawayPostgres({ maxConnections: 400 })
  process.stderr.write(
    `[test-db] embedded PostgreSQL for this run on 127.0.0.1:${server.port} (${
      Math.round(performance.now() - started)
    } ms)\n`
  )
  return { url: server.url, kind: "embedded", stop: server.stop }
}

export default async function setup(): Promise<(() => Promise<void>) | undefined> {
  const built = buildBundle()
  if (process.env["TEST_DATABASE_URL"]) {
    await built
    return undefined
  }
  const [server] = await Promise.all([startServer(), built])
  process.env["TEST_DATABASE_URL"] = server.url
  process.env["TEST_DATABASE_KIND"] = server.kind
  return server.stop
}
