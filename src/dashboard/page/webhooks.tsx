/**
 * Webhook endpoints: create (the secret shown once), ping, rotate the secret (shown once), disable and enable, delete.
 * Each action on an endpoint is one entry of `endpointActions`.
 */
import type { WebhookEndpoint, WebhookEndpointWithSecret } from "@cop-integrations/contracts"
import { useState } from "preact/hooks"
import { del, get, patch, post } from "./api.ts"
import { EVENT_TYPES } from "./literals.ts"
import { Code, DateTime, Failure, Heading, Loading, messageOf, SecretOnce, Status, Table, useLoad } from "./parts.tsx"
import { href } from "./router.ts"

interface Outcome {
  readonly text: string
  readonly failed: boolean
  readonly secret?: { readonly label: string; readonly value: string }
}

interface EndpointAction {
  readonly label: string
  /** Asks again before acting (a second press confirms). */
  readonly confirm?: string
  /** Offered only for the endpoints this holds for (none: every endpoint). */
  readonly offeredFor?: (endpoint: WebhookEndpoint) => boolean
  readonly run: (endpoint: WebhookEndpoint) => Promise<Outcome>
}

const path = (endpoint: WebhookEndpoint, rest = "") =>
  `/webhook-endpoints/${encodeURIComponent(endpoint.endpointId)}${rest}`

const endpointActions: ReadonlyArray<EndpointAction> = [
  {
    label: "Ping",
    // The API refuses to ping a disabled endpoint (409).
    offeredFor: (endpoint) => endpoint.status === "enabled",
    run: async (endpoint) => {
      const event = await post<{ readonly id: string }>(path(endpoint, "/ping"))
      return { text: `Ping ${event.id} queued for ${endpoint.endpointId}.`, failed: false }
    }
  },
  {
    label: "Rotate secret",
    confirm: "Confirm rotation",
    run: async (endpoint) => {
      const rotated = await post<WebhookEndpointWithSecret>(path(endpoint, "/rotate-secret"))
      return {
        text: `New secret for ${endpoint.endpointId}; the old one also signs for 24 hours.`,
        failed: false,
        secret: { label: `New signing secret of ${endpoint.endpointId}`, value: rotated.secret }
      }
    }
  },
  {
    label: "Disable",
    confirm: "Confirm disable",
    offeredFor: (endpoint) => endpoint.status === "enabled",
    run: async (endpoint) => {
      await patch<WebhookEndpoint>(path(endpoint), { status: "disabled" })
      return {
        text: `Disabled ${endpoint.endpointId}: nothing more is sent to it, and its pending deliveries are canceled.`,
        failed: false
      }
    }
  },
  {
    label: "Enable",
    offeredFor: (endpoint) => endpoint.status === "disabled",
    run: async (endpoint) => {
      await patch<WebhookEndpoint>(path(endpoint), { status: "enabled" })
      return {
        text:
          `Enabled ${endpoint.endpointId}: events recorded from now on are sent to it (resend those recorded while it was disabled from their page in Events).`,
        failed: false
      }
    }
  },
  {
    label: "Delete",
    confirm: "Confirm delete",
    run: async (endpoint) => {
      await del(path(endpoint))
      return { text: `Deleted ${endpoint.endpointId}.`, failed: false }
    }
  }
]

const ActionButton = (
  { action, endpoint, onDone }: {
    readonly action: EndpointAction
    readonly endpoint: WebhookEndpoint
    readonly onDone: (outcome: Outcome) => void
  }
) => {
  const [confirming, setConfirming] = useState(false)
  const run = () =>
    action.run(endpoint).then(onDone, (error: unknown) => onDone({ text: messageOf(error), failed: true }))
  if (action.confirm !== undefined && confirming) {
    return (
      <>
        <button
          type="button"
          class="danger"
          onClick={() => {
            setConfirming(false)
            void run()
          }}
        >
          {action.confirm} ({endpoint.endpointId})
        </button>{" "}
        <button type="button" onClick={() => setConfirming(false)}>Cancel</button>
      </>
    )
  }
  return (
    <button
      type="button"
      aria-label={`${action.label} ${endpoint.endpointId}`}
      onClick={() => (action.confirm === undefined ? void run() : setConfirming(true))}
    >
      {action.label}
    </button>
  )
}

