// Browser attack test: a web page in the user's Chromium tries to use
// `hark ui` and `hark serve`, by DNS rebinding (--host-resolver-rules maps
// rebind.test to 127.0.0.1, and the attacker's first document is served
// under that name, so its own origin then reaches Hark) and by plain
// cross-site requests from evil.test. Run by attack_test.go with:
//   HARK_URL    the UI's URL with its token (opened first: the victim's
//               browser holds the session cookie)
//   SERVE_URL   hark serve, e.g. http://127.0.0.1:40124
//   SECRET      a file the attacker wants to read
//   E2E_TIMEOUT_MS the bound on each wait (timeout.mjs)
// It prints one JSON line "RESULT {...}": what each attack saw.
import { chromium } from 'playwright-core'
import { T } from './timeout.mjs'

const ui = new URL(process.env.HARK_URL)
const serve = new URL(process.env.SERVE_URL)
const secret = process.env.SECRET

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync',
    // Chromium's own Local Network Access checks would block these pages first;
    // Firefox and Safari have none, so the servers must refuse on their own.
    '--disable-features=LocalNetworkAccessChecks,LocalNetworkAccessChecksWebSockets,BlockInsecurePrivateNetworkRequests,PrivateNetworkAccessSendPreflights,PrivateNetworkAccessRespectPreflightResults',
    '--host-resolver-rules=MAP rebind.test 127.0.0.1, MAP evil.test 127.0.0.1'],
})
const ctx = await browser.newContext()
ctx.setDefaultTimeout(T)
ctx.setDefaultNavigationTimeout(T)
const evilHTML = '<!doctype html><title>innocent</title><p>nothing to see</p>'
// The attacker's documents: served by "the attacker's server" (here a
// route) before the rebinding; every later request goes to the network,
// i.e. to Hark on 127.0.0.1.
await ctx.route((u) => (u.hostname === 'rebind.test' || u.hostname === 'evil.test') && u.pathname === '/evil.html',
  (r) => r.fulfill({ status: 200, contentType: 'text/html', body: evilHTML }))

const result = {}
try {
  // The victim uses the UI: the browser now holds its cookie.
  const own = await ctx.newPage()
  await own.goto(ui.href)
  result.ownPage = await own.evaluate(async () => {
    const r = await fetch('/api/call/Settings.DataDir', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '[]' })
    return r.status
  })

  // 1. DNS rebinding against hark ui: same origin from the page's view.
  const rb = await ctx.newPage()
  await rb.goto(`http://rebind.test:${ui.port}/evil.html`)
  result.rebindUI = await rb.evaluate(async (secret) => {
    const post = (path, body, type = 'application/json') =>
      fetch(path, { method: 'POST', headers: { 'Content-Type': type }, body }).then((r) => r.status, (e) => 'error: ' + e)
    const form = new FormData()
    form.append('file', new Blob(['RIFF']), 'x.wav')
    return {
      settings: await post('/api/call/Settings.Update', JSON.stringify([{ theme: 'dark', serverAutoStart: true }])),
      add: await post('/api/call/Transcription.Add', JSON.stringify([secret, ''])),
      history: await post('/api/call/History.List', '["",10,0]'),
      server: await post('/api/call/Server.Start', '[""]'),
      upload: await fetch('/api/upload', { method: 'POST', body: form }).then((r) => r.status, (e) => 'error: ' + e),
      media: await fetch('/media/recording/1').then((r) => r.status, (e) => 'error: ' + e),
      unclean: await post(location.origin + '//api/call/Server.Start', '[""]'),
      page: await fetch('/').then((r) => r.status, (e) => 'error: ' + e),
    }
  }, secret)

  // 2. DNS rebinding against hark serve.
  const rs = await ctx.newPage()
  await rs.goto(`http://rebind.test:${serve.port}/evil.html`)
  result.rebindServe = await rs.evaluate(async () => {
    const chat = JSON.stringify({ model: 'stories', messages: [{ role: 'user', content: 'Once' }], max_tokens: 2 })
    const form = new FormData()
    form.append('file', new Blob(['RIFF....WAVE']), 'x.wav')
    form.append('model', 'tiny')
    const st = (p) => p.then((r) => r.status, (e) => 'error: ' + e)
    return {
      chat: await st(fetch('/v1/chat/completions', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: chat })),
      models: await st(fetch('/v1/models')),
      audio: await st(fetch('/v1/audio/transcriptions', { method: 'POST', body: form })),
    }
  })

  // 3. Plain cross-site requests from evil.test to both servers: no-cors
  // posts need no preflight, so only the server can refuse them; the
  // page cannot read the answers (opaque), the Go side checks effects.
  const cs = await ctx.newPage()
  await cs.goto(`http://evil.test:8080/evil.html`)
  result.crossSite = await cs.evaluate(async ({ ui, serve, secret }) => {
    const chat = JSON.stringify({ model: 'stories', messages: [{ role: 'user', content: 'Once' }], max_tokens: 2 })
    const form = new FormData()
    form.append('file', new Blob(['RIFF....WAVE']), 'x.wav')
    form.append('model', 'tiny')
    const sent = (p) => p.then((r) => r.type, (e) => 'error: ' + e)
    const cors = (p) => p.then((r) => r.status, (e) => 'blocked')
    return {
      serveText: await sent(fetch(serve + 'v1/chat/completions', { method: 'POST', mode: 'no-cors', headers: { 'Content-Type': 'text/plain' }, body: chat })),
      serveForm: await sent(fetch(serve + 'v1/audio/transcriptions', { method: 'POST', mode: 'no-cors', body: form })),
      uiText: await sent(fetch(ui + 'api/call/Transcription.Add', { method: 'POST', mode: 'no-cors', credentials: 'include', headers: { 'Content-Type': 'text/plain' }, body: JSON.stringify([secret, '']) })),
      uiSettings: await sent(fetch(ui + 'api/call/Settings.Update', { method: 'POST', mode: 'no-cors', credentials: 'include', headers: { 'Content-Type': 'text/plain' }, body: JSON.stringify([{ theme: 'dark' }]) })),
      serveRead: await cors(fetch(serve + 'v1/models')),
      uiRead: await cors(fetch(ui + 'api/call/History.List', { method: 'POST', credentials: 'include', headers: { 'Content-Type': 'application/json' }, body: '["",10,0]' })),
    }
  }, { ui: ui.origin + '/', serve: serve.origin + '/', secret })
} catch (e) {
  result.error = String(e)
}
console.log('RESULT ' + JSON.stringify(result))
await browser.close()
