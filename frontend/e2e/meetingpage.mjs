// What the Meeting view's browser scripts share (meeting.mjs, the test;
// meetshots.mjs, the README's screenshots): playing a clip into a
// PulseAudio sink, a text as plain words, a speaker's text in the view,
// and waiting for the live transcript to hear the meeting up to a time.
import { spawn } from 'node:child_process'

// play plays a file into a sink ('' : the default one) and resolves when
// it has been played.
export function play(file, sink) {
  return new Promise((resolve, reject) => {
    const p = spawn('paplay', sink ? ['--device=' + sink, file] : [file], { env: process.env, stdio: 'inherit' })
    p.on('error', reject)
    p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`paplay ${file}: exit ${code}`))))
  })
}

// words: a text as lower-case words without punctuation.
export const words = (s) => s.toLowerCase().replace(/[^a-z' ]+/g, ' ').trim().split(/\s+/).join(' ')

// said is the text of a speaker's lines in the view.
export const said = (page, speaker) => page.evaluate((sp) =>
  [...document.querySelectorAll(`[data-testid="meeting-lines"] li[data-speaker="${sp}"] span`)].map((e) => e.textContent.replace(/^\s*\S+\s*/, '')).join(' '), speaker)

// recordedSeconds is the recording's time the view shows.
export async function recordedSeconds(page) {
  const m = (await page.textContent('[data-testid="meeting-clock"]')).match(/Recording (\d+):(\d\d)/)
  if (m === null) throw new Error('the view shows no recording time')
  return Number(m[1]) * 60 + Number(m[2])
}

// hearUntil waits until the live transcription has taken in the meeting's
// audio up to target seconds. The transcript follows the speech by a few
// seconds, or by many on a busy machine (the view says how far behind it
// is): so it waits for the work, not for a time, failing only when the
// transcription stops making progress.
export async function hearUntil(page, target) {
  const heard = () => page.$eval('[data-testid="meeting-transcript"]', (e) => Number(e.dataset.heard))
  for (let h = await heard(); h < target; h = await heard()) {
    await page.waitForFunction(([prev, end]) => {
      const v = Number(document.querySelector('[data-testid="meeting-transcript"]')?.dataset.heard)
      return v > prev || v >= end
    }, [h, target], { polling: 500 })
  }
}