const CreateEndpoint = ({ onDone }: { readonly onDone: (outcome: Outcome) => void }) => {
  const [url, setUrl] = useState("")
  const [all, setAll] = useState(true)
  const [chosen, setChosen] = useState<ReadonlyArray<string>>([])
  return (
    <form
      class="filters"
      aria-labelledby="create-endpoint"
      onSubmit={(event) => {
        event.preventDefault()
        const body = all ? { url } : { url, events: chosen }
        post<WebhookEndpointWithSecret>("/webhook-endpoints", body).then(
          (created) => {
            setUrl("")
            onDone({
              text: `Created ${created.endpointId}.`,
              failed: false,
              secret: { label: `Signing secret of ${created.endpointId}`, value: created.secret }
            })
          },
          (error: unknown) => onDone({ text: messageOf(error), failed: true })
        )
      }}
    >
      <h2 id="create-endpoint">Add an endpoint</h2>
      <p>
        <label for="endpoint-url">URL</label>
        <input
          id="endpoint-url"
          name="url"
          type="url"
          required
          placeholder="https://example.com/webhooks"
          value={url}
          onInput={(event) => setUrl(event.currentTarget.value)}
        />
      </p>
      <fieldset>
        <legend>Events</legend>
        <p>
          <input
            id="events-all"
            type="checkbox"
            checked={all}
            onChange={(event) => setAll(event.currentTarget.checked)}
          />
          <label for="events-all">All events, including types added later</label>
        </p>
        {all ? null : (
          <ul class="checks">
            {EVENT_TYPES.map((type) => (
              <li key={type}>
                <input
                  id={`event-${type}`}
                  type="checkbox"
                  checked={chosen.includes(type)}
                  onChange={(event) =>
                    setChosen(
                      event.currentTarget.checked ? [...chosen, type] : chosen.filter((name) => name !== type)
                    )}
                />
                <label for={`event-${type}`}>{type}</label>
              </li>
            ))}
          </ul>
        )}
      </fieldset>
      <p class="actions">
        <button type="submit">Add endpoint</button>
      </p>
    </form>
  )
}

export const WebhooksView = () => {
  const list = useLoad(() => get<{ readonly items: ReadonlyArray<WebhookEndpoint> }>("/webhook-endpoints"), [])
  const [outcome, setOutcome] = useState<Outcome>()
  const done = (next: Outcome) => {
    setOutcome(next)
    list.reload()
  }
  return (
    <section aria-labelledby="view-title">
      <Heading>Webhook endpoints</Heading>
      <p class="muted">
        Deliveries of each event are on its page in <a href={href("/events")}>Events</a>.
      </p>
      <p role={outcome?.failed === true ? "alert" : "status"} class={outcome?.failed === true ? "error" : ""}>
        {outcome?.text ?? ""}
      </p>
      {outcome?.secret === undefined ? null : <SecretOnce label={outcome.secret.label} secret={outcome.secret.value} />}
      {list.error !== undefined ? <Failure error={list.error} /> : list.value === undefined ? <Loading /> : (
        <Table
          caption="Endpoints"
          rows={list.value.items}
          rowKey={(endpoint) => endpoint.endpointId}
          empty="No endpoints yet."
          columns={[
            { header: "Endpoint", cell: (e) => <Code>{e.endpointId}</Code> },
            { header: "URL", cell: (e) => <span class="url">{e.url}</span> },
            { header: "Events", cell: (e) => e.events.join(", ") },
            {
              header: "Status",
              cell: (e) => (
                <>
                  <Status value={e.status} />
                  {e.disabledReason === null ? null : <span class="muted">{" "}{e.disabledReason}</span>}
                </>
              )
            },
            { header: "Created", cell: (e) => <DateTime iso={e.createdAt} /> },
            {
              header: "Actions",
              cell: (e) => (
                <span class="row-actions">
                  {endpointActions.filter((action) => action.offeredFor?.(e) ?? true).map((action) => (
                    <ActionButton key={action.label} action={action} endpoint={e} onDone={done} />
                  ))}
                </span>
              )
            }
          ]}
        />
      )}
      <CreateEndpoint onDone={done} />
    </section>
  )
}
