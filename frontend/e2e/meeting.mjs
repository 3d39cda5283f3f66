// Browser test of the Meeting view (run by TestBrowserMeeting): start a
// meeting, add a marker, play the call into PulseAudio's default sink
// (recorded as "Others" from its monitor) and, from 1 s, the user's voice
// into the null sink whose monitor is the default source ("You"); the live
// transcript shows each side's words under its label with times; stop,
// and the finished meeting shows its notes (the final pass's text once it
// is done), has the chat model summarize them, and exports them. A
// meeting a crash cut short (tc.offer.id) is offered and finished from its
// banner first; another (tc.offer.other) stays offered meanwhile, and is
// resumed from its banner at the end.
//   HARK_URL, E2E_SHOTS, E2E_OUT, E2E_TIMEOUT_MS as run.mjs
//   E2E_CASE {others: {clip, text}, you: {clip, text}, micSink, offer: {id, text, other}}
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { hearUntil, play, recordedSeconds, said as saidOn, words } from './meetingpage.mjs'
import { check, openPage, shot } from './page.mjs'
import { T } from './timeout.mjs'

const url = process.env.HARK_URL
const tc = JSON.parse(process.env.E2E_CASE ?? '{}')
const shots = process.env.E2E_SHOTS ?? ''
const out = process.env.E2E_OUT ?? '/tmp'

const { browser, page, errors } = await openPage()

const said = (speaker) => saidOn(page, speaker)

