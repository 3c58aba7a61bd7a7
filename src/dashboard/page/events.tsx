/**
 * Events sent to the integration's endpoints: the list (type, date, cursor pages), one event with its attempts, and
 * the events of one resource (a payout's page shows its own), each with its attempts.
 */
import type { DeliveryAttempt, Event, EventList, EventWithAttempts, Redelivery } from "@cop-integrations/contracts"
import { useState } from "preact/hooks"
import { get, post } from "./api.ts"
import { EVENT_TYPES } from "./literals.ts"
import { Pager, PAGE_SIZE, useCursors } from "./paging.tsx"
import { Code, DateTime, Failure, Fields, Heading, Loading, messageOf, Status, Table, useLoad } from "./parts.tsx"
import { href } from "./router.ts"

/** What an event is about: its payout, swap, customer or endpoint. */
const resourceOf = (event: Event): string => {
  const object: Record<string, unknown> = event.data.object
  for (const key of ["payoutId", "intentId", "endpointId", "userAddress"]) {
    if (typeof object[key] === "string") return object[key]
  }
  return "—"
}

/** Every delivery attempt of an event: when, where, how it went, and the start of what the receiver answered. */
const DeliveryAttempts = (
  { attempts, caption }: { readonly attempts: ReadonlyArray<DeliveryAttempt>; readonly caption: string }
) => (
  <Table
    caption={caption}
    rows={attempts}
    rowKey={(attempt) => `${attempt.endpointId} ${attempt.attemptedAt}`}
    empty="No attempt yet."
    columns={[
      { header: "When", cell: (a) => <DateTime iso={a.attemptedAt} /> },
      { header: "Endpoint", cell: (a) => <Code>{a.endpointId}</Code> },
      { header: "Outcome", cell: (a) => <Status value={a.outcome} /> },
      { header: "Status code", cell: (a) => a.responseStatus ?? "—" },
      { header: "Latency", cell: (a) => `${a.durationMs} ms` },
      { header: "Error", cell: (a) => a.error ?? "—" },
      {
        header: "Response",
        cell: (a) => (a.responseExcerpt === null ? "—" : <code class="mono excerpt">{a.responseExcerpt}</code>)
      }
    ]}
  />
)

export const EventsView = () => {
  const [type, setType] = useState("")
  const [appliedType, setAppliedType] = useState("")
  const cursors = useCursors()
  const list = useLoad(
    () => get<EventList>("/events", { type: appliedType, limit: PAGE_SIZE, cursor: cursors.cursor }),
    [appliedType, cursors.cursor]
  )
  return (
    <section aria-labelledby="view-title">
      <Heading>Events</Heading>
      <form
        class="filters"
        aria-label="Filter events"
        onSubmit={(event) => {
          event.preventDefault()
          cursors.first()
          setAppliedType(type)
        }}
      >
        <p>
          <label for="filter-type">Type</label>
          <select id="filter-type" value={type} onChange={(event) => setType(event.currentTarget.value)}>
            <option value="">Any type</option>
            {EVENT_TYPES.map((name) => <option key={name} value={name}>{name}</option>)}
          </select>
        </p>
        <p class="actions">
          <button type="submit">Apply filters</button>
        </p>
      </form>
      {list.error !== undefined ? <Failure error={list.error} /> : list.value === undefined ? <Loading /> : (
        <>
          <Table
            caption="Events, in the order they were recorded"
            rows={list.value.items}
            rowKey={(event) => event.id}
            empty="No events."
            columns={[
              { header: "Event", cell: (e) => <a href={href(`/events/${e.id}`)}>{e.id}</a> },
              { header: "Type", cell: (e) => e.type },
              { header: "Created", cell: (e) => <DateTime iso={e.createdAt} /> },
              { header: "About", cell: (e) => <Code>{resourceOf(e)}</Code> },
              { header: "Sequence", cell: (e) => e.sequence }
            ]}
          />
          <Pager cursors={cursors} nextCursor={list.value.nextCursor} label="Events" />
        </>
      )}
    </section>
  )
}

