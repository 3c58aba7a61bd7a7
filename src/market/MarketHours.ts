/**
 * USD/COP market hours: our own `mercado_cerrado` policy (DESIGN §3; notes/provider.md "USD/COP market
 * hours"). The spot market trades in a morning session on days that are business days in both Colombia and
 * the US. Bre-B itself never closes. Everything here is pure: `marketStatus`/`isMarketOpen` take the instant.
 *
 * Rules, in order, on the calendar date and wall-clock time of `at` in `hours.timeZone` (via Intl, so any
 * IANA zone, with or without daylight saving):
 *   1. a date in `closedDates` is closed all day;
 *   2. a holiday of any calendar in `holidays` is closed, unless the date is in `openDates`;
 *   3. otherwise open iff a session covers that weekday and time, each session half-open [opens, closes):
 *      open at 08:00:00.000, closed again at 13:00:00.000.
 * An open date lifts holidays only; it does not create a session (the parser rejects one on a weekday
 * without a session, so it can never silently do nothing).
 */
import { type Config, Effect, Result } from "effect"
import { configError } from "../base/StartupFailure.ts"
import Holidays from "date-holidays"

/** The environment variables the parser's messages name (src/config/Config.ts reads them). */
export const MARKET_SETTINGS = {
  timeZone: "MARKET_TIME_ZONE",
  sessions: "MARKET_SESSION",
  holidays: "MARKET_HOLIDAYS",
  closedDates: "MARKET_CLOSED_DATES",
  openDates: "MARKET_OPEN_DATES"
} as const

/** Defaults when a setting is unset or blank: the SET-FX spot session, about 08:00–13:00 in Bogotá, CO + US business days. */
export const MARKET_DEFAULTS = {
  timeZone: "America/Bogota",
  sessions: "Mon-Fri 08:00-13:00",
  holidays: "CO,US"
} as const

/** ISO weekday: 1 = Monday … 7 = Sunday. */
export type Weekday = 1 | 2 | 3 | 4 | 5 | 6 | 7

export interface Session {
  readonly days: ReadonlyArray<Weekday>
  /** Minutes after local midnight, inclusive. */
  readonly opens: number
  /** Minutes after local midnight, exclusive (1440 = 24:00). Always > opens. */
  readonly closes: number
}

export interface HolidayCalendar {
  /** e.g. `CO`, `US`, `US-NY`. */
  readonly code: string
  /** The holiday's name when the local calendar date `YYYY-MM-DD` is a public (or bank) holiday, else undefined. */
  readonly holidayOn: (date: string) => string | undefined
}

export interface MarketHours {
  /** IANA time zone of the sessions, the dates and the holiday calendars' days. */
  readonly timeZone: string
  readonly sessions: ReadonlyArray<Session>
  readonly holidays: ReadonlyArray<HolidayCalendar>
  /** `YYYY-MM-DD` dates closed all day (besides holidays). */
  readonly closedDates: ReadonlySet<string>
  /** `YYYY-MM-DD` holidays on which the market opens anyway (its usual session applies). */
  readonly openDates: ReadonlySet<string>
}

export type MarketStatus =
  | { readonly open: true }
  | {
    readonly open: false
    readonly reason: "closed_date" | "holiday" | "no_session" | "outside_session"
    /** For logs, e.g. `US holiday Thanksgiving Day (2026-11-26)`. */
    readonly detail: string
  }

const DAY_NAMES = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"] as const

// ---------------------------------------------------------------------------------------------------------
// Local time through Intl

const formatters = new Map<string, Intl.DateTimeFormat>()

const formatterFor = (timeZone: string): Intl.DateTimeFormat => {
  let formatter = formatters.get(timeZone)
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat("en-US-u-ca-gregory-nu-latn", {
      timeZone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
      hourCycle: "h23"
    })
    formatters.set(timeZone, formatter)
  }
  return formatter
}

export interface LocalTime {
  /** `YYYY-MM-DD` in the time zone. */
  readonly date: string
  readonly weekday: Weekday
  /** Milliseconds since local midnight. */
  readonly millisOfDay: number
}

const pad = (n: number, width = 2) => String(n).padStart(width, "0")

