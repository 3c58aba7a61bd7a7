/**
 * Optional vitest globalSetup (`test: { globalSetup: ["test/support/globalSetup.ts"] }`).
 *
 * Without TEST_DATABASE_URL but with a Docker engine, starts ONE PostgreSQL
 * container for the whole run and exports its URL as TEST_DATABASE_URL, so each
 * test file gets a fresh database on it instead of a container of its own.
 * Otherwise it does nothing and the per-file picker decides.
 */
import { probeDocker, POSTGRES_IMAGE, startPostgresContainer } from "./docker.ts"

export default async function setup(): Promise<(() => Promise<void>) | undefined> {
  if (process.env["TEST_DATABASE_URL"]) return undefined
  const docker = await probeDocker()
  if (!docker.available) return undefined
  process.stderr.write(`[test-db] starting one ${POSTGRES_IMAGE} container for this run\n`)
  const container = await startPostgresContainer()
  process.env["TEST_DATABASE_URL"] = container.url
  process.env["TEST_DATABASE_KIND"] = "docker"
  return container.stop
}
