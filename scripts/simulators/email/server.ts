/**
 * startEmailCapture: a local e-mail capture server speaking the Resend subset the service's MailerHttp uses
 * (`POST /emails` with `Authorization: Bearer <key>`, JSON `{ from, to, subject, text | html }`, answered
 * `{ id }`), listening on 127.0.0.1 only. Nothing is delivered anywhere: each accepted message is kept in
 * memory and can be read back over `/__mail/...` (no auth) or, in-process, through `messages()` / `waitFor()`.
 */
import { randomUUID } from "node:crypto"
import { EventEmitter } from "node:events"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

export const DEFAULT_API_KEY = "re_test_capture"
/** Largest accepted request body; a larger one is answered 413. */
export const MAX_BODY_BYTES = 256 * 1024
/** Resend's own limit on recipients per message. */
const MAX_RECIPIENTS = 50

export interface CapturedEmail {
  /** `em_<uuid>`, the id answered to the sender. */
  readonly id: string
  readonly from: string
  /** The recipients as sent (a single string `to` becomes a one-element list). */
  readonly to: ReadonlyArray<string>
  readonly subject: string
  readonly text: string | null
  readonly html: string | null
  /** ISO-8601 time the message was accepted. */
  readonly receivedAt: string
}

export interface EmailCaptureOptions {
  /** 0 (default) picks a free port. */
  readonly port?: number
  /** The bearer key `POST /emails` must carry; default "re_test_capture". */
  readonly apiKey?: string
  readonly log?: (line: string) => void
}

export interface EmailCapture {
  readonly url: string
  readonly port: number
  readonly apiKey: string
  /** Every captured message, oldest first (a snapshot). */
  readonly messages: () => ReadonlyArray<CapturedEmail>
  /**
   * The newest message already captured that satisfies `predicate`, else the first one to arrive after the
   * call; rejects after `timeoutMs` (default 5000) or when the server closes. Driven by the arrival event,
   * never by polling.
   */
  readonly waitFor: (predicate: (message: CapturedEmail) => boolean, timeoutMs?: number) => Promise<CapturedEmail>
  readonly clear: () => void
  readonly close: () => Promise<void>
}

/** The bare address of `a@b.c` or `Name <a@b.c>`, lower-cased; undefined when it is neither. */
export const bareAddress = (value: string): string | undefined => {
  const named = /^[^<>]*<([^<>\s]+)>\s*$/.exec(value.trim())
  const candidate = named?.[1] ?? value.trim()
  return /^[^\s@<>",;]+@[^\s@<>",;]+\.[^\s@<>",;]+$/.test(candidate) ? candidate.toLowerCase() : undefined
}

/** Whether `message` was sent to `address` (compared as bare, case-insensitive addresses). */
export const isAddressedTo = (message: CapturedEmail, address: string): boolean => {
  const wanted = bareAddress(address) ?? address.trim().toLowerCase()
  return message.to.some((recipient) => bareAddress(recipient) === wanted)
}

// ---------------------------------------------------------------------------------------------------------
// HTTP plumbing. Errors follow Resend's shape `{ statusCode, name, message }`, plus `field` on validation.

const sendJson = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  if (res.headersSent || res.destroyed) return
  const text = JSON.stringify(body)
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers })
  res.end(text)
}

const sendError = (
  res: ServerResponse,
  status: number,
  name: string,
  message: string,
  extra: Record<string, unknown> = {}
) => sendJson(res, status, { statusCode: status, name, message, ...extra })

type Body = { readonly ok: true; readonly text: string } | { readonly ok: false }

/**
 * The request body, or `{ ok: false }` as soon as it is known to be over MAX_BODY_BYTES (declared or read so
 * far). The rest of a body that is too large is read and dropped, so the 413 reaches a client still sending
 * and the connection stays usable.
 */
