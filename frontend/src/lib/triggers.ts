// The single-key triggers (Go: app/trigger Keys) and their names on each
// OS, for Settings and the Dictation view.
export const isMac = navigator.platform.toLowerCase().includes('mac')

export const triggerKeys: [string, string][] = isMac
  ? [['rightalt', 'Right Option'], ['rightsuper', 'Right Command'], ['fn', 'Fn / Globe'], ['rightctrl', 'Right Control'],
     ['rightshift', 'Right Shift'], ['mouse8', 'Mouse back button'], ['mouse9', 'Mouse forward button']]
  : [['rightctrl', 'Right Ctrl'], ['rightalt', 'Right Alt / AltGr'], ['rightsuper', 'Right Super'], ['rightshift', 'Right Shift'],
     ['mouse8', 'Mouse back button (8)'], ['mouse9', 'Mouse forward button (9)']]

export const triggerLabel = (key: string) => triggerKeys.find(([k]) => k === key)?.[1] ?? key
