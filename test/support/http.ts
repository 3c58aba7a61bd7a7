/**
 * Small helpers for the HTTP tests: raw `fetch` calls with a key, wire-exact ErrorBody checks, wallet
 * addresses, and the KYC → payout → confirm flow a partner runs before most payout scenarios.
 */
import { randomBytes } from "node:crypto"
import { Cause, Exit, Option } from "effect"
import { getAddress } from "viem"
import { expect } from "vitest"
import type { TestServer } from "./server.ts"

export const BREB = "/api/integrations/breb"

export interface Call {
  readonly method?: string
  readonly apiKey?: string
  /** Serialised with JSON.stringify (and content-type application/json) unless a string is given. */
  readonly body?: unknown
  readonly headers?: Record<string, string>
}

export interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly body: any
  readonly text: string
}

/** One HTTP request against `server`; the body is parsed as JSON when it is JSON. */
export const call = async (server: Pick<TestServer, "baseUrl">, path: string, options: Call = {}): Promise<Answer> => {
  const headers: Record<string, string> = { ...options.headers }
  if (options.apiKey !== undefined) headers["authorization"] = `Bearer ${options.apiKey}`
  let body: string | undefined
  if (options.body !== undefined) {
    body = typeof options.body === "string" ? options.body : JSON.stringify(options.body)
    headers["content-type"] ??= "application/json"
  }
  const response = await fetch(`${server.baseUrl}${path}`, {
    method: options.method ?? (body === undefined ? "GET" : "POST"),
    headers,
    ...(body === undefined ? {} : { body })
  })
  const text = await response.text()
  let parsed: unknown = undefined
  try {
    parsed = JSON.parse(text)
  } catch {
    // not JSON: callers that expect JSON fail on `body`
  }
  return { status: response.status, headers: response.headers, body: parsed, text }
}

/**
 * Asserts an ErrorBody on the wire: the status, a JSON body with exactly `error` (non-empty) and, when a
 * code is expected, exactly `errorCode` besides it.
 */
export const expectErrorBody = (answer: Answer, status: number, errorCode?: string) => {
  expect({ status: answer.status, body: answer.body }).toMatchObject({ status })
  expect(answer.headers.get("content-type") ?? "").toMatch(/^application\/json/)
  expect(typeof answer.body).toBe("object")
  expect(Object.keys(answer.body ?? {}).sort()).toEqual(errorCode === undefined ? ["error"] : ["error", "errorCode"])
  expect(typeof answer.body.error).toBe("string")
  expect(answer.body.error.length).toBeGreaterThan(0)
  if (errorCode !== undefined) expect(answer.body.errorCode).toBe(errorCode)
  return answer.body as { readonly error: string; readonly errorCode?: string }
}

/** A fresh EIP-55 checksummed address. */
export const newAddress = (): `0x${string}` => getAddress(`0x${randomBytes(20).toString("hex")}`)

/** The same address with the case of one letter flipped: right hex, wrong EIP-55 checksum. */
export const withBadChecksum = (address: string): string => {
  const index = [...address].findIndex((char, i) => i > 1 && /[a-fA-F]/.test(char))
  if (index < 0) throw new Error(`address ${address} has no letters to flip`)
  const char = address[index]!
  const flipped = char === char.toUpperCase() ? char.toLowerCase() : char.toUpperCase()
  return `${address.slice(0, index)}${flipped}${address.slice(index + 1)}`
}

export const newTxHash = (): `0x${string}` => `0x${randomBytes(32).toString("hex")}`

export const payoutBody = (userAddress: string, overrides: Record<string, string> = {}) => ({
  userAddress,
  destinationCop: "250000",
  breBKey: "@ana2024",
  accountOwnerName: "Ana Gomez",
  ...overrides
})

/** kyc/otp/send then kyc/otp/verify with the mock debug code: the customer ends up approved. */
export const approveKyc = async (server: Pick<TestServer, "baseUrl">, apiKey: string, userAddress: string) => {
  const sent = await call(server, `${BREB}/kyc/otp/send`, { apiKey, body: { email: "ana@example.com", userAddress } })
  expect(sent.status, sent.text).toBe(200)
  const verified = await call(server, `${BREB}/kyc/otp/verify`, {
    apiKey,
    body: { userAddress, code: sent.body.debugCode }
  })
  expect(verified.status, verified.text).toBe(200)
  expect(verified.body.kycStatus).toBe("approved")
  return { sent, verified }
}

/** An approved customer and a payout for them, awaiting deposit. */
export const createPayout = async (
  server: Pick<TestServer, "baseUrl">,
  apiKey: string,
  overrides: Record<string, string> = {}
) => {
  const userAddress = newAddress()
  await approveKyc(server, apiKey, userAddress)
  const created = await call(server, `${BREB}/payouts`, { apiKey, body: payoutBody(userAddress, overrides) })
  expect(created.status, created.text).toBe(201)
  return created.body as { readonly payoutId: string; readonly status: string; readonly [key: string]: unknown }
}

/** A payout confirmed with a fresh txHash. */
export const createConfirmedPayout = async (server: Pick<TestServer, "baseUrl">, apiKey: string) => {
  const payout = await createPayout(server, apiKey)
  const confirmed = await call(server, `${BREB}/payouts/${payout.payoutId}/confirm`, {
    apiKey,
    body: { txHash: newTxHash() }
  })
  expect(confirmed.status, confirmed.text).toBe(200)
  return confirmed.body as { readonly payoutId: string; readonly status: string; readonly [key: string]: unknown }
}

/** The typed failure of a typed-client call, if it failed with one. */
export const failureOf = <A, E>(exit: Exit.Exit<A, E>): E | undefined =>
  Exit.isFailure(exit) ? Option.getOrUndefined(Cause.findErrorOption(exit.cause)) : undefined
