// Package e2e runs the browser end-to-end tests (run.mjs: playwright-core
// driving Debian's chromium) against `hark ui` and the real services.
package e2e
