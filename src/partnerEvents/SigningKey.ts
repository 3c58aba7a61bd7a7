import { createPrivateKey, generateKeyPairSync, type KeyObject, sign } from "node:crypto"
import { Context, Effect, Layer, Redacted, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"

/** Standard Webhooks' prefixes of an asymmetric key pair's text forms. */
const PUBLIC_PREFIX = "whpk_"

const KeyRow = Schema.Struct({ public_key: Schema.String, private_key: Schema.RedactedFromValue(Schema.String) })

/** A new ed25519 pair: the public key as `whpk_` + base64 of its 32 raw bytes, the private key as base64 PKCS#8. */
const newKeyPair = () => {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519")
  const raw = publicKey.export({ format: "der", type: "spki" }).subarray(-32)
  return {
    public_key: `${PUBLIC_PREFIX}${raw.toString("base64")}`,
    private_key: privateKey.export({ format: "der", type: "pkcs8" }).toString("base64")
  }
}

export interface SigningKey {
  /** `whpk_` + base64 of the raw 32-byte ed25519 public key. */
  readonly publicKey: string
  /** `v1a,<base64 ed25519 signature of signed>`. */
  readonly signV1a: (signed: string) => string
}

/**
 * The deployment's webhook signing key (Standard Webhooks `v1a`, ed25519): the first replica to start makes it, every
 * replica reads the same row. The public key is published (`GET webhook-signing-key`); the private key never leaves
 * the service.
 */
export class WebhookSigningKey extends Context.Service<WebhookSigningKey>()("WebhookSigningKey", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const read = SqlSchema.findOne({
      Request: Schema.Void,
      Result: KeyRow,
      execute: () => sql`SELECT public_key, private_key FROM webhook_signing_keys WHERE id = 'current'`
    })
    // Two statements: the SELECT's snapshot is taken after the INSERT, so it sees the row another replica committed.
    const load = Effect.gen(function*() {
      const made = newKeyPair()
      yield* sql`INSERT INTO webhook_signing_keys (id, public_key, private_key)
                 VALUES ('current', ${made.public_key}, ${made.private_key}) ON CONFLICT (id) DO NOTHING`
      const row = yield* read(undefined)
      const privateKey: KeyObject = createPrivateKey({
        key: Buffer.from(Redacted.value(row.private_key), "base64"),
        format: "der",
        type: "pkcs8"
      })
      const key: SigningKey = {
        publicKey: row.public_key,
        signV1a: (signed) => `v1a,${sign(null, Buffer.from(signed), privateKey).toString("base64")}`
      }
      loaded = key
      return key
    })
    // Read on first use and kept (it never changes); a failed read is tried again next time.
    let loaded: SigningKey | undefined
    return {
      current: Effect.suspend(() => (loaded === undefined ? load : Effect.succeed(loaded))).pipe(
        Effect.withSpan("WebhookSigningKey.current"),
        // a database that does not answer is a defect here, as in the repositories (503 on a request)
        Effect.orDie
      )
    } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