try {
  await page.goto(url, { waitUntil: 'load' })
  await page.click('[data-testid="update-prompt"] button:has-text("No thanks")')
  await page.keyboard.press('Control+2')
  await page.waitForSelector('main[data-current="meeting"]')
  check(await page.textContent('[data-testid="meeting-state"]') === 'idle', 'the Meeting view, idle (Ctrl+2)')
  // Two meetings a crash cut short are offered; one is finished from its
  // banner: its final pass's notes are shown.
  const offer = `[data-testid="meeting-offer"][data-id="${tc.offer.id}"]`
  const other = `[data-testid="meeting-offer"][data-id="${tc.offer.other}"]`
  await page.waitForSelector(offer)
  check(/cut short at \d.* after 0:11\b/.test(await page.textContent(offer)) && await page.isVisible(other) &&
    await page.isEnabled(`${offer} [data-testid="offer-resume"]`) && await page.isEnabled(`${offer} [data-testid="offer-finish"]`),
  `meetings a crash cut short are offered, to resume or finish: "${(await page.textContent(offer)).trim()}"`)
  await page.click(`${offer} [data-testid="offer-finish"]`)
  await page.waitForSelector(offer, { state: 'detached' })
  await page.waitForFunction((want) => document.querySelector('[data-testid="meeting-state"]')?.textContent === 'finished' &&
    [...document.querySelectorAll('[data-testid="meeting-lines"] li[data-speaker="Others"]')].some((e) => e.textContent.toLowerCase().includes(want)),
  tc.offer.text, { polling: 500 })
  check(await page.isVisible('h2:has-text("Final text")') && await page.isVisible(other),
    `finished from the offer: its final notes, "${words(await said('Others'))}"; the other stays offered`)

  await page.click('[data-testid="meeting-toggle"]')
  await page.waitForFunction(() => document.querySelector('[data-testid="meeting-state"]')?.textContent === 'recording')
  check(true, 'a meeting starts from the view')
  check(await page.isVisible(other) && await page.isDisabled(`${other} [data-testid="offer-resume"]`), 'the offer stays while another meeting records')
  await page.fill('input[name="marker"]', 'Agenda: the young man')
  await page.click('[data-testid="add-marker"]')
  await page.waitForSelector('[data-testid="meeting-marker"]:has-text("Agenda: the young man")')
  check(await page.inputValue('input[name="marker"]') === '', 'a marker is added at the current time, the field cleared')

  const others = play(tc.others.clip, '')
  await new Promise((r) => setTimeout(r, 1000))
  await Promise.all([others, play(tc.you.clip, tc.micSink)])
  check(true, 'the call and the user played')
  // Live: wait until the live transcription has taken in the audio up to
  // a little past the end of the playing (its pause to commit the last
  // words).
  const recorded = await recordedSeconds(page)
  check(true, `the view shows the recording's time: ${recorded} s`)
  const target = recorded + 3
  await hearUntil(page, target)
  check(true, `the live transcript has heard the meeting up to ${target} s`)
  // Each side's words under its label (shown with the progress that
  // committed them, so a short wait only lets the page render).
  await page.waitForFunction(([y, o]) => {
    const text = (sp) => [...document.querySelectorAll(`[data-testid="meeting-lines"] li[data-speaker="${sp}"]`)].map((e) => e.textContent.toLowerCase()).join(' ')
    const has = (t, want) => want.split(' ').slice(0, 4).every((w) => t.includes(w))
    return has(text('You'), y) && has(text('Others'), o)
  }, [words(tc.you.text), words(tc.others.text)], { polling: 500 })
  const liveYou = words(await said('You')), liveOthers = words(await said('Others'))
  check(liveYou.includes(words(tc.you.text).split(' ').slice(0, 4).join(' ')), `live, You: "${liveYou}"`)
  check(liveOthers.includes(words(tc.others.text).split(' ').slice(0, 4).join(' ')), `live, Others: "${liveOthers}"`)
  check(/^\d+:\d\d$/.test((await page.textContent('[data-testid="meeting-lines"] li[data-speaker] time')).trim()), 'lines show their time')
  await shot(page, shots, 'meeting-live')

  await page.click('[data-testid="meeting-toggle"]')
  await page.waitForFunction(() => /^(finishing|finished)$/.test(document.querySelector('[data-testid="meeting-state"]')?.textContent ?? ''))
  check(true, 'stopped: the notes are shown while the final pass runs')
  await page.waitForFunction(() => document.querySelector('[data-testid="meeting-state"]')?.textContent === 'finished')
  check(await page.isVisible('h2:has-text("Final text")'), 'the final pass done: its text is shown')
  // The final pass hears only speech (gated as the live transcript is):
  // each side's words, and none made up in the silence around them.
  for (const [sp, want] of [['You', words(tc.you.text)], ['Others', words(tc.others.text)]]) {
    const got = words(await said(sp))
    check(got.includes(want.split(' ').slice(0, 4).join(' ')) && got.split(' ').length <= want.split(' ').length + 2,
      `final, ${sp}: "${got}"`)
  }
  check(await page.isVisible('[data-testid="meeting-marker"]:has-text("Agenda: the young man")'), 'the marker stays in the finished notes')
  await page.click('[data-testid="summarize"]')
  await page.waitForSelector('[data-testid="meeting-summary"]')
  const summary = (await page.textContent('[data-testid="meeting-summary"] p')).trim()
  check(summary.length > 0, `the chat model's summary is shown: ${JSON.stringify(summary.slice(0, 80))}`)
  await shot(page, shots, 'meeting')

  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="export-md"]')])
  const mdPath = join(out, 'meeting-notes.md')
  await dl.saveAs(mdPath)
  const md = await readFile(mdPath, 'utf8')
  console.log('notes:', JSON.stringify(md))
  check(md.startsWith('# Meeting ') && md.includes('Agenda: the young man**'), 'the Markdown notes export, with the marker')
  check(md.includes('## Summary\n\n' + summary.split('\n')[0]), 'and the summary')
  const shown = await page.$$eval('[data-testid="meeting-lines"] li[data-speaker]', (ls) => ls.length)
  check((md.match(/^\*\*\[\d\d:\d\d\] (You|Others):\*\*/gm) ?? []).length === shown, `the notes hold the ${shown} lines shown`)
  const [vtt] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="export-vtt"]')])
  await vtt.saveAs(join(out, 'meeting.vtt'))
  check((await readFile(join(out, 'meeting.vtt'), 'utf8')).startsWith('WEBVTT'), 'the VTT export')

  // The other meeting a crash cut short is resumed from its offer: the same
  // meeting records on after what it kept (the Go side checks its recording
  // grew), then stops and is finished. Wait for the recording's clock, not
  // for a time.
  await page.click(`${other} [data-testid="offer-resume"]`)
  await page.waitForSelector(other, { state: 'detached' })
  await page.waitForFunction(() => document.querySelector('[data-testid="meeting-state"]')?.textContent === 'recording')
  check(true, 'the other meeting resumed from its offer')
  await page.waitForFunction(() => {
    const m = (document.querySelector('[data-testid="meeting-clock"]')?.textContent ?? '').match(/Recording (\d+):(\d\d)/)
    return m !== null && Number(m[1]) * 60 + Number(m[2]) >= 4
  }, null, { polling: 250 })
  // Its recording is near silence, so its final pass can end before
  // Stop's reply reaches the page, the status events that followed the
  // reply coming first (one run in five did so). Hold the reply until the
  // pass is over, making that order certain: the view keeps the newer
  // state and does not go back to "finishing".
  let stale = null, settle
  const held = new Promise((resolve, reject) => (settle = { resolve, reject }))
  await page.route('**/api/call/Meetings.Stop', async (route) => {
    try {
      const reply = await route.fetch()
      stale = (await reply.json()).result
      for (const until = Date.now() + T; ; await page.waitForTimeout(100)) {
        const now = await page.evaluate(() => fetch('/api/call/Meetings.Status', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '[]' }).then((r) => r.json()))
        if (!now.result.finishing) break
        if (Date.now() > until) throw new Error('the final pass did not end')
      }
      await route.fulfill({ response: reply })
      settle.resolve()
    } catch (e) {
      settle.reject(e)
    }
  }, { times: 1 })
  await page.click('[data-testid="meeting-toggle"]')
  await held
  await page.waitForSelector('[data-testid="meeting-toggle"]:not([disabled])') // the reply taken
  const state = await page.textContent('[data-testid="meeting-state"]')
  check(stale?.finishing === true && state === 'finished',
    `the resumed meeting stopped and finished ("${state}"); Stop's reply (rev ${stale?.rev}, finishing ${stale?.finishing}), come after the pass ended, was not shown`)
  check(errors.length === 0, 'no page errors ' + errors.join('; '))
} catch (e) {
  await page.screenshot({ path: join(out, 'failure-meeting.png') }).catch(() => {})
  console.error(e)
  process.exitCode = 1
} finally {
  await browser.close()
}
