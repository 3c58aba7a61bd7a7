/**
 * USD/COP market hours (`mercado_cerrado` in live mode): the pure rule, the settings parser, the holiday
 * calendars from date-holidays, and the live Market Layer driven by the TestClock.
 *
 * Instants are written in UTC with their Bogotá wall time beside them (America/Bogota is UTC-5 all year).
 */
import { describe, expect, it } from "@effect/vitest"
import { Clock, ConfigProvider, Effect, Result } from "effect"
import { TestClock } from "effect/testing"
import { Market, MarketState } from "../../src/market/Market.ts"
import {
  defaultMarketHours,
  describeMarketHours,
  holidayCalendar,
  isMarketOpen,
  localTime,
  type MarketHours,
  type MarketHoursSettings,
  marketStatus,
  nextOpening,
  parseMarketHours
} from "../../src/market/MarketHours.ts"
import { MarketLive } from "../../src/market/MarketLive.ts"
import { MarketHoursConfig } from "../../src/config/Config.ts"

// Explicit, not left to `it.effect`: with vitest's isolate:false another file's @effect/vitest `layer()` can
// replace the environment `it.effect` provides, and these tests need the TestClock.
const withTestClock = Effect.provide(TestClock.layer())

const hoursOf = (settings: MarketHoursSettings): MarketHours =>
  Result.getOrThrowWith(parseMarketHours(settings), (message) => new Error(message))

const at = (iso: string) => new Date(iso)

const statusAt = (iso: string, hours: MarketHours = defaultMarketHours) => marketStatus(at(iso), hours)
const reasonAt = (iso: string, hours: MarketHours = defaultMarketHours) => {
  const status = statusAt(iso, hours)
  return status.open ? "open" : status.reason
}

const errorOf = (settings: MarketHoursSettings): string =>
  Result.match(parseMarketHours(settings), {
    onFailure: (message) => message,
    onSuccess: (hours) => `parsed, unexpectedly: ${describeMarketHours(hours)}`
  })