/** Weekday of a proleptic Gregorian date (no time zone involved: the date is already local). */
const weekdayOf = (year: number, month: number, day: number): Weekday => {
  const sundayZero = new Date(Date.UTC(year, month - 1, day)).getUTCDay()
  // 1-7 by construction (getUTCDay is 0-6); TypeScript does not follow arithmetic into a literal union.
  return (sundayZero === 0 ? 7 : sundayZero) as Weekday
}

/** The calendar date, weekday and time of day of `at` on the wall clocks of `timeZone`. */
export const localTime = (at: Date, timeZone: string): LocalTime => {
  const parts: Partial<Record<Intl.DateTimeFormatPartTypes, number>> = {}
  for (const part of formatterFor(timeZone).formatToParts(at)) {
    if (part.type !== "literal") parts[part.type] = Number(part.value)
  }
  const { year = NaN, month = NaN, day = NaN, hour = NaN, minute = NaN, second = NaN } = parts
  // zone offsets are whole seconds, so the milliseconds within the second are the same everywhere
  const millis = ((at.getTime() % 1000) + 1000) % 1000
  return {
    date: `${pad(year, 4)}-${pad(month)}-${pad(day)}`,
    weekday: weekdayOf(year, month, day),
    millisOfDay: ((hour * 60 + minute) * 60 + second) * 1000 + millis
  }
}

// ---------------------------------------------------------------------------------------------------------
// The rule

const formatMinutes = (minutes: number) => `${pad(Math.floor(minutes / 60))}:${pad(minutes % 60)}`

/** Open or closed at `at`, and why closed. Pure. */
export const marketStatus = (at: Date, hours: MarketHours): MarketStatus => {
  const local = localTime(at, hours.timeZone)
  if (hours.closedDates.has(local.date)) {
    return { open: false, reason: "closed_date", detail: `${local.date} is a configured closed date` }
  }
  if (!hours.openDates.has(local.date)) {
    for (const calendar of hours.holidays) {
      const name = calendar.holidayOn(local.date)
      if (name !== undefined) {
        return { open: false, reason: "holiday", detail: `${calendar.code} holiday ${name} (${local.date})` }
      }
    }
  }
  const today = hours.sessions.filter((session) => session.days.includes(local.weekday))
  if (today.length === 0) {
    return {
      open: false,
      reason: "no_session",
      detail: `no session on ${DAY_NAMES[local.weekday - 1]} (${local.date})`
    }
  }
  const open = today.some((session) =>
    local.millisOfDay >= session.opens * 60_000 && local.millisOfDay < session.closes * 60_000
  )
  if (open) return { open: true }
  const windows = today.map((session) => `${formatMinutes(session.opens)}-${formatMinutes(session.closes)}`).join(", ")
  return {
    open: false,
    reason: "outside_session",
    detail: `outside the session ${windows} ${hours.timeZone} (${local.date})`
  }
}

/** Whether the USD/COP market is open at `at`. Pure. */
export const isMarketOpen = (at: Date, hours: MarketHours): boolean => marketStatus(at, hours).open

/** The local calendar date `days` after `date` (both `YYYY-MM-DD`). */
const addDays = (date: string, days: number): string => {
  const [year = NaN, month = NaN, day = NaN] = date.split("-").map(Number)
  return new Date(Date.UTC(year, month - 1, day + days)).toISOString().slice(0, 10)
}

/** The instant the wall clocks of `timeZone` read `minutes` after midnight of `date` (one offset correction, twice). */
const instantOf = (date: string, minutes: number, timeZone: string): Date => {
  const wall = Date.parse(`${date}T00:00:00.000Z`) + minutes * 60_000
  let instant = wall
  for (let pass = 0; pass < 2; pass++) {
    const local = localTime(new Date(instant), timeZone)
    instant += wall - (Date.parse(`${local.date}T00:00:00.000Z`) + local.millisOfDay)
  }
  return new Date(instant)
}

/** How far ahead `nextOpening` looks: past a year of closed dates it gives up. */
const OPENING_HORIZON_DAYS = 400

