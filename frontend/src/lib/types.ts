// The JSON shapes of the Go services (package app; see briefs/app-api.md).

export interface Word { word: string; start: number; end: number; probability: number }
export interface Segment { id: number; start: number; end: number; text: string; words?: Word[] }

export interface Item {
  id: number
  kind: 'dictation' | 'file'
  createdAt: number
  title: string
  sourcePath: string
  audioPath: string
  durationMs: number
  status: 'recording' | 'recorded' | 'transcribing' | 'done' | 'failed'
  text: string
  segments?: Segment[]
  model: string
  language: string
  error?: string
  audioBytes: number
  mode: string
  promptTerms: string[]
}

export interface Usage { items: number; audioBytes: number; oldest: number }

export interface Job {
  id: number
  name: string
  status: 'queued' | 'running' | 'done' | 'failed' | 'canceled'
  progress: number
  error?: string
  text?: string
  segments?: Segment[]
  model: string
}

export interface Conversation { id: number; title: string; model: string; createdAt: number; updatedAt: number }
export interface Message {
  id: number
  conversationId: number
  role: 'system' | 'user' | 'assistant'
  content: string
  createdAt: number
  stopped?: boolean
}

export interface ModelInfo {
  name: string
  task: string
  installed: boolean
  sizeBytes: number
  memoryBytes: number
  notes: string
  recommended: boolean
  verified: boolean
  path: string
  loaded?: boolean
  backend?: string // what it runs on when loaded
  windowMs: number // estimated time of one 30-s window on this machine (speech; 0: not measured)
  wer: number // published LibriSpeech test-clean WER, % (0: no published figure)
  werSource: string
  recommendedFor: string[] | null // "dictation", "files"
  why: Record<string, string> | null // per task in recommendedFor
}

export interface SpeedProbe { model: string; params: number; backend: string; windowMs: number; choice: string }
export interface Advice { probe: SpeedProbe | null; dictation: string; dictationWhy: string; files: string; filesWhy: string }

export interface ServerStatus { running: boolean; addr: string; url: string; error?: string }

export interface DictationStatus { state: 'idle' | 'recording' | 'transcribing'; device: string; startedAt: number; lastText: string; mode?: string }
export interface Device { id: string; name: string; default: boolean }

export interface SettingsData {
  hotkey: string
  hotkeyMode: 'toggle' | 'push'
  language: string
  speechModel: string
  chatModel: string
  outputMode: 'paste' | 'copy' | 'type'
  restoreClipboard: boolean
  cleanup: boolean
  cleanupPrompt: string
  autoStop: boolean
  autoStopMs: number
  inputDevice: string
  launchAtLogin: boolean
  showMenuBarIcon: boolean
  showDockIcon: boolean
  retentionDays: number
  idleUnloadMinutes: number
  serverAddr: string
  serverAutoStart: boolean
  serverCorsOrigins: string // space- or comma-separated origins
  theme: 'system' | 'light' | 'dark'
  vocabulary: string
  vocabularyPrompt: boolean
  vocabularyBias: number
  replacements: Rule[]
  voiceCommands: boolean
  autoEnter: boolean
  modes: Mode[]
  defaultMode: string
  activeMode: string
  forceCPU: boolean
  speedProbe?: SpeedProbe
}

// internal/version.Info (About.Info).
export interface VersionInfo { version: string; commit: string; date: string; go: string; platform: string; backends: string[] }

// app.UpdateState / update.Release (Updates.State) and app.CommandStatus.
export interface ReleaseAsset { name: string; url: string; size: number }
export interface Release { version: string; name: string; notes: string; page: string; assets: ReleaseAsset[] }
export interface UpdateState { current: string; asked: boolean; enabled: boolean; lastCheck: number; available?: Release; error?: string }
export interface CommandStatus { onPath: boolean; path: string; error?: string }

// app/rewrite.Rule
export interface Rule { from: string; to: string; wholeWord: boolean; ignoreCase: boolean }

// app/modes.Mode
export interface Mode {
  name: string
  apps: string[]
  language: string
  translate: boolean
  model: string
  vocabulary: string
  cleanup: '' | 'punctuation' | 'email' | 'message' | 'code' | 'custom'
  cleanupPrompt: string
  output: '' | 'paste' | 'type' | 'copy'
  autoEnter: boolean
}

// internal/vocab.Prompt
export interface PromptFit { text: string; used: string[]; dropped: string[] }
