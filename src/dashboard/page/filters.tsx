/**
 * A list's filters, each one query parameter of its endpoint: a filter the API gains is one more entry in the view's
 * table (the form, the query and the reset follow). The form keeps what is typed; the view gets the query when the
 * filters are applied, and keeps it for every page it asks for (a filtered list's cursor continues that list only).
 */
import { useState } from "preact/hooks"
import type { Query } from "./api.ts"

export interface Filter {
  /** The query parameter. */
  readonly name: string
  readonly label: string
  /** A date and time in the viewer's zone, text, or one of the API's names (`any` reads as none). */
  readonly input: "datetime-local" | "text" | { readonly choices: ReadonlyArray<string>; readonly any: string }
  readonly placeholder?: string
  /** The query parameter's value for what was typed (none: left out). */
  readonly toQuery: (typed: string) => string | undefined
}

/** A local date and time typed in the viewer's zone, as the API's ISO timestamp (UTC). */
export const localToIso = (typed: string) => (typed === "" ? undefined : new Date(typed).toISOString())

/** Text as typed, without the spaces around it (none when nothing is left). */
export const trimmed = (typed: string) => (typed.trim() === "" ? undefined : typed.trim())

/** A date range of `createdAt`: from (inclusive) and to (exclusive), as the API's lists take it. */
export const createdRange: ReadonlyArray<Filter> = [
  { name: "createdFrom", label: "Created from", input: "datetime-local", toQuery: localToIso },
  { name: "createdTo", label: "Created before", input: "datetime-local", toQuery: localToIso }
]

type Typed = Readonly<Record<string, string>>

const queryOf = (filters: ReadonlyArray<Filter>, typed: Typed): Query =>
  Object.fromEntries(filters.map((filter) => [filter.name, filter.toQuery(typed[filter.name] ?? "")]))

const FilterInput = (
  { filter, onInput, value }: {
    readonly filter: Filter
    readonly value: string
    readonly onInput: (value: string) => void
  }
) => {
  const id = `filter-${filter.name}`
  if (typeof filter.input === "object") {
    return (
      <select id={id} name={filter.name} value={value} onChange={(event) => onInput(event.currentTarget.value)}>
        <option value="">{filter.input.any}</option>
        {filter.input.choices.map((choice) => <option key={choice} value={choice}>{choice}</option>)}
      </select>
    )
  }
  const common = {
    id,
    name: filter.name,
    value,
    ...(filter.placeholder === undefined ? {} : { placeholder: filter.placeholder }),
    onInput: (event: { readonly currentTarget: HTMLInputElement }) => onInput(event.currentTarget.value)
  }
  // One element per type: Preact's types pair each input type with the attributes it takes.
  return filter.input === "text" ? <input type="text" {...common} /> : <input type="datetime-local" {...common} />
}

/** The filters' form: Apply hands the view the query; Clear empties the form and hands it none. */
export const FilterForm = (
  { filters, label, onApply }: {
    readonly filters: ReadonlyArray<Filter>
    readonly label: string
    readonly onApply: (query: Query) => void
  }
) => {
  const [typed, setTyped] = useState<Typed>({})
  return (
    <form
      class="filters"
      aria-label={label}
      onSubmit={(event) => {
        event.preventDefault()
        onApply(queryOf(filters, typed))
      }}
    >
      {filters.map((filter) => (
        <p key={filter.name}>
          <label for={`filter-${filter.name}`}>{filter.label}</label>
          <FilterInput
            filter={filter}
            value={typed[filter.name] ?? ""}
            onInput={(value) => setTyped({ ...typed, [filter.name]: value })}
          />
        </p>
      ))}
      <p class="actions">
        <button type="submit">Apply filters</button>
        <button
          type="button"
          onClick={() => {
            setTyped({})
            onApply({})
          }}
        >
          Clear
        </button>
      </p>
    </form>
  )
}
