/**
 * The one way an HTTP test sets up: `httpTest(options)` is vitest's `test` with three file-scoped fixtures, each
 * made the first time a test of the file asks for it and kept for the file's other tests: `server` (a started server
 * on a fresh database, `options` as `startTestServer` takes them; closed after the file), `partner` (a fresh
 * integration with a key, on that server) and `user` (a user of that partner whose KYC is approved).
 *
 * ```ts
 * const it = httpTest({ env: { MOCK_LIFECYCLE_DELAY_MS: "3600000" } })
 * it("…", async ({ partner, user }) => { … })
 * ```
 */
import { test } from "vitest"
import { newPartner } from "./flows.ts"
import { startTestServer, type TestServerOptions } from "./server.ts"

export const httpTest = (options: TestServerOptions = {}) =>
  test
    // vitest reads a fixture's first parameter for the fixtures it uses: an empty pattern says none.
    // eslint-disable-next-line no-empty-pattern
    .extend("server", { scope: "file" }, async ({}, { onCleanup }) => {
      const server = await startTestServer(options)
      onCleanup(() => server.close())
      return server
    })
    .extend("partner", { scope: "file" }, ({ server }) => newPartner(server))
    .extend("user", { scope: "file" }, ({ partner }) => partner.approvedUser())
