// What the browser scripts share: the checks they log, and a page in
// headless Debian Chromium (never a downloaded browser) whose every wait
// is bound by T and whose errors are collected.
import { chromium } from 'playwright-core'
import { join } from 'node:path'
import { T } from './timeout.mjs'

const t0 = Date.now()

// check fails the script with msg unless cond holds, and logs it.
export function check(cond, msg) {
  if (!cond) throw new Error('check failed: ' + msg)
  console.log(`ok (${((Date.now() - t0) / 1000).toFixed(1)} s):`, msg)
}

// openPage launches the browser and opens a page of the given viewport;
// errors collects the page's uncaught errors.
export async function openPage(viewport = { width: 1180, height: 760 }) {
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  })
  const ctx = await browser.newContext({ viewport, colorScheme: 'light', acceptDownloads: true })
  ctx.setDefaultTimeout(T)
  const page = await ctx.newPage()
  const errors = []
  page.on('pageerror', (e) => errors.push(String(e)))
  return { browser, page, errors }
}

// shot writes the page's screenshot name.png into dir ('' : none); opts
// are page.screenshot's (a clip).
export async function shot(page, dir, name, opts = {}) {
  if (!dir) return
  await page.waitForTimeout(300) // let transitions settle
  await page.screenshot({ path: join(dir, name + '.png'), ...opts })
}
