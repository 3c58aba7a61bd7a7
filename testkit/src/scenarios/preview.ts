import { Effect } from "effect"
import { ok, rejected } from "../api.ts"
import { check, checkEqual, checkNamesField } from "../check.ts"
import { approvedUser, createPayout, payoutRequest, uniqueSuffix } from "../fixtures.ts"
import type { Auth } from "../http.ts"
import { type Kit, scenario } from "../scenario.ts"

const previewOf = (
  kit: Kit,
  body: { readonly breBKey: string; readonly accountOwnerName: string },
  auth: Auth = "primary"
) =>
  kit.call("previewDestination", { json: body, auth }).pipe(Effect.flatMap((reply) => ok(reply, "200 with a preview")))

/** A fresh destination: a new alias under the kit's usual holder name. */
const destination = (accountOwnerName = "Conformance Kit") => ({ breBKey: `@prev${uniqueSuffix()}`, accountOwnerName })

/** The refusal of a payout whose `previewId` is not usable: a 400 whose message names `previewId`. */
const refusesPreviewId = (kit: Kit, json: ReturnType<typeof payoutRequest>, why: string) =>
  Effect.gen(function*() {
    const reply = yield* kit.call("createPayout", { json })
    const body = yield* rejected(reply, 400, "none", why)
    yield* checkNamesField("the 400 names previewId", body, "previewId", reply.exchange)
  })

export const previewScenarios = [
  scenario({
    id: "PREVIEW-001",
    title: "a payee preview of a matching holder answers match true, the destination, a previewId and its expiry",
    rules: ["R-PREVIEW-1"],
    tags: ["preview"],
    requires: { mock: true },
    run: (kit) =>
      Effect.gen(function*() {
        const previewed = yield* previewOf(kit, destination())
        yield* check(
          previewed.match && previewed.destinationPreview !== null && Date.parse(previewed.expiresAt) > Date.now(),
          "a matching holder is match true with the destination, valid until a future expiresAt",
          { expected: "match true, a destinationPreview, expiresAt in the future", actual: JSON.stringify(previewed) }
        )
      })
  }),
  scenario({
    id: "PREVIEW-002",
    title: "a payee preview of a name containing `mismatch` answers match false and no destination",
    rules: ["R-PREVIEW-1"],
    tags: ["preview"],
    requires: { mock: true },
    run: (kit) =>
      Effect.gen(function*() {
        const previewed = yield* previewOf(kit, destination("Maria mismatch"))
        yield* check(
          !previewed.match && previewed.destinationPreview === null,
          "a mismatching holder reveals nothing",
          {
            expected: "match false, destinationPreview null",
            actual: JSON.stringify(previewed)
          }
        )
      })
  }),
  scenario({
    id: "PREVIEW-003",
    title:
      "a payout with a previewId reuses the previewed destination; a preview that did not match is destination_mismatch",
    rules: ["R-PREVIEW-2"],
    tags: ["preview", "payout"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const user = yield* approvedUser(kit)
        const matching = destination()
        const previewed = yield* previewOf(kit, matching)
        const payout = yield* createPayout(kit, payoutRequest(user, { ...matching, previewId: previewed.previewId }))
        yield* checkEqual(
          "the payout's destinationPreview is the preview's",
          payout.destinationPreview,
          previewed.destinationPreview
        )
        const mismatching = destination("Maria mismatch")
        const refused = yield* previewOf(kit, mismatching)
        const reply = yield* kit.call("createPayout", {
          json: payoutRequest(user, { ...mismatching, previewId: refused.previewId })
        })
        yield* rejected(reply, 409, "destination_mismatch", "a preview that did not match cannot pay")
      })
  }),
  scenario({
    id: "PREVIEW-004",
    title: "a previewId given with another breBKey or accountOwnerName than previewed, or unknown, is 400 naming it",
    rules: ["R-PREVIEW-3"],
    tags: ["preview", "payout", "errors"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const user = yield* approvedUser(kit)
        const previewed = destination()
        const { previewId } = yield* previewOf(kit, previewed)
        yield* refusesPreviewId(
          kit,
          payoutRequest(user, { ...previewed, breBKey: `@prev${uniqueSuffix()}`, previewId }),
          "a previewId binds the previewed breBKey"
        )
        yield* refusesPreviewId(
          kit,
          payoutRequest(user, { ...previewed, accountOwnerName: "Someone Else", previewId }),
          "a previewId binds the previewed accountOwnerName"
        )
        yield* refusesPreviewId(
          kit,
          payoutRequest(user, { ...previewed, previewId: `pv_unknown${uniqueSuffix()}` }),
          "an unknown previewId is refused"
        )
      })
  }),
  scenario({
    id: "PREVIEW-005",
    title: "another integration's previewId is refused as an unknown one (400 naming previewId)",
    rules: ["R-PREVIEW-3", "R-TENANT-1"],
    tags: ["preview", "isolation"],
    requires: { mock: true, moneyMoving: true, secondKey: true },
    run: (kit) =>
      Effect.gen(function*() {
        const user = yield* approvedUser(kit)
        const previewed = destination()
        const theirs = yield* previewOf(kit, previewed, "second")
        yield* refusesPreviewId(
          kit,
          payoutRequest(user, { ...previewed, previewId: theirs.previewId }),
          "a previewId belongs to the integration that asked for it"
        )
      })
  })
]