describe("market hours: the default session (Mon–Fri 08:00–13:00 America/Bogota, CO + US holidays)", () => {
  it("is open inside the session on a weekday", () => {
    expect(isMarketOpen(at("2026-01-07T15:00:00Z"), defaultMarketHours)).toBe(true) // Wed 10:00
    expect(statusAt("2026-01-08T17:30:00Z")).toEqual({ open: true }) // Thu 12:30
  })

  it("is closed before and after the session", () => {
    expect(isMarketOpen(at("2026-01-07T12:00:00Z"), defaultMarketHours)).toBe(false) // Wed 07:00
    expect(reasonAt("2026-01-07T12:00:00Z")).toBe("outside_session")
    expect(reasonAt("2026-01-07T19:00:00Z")).toBe("outside_session") // Wed 14:00
    expect(reasonAt("2026-01-08T04:00:00Z")).toBe("outside_session") // Wed 23:00
  })

  it("is closed on weekends", () => {
    expect(reasonAt("2026-01-10T15:00:00Z")).toBe("no_session") // Sat 10:00
    expect(reasonAt("2026-01-11T15:00:00Z")).toBe("no_session") // Sun 10:00
    expect(isMarketOpen(at("2026-01-10T15:00:00Z"), defaultMarketHours)).toBe(false)
  })

  it("opens exactly at 08:00:00.000 and closes exactly at 13:00:00.000 Bogotá time", () => {
    expect(isMarketOpen(at("2026-01-07T12:59:59.999Z"), defaultMarketHours)).toBe(false) // 07:59:59.999
    expect(isMarketOpen(at("2026-01-07T13:00:00.000Z"), defaultMarketHours)).toBe(true) // 08:00:00.000
    expect(isMarketOpen(at("2026-01-07T17:59:59.999Z"), defaultMarketHours)).toBe(true) // 12:59:59.999
    expect(isMarketOpen(at("2026-01-07T18:00:00.000Z"), defaultMarketHours)).toBe(false) // 13:00:00.000
  })

  it("reads the clock in Bogotá, not UTC: Monday 07:59 in Bogotá is 12:59 UTC", () => {
    expect(localTime(at("2026-01-05T12:59:00Z"), "America/Bogota")).toEqual({
      date: "2026-01-05",
      weekday: 1,
      millisOfDay: (7 * 60 + 59) * 60_000
    })
    expect(localTime(at("2026-01-05T17:59:30.250Z"), "America/Bogota").millisOfDay).toBe(
      ((12 * 60 + 59) * 60 + 30) * 1000 + 250
    )
    expect(reasonAt("2026-01-05T12:59:00Z")).toBe("outside_session") // 12:59 UTC would be inside 08–13
    expect(isMarketOpen(at("2026-01-05T13:00:00Z"), defaultMarketHours)).toBe(true)
  })

  it("takes the date and weekday in the market's time zone, where UTC is already the next day", () => {
    const allDay = hoursOf({ sessions: "Mon-Fri 00:00-24:00", holidays: "none" })
    // Friday 23:30 in Bogotá is Saturday 04:30 UTC
    expect(localTime(at("2026-01-10T04:30:00Z"), "America/Bogota").weekday).toBe(5)
    expect(isMarketOpen(at("2026-01-10T04:30:00Z"), allDay)).toBe(true)
    expect(reasonAt("2026-01-10T05:00:00Z", allDay)).toBe("no_session") // Saturday 00:00 in Bogotá

    const everyDayCo = hoursOf({ sessions: "Mon-Sun 00:00-24:00", holidays: "CO" })
    // Sunday 2026-01-11 23:30 in Bogotá, already the holiday 2026-01-12 in UTC
    expect(isMarketOpen(at("2026-01-12T04:30:00Z"), everyDayCo)).toBe(true)
    expect(reasonAt("2026-01-12T05:00:00Z", everyDayCo)).toBe("holiday") // the holiday's midnight in Bogotá
  })

  it("works in a zone with daylight saving (New York 09:30–16:00 across the March switch)", () => {
    const newYork = hoursOf({ timeZone: "America/New_York", sessions: "Mon-Fri 09:30-16:00", holidays: "none" })
    // Friday 2026-03-06, EST (UTC-5)
    expect(isMarketOpen(at("2026-03-06T14:29:59.999Z"), newYork)).toBe(false)
    expect(isMarketOpen(at("2026-03-06T14:30:00Z"), newYork)).toBe(true)
    expect(isMarketOpen(at("2026-03-06T20:30:00Z"), newYork)).toBe(true) // 15:30 EST
    // Monday 2026-03-09, EDT (UTC-4): the same UTC times are an hour later on the wall clock
    expect(isMarketOpen(at("2026-03-09T13:29:59.999Z"), newYork)).toBe(false)
    expect(isMarketOpen(at("2026-03-09T13:30:00Z"), newYork)).toBe(true)
    expect(isMarketOpen(at("2026-03-09T20:30:00Z"), newYork)).toBe(false) // 16:30 EDT
  })
})