/**
 * The first moment after `at` when a session opens on a day the market opens (rules 1-3 above), or undefined when none
 * does within a year or so. When the market is closed at `at`, that is when it opens again. Pure.
 */
export const nextOpening = (at: Date, hours: MarketHours): Date | undefined => {
  const today = localTime(at, hours.timeZone).date
  for (let day = 0; day <= OPENING_HORIZON_DAYS; day++) {
    const date = addDays(today, day)
    const [year = NaN, month = NaN, dayOfMonth = NaN] = date.split("-").map(Number)
    const weekday = weekdayOf(year, month, dayOfMonth)
    const opens = hours.sessions.filter((session) => session.days.includes(weekday)).map((session) => session.opens)
    for (const minutes of [...opens].sort((a, b) => a - b)) {
      const candidate = instantOf(date, minutes, hours.timeZone)
      // A holiday or closed date fails here; so does a wall time that a clock change skips.
      if (candidate.getTime() > at.getTime() && isMarketOpen(candidate, hours)) return candidate
    }
  }
  return undefined
}

/** One line for the start-up log. */
export const describeMarketHours = (hours: MarketHours): string => {
  const sessions = hours.sessions
    .map((session) =>
      `${session.days.map((day) => DAY_NAMES[day - 1]).join(",")} ${formatMinutes(session.opens)}-${
        formatMinutes(session.closes)
      }`
    )
    .join("; ")
  const holidays = hours.holidays.length === 0 ? "none" : hours.holidays.map((calendar) => calendar.code).join(",")
  return `${sessions} ${hours.timeZone}; holidays ${holidays}; ${hours.closedDates.size} closed date(s), ${hours.openDates.size} open date(s)`
}

// ---------------------------------------------------------------------------------------------------------
// Holiday calendars (date-holidays)

/** Holiday types that close the market: public holidays, and bank holidays (no settlement). */
const CLOSING_TYPES: ReadonlySet<string> = new Set(["public", "bank"])

let catalogue: Holidays | undefined
const catalogueOf = () => (catalogue ??= new Holidays())

/**
 * A calendar of date-holidays' public and bank holidays (substitute days included, e.g. the US Friday
 * before a Saturday Independence Day) for a country (`CO`) or a country subdivision (`US-NY`), or an
 * error when date-holidays does not know it. Holidays are computed per year on first use and kept.
 */
export const holidayCalendar = (code: string): Result.Result<HolidayCalendar, string> => {
  const [country = "", state, ...rest] = code.trim().toUpperCase().split("-")
  if (rest.length > 0 || !Object.hasOwn(catalogueOf().getCountries(), country)) {
    return Result.fail(
      `unknown holiday calendar "${code.trim()}" (a country code such as CO or US, optionally with a subdivision such as US-NY)`
    )
  }
  if (state !== undefined && !Object.hasOwn(catalogueOf().getStates(country) ?? {}, state)) {
    return Result.fail(`unknown subdivision "${code.trim()}" of ${country}`)
  }
  const source = state === undefined ? new Holidays(country) : new Holidays(country, state)
  const years = new Map<number, ReadonlyMap<string, string>>()
  const yearOf = (year: number) => {
    let days = years.get(year)
    if (days === undefined) {
      const names = new Map<string, Array<string>>()
      for (const holiday of source.getHolidays(year)) {
        if (!CLOSING_TYPES.has(holiday.type)) continue
        const date = holiday.date.slice(0, 10)
        names.set(date, [...(names.get(date) ?? []), holiday.name])
      }
      days = new Map([...names].map(([date, list]) => [date, list.join(" / ")]))
      years.set(year, days)
    }
    return days
  }
  const normalised = state === undefined ? country : `${country}-${state}`
  return Result.succeed({ code: normalised, holidayOn: (date) => yearOf(Number(date.slice(0, 4))).get(date) })
}

// ---------------------------------------------------------------------------------------------------------
// Parsing the settings

