/**
 * A typed client's transport failure says why the request got no answer (CONTRACT-002's message). It once read only
 * "Transport error (GET …/payouts)", which left a failed run under load with nothing to go on.
 */
import { Effect } from "effect"
import { createServer } from "node:net"
import { expect, it } from "vitest"
import { describeError } from "../src/scenarios/contract.ts"
import { makeTypedClient } from "../src/typedClient.ts"

/** A loopback port nothing listens on: taken, then given back. */
const closedPort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })

it("a typed client's transport failure names its cause, down to the socket's", async () => {
  const baseUrl = `http://127.0.0.1:${await closedPort()}`
  const failed = await Effect.runPromise(
    Effect.flip(
      Effect.flatMap(
        makeTypedClient({ baseUrl, apiKey: "cop_test_pk_unused", fetch: globalThis.fetch }),
        (client) => client.breb.listPayouts({ query: { limit: 5 } })
      )
    )
  )
  const message = describeError(failed)
  expect(message).toContain("Transport error")
  expect(message).toContain("fetch failed")
  expect(message).toContain("ECONNREFUSED")
})
