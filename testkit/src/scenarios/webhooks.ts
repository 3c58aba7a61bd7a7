import { Effect } from "effect"
import { rejected } from "../api.ts"
import { uniqueSuffix } from "../fixtures.ts"
import type { Auth } from "../http.ts"
import { type Kit, scenario } from "../scenario.ts"

/** A provider event envelope (R-PROVIDER-1) that would complete a transfer if it were accepted. */
const event = (): string =>
  JSON.stringify({
    event_id: `evt_conformance_${uniqueSuffix()}`,
    event_category: "transfer",
    event_type: "updated.status_transitioned",
    event_object_id: `tr_conformance_${uniqueSuffix()}`,
    event_object: { id: `tr_conformance_${uniqueSuffix()}`, state: "payment_processed" },
    event_created_at: new Date().toISOString()
  })

const randomSignature = (): string => Buffer.from(crypto.getRandomValues(new Uint8Array(256))).toString("base64")

const rejectedWebhook = (kit: Kit, rule: string, signature: string | undefined, auth: Auth = "none") =>
  Effect.flatMap(
    kit.call("provider", {
      body: event(),
      headers: {
        "Content-Type": "application/json",
        ...(signature === undefined ? {} : { "X-Webhook-Signature": signature })
      },
      auth
    }),
    (reply) => rejected(reply, 401, "invalid_webhook_signature", rule)
  )

const TEN_MINUTES_MS = 10 * 60 * 1000

export const webhookScenarios = [
  scenario({
    id: "WEBHOOK-001",
    title: "an unsigned provider callback is 401 invalid_webhook_signature",
    rules: ["R-PROVIDER-1"],
    tags: ["webhooks", "errors", "read-only"],
    run: (kit) => rejectedWebhook(kit, "an unsigned callback is rejected", undefined)
  }),
  scenario({
    id: "WEBHOOK-002",
    title: "a callback with a signature that does not verify is 401 invalid_webhook_signature",
    rules: ["R-PROVIDER-1"],
    tags: ["webhooks", "errors", "read-only"],
    run: (kit) => rejectedWebhook(kit, "a bad signature is rejected", `t=${Date.now()},v0=${randomSignature()}`)
  }),
  scenario({
    id: "WEBHOOK-003",
    title: "a callback signed more than 10 minutes ago is 401 invalid_webhook_signature",
    rules: ["R-PROVIDER-1"],
    tags: ["webhooks", "errors", "read-only"],
    run: (kit) =>
      rejectedWebhook(
        kit,
        "a stale signature is rejected",
        `t=${Date.now() - TEN_MINUTES_MS - 60_000},v0=${randomSignature()}`
      )
  }),
  scenario({
    id: "WEBHOOK-004",
    title: "a malformed X-Webhook-Signature header is 401 invalid_webhook_signature",
    rules: ["R-PROVIDER-1"],
    tags: ["webhooks", "errors", "read-only"],
    run: (kit) => rejectedWebhook(kit, "a malformed signature header is rejected", "sha256=deadbeef")
  }),
  scenario({
    id: "WEBHOOK-005",
    title: "a partner API key does not authenticate a provider callback",
    rules: ["R-PROVIDER-1"],
    tags: ["webhooks", "auth", "read-only"],
    run: (kit) => rejectedWebhook(kit, "a partner key is no webhook signature", undefined, "primary")
  })
]
