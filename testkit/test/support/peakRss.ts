/**
 * Preloaded (`node --import`) into a kit command run by a test: when the process exits, writes its peak resident
 * memory (getrusage's maxRSS, in KiB) to the file named by PEAK_RSS_FILE. Exact and unsampled: a polled
 * /proc/<pid>/status could miss the peak just before the exit.
 */
import { writeFileSync } from "node:fs"

const file = process.env["PEAK_RSS_FILE"]
if (file !== undefined && file !== "") {
  process.on("exit", () => writeFileSync(file, String(process.resourceUsage().maxRSS)))
}