describe("market hours: holidays", () => {
  it("date-holidays knows the 2026 dates these tests use", () => {
    const co = Result.getOrThrow(holidayCalendar("CO"))
    const us = Result.getOrThrow(holidayCalendar("US"))
    expect(co.holidayOn("2026-01-12")).toMatch(/Reyes Magos/) // 6 January moved to Monday (Ley Emiliani)
    expect(co.holidayOn("2026-01-06")).toBeUndefined()
    expect(us.holidayOn("2026-07-03")).toMatch(/Independence Day \(substitute day\)/) // 4 July is a Saturday
    expect(us.holidayOn("2026-11-26")).toMatch(/Thanksgiving/)
    // observances and optional days do not close the market
    expect(us.holidayOn("2026-11-27")).toBeUndefined() // day after Thanksgiving
    expect(us.holidayOn("2026-02-14")).toBeUndefined() // Valentine's Day
    expect(us.holidayOn("2026-12-24")).toBeUndefined() // Christmas Eve (optional)
    expect(co.holidayOn("2026-01-07")).toBeUndefined()
  })

  it("is closed on a Colombian holiday (Monday 2026-01-12, Reyes Magos), by the CO calendar", () => {
    const status = statusAt("2026-01-12T15:00:00Z") // Mon 10:00
    expect(status).toMatchObject({ open: false, reason: "holiday" })
    expect(status.open === false && status.detail).toMatch(/^CO holiday .*Reyes Magos.*2026-01-12/)
    expect(isMarketOpen(at("2026-01-12T15:00:00Z"), hoursOf({ holidays: "US" }))).toBe(true)
  })

  it("is closed on US holidays (2026-07-03 observed Independence Day, 2026-11-26 Thanksgiving), by the US calendar", () => {
    for (const iso of ["2026-07-03T15:00:00Z", "2026-11-26T15:00:00Z"]) {
      const status = statusAt(iso)
      expect(status).toMatchObject({ open: false, reason: "holiday" })
      expect(status.open === false && status.detail).toMatch(/^US holiday /)
      expect(isMarketOpen(at(iso), hoursOf({ holidays: "CO" }))).toBe(true)
    }
    expect(isMarketOpen(at("2026-11-27T15:00:00Z"), defaultMarketHours)).toBe(true) // Friday after Thanksgiving
  })

  it("closes on a configured closed date, all day", () => {
    const hours = hoursOf({ closedDates: "2026-12-24, 2026-01-08" })
    expect(isMarketOpen(at("2026-01-08T15:00:00Z"), defaultMarketHours)).toBe(true)
    expect(reasonAt("2026-01-08T15:00:00Z", hours)).toBe("closed_date")
    expect(isMarketOpen(at("2026-01-09T15:00:00Z"), hours)).toBe(true)
  })

  it("opens on a configured open date despite a holiday, within the usual session", () => {
    const hours = hoursOf({ openDates: "2026-07-03,2026-01-12" })
    expect(isMarketOpen(at("2026-01-12T15:00:00Z"), hours)).toBe(true) // CO holiday lifted
    expect(isMarketOpen(at("2026-07-03T15:00:00Z"), hours)).toBe(true) // US holiday lifted
    expect(reasonAt("2026-01-12T19:00:00Z", hours)).toBe("outside_session") // 14:00: the session still applies
    expect(reasonAt("2026-11-26T15:00:00Z", hours)).toBe("holiday") // other holidays unaffected
  })

  it("MARKET_HOLIDAYS=none drops the calendars; codes are case-insensitive and may name a subdivision", () => {
    expect(isMarketOpen(at("2026-01-12T15:00:00Z"), hoursOf({ holidays: "none" }))).toBe(true)
    expect(hoursOf({ holidays: " co , us-ny " }).holidays.map((calendar) => calendar.code)).toEqual(["CO", "US-NY"])
    // Lincoln's Birthday is a New York State holiday, not a federal one
    expect(reasonAt("2026-02-12T15:00:00Z", hoursOf({ holidays: "US-NY" }))).toBe("holiday")
    expect(isMarketOpen(at("2026-02-12T15:00:00Z"), defaultMarketHours)).toBe(true)
  })
})