export const EventView = ({ eventId }: { readonly eventId: string }) => {
  const event = useLoad(() => get<EventWithAttempts>(`/events/${encodeURIComponent(eventId)}`), [eventId])
  const [resend, setResend] = useState<{ readonly text: string; readonly failed: boolean }>()
  const e = event.value
  return (
    <section aria-labelledby="view-title">
      <Heading>Event {eventId}</Heading>
      <p>
        <a href={href("/events")}>All events</a>
      </p>
      {event.error !== undefined ? <Failure error={event.error} /> : e === undefined ? <Loading /> : (
        <>
          <Fields
            rows={[
              ["Type", e.type],
              ["Created", <DateTime iso={e.createdAt} />],
              ["About", <Code>{resourceOf(e)}</Code>],
              ["Sequence", e.sequence]
            ]}
          />
          <p class="actions">
            <button
              type="button"
              onClick={() =>
                void post<Redelivery>(`/events/${encodeURIComponent(eventId)}/redeliver`).then(
                  (queued) => {
                    setResend({
                      text: queued.endpointIds.length === 0
                        ? "No enabled endpoint is subscribed to this type: nothing was queued."
                        : `Queued to ${queued.endpointIds.join(", ")}.`,
                      failed: false
                    })
                    event.reload()
                  },
                  (error: unknown) => setResend({ text: messageOf(error), failed: true })
                )}
            >
              Resend
            </button>{" "}
            <button type="button" onClick={event.reload}>Refresh attempts</button>
          </p>
          <p role={resend?.failed === true ? "alert" : "status"} class={resend?.failed === true ? "error" : ""}>
            {resend?.text ?? ""}
          </p>
          <h2>Delivery attempts</h2>
          <DeliveryAttempts caption="Every delivery attempt, oldest first" attempts={e.attempts} />
          <details>
            <summary>Body</summary>
            <pre class="mono">{JSON.stringify({ ...e, attempts: undefined }, null, 2)}</pre>
          </details>
        </>
      )}
    </section>
  )
}

/**
 * The events about one resource (a payout's `po_…`), in its `sequence` order, each with every delivery attempt: the
 * list names the events, and each event's own page gives its attempts.
 */
export const ResourceEvents = ({ resourceId }: { readonly resourceId: string }) => {
  const cursors = useCursors()
  const events = useLoad(async () => {
    const page = await get<EventList>("/events", { resourceId, limit: PAGE_SIZE, cursor: cursors.cursor })
    const items = await Promise.all(
      page.items.map((event) => get<EventWithAttempts>(`/events/${encodeURIComponent(event.id)}`))
    )
    return { items, nextCursor: page.nextCursor }
  }, [resourceId, cursors.cursor])
  return (
    <>
      <p class="actions">
        <button type="button" onClick={events.reload}>Refresh events</button>
      </p>
      {events.error !== undefined
        ? <Failure error={events.error} />
        : events.value === undefined
        ? <Loading />
        : events.value.items.length === 0
        ? <p class="muted">No events yet.</p>
        : (
          <>
            {events.value.items.map((event) => (
              <article key={event.id} aria-labelledby={`event-${event.id}`}>
                <h3 id={`event-${event.id}`}>
                  <a href={href(`/events/${event.id}`)}>{event.id}</a> {event.type}
                </h3>
                <p class="muted">
                  Sequence {event.sequence}, recorded <DateTime iso={event.createdAt} />
                </p>
                <DeliveryAttempts
                  caption={`Delivery attempts of ${event.id}, oldest first`}
                  attempts={event.attempts}
                />
              </article>
            ))}
            <Pager cursors={cursors} nextCursor={events.value.nextCursor} label="Events" />
          </>
        )}
    </>
  )
}
