import { Effect } from "effect"
import { ok } from "../api.ts"
import { check, checkVersion } from "../check.ts"
import { show } from "../failure.ts"
import { scenario } from "../scenario.ts"

export const healthScenarios = [
  scenario({
    id: "HEALTH-001",
    title:
      "GET /healthz tells status, mode and the interface version (the kit's or a later one of its line), without a key",
    rules: ["R-HEALTH-1"],
    tags: ["health", "read-only"],
    run: (kit) =>
      Effect.gen(function*() {
        const reply = yield* kit.call("healthz")
        const health = yield* ok(reply, "200 Health")
        yield* check(health.mode === kit.mode, "healthz reports the deployment's mode", {
          expected: `mode ${kit.mode} (the mode this run uses)`,
          actual: show(health),
          exchange: reply.exchange
        })
        yield* checkVersion(
          kit,
          "GET /healthz",
          "version",
          health.version,
          "healthz reports a version of the kit's compatibility line",
          reply.exchange
        )
      })
  }),
  scenario({
    id: "HEALTH-002",
    title: "GET /readyz answers ready when the database is reachable",
    rules: ["R-HEALTH-2"],
    tags: ["health", "read-only"],
    run: (kit) => Effect.flatMap(kit.call("readyz"), (reply) => ok(reply, "200 Readiness"))
  })
]
