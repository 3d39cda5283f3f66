package backends

// The GPU backends' counters, for hark bench. They live here, with the
// driver list, so that callers read them through an interface on the
// Backend they got from Open and import no GPU package.

// MetalStats counts the work of a Metal executable since it was loaded
// (or since ResetStats), for hark bench and the README's figures.
type MetalStats struct {
	CommandBuffers int
	Steps          int
	Dispatches     int // plan dispatches
	Launches       int // kernel launches (a dispatch may need several)
	Barriers       int
	// GPUSeconds sums GPUEndTime-GPUStartTime of completed command buffers.
	GPUSeconds float64
}

// Minus is s less o, field by field.
func (s MetalStats) Minus(o MetalStats) MetalStats {
	return MetalStats{
		CommandBuffers: s.CommandBuffers - o.CommandBuffers, Steps: s.Steps - o.Steps,
		Dispatches: s.Dispatches - o.Dispatches, Launches: s.Launches - o.Launches,
		Barriers: s.Barriers - o.Barriers, GPUSeconds: s.GPUSeconds - o.GPUSeconds,
	}
}

// CUDAStats counts a CUDA executable's work since load (or ResetStats).
type CUDAStats struct {
	Steps          int // pass replays
	KernelLaunches int // kernels launched from the host (cuLaunchKernel outside a capture)
	GraphLaunches  int // graph replays (cuGraphLaunch)
	GraphsBuilt    int // graphs recorded and instantiated
	Recorded       int // kernels recorded into graphs
	Syncs          int // waits for the stream
	// Overlapped counts the kernels launched or recorded to start before
	// the kernel they follow ends (programmatic dependent launch)
	Overlapped int
	// RecordFailures counts batches the driver would not record or
	// instantiate as a graph; they and their shape run kernel by kernel
	// from then on, and RecordError is the first such error.
	RecordFailures int
	RecordError    string
	// DeepSplits counts paged attention dispatches prepared split over
	// their rows' keys because the step's deepest row is deep (cuda's
	// Options.NoDeepSplit says more)
	DeepSplits int
}

// HostLaunches are the launches the host makes: kernels and graphs.
func (s CUDAStats) HostLaunches() int { return s.KernelLaunches + s.GraphLaunches }

// Add adds o's counts to s (keeping s's first RecordError).
func (s *CUDAStats) Add(o CUDAStats) {
	s.Steps += o.Steps
	s.KernelLaunches += o.KernelLaunches
	s.GraphLaunches += o.GraphLaunches
	s.GraphsBuilt += o.GraphsBuilt
	s.Recorded += o.Recorded
	s.Syncs += o.Syncs
	s.Overlapped += o.Overlapped
	s.RecordFailures += o.RecordFailures
	s.DeepSplits += o.DeepSplits
	if s.RecordError == "" {
		s.RecordError = o.RecordError
	}
}

// KernelTime is one GPU function's share of a profile.
type KernelTime struct {
	Function string
	Launches int
	Seconds  float64
}