const readBody = (req: IncomingMessage): Promise<Body> =>
  new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"])
    if (Number.isFinite(declared) && declared > MAX_BODY_BYTES) {
      req.resume()
      return resolve({ ok: false })
    }
    const chunks: Array<Buffer> = []
    let size = 0
    let settled = false
    req.on("data", (chunk: Buffer) => {
      if (settled) return
      size += chunk.length
      if (size > MAX_BODY_BYTES) {
        settled = true
        chunks.length = 0
        return resolve({ ok: false })
      }
      chunks.push(chunk)
    })
    req.on("end", () => {
      if (settled) return
      settled = true
      resolve({ ok: true, text: Buffer.concat(chunks).toString("utf8") })
    })
    req.on("error", (cause) => {
      if (settled) return
      settled = true
      reject(cause)
    })
  })

// ---------------------------------------------------------------------------------------------------------
// POST /emails validation

type Validation =
  | { readonly ok: true; readonly value: Omit<CapturedEmail, "id" | "receivedAt"> }
  | { readonly ok: false; readonly field: string; readonly message: string }

const invalid = (field: string, message: string): Validation => ({ ok: false, field, message })

const validateEmail = (body: unknown): Validation => {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return invalid("body", "The body must be a JSON object.")
  }
  const input = body as Record<string, unknown>
  const present = (name: string) => input[name] !== undefined && input[name] !== null

  if (!present("from")) return invalid("from", "Missing `from` field.")
  if (typeof input.from !== "string" || bareAddress(input.from) === undefined) {
    return invalid("from", "Invalid `from` field. Use `email@example.com` or `Name <email@example.com>`.")
  }

  if (!present("to")) return invalid("to", "Missing `to` field.")
  const to = typeof input.to === "string" ? [input.to] : input.to
  if (!Array.isArray(to) || to.length === 0) {
    return invalid("to", "Invalid `to` field. Use an address or a non-empty array of addresses.")
  }
  if (to.length > MAX_RECIPIENTS) return invalid("to", `Invalid \`to\` field. At most ${MAX_RECIPIENTS} recipients.`)
  for (const recipient of to) {
    if (typeof recipient !== "string" || bareAddress(recipient) === undefined) {
      return invalid("to", `Invalid \`to\` field: ${JSON.stringify(recipient)} is not an e-mail address.`)
    }
  }

  if (!present("subject")) return invalid("subject", "Missing `subject` field.")
  if (typeof input.subject !== "string") return invalid("subject", "Invalid `subject` field. It must be a string.")

  if (!present("text") && !present("html")) return invalid("text", "Missing `text` or `html` field.")
  for (const name of ["text", "html"] as const) {
    if (present(name) && typeof input[name] !== "string") {
      return invalid(name, `Invalid \`${name}\` field. It must be a string.`)
    }
  }

  return {
    ok: true,
    value: {
      from: input.from,
      to: to as ReadonlyArray<string>,
      subject: input.subject,
      text: present("text") ? (input.text as string) : null,
      html: present("html") ? (input.html as string) : null
    }
  }
}

// ---------------------------------------------------------------------------------------------------------

interface Waiter {
  readonly reject: (cause: Error) => void
}