describe("market hours: parseMarketHours", () => {
  it("defaults every unset or blank setting", () => {
    const expected = "Mon,Tue,Wed,Thu,Fri 08:00-13:00 America/Bogota; holidays CO,US; 0 closed date(s), 0 open date(s)"
    expect(describeMarketHours(defaultMarketHours)).toBe(expected)
    expect(describeMarketHours(hoursOf({}))).toBe(expected)
    expect(
      describeMarketHours(hoursOf({ timeZone: " ", sessions: "", holidays: "  ", closedDates: "", openDates: " " }))
    )
      .toBe(expected)
  })

  it("reads several sessions, day lists, ranges that wrap and a 24:00 close", () => {
    const hours = hoursOf({ sessions: "Mon-Thu 08:00-13:00; fri 08:00 - 12:00; Sat,Sun 10:00-24:00", holidays: "none" })
    expect(describeMarketHours(hours)).toBe(
      "Mon,Tue,Wed,Thu 08:00-13:00; Fri 08:00-12:00; Sat,Sun 10:00-24:00 America/Bogota; holidays none; 0 closed date(s), 0 open date(s)"
    )
    expect(isMarketOpen(at("2026-01-08T17:30:00Z"), hours)).toBe(true) // Thu 12:30
    expect(isMarketOpen(at("2026-01-09T17:30:00Z"), hours)).toBe(false) // Fri 12:30
    expect(isMarketOpen(at("2026-01-11T04:59:59.999Z"), hours)).toBe(true) // Sat 23:59:59.999
    expect(hoursOf({ sessions: "Sun-Tue 09:00-10:00" }).sessions[0]?.days).toEqual([1, 2, 7])
    expect(hoursOf({ timeZone: "america/bogota" }).timeZone).toBe("America/Bogota")
  })

  it("rejects a bad time zone, naming MARKET_TIME_ZONE", () => {
    expect(errorOf({ timeZone: "Bogota" })).toBe(
      `MARKET_TIME_ZONE: not an IANA time zone: "Bogota" (e.g. America/Bogota)`
    )
    expect(errorOf({ timeZone: "UTC-5" })).toMatch(/^MARKET_TIME_ZONE: not an IANA time zone: "UTC-5"/)
  })

  it("rejects bad sessions, naming MARKET_SESSION and what is wrong", () => {
    expect(errorOf({ sessions: "Mon-Fry 08:00-13:00" })).toMatch(
      /^MARKET_SESSION: unknown day "Fry" in "Mon-Fry 08:00-13:00" \(days are Mon, Tue/
    )
    expect(errorOf({ sessions: "Mon-Fri-Sat 08:00-13:00" })).toMatch(/^MARKET_SESSION: unknown day "Mon-Fri-Sat" in /)
    expect(errorOf({ sessions: "Mon,Wed,Frid 08:00-13:00" })).toMatch(/^MARKET_SESSION: unknown day "Frid" in /)
    expect(errorOf({ sessions: "weekdays" })).toMatch(
      /^MARKET_SESSION: sessions must look like "<days> HH:MM-HH:MM".*; got "weekdays"$/
    )
    expect(errorOf({ sessions: "Mon-Fri 8:00-13:00" })).toMatch(
      /^MARKET_SESSION: times must be HH:MM between 00:00 and 24:00, in "Mon-Fri 8:00-13:00"$/
    )
    expect(errorOf({ sessions: "Mon-Fri 08:00-24:30" })).toMatch(
      /^MARKET_SESSION: times must be HH:MM between 00:00 and 24:00, in "Mon-Fri 08:00-24:30"$/
    )
    expect(errorOf({ sessions: "Mon-Fri 13:00-08:00" })).toMatch(
      /^MARKET_SESSION: the session must close after it opens, in "Mon-Fri 13:00-08:00"/
    )
    expect(errorOf({ sessions: "Mon-Fri 08:00-08:00" })).toMatch(
      /^MARKET_SESSION: the session must close after it opens, in "Mon-Fri 08:00-08:00"/
    )
    expect(errorOf({ sessions: "Mon-Fri 08:00-13:00;" })).toMatch(
      /^MARKET_SESSION: empty session in "Mon-Fri 08:00-13:00;"/
    )
  })

  it("rejects unknown holiday calendars, naming MARKET_HOLIDAYS", () => {
    expect(errorOf({ holidays: "CO,XX" })).toMatch(/^MARKET_HOLIDAYS: unknown holiday calendar "XX"/)
    expect(errorOf({ holidays: "US-ZZ" })).toBe(`MARKET_HOLIDAYS: unknown subdivision "US-ZZ" of US`)
    expect(errorOf({ holidays: "CO,,US" })).toMatch(/^MARKET_HOLIDAYS: empty entry in "CO,,US"/)
  })

  it("rejects bad dates, naming MARKET_CLOSED_DATES or MARKET_OPEN_DATES", () => {
    expect(errorOf({ closedDates: "2026-12-24,2026-02-30" })).toMatch(
      /^MARKET_CLOSED_DATES: not a date: "2026-02-30" \(expected a comma-separated list of YYYY-MM-DD dates\)$/
    )
    expect(errorOf({ closedDates: "26-12-24" })).toMatch(/^MARKET_CLOSED_DATES: not a date: "26-12-24"/)
    expect(errorOf({ openDates: "2026-13-01" })).toMatch(/^MARKET_OPEN_DATES: not a date: "2026-13-01"/)
  })

  it("rejects an open date that is also closed, or that falls on a day without a session", () => {
    expect(errorOf({ closedDates: "2026-07-03", openDates: "2026-07-03" })).toBe(
      "MARKET_OPEN_DATES: 2026-07-03 is also in MARKET_CLOSED_DATES; a date can be only one of them"
    )
    expect(errorOf({ openDates: "2026-07-04" })).toBe(
      "MARKET_OPEN_DATES: 2026-07-04 is a Sat, which has no session in MARKET_SESSION; an open date only lifts a holiday"
    )
    expect(Result.isSuccess(parseMarketHours({ sessions: "Mon-Sat 08:00-13:00", openDates: "2026-07-04" }))).toBe(true)
  })

  it("as the app's Config (MarketHoursConfig): the error's path is the setting at fault", () => {
    const marketHours = MarketHoursConfig
    const load = (env: Record<string, string>) =>
      Effect.runSync(
        Effect.result(
          Effect.provideService(marketHours, ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env }))
        )
      )

    const loaded = load({ MARKET_SESSION: "Mon-Fri 09:00-12:00", MARKET_CLOSED_DATES: "2026-12-24" })
    expect(Result.map(loaded, describeMarketHours)).toEqual(
      Result.succeed("Mon,Tue,Wed,Thu,Fri 09:00-12:00 America/Bogota; holidays CO,US; 1 closed date(s), 0 open date(s)")
    )
    expect(Result.map(load({}), describeMarketHours)).toEqual(Result.succeed(describeMarketHours(defaultMarketHours)))
    const failed = load({ MARKET_SESSION: "Mon-Fry 08:00-13:00" })
    // v4 renders a ConfigError as its SchemaError, the path at fault last (v3: `(Invalid data at PATH: "message")`)
    expect(Result.isFailure(failed) && String(failed.failure)).toMatch(
      /^ConfigError\(SchemaError\(unknown day "Fry" in "Mon-Fry 08:00-13:00"[^]*\n {2}at \["MARKET_SESSION"\]\)\)$/
    )
  })
})

