/**
 * Statements per request, counted on the wire: the service runs through the protocol proxy (pgwire.ts). First an
 * idle replica at the default intervals (statements per second); then, on a replica without the background loops
 * (WORKER_ENABLED=false), each endpoint is called N times one after another and the proxy's counts are divided by N.
 */
import { type WireProxy, startWireProxy } from "./pgwire.ts"
import { API, approvedCustomer, json, payoutBody, startService, stopService, txHash } from "./service.ts"

/** An HTTP-only replica: what is counted is the requests' own statements. */
const QUIET = { WORKER_ENABLED: "false" }
const N = 20

export interface StatementCount {
  readonly endpoint: string
  readonly executed: number
  readonly parsed: number
  readonly texts: ReadonlyArray<string>
}

const measure = async (
  proxy: WireProxy,
  endpoint: string,
  call: (i: number) => Promise<Response>
): Promise<StatementCount> => {
  const check = async (response: Response) => {
    const text = await response.text()
    if (response.status >= 300) throw new Error(`${endpoint} answered ${response.status}: ${text}`)
  }
  await check(await call(-1)) // warm: caches and prepared statements as under load
  proxy.reset()
  let texts: ReadonlyArray<string> = []
  for (let i = 0; i < N; i++) {
    const before = proxy.counts.texts.length
    await check(await call(i))
    if (i === N - 1) texts = proxy.counts.texts.slice(before)
  }
  return { endpoint, executed: proxy.counts.executed / N, parsed: proxy.counts.parsed / N, texts }
}

/** Where the endpoints are called: the service, or a baseline answering the same paths (without healthz and replays). */
interface Target {
  readonly baseUrl: string
  readonly auth: Record<string, string>
  readonly userAddress: string
  readonly replays: boolean
}

let calls = 0

/** Each endpoint's statements on the wire (`texts`: those of its last call). */
export const perEndpoint = async (target: Target, proxy: WireProxy): Promise<ReadonlyArray<StatementCount>> => {
  const api = `${target.baseUrl}${API}`
  // Keys and hashes of this call's own (the service refuses a transaction hash another call used).
  const call = ++calls
  const auth = target.auth
  const created: Array<string> = []
  const create = (i: number) =>
    fetch(`${api}/payouts`, {
      method: "POST",
      headers: { ...auth, ...json, "idempotency-key": `count-${process.pid}-${call}-${i}` },
      body: payoutBody(target.userAddress)
    }).then(async (response) => {
      const clone = response.clone()
      if (response.status === 201) created.push(((await clone.json()) as { payoutId: string }).payoutId)
      return response
    })
  const rows = [
    ...(target.replays ? [await measure(proxy, "GET /healthz", () => fetch(`${target.baseUrl}/healthz`))] : []),
    await measure(
      proxy,
      "GET quote (cached rate)",
      () => fetch(`${api}/quote?destinationCop=250000`, { headers: auth })
    ),
    await measure(proxy, "POST payouts (Idempotency-Key)", create),
    ...(target.replays
      ? [
        await measure(proxy, "POST payouts (replayed key)", () => create(0))
      ]
      : []),
    await measure(proxy, "POST payouts/{id}/confirm", (i) =>
      fetch(`${api}/payouts/${created[i + 1]}/confirm`, {
        method: "POST",
        headers: { ...auth, ...json },
        body: JSON.stringify({ txHash: txHash(call * 1000 + i + 1) })
      })),
    await measure(proxy, "GET payouts/{id}", () => fetch(`${api}/payouts/${created[0]}`, { headers: auth })),
    await measure(proxy, "GET payouts?limit=50", () => fetch(`${api}/payouts?limit=50`, { headers: auth }))
  ]
  return rows
}

/** Statements per second of an idle replica, and the test key its start printed (a fresh database's demo key). */
const idlePerSecond = async (databaseUrl: string, seconds: number) => {
  const proxy = await startWireProxy(databaseUrl)
  const service = await startService({ DATABASE_URL: proxy.url, LOG_LEVEL: "warn" })
  try {
    await new Promise((resolve) => setTimeout(resolve, 1000)) // past start-up
    proxy.reset()
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000))
    return { perSecond: proxy.counts.executed / seconds, key: service.key }
  } finally {
    await stopService(service.child)
    await proxy.close()
  }
}

export const countStatements = async (databaseUrl: string, options: { readonly showSql: boolean }) => {
  // First, while no job or delivery is pending: what an idle replica costs.
  const idle = await idlePerSecond(databaseUrl, 5)
  const proxy = await startWireProxy(databaseUrl)
  const started = await startService({ DATABASE_URL: proxy.url, LOG_LEVEL: "warn", ...QUIET }, false)
  const service = { ...started, key: idle.key, auth: { authorization: `Bearer ${idle.key}` } }
  let rows: ReadonlyArray<StatementCount>
  try {
    rows = await perEndpoint(
      { ...service, userAddress: await approvedCustomer(service), replays: true },
      proxy
    )
  } finally {
    await stopService(service.child)
    await proxy.close()
  }
  console.log(`\n## statements per request, counted on the wire (mean of ${N} sequential requests after one warm-up)`)
  console.table(
    rows.map((row) => ({
      endpoint: row.endpoint,
      "statements run": row.executed,
      "of them parsed (not prepared)": row.parsed
    }))
  )
  console.log(`idle replica (default intervals): ${idle.perSecond.toFixed(1)} statements per second`)
  if (options.showSql) {
    for (const row of rows) {
      console.log(
        `\n### ${row.endpoint}\n${row.texts.map((t) => `  ${t.replace(/\s+/g, " ").slice(0, 200)}`).join("\n")}`
      )
    }
  }
  return { rows, idlePerSecond: idle.perSecond, key: idle.key }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const url = process.env["DATABASE_URL"]
  if (url === undefined || url === "") throw new Error("set DATABASE_URL to an empty PostgreSQL database")
  await countStatements(url, { showSql: true })
}

/** Statements a server runs now and then, not for the request in hand: the request-log flush, the key and rate reads. */
const OCCASIONAL = /^(INSERT INTO request_logs|WITH found AS|SELECT sell_rate, mid_rate, fetched_at FROM rate_cache)/

const normalized = (texts: ReadonlyArray<string>) =>
  texts.map((text) => text.replace(/\s+/g, " ").trim()).filter((text) => !OCCASIONAL.test(text))

/**
 * Where a baseline's statements differ from the service's, endpoint by endpoint (each endpoint's last call, in order,
 * whitespace aside); empty when it sends the service's statements word for word.
 */
export const statementDifferences = (
  service: ReadonlyArray<StatementCount>,
  baseline: ReadonlyArray<StatementCount>
): ReadonlyArray<string> =>
  baseline.flatMap((theirs) => {
    const ours = service.find((row) => row.endpoint === theirs.endpoint)
    if (ours === undefined) return [`${theirs.endpoint}: the service was not counted`]
    const [a, b] = [normalized(ours.texts), normalized(theirs.texts)]
    const differences: Array<string> = []
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      if (a[i] !== b[i]) {
        differences.push(
          `${theirs.endpoint}, statement ${i + 1}: service ${a[i]?.slice(0, 90) ?? "(none)"} | baseline ${
            b[i]?.slice(0, 90) ?? "(none)"
          }`
        )
      }
    }
    return differences
  })
