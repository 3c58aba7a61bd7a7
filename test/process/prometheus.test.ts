/**
 * A real Prometheus scrapes the service started as a process (ADMIN_PORT=0): `promtool check metrics` accepts what
 * /metrics answers (HELP text, `_total` on counters, units), and Prometheus sees the target up and the request counter
 * by route template. The alert rules (ops/prometheus/alerts.yml) pass `promtool check rules` and their unit tests
 * (`promtool test rules`), and the same Prometheus loads them: every group healthy. Skipped, loudly, where Debian's
 * prometheus package is not installed.
 */
import { readFile } from "node:fs/promises"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { acquireTestDatabase, type TestDatabase } from "../support/database.ts"
import { PAYOUTS } from "../support/flows.ts"
import { scrape } from "../support/metrics.ts"
import { type StartedProcess, startServiceProcess } from "../support/process.ts"
import {
  ALERT_RULE_TESTS,
  ALERT_RULES,
  prometheusBinary,
  promtool,
  promtoolBinary,
  promtoolCheckMetrics,
  type RunningPrometheus,
  startPrometheus,
  warnIfNoPrometheus
} from "../support/prometheus.ts"

warnIfNoPrometheus("test/process/prometheus.test.ts")

const PAYOUT_ROUTE = `${PAYOUTS}/:payoutId`

describe.skipIf(prometheusBinary === undefined || promtoolBinary === undefined)("a real Prometheus", () => {
  let database: TestDatabase
  let service: StartedProcess
  let prometheus: RunningPrometheus | undefined
  let metricsUrl: string

  beforeAll(async () => {
    database = await acquireTestDatabase()
    service = await startServiceProcess({ DATABASE_URL: database.url, ADMIN_PORT: "0", LOG_LEVEL: "warn" })
    metricsUrl = await vi.waitFor(() => {
      const url = /metrics: (http:\/\/\S+)/.exec(service.stdout())?.[1]
      if (url === undefined) throw new Error(`no metrics URL in the banner:\n${service.stdout()}`)
      return url
    }, { timeout: 10_000, interval: 50 })
    const key = /(cop_test_pk_[0-9A-Za-z]+)/.exec(service.stdout())?.[1]
    // A payout that does not exist: its id must not become a label.
    const missing = await fetch(`${service.baseUrl}${PAYOUTS}/po_01prometheusmissing000000`, {
      headers: { authorization: `Bearer ${key}` }
    })
    expect(missing.status).toBe(404)
  }, 90_000)

  afterAll(async () => {
    await prometheus?.stop()
    await service?.stop("SIGKILL")
    await database?.release()
  })

  it("the banner names the admin listener, apart from the public port", () => {
    expect(new URL(metricsUrl).port).not.toBe(new URL(service.baseUrl).port)
    expect(new URL(metricsUrl).hostname).toBe("127.0.0.1")
  })

  it("promtool check metrics accepts the /metrics output", async () => {
    // the worker's first sample of the database is in (it runs as the worker starts): all of it, job queue and payouts
    // in flight too (the sampler sets them one query after another; a scrape between them saw only the outbox's)
    const text = await vi.waitFor(async () => {
      const text = await scrape(metricsUrl)
      expect(text).toContain("cop_outbox_pending_deliveries ")
      expect(text).toContain("# TYPE cop_job_queue_depth ")
      expect(text).toContain("# TYPE cop_payouts_stuck ")
      return text
    }, { timeout: 15_000, interval: 100 })
    for (
      const name of [
        "cop_payout_transitions_total",
        "cop_swap_transitions_total",
        "cop_webhook_delivery_attempts_total",
        "cop_provider_calls_total",
        "cop_chain_calls_total",
        "cop_job_runs_total",
        "cop_job_queue_depth",
        "cop_payouts_stuck"
      ]
    ) expect(text).toContain(`# TYPE ${name} `)
    expect(text).toContain(`route="${PAYOUT_ROUTE}"`)
    expect(text).not.toContain("po_01prometheusmissing")
    const checked = await promtoolCheckMetrics(text)
    expect(checked.output).toBe("")
    expect(checked.code).toBe(0)
  })

  it("promtool check rules accepts the alert rules, and their unit tests pass", async () => {
    const checked = await promtool(["check", "rules", ALERT_RULES])
    expect(checked.output).toContain("SUCCESS")
    expect(checked.code, checked.output).toBe(0)
    const tested = await promtool(["test", "rules", ALERT_RULE_TESTS])
    expect(tested.output).toContain("SUCCESS")
    expect(tested.code, tested.output).toBe(0)
  })

  it("Prometheus scrapes the service: the target is up and the request counter has the route template", async () => {
    prometheus = await startPrometheus(new URL(metricsUrl).host, { ruleFiles: [ALERT_RULES] })
    const running = prometheus
    await vi.waitFor(async () => {
      const up = await running.query("up").catch((error: unknown) => {
        throw new Error(`Prometheus not answering yet (${String(error)}):\n${running.output()}`)
      })
      expect(up.map((series) => series.metric["instance"])).toEqual([new URL(metricsUrl).host])
      const value = await running.query("up == 1")
      expect(value.length, `target not up yet:\n${running.output()}`).toBe(1)
    }, { timeout: 60_000, interval: 250 })
    const series = await vi.waitFor(async () => {
      const found = await running.query(`cop_http_requests_total{route="${PAYOUT_ROUTE}"}`)
      expect(found.length).toBeGreaterThan(0)
      return found
    }, { timeout: 30_000, interval: 250 })
    expect(series[0]!.metric).toMatchObject({
      __name__: "cop_http_requests_total",
      route: PAYOUT_ROUTE,
      method: "GET",
      status_class: "4xx",
      job: "cop-integrations"
    })
  }, 120_000)

  it("Prometheus loads the alert rules: every group, every rule evaluated and healthy", async () => {
    const running = prometheus
    expect(running, "Prometheus was started by the test before").toBeDefined()
    const expected = (await readFile(ALERT_RULES, "utf8")).match(/^ {2}- name: (\S+)$/gm)!.map((line) => line.slice(10))
    expect(expected.length).toBeGreaterThanOrEqual(5)
    // The previous test saw the service's series in Prometheus: an evaluation from now on runs over them.
    const since = Date.now()
    const groups = await vi.waitFor(async () => {
      const groups = await running!.ruleGroups()
      expect(groups.map((group) => group.name).sort()).toEqual([...expected].sort())
      for (const group of groups) {
        expect(Date.parse(group.lastEvaluation), group.name).toBeGreaterThan(since)
        // each rule evaluated (every second) without an error
        for (const rule of group.rules) {
          expect({ rule: rule.name, health: rule.health }).toEqual({ rule: rule.name, health: "ok" })
        }
      }
      return groups
    }, { timeout: 30_000, interval: 250 })
    expect(groups.flatMap((group) => group.rules).length).toBeGreaterThanOrEqual(10)
    expect(groups.every((group) => group.file === ALERT_RULES)).toBe(true)
  }, 60_000)
})