describe("market hours: nextOpening (when a closed market opens again: mercado_cerrado's Retry-After)", () => {
  const opening = (iso: string, hours: MarketHours = defaultMarketHours) => nextOpening(at(iso), hours)?.toISOString()

  it("before the session: today's 08:00 Bogotá; after it: the next weekday's", () => {
    expect(opening("2026-01-07T12:00:00Z")).toBe("2026-01-07T13:00:00.000Z") // Wed 07:00 → Wed 08:00
    expect(opening("2026-01-07T19:00:00Z")).toBe("2026-01-08T13:00:00.000Z") // Wed 14:00 → Thu 08:00
    expect(opening("2026-01-08T04:00:00Z")).toBe("2026-01-08T13:00:00.000Z") // Wed 23:00 Bogotá is Thu in UTC
  })

  it("is strictly after the moment: at 08:00:00.000 itself (open), the next day's", () => {
    expect(opening("2026-01-07T13:00:00.000Z")).toBe("2026-01-08T13:00:00.000Z")
    expect(opening("2026-01-07T12:59:59.999Z")).toBe("2026-01-07T13:00:00.000Z")
  })

  it("skips weekends and holidays of every calendar", () => {
    expect(opening("2026-01-09T19:00:00Z")).toBe("2026-01-13T13:00:00.000Z") // Fri after → Mon is Reyes Magos → Tue
    expect(opening("2026-11-25T19:00:00Z")).toBe("2026-11-27T13:00:00.000Z") // Wed after → Thanksgiving → Fri
    expect(opening("2026-07-02T19:00:00Z")).toBe("2026-07-06T13:00:00.000Z") // Thu after → Fri 3 (US) → Mon 6
  })

  it("skips configured closed dates, and opens on a configured open date", () => {
    expect(opening("2026-07-01T19:00:00Z", hoursOf({ closedDates: "2026-07-02", openDates: "2026-07-03" }))).toBe(
      "2026-07-03T13:00:00.000Z"
    )
  })

  it("keeps to the wall clock across a daylight-saving switch (New York 09:30)", () => {
    const newYork = hoursOf({ timeZone: "America/New_York", sessions: "Mon-Fri 09:30-16:00", holidays: "none" })
    expect(opening("2026-03-06T22:00:00Z", newYork)).toBe("2026-03-09T13:30:00.000Z") // Fri EST → Mon EDT
    expect(opening("2026-03-05T22:00:00Z", newYork)).toBe("2026-03-06T14:30:00.000Z") // Thu EST → Fri EST
  })

  it("takes the earliest of several sessions, a later one the same day too", () => {
    const split = hoursOf({ sessions: "Mon-Fri 08:00-10:00; Mon-Fri 14:00-16:00", holidays: "none" })
    expect(opening("2026-01-07T16:00:00Z", split)).toBe("2026-01-07T19:00:00.000Z") // Wed 11:00 → Wed 14:00
    expect(opening("2026-01-07T22:00:00Z", split)).toBe("2026-01-08T13:00:00.000Z") // Wed 17:00 → Thu 08:00
  })

  it("is undefined when no session opens within the horizon (a year and more of closed dates)", () => {
    const dates = Array.from(
      { length: 420 },
      (_, day) => new Date(Date.UTC(2026, 0, 1 + day)).toISOString().slice(0, 10)
    )
    expect(opening("2026-01-01T00:00:00Z", hoursOf({ closedDates: dates.join(","), holidays: "none" }))).toBeUndefined()
  })
})

