/**
 * Debian's PgBouncer (`apt-get install pgbouncer`), started in front of one database in transaction pooling mode, as
 * managed PostgreSQL offerings run it: on a free loopback port, clients trusted, every server connection logging in
 * as the database URL's user. PgBouncer refuses to run as root; as root it is started with `-u postgres`.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import { once } from "node:events"
import { existsSync } from "node:fs"
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises"
import { connect, createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"

export const pgbouncerBinary: string | undefined = [
  process.env["PGBOUNCER_BIN"],
  "/usr/sbin/pgbouncer",
  "/usr/bin/pgbouncer"
].find((path): path is string => path !== undefined && path !== "" && existsSync(path))

export const warnIfNoPgbouncer = (testFile: string) => {
  if (pgbouncerBinary === undefined) {
    console.warn(
      `\n!!! ${testFile} SKIPPED: no pgbouncer binary (apt-get install pgbouncer, or set PGBOUNCER_BIN); the service was NOT run behind PgBouncer !!!\n`
    )
  }
}

export interface Pgbouncer {
  /** The database URL through PgBouncer. */
  readonly url: string
  readonly output: () => string
  readonly stop: () => Promise<void>
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer().once("error", reject).listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0))
    })
  })

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, "127.0.0.1")
    socket.once("connect", () => {
      socket.destroy()
      resolve(true)
    })
    socket.once("error", () => resolve(false))
  })

/** A value in pgbouncer.ini's connection strings and auth file: quoted, its quotes doubled. */
const quoted = (value: string, quote: string) => `${quote}${value.replaceAll(quote, quote + quote)}${quote}`

const iniFor = (database: URL, port: number, authFile: string) => {
  const name = decodeURIComponent(database.pathname.slice(1))
  const server = [
    `host=${database.hostname}`,
    `port=${database.port || "5432"}`,
    `dbname=${quoted(name, "'")}`,
    `user=${quoted(decodeURIComponent(database.username), "'")}`,
    ...(database.password === "" ? [] : [`password=${quoted(decodeURIComponent(database.password), "'")}`])
  ].join(" ")
  return [
    "[databases]",
    `${name} = ${server}`,
    "[pgbouncer]",
    "pool_mode = transaction",
    "listen_addr = 127.0.0.1",
    `listen_port = ${port}`,
    "unix_socket_dir =",
    "auth_type = trust",
    `auth_file = ${authFile}`,
    "default_pool_size = 20",
    "max_client_conn = 200",
    "logfile =",
    "pidfile =",
    ""
  ].join("\n")
}

/** PgBouncer in transaction mode in front of the database at `databaseUrl`; resolves once it accepts connections. */
export const startPgbouncer = async (databaseUrl: string): Promise<Pgbouncer> => {
  if (pgbouncerBinary === undefined) throw new Error("no pgbouncer binary")
  const database = new URL(databaseUrl)
  const port = await freePort()
  const dir = await mkdtemp(join(tmpdir(), "pgbouncer-"))
  // Readable by the `postgres` user it runs as under root.
  await chmod(dir, 0o755)
  const authFile = join(dir, "users.txt")
  const ini = join(dir, "pgbouncer.ini")
  await writeFile(authFile, `${quoted(decodeURIComponent(database.username), "\"")} ""\n`, { mode: 0o644 })
  await writeFile(ini, iniFor(database, port, authFile), { mode: 0o644 })
  const asRoot = process.getuid?.() === 0
  const child: ChildProcessWithoutNullStreams = spawn(pgbouncerBinary, [...(asRoot ? ["-u", "postgres"] : []), ini])
  let output = ""
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, "exit")
      child.kill("SIGINT")
      await exited
    }
    await rm(dir, { recursive: true, force: true })
  }
  const deadline = Date.now() + 10_000
  while (!(await accepts(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop()
      throw new Error(`pgbouncer did not start:\n${output}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  const through = new URL(databaseUrl)
  through.host = `127.0.0.1:${port}`
  through.password = ""
  return { url: through.toString(), output: () => output, stop }
}
