// T is the bound, in ms, on every wait of the browser scripts: the Go test
// that runs them passes it as E2E_TIMEOUT_MS, already scaled by
// HARK_TEST_TIMEOUT_SCALE (internal/shared.Wait). A bound only catches a
// hang: no check depends on it.
export const T = Number(process.env.E2E_TIMEOUT_MS)
if (!(T > 0)) throw new Error(`E2E_TIMEOUT_MS=${process.env.E2E_TIMEOUT_MS}: run the browser scripts through go test`)
