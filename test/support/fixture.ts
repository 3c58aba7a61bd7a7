/**
 * The one way an HTTP test sets up: `httpTest(options)` is vitest's `test` with file-scoped fixtures, each made the
 * first time a test (or a hook) of the file asks for it and kept for the file's other tests: `server` (a started
 * server on a fresh database, `options` as `startTestServer` takes them; closed after the file), `partner` (a fresh
 * integration with a key, on that server), `user` (a user of that partner whose KYC is approved) and `replica` (a
 * second server on `server`'s database with the same options: two replicas of one deployment; closed before it).
 *
 * Each call of `httpTest` is a fixture set of its own: a describe that needs a server with other options calls it
 * again, and its tests get a server (and partner, user) of their own, beside the file's.
 *
 * `options` may be a function, called when the server starts (after the file's `beforeAll` hooks): for options
 * that name something the file starts first, such as the port of a stand-in it runs.
 *
 * ```ts
 * const it = httpTest({ env: { MOCK_LIFECYCLE_DELAY_MS: "3600000" } })
 * it("…", async ({ partner, user }) => { … })
 * ```
 */
import { test } from "vitest"
import { newPartner } from "./flows.ts"
import { startTestServer, type TestServerOptions } from "./server.ts"

export const httpTest = (
  options: TestServerOptions | (() => TestServerOptions | Promise<TestServerOptions>) = {}
) => {
  // The options `server` started with, for its replica.
  let resolved: TestServerOptions = {}
  return test
    // vitest reads a fixture's first parameter for the fixtures it uses: an empty pattern says none.
    // eslint-disable-next-line no-empty-pattern
    .extend("server", { scope: "file" }, async ({}, { onCleanup }) => {
      resolved = typeof options === "function" ? await options() : options
      const server = await startTestServer(resolved)
      onCleanup(() => server.close())
      return server
    })
    .extend("partner", { scope: "file" }, ({ server }) => newPartner(server))
    .extend("user", { scope: "file" }, ({ partner }) => partner.approvedUser())
    // Set up after `server`, so torn down before it (vitest tears a file's fixtures down in reverse order).
    .extend("replica", { scope: "file" }, async ({ server }, { onCleanup }) => {
      const replica = await startTestServer({ ...resolved, database: server.database })
      onCleanup(() => replica.close())
      return replica
    })
}
