// End-to-end UI test: headless Debian Chromium (never a downloaded browser)
// driven by playwright-core against `hark ui` and the real Go services.
// Run by frontend/e2e/e2e_test.go, which passes everything through env:
//   HARK_URL       the bridge, e.g. http://127.0.0.1:40123
//   E2E_PHASE      "1" (drop, export, chat, history, change a setting) or
//                  "2" (after the server restarted: the setting was kept)
//   E2E_CASE       JSON: {dropClip, dropText, srtCue, pickClip, pickText, setting}
//   E2E_SHOTS      folder for the screenshots of each view ("" = none)
//   E2E_OUT        scratch folder (downloads, failure.png)
//   E2E_TIMEOUT_MS the bound on each wait (timeout.mjs)
import { chromium } from 'playwright-core'
import { readFile } from 'node:fs/promises'
import { basename, join } from 'node:path'
import { T } from './timeout.mjs'

const url = process.env.HARK_URL
const phase = process.env.E2E_PHASE ?? '1'
const tc = JSON.parse(process.env.E2E_CASE ?? '{}')
const shots = process.env.E2E_SHOTS ?? ''
const out = process.env.E2E_OUT ?? '/tmp'

const t0 = Date.now()
function check(cond, msg) {
  if (!cond) throw new Error('check failed: ' + msg)
  console.log(`ok (${((Date.now() - t0) / 1000).toFixed(1)} s):`, msg)
}

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
})
const ctx = await browser.newContext({ viewport: { width: 1180, height: 760 }, colorScheme: 'light', acceptDownloads: true })
ctx.setDefaultTimeout(T) // every wait without its own bound too
const page = await ctx.newPage()
const errors = []
page.on('pageerror', (e) => errors.push(String(e)))
page.on('console', (m) => { if (m.type() === 'error') console.log('console:', m.text()) })

async function view(id, key) {
  // Half the switches by keyboard shortcut, half by click: both must work.
  if (key) await page.keyboard.press(`Control+${key}`)
  else await page.click(`nav [data-view="${id}"]`)
  await page.waitForSelector(`main[data-current="${id}"]`, { timeout: T })
}

async function shot(name) {
  if (!shots) return
  await page.waitForTimeout(300) // let transitions settle
  await page.screenshot({ path: join(shots, name + '.png') })
}

