/** The host part of a Host header (`127.0.0.1:8787`, `[::1]:8787`, `api.example.com`), lower case; none if invalid. */
export const hostnameOf = (host: string | undefined): string | undefined => {
  if (host === undefined || host === "" || /[\s/?#@]/.test(host)) return undefined
  return URL.canParse(`http://${host}`) ? new URL(`http://${host}`).hostname : undefined
}

/** Loopback: 127.0.0.0/8, ::1 and localhost, where browsers treat plain http as a secure context. */
export const isLoopback = (hostname: string): boolean =>
  hostname === "localhost" || hostname === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname)

/**
 * The origin a request reached the service at, from its Host header: http on loopback (a developer's machine), https
 * anywhere else (a deployment behind TLS; a browser would not keep the Secure cookie over plain http there anyway).
 */
export const originOfHost = (host: string | undefined): string | undefined => {
  const hostname = hostnameOf(host)
  if (hostname === undefined) return undefined
  return `${isLoopback(hostname) ? "http" : "https"}://${host!.toLowerCase()}`
}
