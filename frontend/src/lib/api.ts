// The one door to the Go services. In the Wails window the bound methods
// are window.go.app.<Service>.<Method> and events come through
// window.runtime; in a browser (`hark ui`, the end-to-end tests) the same
// calls go through the HTTP bridge (app/bridge). The typed client, the
// services' types and the event names are generated from Go into
// api.gen.ts (go generate ./app/apigen); views call those, not call().

import type { EventPayloads } from './api.gen'

declare global {
  interface Window {
    go?: Record<string, Record<string, Record<string, (...args: unknown[]) => Promise<unknown>>>>
    runtime?: {
      EventsOn(name: string, cb: (data: unknown) => void): () => void
      Quit(): void
    }
  }
}

export const inWails = (): boolean => typeof window !== 'undefined' && !!window.go?.app

export async function call<T>(service: string, method: string, ...args: unknown[]): Promise<T> {
  // Services live in package app; the window's own (Shell) in desktop.
  const bound = window.go?.app?.[service]?.[method] ?? window.go?.desktop?.[service]?.[method]
  if (bound) return (await bound(...args)) as T
  const r = await fetch(`/api/call/${service}.${method}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(args),
  })
  let body: { result?: T; error?: string | { message?: string } }
  try {
    body = await r.json()
  } catch {
    throw new Error(`${service}.${method}: HTTP ${r.status}`)
  }
  // The gate (internal/localhttp) refuses with {"error": {"message": ...}}.
  if (body.error) throw new Error(typeof body.error === 'string' ? body.error : body.error.message ?? `HTTP ${r.status}`)
  return body.result as T
}

// The bridge's own connection events come with the services'.
type Payloads = EventPayloads & { 'bridge:open': null; 'bridge:error': null }
type Listener = (data: any) => void
const listeners = new Map<string, Set<Listener>>()
let source: EventSource | null = null
export const connection = { ok: true }

function ensureSource() {
  if (source || inWails()) return
  source = new EventSource('/api/events')
  source.onopen = () => { connection.ok = true; dispatch('bridge:open', null) }
  source.onerror = () => { connection.ok = false; dispatch('bridge:error', null) }
  source.onmessage = (e) => {
    try {
      const { name, data } = JSON.parse(e.data)
      dispatch(name, data)
    } catch {
      /* a malformed event is dropped, never fatal */
    }
  }
}

function dispatch(name: string, data: unknown) {
  listeners.get(name)?.forEach((cb) => cb(data))
}

// on subscribes to an event (Event.ChatToken...), its callback typed by
// the event's payload; it returns the function that unsubscribes.
export function on<K extends keyof Payloads>(name: K, cb: (data: Payloads[K]) => void): () => void {
  if (inWails() && window.runtime) return window.runtime.EventsOn(name, cb as (data: unknown) => void)
  ensureSource()
  let set = listeners.get(name)
  if (!set) listeners.set(name, (set = new Set()))
  set.add(cb)
  return () => set!.delete(cb)
}

// upload hands a file the user dropped or picked to the app and returns its
// upload id (the services never take paths from the page). The bridge answers /api/upload in the
// browser and, as Wails' asset handler, in the window too.
export async function upload(file: File): Promise<string> {
  const form = new FormData()
  form.append('file', file, file.name)
  const r = await fetch('/api/upload', { method: 'POST', body: form })
  const body = await r.json().catch(() => ({ error: `upload: HTTP ${r.status}` }))
  if (body.error) throw new Error(typeof body.error === 'string' ? body.error : body.error.message)
  return body.result as string
}

export function recordingURL(id: number): string {
  return `/media/recording/${id}`
}

// download saves text as a file (browser) — in the window the same link
// goes through WebKit's download handling.
export function download(name: string, text: string, type = 'text/plain') {
  const url = URL.createObjectURL(new Blob([text], { type: type + ';charset=utf-8' }))
  const a = document.createElement('a')
  a.href = url
  a.download = name
  document.body.appendChild(a)
  a.click()
  a.remove()
  setTimeout(() => URL.revokeObjectURL(url), 10_000)
}

export async function copy(text: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text)
  } catch {
    // Older WebKit or an insecure context: fall back to a selection copy.
    const ta = document.createElement('textarea')
    ta.value = text
    document.body.appendChild(ta)
    ta.select()
    document.execCommand('copy')
    ta.remove()
  }
}