try {
  await page.goto(url, { waitUntil: 'load' })
  await page.waitForSelector('main[data-current="dictation"]', { timeout: T })

  if (phase === '1') {
    await page.waitForSelector('[data-testid="dictation-state"]')
    // First launch asks once about the update check; a user answers it,
    // and the views are shown (and shot) as they are from then on.
    await page.click('[data-testid="update-prompt"] button:has-text("No thanks")')
    await page.waitForSelector('[data-testid="update-prompt"]', { state: 'detached', timeout: T })
    check(true, 'the update question answered once: no more banner')
    await shot('dictation')

    // Files: a synthetic drop of one kit clip, the file picker for another.
    await view('files', '3')
    const bytes = (await readFile(tc.dropClip)).toString('base64')
    await page.evaluate(([b64, name]) => {
      const bin = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))
      const dt = new DataTransfer()
      dt.items.add(new File([bin], name, { type: 'audio/wav' }))
      const zone = document.querySelector('[data-testid="dropzone"]')
      for (const type of ['dragenter', 'dragover', 'drop']) {
        zone.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }))
      }
    }, [bytes, basename(tc.dropClip)])
    await page.locator(`.queue .row:has-text("${basename(tc.dropClip)}")`).click()
    await page.waitForFunction(
      (want) => document.querySelector('[data-testid="segments"]')?.textContent?.includes(want),
      tc.dropText, { timeout: T })
    check(true, `dropped clip transcribed to "${tc.dropText}"`)
    check((await page.textContent('[data-testid="segments"] time')).includes('→'), 'segments show timestamps')

    const [dl] = await Promise.all([page.waitForEvent('download', { timeout: T }), page.click('[data-export="srt"]')])
    const srtPath = join(out, 'export.srt')
    await dl.saveAs(srtPath)
    const srt = await readFile(srtPath, 'utf8')
    console.log('srt:', JSON.stringify(srt))
    check(srt.startsWith('1\n') && srt.includes(tc.srtCue + '\n'), `SRT export has cue "${tc.srtCue}"`)
    check(srt.includes(tc.dropText), 'SRT export has the text')

    await page.setInputFiles('[data-testid="dropzone"] input[type=file]', tc.pickClip)
    await page.locator(`.queue .row:has-text("${basename(tc.pickClip)}")`).click()
    await page.waitForFunction(
      (want) => document.querySelector('[data-testid="segments"]')?.textContent?.includes(want),
      tc.pickText, { timeout: T })
    check(true, `picked clip transcribed to "${tc.pickText}"`)
    await shot('files')

    // Chat with stories260K: see the answer stream in, stop it midway.
    await view('chat')
    await page.selectOption('[data-testid="chat-model"]', tc.chatModel)
    // The model writes a whole story in a fraction of a second, faster than
    // a remote-controlled click: an observer in the page clicks the real
    // Stop button as soon as streamed text is on screen, and notes what it saw.
    await page.evaluate(() => {
      window.__seen = ''
      const obs = new MutationObserver(() => {
        const msg = document.querySelector('.msg.assistant[data-streaming="true"] .md')
        const stop = document.querySelector('.composer button.danger')
        if (msg && stop && msg.textContent.trim() && !window.__seen) {
          window.__seen = msg.textContent
          stop.click()
          obs.disconnect()
        }
      })
      obs.observe(document.body, { subtree: true, childList: true, characterData: true })
    })
    await page.fill('textarea[aria-label="Message"]', 'Once upon a time')
    await page.keyboard.press('Enter')
    await page.waitForSelector('.msg.user:has-text("Once upon a time")', { timeout: T })
    await page.waitForFunction(() => window.__seen, null, { timeout: T })
    const seen = await page.evaluate(() => window.__seen)
    check(seen.trim().length > 0, `streamed text seen while generating: ${JSON.stringify(seen.slice(0, 60))}`)
    await page.waitForSelector('.msg.assistant:has-text("Stopped")', { timeout: T })
    const final = await page.textContent('.msg.assistant .md')
    check(final.trim().length > 0, `stopped answer kept: ${JSON.stringify(final.slice(0, 80))}`)
    await page.fill('textarea[aria-label="Message"]', 'Tell me about a cat.')
    await page.keyboard.press('Enter')
    await page.waitForFunction(() => document.querySelectorAll('.msg.assistant').length >= 2 &&
      !document.querySelector('.msg.assistant[data-streaming="true"]') &&
      document.querySelectorAll('.msg.assistant .md')[1]?.textContent.trim(), null, { timeout: T })
    check(true, 'second answer completed')
    await shot('chat')
    await page.emulateMedia({ colorScheme: 'dark' })
    await shot('chat-dark')
    await page.emulateMedia({ colorScheme: 'light' })

    // History: search, select, replay.
    await view('history', '5')
    const word = tc.dropText.split(/\s+/).filter((w) => w.length > 4)[0].replace(/[^A-Za-z]/g, '')
    await page.fill('input[type=search]', word)
    await page.waitForFunction((n) => document.querySelectorAll('.list .row').length === n, 1, { timeout: T })
    check((await page.textContent('.list .row')).includes(tc.dropText), `search "${word}" finds only the dropped clip`)
    // The list's duration is the player's: whole seconds, cut.
    const secs = Math.floor(tc.dropDuration)
    check((await page.textContent('.list .row')).includes(` · 0:${String(secs).padStart(2, '0')} · `), `the list says 0:${String(secs).padStart(2, '0')} as the player does`)
    await page.click('.list .row')
    await page.waitForSelector('audio[data-testid="replay"]')
    const dur = await page.evaluate(() => new Promise((res, rej) => {
      const a = document.querySelector('audio[data-testid="replay"]')
      const done = () => (a.readyState >= 1 ? res(a.duration) : null)
      a.addEventListener('loadedmetadata', done)
      a.addEventListener('error', () => rej(new Error('audio error ' + a.error?.code)))
      done()
    }))
    check(Math.abs(dur - tc.dropDuration) < 0.1, `replay loads the recording (duration ${dur.toFixed(2)} s)`)
    await page.evaluate(() => document.querySelector('audio[data-testid="replay"]').play().catch(() => {}))
    await page.fill('input[type=search]', '')
    await page.waitForFunction(() => document.querySelectorAll('.list .row').length >= 2, null, { timeout: T })
    await page.click('.list .row:has-text("' + tc.dropText + '")')
    await shot('history')

    // "Send to chat": a conversation about the transcript, answered.
    await page.click('button:has-text("Send to chat")')
    await page.waitForSelector('main[data-current="chat"]', { timeout: T })
    await page.waitForSelector('.conversation h2:has-text("About")', { timeout: T })
    await page.waitForSelector('.msg.user:has-text("Summarise this transcript.")', { timeout: T })
    await page.waitForFunction(() => !document.querySelector('.msg.assistant[data-streaming="true"]') &&
      document.querySelector('.msg.assistant .md')?.textContent.trim(), null, { timeout: T })
    check(true, 'send to chat: a conversation about the transcript, answered')

    await view('models', '6')
    await page.waitForSelector(`[data-model="${tc.chatModel}"].installed`, { timeout: T })
    // Grouped by task once the app has measured this machine's speed, with
    // a recommendation per task that says why; never large-v3 for
    // dictation on the CPU.
    await page.waitForSelector('[data-recommendation="dictation"]', { timeout: T })
    const groups = await page.locator('h2[data-group]').evaluateAll((hs) => hs.map((h) => h.dataset.group))
    const dict = await page.locator('[data-recommendation="dictation"]').textContent()
    const files = await page.locator('[data-recommendation="files"]').textContent()
    check(groups.join(',') === 'dictation,files,slow,chat' && /on cpu|estimated for cpu/.test(dict) && /on cpu|estimated for cpu/.test(files) && !/large-v\d/.test(dict),
      `models grouped (${groups.join(', ')}); dictation: ${dict.trim()}; files: ${files.trim()}`)
    check(await page.locator('[data-group="dictation"] ~ .grid [data-speed]').count() > 0, 'speed and accuracy shown on the cards')
    await shot('models')
    // A model under a licence shows it before anything is downloaded.
    const gemma = page.locator('[data-model="gemma-3-270m-it-q8_0"]')
    await gemma.locator('button:has-text("Download")').click()
    const licence = gemma.locator('[role="dialog"][aria-label="Licence"]')
    await licence.waitFor({ timeout: T })
    const terms = await licence.locator('a').getAttribute('href')
    await licence.locator('button:has-text("Not now")').click()
    check(terms === 'https://ai.google.dev/gemma/terms' && await licence.count() === 0 && await gemma.locator('progress').count() === 0,
      `Gemma's licence (${terms}) shown before download; "Not now" downloads nothing`)

    // Settings: change one, save; phase 2 checks it after a restart.
    await view('settings', '7')
    await page.waitForSelector('select[name="retentionDays"]')
    // Only the OS settings that work here (About.Features): on Linux
    // launch at login, no menu-bar icon, Dock or "hark on PATH" button.
    await page.waitForSelector('input[name="launchAtLogin"]', { timeout: T })
    check(await page.locator('input[name="showMenuBarIcon"], input[name="showDockIcon"]').count() === 0 &&
      await page.locator('button:has-text("Put the hark command on PATH")').count() === 0, 'no macOS-only settings on Linux')
    await page.selectOption('select[name="retentionDays"]', String(tc.retentionDays))
    // A single-key trigger (app/trigger): its options appear once chosen.
    check(await page.locator('input[name="triggerDoubleTap"]').count() === 0, 'no trigger options without a trigger key')
    await page.selectOption('select[name="trigger"]', 'rightctrl')
    await page.check('input[name="triggerDoubleTap"]')
    const help = await page.locator('[data-testid="trigger-help"]').textContent()
    check(/Double-tap it to start/.test(help), `trigger help follows the mode: ${help.trim().slice(0, 60)}`)
    // The overlay's place: the bottom centre by default, or below the text cursor.
    check(await page.isChecked('input[name="overlayPosition"][value="bottom"]'), 'the overlay at the bottom centre by default')
    await page.check('input[name="overlayPosition"][value="caret"]')
    await page.waitForSelector('[data-testid="overlay-caret-help"]')
    await page.waitForSelector('[data-testid="usage"]')
    await page.waitForSelector('input[name="forceCPU"]')
    const loadedOn = await page.locator('[data-testid="loaded-models"]').textContent()
    check(/· cpu/.test(loadedOn), `Settings shows where loaded models run: ${loadedOn.replace(/\s+/g, ' ').trim()}`)
    // Shot from the top, with the hotkey the Dictation view shows;
    // changed after.
    await page.locator('input[name="hotkey"]').evaluate((el) => el.closest('section')?.scrollIntoView({ block: 'start' }))
    await shot('settings')
    await page.fill('input[name="hotkey"]', tc.hotkey)
    await page.click('[data-testid="save-settings"]')
    await page.waitForSelector('.toast:has-text("Settings saved")', { timeout: T })
    check(true, 'settings saved')
  } else {
    await view('settings', '7')
    await page.waitForSelector('select[name="retentionDays"]')
    const kept = await page.inputValue('select[name="retentionDays"]')
    const hotkey = await page.inputValue('input[name="hotkey"]')
    check(kept === String(tc.retentionDays) && hotkey === tc.hotkey, `settings kept after restart (retention ${kept}, hotkey ${hotkey})`)
    const trig = await page.inputValue('select[name="trigger"]')
    check(trig === 'rightctrl' && await page.isChecked('input[name="triggerDoubleTap"]'), `trigger kept after restart (${trig}, double tap)`)
    check(await page.isChecked('input[name="overlayPosition"][value="caret"]'), 'the overlay position kept after restart')

    // The local API server from Settings: start it on a free port, see its
    // address, ask it for its models, stop it.
    await page.fill('input[name="serverAddr"]', '127.0.0.1:0')
    await page.click('button:has-text("Start server")')
    const status = page.locator('[data-testid="server-status"]')
    await page.waitForFunction(() => /Running at http:\/\/127\.0\.0\.1:\d+/.test(document.querySelector('[data-testid="server-status"]')?.textContent ?? ''), null, { timeout: T })
    const api = (await status.textContent()).match(/http:\/\/127\.0\.0\.1:\d+/)[0]
    const health = await fetch(api + '/health')
    const models = await (await fetch(api + '/v1/models')).json()
    check(health.status === 200 && models.data.some((m) => m.id === tc.chatModel), `API server started from Settings at ${api}, lists ${models.data.map((m) => m.id).join(', ')}`)
    await page.click('button:has-text("Stop server")')
    await page.waitForFunction(() => document.querySelector('[data-testid="server-status"]')?.textContent.includes('Stopped'), null, { timeout: T })
    const gone = await fetch(api + '/health').then(() => false, () => true)
    check(gone, 'API server stopped from Settings')
    await view('history', '5')
    await page.waitForFunction((n) => document.querySelectorAll('.list .row').length >= n, 2, { timeout: T })
    check(true, 'history kept after restart')
  }
  check(errors.length === 0, 'no page errors ' + errors.join('; '))
} catch (e) {
  await page.screenshot({ path: join(out, 'failure.png') }).catch(() => {})
  console.error(e)
  process.exitCode = 1
} finally {
  await browser.close()
}