export const startEmailCapture = async (options: EmailCaptureOptions = {}): Promise<EmailCapture> => {
  const log = options.log ?? (() => {})
  const apiKey = options.apiKey ?? DEFAULT_API_KEY
  const stored: Array<CapturedEmail> = []
  const arrivals = new EventEmitter()
  arrivals.setMaxListeners(0)
  const waiters = new Set<Waiter>()

  const capture = (value: Omit<CapturedEmail, "id" | "receivedAt">): CapturedEmail => {
    const message: CapturedEmail = Object.freeze({
      id: `em_${randomUUID()}`,
      ...value,
      to: Object.freeze([...value.to]),
      receivedAt: new Date().toISOString()
    })
    stored.push(message)
    log(`captured ${message.id} from ${message.from} to ${message.to.join(", ")}: ${JSON.stringify(message.subject)}`)
    arrivals.emit("message", message)
    return message
  }

  const filtered = (url: URL): ReadonlyArray<CapturedEmail> => {
    const to = url.searchParams.get("to")
    return to === null || to.trim() === "" ? [...stored] : stored.filter((message) => isAddressedTo(message, to))
  }

  const postEmail = async (req: IncomingMessage, res: ServerResponse) => {
    // The key is checked before the body is looked at, like the real API.
    const authorization = req.headers.authorization
    const presented = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "")?.[1]
    if (presented === undefined) {
      req.resume()
      return sendError(
        res,
        401,
        "missing_api_key",
        "Missing API key in the authorization header. Use `Authorization: Bearer <key>`."
      )
    }
    if (presented !== apiKey) {
      req.resume()
      return sendError(res, 401, "invalid_api_key", "API key is invalid.")
    }
    const body = await readBody(req)
    if (!body.ok) return sendError(res, 413, "payload_too_large", `The request body is over ${MAX_BODY_BYTES} bytes.`)
    let parsed: unknown
    try {
      parsed = JSON.parse(body.text)
    } catch {
      return sendError(res, 400, "invalid_json", "The body is not valid JSON.", { field: "body" })
    }
    const checked = validateEmail(parsed)
    if (!checked.ok) return sendError(res, 400, "validation_error", checked.message, { field: checked.field })
    const message = capture(checked.value)
    sendJson(res, 200, { id: message.id })
  }

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1")
    const path = url.pathname.replace(/\/+$/, "") || "/"
    const method = req.method ?? "GET"
    if (method === "POST" && path === "/emails") return postEmail(req, res)
    req.resume()
    if (method === "GET" && path === "/__mail/messages") return sendJson(res, 200, { data: filtered(url) })
    if (method === "DELETE" && path === "/__mail/messages") {
      const count = stored.length
      stored.length = 0
      return sendJson(res, 200, { deleted: count })
    }
    if (method === "GET" && path === "/__mail/messages/latest") {
      const latest = filtered(url).at(-1)
      const to = url.searchParams.get("to")
      return latest === undefined
        ? sendError(res, 404, "not_found", `No message captured${to ? ` to ${to}` : ""}.`)
        : sendJson(res, 200, latest)
    }
    sendError(res, 404, "not_found", `No route for ${method} ${url.pathname}.`)
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((cause: unknown) => {
      log(`request ${req.method} ${req.url} failed: ${cause instanceof Error ? cause.stack : String(cause)}`)
      sendError(res, 500, "internal_server_error", "capture server error")
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port ?? 0, "127.0.0.1", () => {
      server.off("error", reject)
      resolve()
    })
  })
  const port = (server.address() as AddressInfo).port
  const url = `http://127.0.0.1:${port}`

  const waitFor = (predicate: (message: CapturedEmail) => boolean, timeoutMs = 5000): Promise<CapturedEmail> =>
    new Promise<CapturedEmail>((resolve, reject) => {
      let existing: CapturedEmail | undefined
      try {
        for (let index = stored.length - 1; index >= 0 && existing === undefined; index--) {
          if (predicate(stored[index]!)) existing = stored[index]
        }
      } catch (cause) {
        return reject(cause)
      }
      if (existing !== undefined) return resolve(existing)
      // Registered synchronously right after the check: no message can arrive in between (single thread).
      const onMessage = (message: CapturedEmail) => {
        let matched: boolean
        try {
          matched = predicate(message)
        } catch (cause) {
          finish()
          return reject(cause)
        }
        if (matched) {
          finish()
          resolve(message)
        }
      }
      const waiter: Waiter = {
        reject: (cause) => {
          finish()
          reject(cause)
        }
      }
      const timer = setTimeout(
        () =>
          waiter.reject(new Error(`no matching e-mail captured within ${timeoutMs} ms (${stored.length} captured)`)),
        timeoutMs
      )
      const finish = () => {
        clearTimeout(timer)
        arrivals.off("message", onMessage)
        waiters.delete(waiter)
      }
      arrivals.on("message", onMessage)
      waiters.add(waiter)
    })

  let closed: Promise<void> | undefined
  const close = () => {
    closed ??= (async () => {
      for (const waiter of [...waiters]) waiter.reject(new Error("e-mail capture server closed"))
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    })()
    return closed
  }

  return {
    url,
    port,
    apiKey,
    messages: () => [...stored],
    waitFor,
    clear: () => {
      stored.length = 0
    },
    close
  }
}
