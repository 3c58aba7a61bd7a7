/**
 * API key administration against DATABASE_URL (or the embedded database when unset):
 *   npm run -s keys -- issue <integration-name>   prints the new key as the last line of stdout
 *   npm run -s keys -- list
 *   npm run -s keys -- revoke <key-id>
 * The key kind follows APP_MODE (mock → cop_test_pk_…, live → cop_live_pk_…).
 */
import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer, Logger, LogLevel, Option } from "effect"
import { keyKindForMode } from "../src/auth/ApiKey.ts"
import { ApiKeyRepo } from "../src/auth/ApiKeyRepo.ts"
import { databaseLayer } from "../src/App.ts"
import { AppConfigShape } from "../src/Config.ts"
import { IntegrationRepo } from "../src/integrations/IntegrationRepo.ts"

const usage = "usage: keys issue <integration-name> | keys list | keys revoke <key-id>"

const fail = (message: string) => Effect.zipRight(Console.error(message), Effect.sync(() => process.exit(2)))

const command = (args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const config = yield* AppConfigShape
    const [verb, argument] = args
    const keys = yield* ApiKeyRepo
    switch (verb) {
      case "issue": {
        if (argument === undefined || argument.trim() === "") return yield* fail(usage)
        const integration = yield* Effect.flatMap(IntegrationRepo, (repo) => repo.ensure(argument.trim()))
        const issued = yield* keys.issue(integration.id, keyKindForMode(config.mode))
        yield* Console.log(`integration ${integration.name} (${integration.id}), key id ${issued.id}; shown once:`)
        yield* Console.log(issued.key)
        return
      }
      case "list": {
        for (const key of yield* keys.list) {
          const state = key.revoked_at === null ? "active" : `revoked ${key.revoked_at.toISOString()}`
          yield* Console.log(
            `${key.id}  ${key.integration_name}  cop_${key.kind}_pk_…${key.last4}  ${key.created_at.toISOString()}  ${state}`
          )
        }
        return
      }
      case "revoke": {
        if (argument === undefined) return yield* fail(usage)
        const revoked = yield* keys.revoke(argument)
        return yield* Option.match(revoked, {
          onNone: () => fail(`no active key ${argument}`),
          onSome: () => Console.log(`revoked ${argument}`)
        })
      }
      default:
        return yield* fail(usage)
    }
  })

const program = Effect.gen(function*() {
  const config = yield* AppConfigShape
  const services = Layer.mergeAll(ApiKeyRepo.Default, IntegrationRepo.Default).pipe(
    Layer.provideMerge(databaseLayer(config))
  )
  yield* Effect.provide(command(process.argv.slice(2)), services)
})

NodeRuntime.runMain(program.pipe(Effect.provide(Logger.minimumLogLevel(LogLevel.Warning))), { disablePrettyLogger: true })