describe("MarketLive", () => {
  it.effect("answers Market.state by the Effect Clock (TestClock)", () =>
    Effect.gen(function*() {
      const market = yield* Market
      yield* TestClock.setTime(Date.parse("2026-01-07T12:59:59.999Z")) // Wed 07:59:59.999
      expect(yield* market.state).toEqual(MarketState.Closed({ reopensAt: new Date("2026-01-07T13:00:00.000Z") }))
      yield* TestClock.adjust("1 millis") // 08:00
      expect((yield* market.state)._tag).toBe("Open")
      yield* TestClock.adjust("5 hours") // 13:00
      expect((yield* market.state)._tag).toBe("Closed")
      yield* TestClock.setTime(Date.parse("2026-01-12T15:00:00Z")) // Monday 10:00, Reyes Magos
      expect((yield* market.state)._tag).toBe("Closed")
      const now = new Date(yield* Clock.currentTimeMillis)
      expect(marketStatus(now, defaultMarketHours)).toMatchObject({ open: false, reason: "holiday" })
      yield* TestClock.setTime(Date.parse("2026-01-13T15:00:00Z")) // Tuesday 10:00
      expect((yield* market.state)._tag).toBe("Open")
    }).pipe(Effect.provide(MarketLive(defaultMarketHours)), withTestClock))

  it.effect("applies the overrides it is built with", () =>
    Effect.gen(function*() {
      const market = yield* Market
      yield* TestClock.setTime(Date.parse("2026-07-03T15:00:00Z")) // US holiday, listed as an open date
      expect((yield* market.state)._tag).toBe("Open")
      yield* TestClock.setTime(Date.parse("2026-07-02T15:00:00Z")) // a closed date
      expect((yield* market.state)._tag).toBe("Closed")
    }).pipe(
      Effect.provide(MarketLive(hoursOf({ openDates: "2026-07-03", closedDates: "2026-07-02" }))),
      withTestClock
    ))
})