export interface MarketHoursSettings {
  /** MARKET_TIME_ZONE, an IANA name; default America/Bogota. */
  readonly timeZone?: string | undefined
  /** MARKET_SESSION, e.g. `Mon-Fri 08:00-13:00` or `Mon-Thu 08:00-13:00; Fri 08:00-12:00`. */
  readonly sessions?: string | undefined
  /** MARKET_HOLIDAYS, e.g. `CO,US`, or `none`. */
  readonly holidays?: string | undefined
  /** MARKET_CLOSED_DATES, e.g. `2026-12-24,2026-12-31`. */
  readonly closedDates?: string | undefined
  /** MARKET_OPEN_DATES, holidays on which the market opens anyway, e.g. `2026-07-03`. */
  readonly openDates?: string | undefined
}

interface Invalid {
  readonly setting: string
  readonly message: string
}

type Parsed<A> = Result.Result<A, Invalid>

const invalid = (setting: keyof typeof MARKET_SETTINGS, message: string): Parsed<never> =>
  Result.fail({ setting: MARKET_SETTINGS[setting], message })

/** Unset and blank both mean "use the default". */
const orDefault = (
  raw: string | undefined,
  fallback: string
) => (raw === undefined || raw.trim() === "" ? fallback : raw.trim())

const parseTimeZone = (raw: string): Parsed<string> => {
  try {
    return Result.succeed(new Intl.DateTimeFormat("en-US", { timeZone: raw }).resolvedOptions().timeZone)
  } catch {
    return invalid("timeZone", `not an IANA time zone: "${raw}" (e.g. America/Bogota)`)
  }
}

const parseDay = (name: string): Weekday | undefined => {
  const index = DAY_NAMES.findIndex((day) => day.toLowerCase() === name.trim().toLowerCase())
  // An index into the seven DAY_NAMES, plus one.
  return index === -1 ? undefined : (index + 1) as Weekday
}

/** `HH:MM`, 00:00 … 24:00. */
const parseClock = (raw: string): number | undefined => {
  const match = /^([01][0-9]|2[0-4]):([0-5][0-9])$/.exec(raw)
  if (match === null) return undefined
  const minutes = Number(match[1]) * 60 + Number(match[2])
  return minutes <= 24 * 60 ? minutes : undefined
}

const SESSION_SHAPE =
  `"<days> HH:MM-HH:MM", several separated by ";", e.g. "Mon-Fri 08:00-13:00" or "Mon,Wed 09:00-12:00; Fri 08:00-11:30"`

const parseDays = (raw: string, session: string): Parsed<ReadonlyArray<Weekday>> => {
  const days = new Set<Weekday>()
  for (const item of raw.split(",")) {
    const ends = item.split("-")
    const first = parseDay(ends[0] ?? "")
    const last = ends.length === 1 ? first : parseDay(ends[1] ?? "")
    if (ends.length > 2 || first === undefined || last === undefined) {
      const unknown = ends.length > 2 ? item.trim() : ends.find((name) => parseDay(name) === undefined)?.trim()
      return invalid(
        "sessions",
        `unknown day "${unknown}" in "${session}" (days are ${DAY_NAMES.join(", ")}, or a range such as Mon-Fri)`
      )
    }
    // a range may wrap around the week (Sun-Thu); (day % 7) + 1 stays in 1-7
    for (let day = first;; day = ((day % 7) + 1) as Weekday) {
      days.add(day)
      if (day === last) break
    }
  }
  return Result.succeed([...days].sort((a, b) => a - b))
}

const parseSession = (raw: string): Parsed<Session> => {
  const match = /^(.+?)\s+([0-9:]+)\s*-\s*([0-9:]+)$/.exec(raw)
  if (match === null) return invalid("sessions", `sessions must look like ${SESSION_SHAPE}; got "${raw}"`)
  const [, dayList = "", openText = "", closeText = ""] = match
  return Result.flatMap(parseDays(dayList, raw), (days): Parsed<Session> => {
    const opens = parseClock(openText)
    const closes = parseClock(closeText)
    if (opens === undefined || closes === undefined) {
      return invalid("sessions", `times must be HH:MM between 00:00 and 24:00, in "${raw}"`)
    }
    if (closes <= opens) {
      return invalid(
        "sessions",
        `the session must close after it opens, in "${raw}" (across midnight: split it in two)`
      )
    }
    return Result.succeed({ days, opens, closes })
  })
}

