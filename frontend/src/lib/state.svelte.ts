import { call, on } from './api'
import type { ModelInfo, SettingsData } from './types'

export const views = [
  { id: 'dictation', label: 'Dictation', icon: '●' },
  { id: 'files', label: 'Files', icon: '▤' },
  { id: 'chat', label: 'Chat', icon: '✎' },
  { id: 'history', label: 'History', icon: '↺' },
  { id: 'models', label: 'Models', icon: '◆' },
  { id: 'settings', label: 'Settings', icon: '⚙' },
] as const
export type View = (typeof views)[number]['id']

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
  ui.settings = await call<SettingsData>('Settings', 'Get')
}

export async function loadModels() {
  ui.models = (await call<ModelInfo[]>('Models', 'List')) ?? []
}

export function installed(task: string): ModelInfo[] {
  return ui.models.filter((m) => m.installed && m.task === task)
}

on('settings:changed', (d: SettingsData) => { if (d) ui.settings = d })
on('models:done', () => { loadModels().catch(() => {}) })
on('models:changed', () => { loadModels().catch(() => {}) })
