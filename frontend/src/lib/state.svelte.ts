import { on } from './api'
import { Models, Settings, Event } from './api.gen'
import type { ModelInfo, SettingsData } from './api.gen'

// A view's id (the table is views/index.ts).
export type View = string

// ui is the state the views share: the current view, settings and the
// model list (pickers in several views).
export const ui = $state({
  view: 'dictation' as View,
  settings: null as SettingsData | null,
  models: [] as ModelInfo[],
  openConversation: 0,
  toast: '',
})

let toastTimer: ReturnType<typeof setTimeout> | undefined
export function toast(msg: string) {
  ui.toast = msg
  clearTimeout(toastTimer)
  toastTimer = setTimeout(() => (ui.toast = ''), 4000)
}

export async function loadSettings() {
  ui.settings = await Settings.Get()
}

export async function loadModels() {
  ui.models = (await Models.List()) ?? []
}

export function installed(task: string): ModelInfo[] {
  return ui.models.filter((m) => m.installed && m.task === task)
}

on(Event.SettingsChanged, (d: SettingsData) => { if (d) ui.settings = d })
on(Event.ModelsDone, () => { loadModels().catch(() => {}) })
on(Event.ModelsChanged, () => { loadModels().catch(() => {}) })
