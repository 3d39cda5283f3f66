// The views, in the sidebar's order (Ctrl/Cmd+1..7). Adding a view is
// adding its component here: the sidebar, the shortcuts, "app:view" and
// the page all read this table.
import type { Component } from 'svelte'
import Dictation from './Dictation.svelte'
import Meeting from './Meeting.svelte'
import Files from './Files.svelte'
import Chat from './Chat.svelte'
import History from './History.svelte'
import Models from './Models.svelte'
import Settings from './Settings.svelte'

export interface ViewEntry { id: string; label: string; icon: string; component: Component }

export const views: ViewEntry[] = [
  { id: 'dictation', label: 'Dictation', icon: '●', component: Dictation },
  { id: 'meeting', label: 'Meeting', icon: '◎', component: Meeting },
  { id: 'files', label: 'Files', icon: '▤', component: Files },
  { id: 'chat', label: 'Chat', icon: '✎', component: Chat },
  { id: 'history', label: 'History', icon: '↺', component: History },
  { id: 'models', label: 'Models', icon: '◆', component: Models },
  { id: 'settings', label: 'Settings', icon: '⚙', component: Settings },
]
