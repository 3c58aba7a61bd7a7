/**
 * Service-only workloads, which no baseline implements: confirming prepared payouts (one-shot: each payout is
 * confirmed once, so a fixed number of requests) and the whole partner flow of the README's walkthrough (quote,
 * OTP send and verify, keyed create, confirm, read back), run as concurrent flows.
 */
import { randomUUID } from "node:crypto"
import { type LoadRequest, percentile } from "./load.ts"
import { cpuMs } from "./proc.ts"
import { API, approvedCustomer, json, payoutBody, type Service, txHash } from "./service.ts"

const expectStatus = async (response: Response, status: number, what: string) => {
  if (response.status !== status) throw new Error(`${what} answered ${response.status}: ${await response.text()}`)
  return response
}

const createPayout = (service: Service, userAddress: string) =>
  fetch(`${service.baseUrl}${API}/payouts`, {
    method: "POST",
    headers: { ...service.auth, ...json, "idempotency-key": randomUUID() },
    body: payoutBody(userAddress)
  }).then((r) => expectStatus(r, 201, "create")).then((r) => r.json() as Promise<{ payoutId: string }>)

/** `count` prepared payouts to confirm, created through the service 16 at a time. */
export const preparedPayouts = async (service: Service, count: number): Promise<ReadonlyArray<string>> => {
  const userAddress = await approvedCustomer(service)
  const ids: Array<string> = []
  const worker = async () => {
    while (ids.length < count) ids.push((await createPayout(service, userAddress)).payoutId)
  }
  await Promise.all(Array.from({ length: 16 }, worker))
  return ids.slice(0, count)
}

/** Confirms `ids[i]` with a transaction hash no earlier run used. */
export const confirmRequest = (service: Service, ids: ReadonlyArray<string>, offset: number): LoadRequest => ({
  path: `${API}/payouts/${ids[0]}/confirm`,
  method: "POST",
  headers: { ...service.auth, ...json },
  body: (i) => ({ path: `${API}/payouts/${ids[i]}/confirm`, body: JSON.stringify({ txHash: txHash(offset + i) }) })
})

let flowCounter = 0

/** One partner flow, as the README walks it: 6 requests. */
const partnerFlow = async (service: Service) => {
  const api = `${service.baseUrl}${API}`
  const headers = { ...service.auth, ...json }
  await fetch(`${api}/quote?destinationCop=250000`, { headers: service.auth }).then((r) =>
    expectStatus(r, 200, "quote")
  ).then((r) => r.text())
  const userAddress = await approvedCustomer(service)
  const { payoutId } = await createPayout(service, userAddress)
  await fetch(`${api}/payouts/${payoutId}/confirm`, {
    method: "POST",
    headers,
    body: JSON.stringify({ txHash: txHash(1_000_000_000 + ++flowCounter) })
  }).then((r) => expectStatus(r, 200, "confirm")).then((r) => r.text())
  await fetch(`${api}/payouts/${payoutId}`, { headers: service.auth }).then((r) => expectStatus(r, 200, "get")).then((
    r
  ) => r.text())
}

export interface FlowResult {
  readonly flowsPerSecond: number
  readonly p50: number
  readonly p99: number
  readonly cpuMsPerFlow: number
}

/** `count` partner flows, `concurrency` at a time. */
export const runPartnerFlows = async (service: Service, count: number, concurrency: number): Promise<FlowResult> => {
  const durations: Array<number> = []
  let started = 0
  const cpuBefore = cpuMs(service.pid)
  const begin = performance.now()
  const worker = async () => {
    while (started < count) {
      started++
      const at = performance.now()
      await partnerFlow(service)
      durations.push(performance.now() - at)
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  const seconds = (performance.now() - begin) / 1000
  durations.sort((a, b) => a - b)
  return {
    flowsPerSecond: Math.round((count / seconds) * 10) / 10,
    p50: Math.round(percentile(durations, 0.5)),
    p99: Math.round(percentile(durations, 0.99)),
    cpuMsPerFlow: Math.round(((cpuMs(service.pid) - cpuBefore) / count) * 100) / 100
  }
}
