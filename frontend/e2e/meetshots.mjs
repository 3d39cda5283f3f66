// The README's screenshots of the Meeting view (run by
// TestMeetingScreenshots): a meeting recorded from the view with real
// audio through PulseAudio null sinks, the call's turns played into the
// default sink (recorded as "Others" from its monitor) and the user's into
// the sink whose monitor is the microphone ("You"), one turn talking over
// the one before, and markers added between turns. meeting-live.png: the
// live transcript once it has heard every turn, still recording;
// meeting.png: the same meeting stopped, with the final pass's notes and
// the export choices. Each turn's words must show under its side in both.
//   HARK_URL, E2E_SHOTS, E2E_OUT, E2E_TIMEOUT_MS as run.mjs
//   E2E_CASE {turns: [{side: 'You'|'Others', clip, text, with}], micSink, markers: [{text, before}]}
//     (with: seconds after the turn before starts, talking over it; else
//     after it; a marker is added before turn number before, or after the
//     last)
import { join } from 'node:path'
import { hearUntil, play, recordedSeconds, said, words } from './meetingpage.mjs'
import { check, openPage, shot } from './page.mjs'

const url = process.env.HARK_URL
const tc = JSON.parse(process.env.E2E_CASE ?? '{}')
const shots = process.env.E2E_SHOTS ?? ''
const out = process.env.E2E_OUT ?? '/tmp'

const { browser, page, errors } = await openPage()

// heardAll checks that each turn's opening words show under its side,
// and little else: a picture of text made up is no picture of the app.
async function heardAll(when) {
  for (const side of ['You', 'Others']) {
    const got = words(await said(page, side))
    const turns = tc.turns.filter((turn) => turn.side === side)
    for (const turn of turns) {
      const want = words(turn.text).split(' ').slice(0, 4).join(' ')
      check(got.includes(want), `${when}, ${side}: "${want}…" in "${got}"`)
    }
    const spoken = turns.reduce((n, turn) => n + words(turn.text).split(' ').length, 0)
    check(got.split(' ').length <= spoken + 2 * turns.length, `${when}, ${side}: ${got.split(' ').length} words shown of ${spoken} said`)
  }
}

// toView clips a screenshot to the window's width and the view's height
// (the transcript's card and a margin): the rest is empty.
async function toView() {
  const box = await page.locator('[data-testid="meeting-transcript"]').boundingBox()
  const { width } = page.viewportSize()
  return { clip: { x: 0, y: 0, width, height: Math.ceil(box.y + box.height + 24) } }
}

// addMarkers adds the markers due before turn i.
async function addMarkers(i) {
  for (const m of tc.markers.filter((m) => m.before === i)) {
    await page.fill('input[name="marker"]', m.text)
    await page.click('[data-testid="add-marker"]')
    await page.waitForSelector(`[data-testid="meeting-marker"]:has-text("${m.text}")`)
  }
}

try {
  await page.goto(url, { waitUntil: 'load' })
  await page.click('[data-testid="update-prompt"] button:has-text("No thanks")')
  await page.keyboard.press('Control+2')
  await page.waitForSelector('main[data-current="meeting"]')
  await page.click('[data-testid="meeting-toggle"]')
  await page.waitForFunction(() => document.querySelector('[data-testid="meeting-state"]')?.textContent === 'recording')
  check(true, 'a meeting starts from the view')

  // The conversation: a turn starts once the live transcript has heard
  // the one before (a second after its end): on a busy machine the
  // transcriber falls behind and takes its backlog in pieces of 5 s, which
  // join one side's turns into one window, and the kit model recognizes a
  // clip only from its onset. A turn with "with" starts that many seconds
  // after the one before, talking over it.
  let previous = Promise.resolve()
  for (const [i, turn] of tc.turns.entries()) {
    if (turn.with) {
      await new Promise((r) => setTimeout(r, turn.with * 1000))
    } else {
      await previous
      await hearUntil(page, await recordedSeconds(page) + 1)
    }
    await addMarkers(i)
    const before = previous
    const p = play(turn.clip, turn.side === 'You' ? tc.micSink : '')
    previous = Promise.all([before, p])
  }
  await previous
  await hearUntil(page, await recordedSeconds(page) + 1)
  await addMarkers(tc.turns.length)
  check(true, `${tc.turns.length} turns played, ${tc.markers.length} markers added`)

  // Live: once the transcription has heard the meeting up to a little past
  // the last turn (its pause commits the last words), every turn shows.
  await hearUntil(page, await recordedSeconds(page) + 3)
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid="meeting-lines"] li[data-speaker]').length >= n,
    tc.turns.length, { polling: 500 })
  await heardAll('live')
  await shot(page, shots, 'meeting-live', await toView())

  // Finished: stopped, the final pass's notes.
  await page.click('[data-testid="meeting-toggle"]')
  await page.waitForFunction(() => document.querySelector('[data-testid="meeting-state"]')?.textContent === 'finished', null, { polling: 500 })
  check(await page.isVisible('h2:has-text("Final text")'), 'stopped, and the final pass done: its text is shown')
  await heardAll('final')
  check(await page.$$eval('[data-testid="meeting-marker"]', (ms) => ms.length) === tc.markers.length &&
    await page.isVisible('[data-testid="export-md"]'), 'the markers stay in the notes, which export')
  await shot(page, shots, 'meeting', await toView())
  check(errors.length === 0, 'no page errors ' + errors.join('; '))
} catch (e) {
  await page.screenshot({ path: join(out, 'failure-meetshots.png') }).catch(() => {})
  console.error(e)
  process.exitCode = 1
} finally {
  await browser.close()
}
