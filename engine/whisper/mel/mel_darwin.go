package mel

// On macOS the STFT runs as an sgemm in Accelerate (see stft_sgemm.go).
func init() { useSgemmDFT = true }