const parseSessions = (raw: string): Parsed<ReadonlyArray<Session>> => {
  const items = raw.split(";").map((item) => item.trim())
  if (items.some((item) => item === "")) {
    return invalid("sessions", `empty session in "${raw}"; expected ${SESSION_SHAPE}`)
  }
  return Result.all(items.map(parseSession))
}

const parseHolidays = (raw: string): Parsed<ReadonlyArray<HolidayCalendar>> => {
  if (raw.toLowerCase() === "none") return Result.succeed([])
  const codes = [...new Set(raw.split(",").map((code) => code.trim().toUpperCase()))]
  if (codes.some((code) => code === "")) {
    return invalid("holidays", `empty entry in "${raw}"; expected codes such as CO,US, or none`)
  }
  return Result.all(
    codes.map((code) =>
      Result.mapError(holidayCalendar(code), (message) => ({ setting: MARKET_SETTINGS.holidays, message }))
    )
  )
}

const parseDates = (setting: "closedDates" | "openDates", raw: string | undefined): Parsed<ReadonlySet<string>> => {
  const dates = new Set<string>()
  for (const item of (raw ?? "").split(/[\s,]+/).filter((item) => item !== "")) {
    const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(item)
    const valid = match !== null && (() => {
      const date = new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])))
      return date.getUTCFullYear() === Number(match[1]) && date.getUTCMonth() === Number(match[2]) - 1 &&
        date.getUTCDate() === Number(match[3])
    })()
    if (!valid) return invalid(setting, `not a date: "${item}" (expected a comma-separated list of YYYY-MM-DD dates)`)
    dates.add(item)
  }
  return Result.succeed(dates)
}

const parseSettings = (raw: MarketHoursSettings): Parsed<MarketHours> =>
  Result.gen(function*() {
    const timeZone = yield* parseTimeZone(orDefault(raw.timeZone, MARKET_DEFAULTS.timeZone))
    const sessions = yield* parseSessions(orDefault(raw.sessions, MARKET_DEFAULTS.sessions))
    const holidays = yield* parseHolidays(orDefault(raw.holidays, MARKET_DEFAULTS.holidays))
    const closedDates = yield* parseDates("closedDates", raw.closedDates)
    const openDates = yield* parseDates("openDates", raw.openDates)
    for (const date of openDates) {
      if (closedDates.has(date)) {
        return yield* invalid(
          "openDates",
          `${date} is also in ${MARKET_SETTINGS.closedDates}; a date can be only one of them`
        )
      }
      const weekday = weekdayOf(Number(date.slice(0, 4)), Number(date.slice(5, 7)), Number(date.slice(8, 10)))
      if (!sessions.some((session) => session.days.includes(weekday))) {
        return yield* invalid(
          "openDates",
          `${date} is a ${
            DAY_NAMES[weekday - 1]
          }, which has no session in ${MARKET_SETTINGS.sessions}; an open date only lifts a holiday`
        )
      }
    }
    return { timeZone, sessions, holidays, closedDates, openDates }
  })

/**
 * The market hours from the MARKET_* settings (unset or blank: the defaults), or a message that starts with
 * the name of the setting at fault, e.g. `MARKET_SESSION: unknown day "Fry" in "Mon-Fry 08:00-13:00" (…)`.
 */
export const parseMarketHours = (raw: MarketHoursSettings): Result.Result<MarketHours, string> =>
  Result.mapError(parseSettings(raw), ({ message, setting }) => `${setting}: ${message}`)

/** The same, for `Config.mapEffect`: the ConfigError's path is the setting at fault. */
export const parseMarketHoursConfig = (raw: MarketHoursSettings): Effect.Effect<MarketHours, Config.ConfigError> =>
  Result.match(parseSettings(raw), {
    onFailure: ({ message, setting }) => Effect.fail(configError([setting], message)),
    onSuccess: Effect.succeed
  })

/** The defaults: Mon–Fri 08:00–13:00 America/Bogota, closed on CO and US holidays. */
export const defaultMarketHours: MarketHours = Result.getOrThrowWith(
  parseMarketHours({}),
  (message) => new Error(message)
)
