// Shared by the single-query attention score kernels (attnkeys_amd64.s,
// attnhalf_amd64.s).

// SCORES4 reduces four keys' accumulators Y0..Y3 to their dot products,
// scales them by Y15 and stores the four scores at (DX), which it advances.
#define SCORES4 \
	VHADDPS      Y1, Y0, Y0 \
	VHADDPS      Y3, Y2, Y2 \
	VHADDPS      Y2, Y0, Y0 \
	VEXTRACTF128 $1, Y0, X1 \
	VADDPS       X1, X0, X0 \
	VMULPS       X15, X0, X0 \
	VMOVUPS      X0, (DX)   \
	ADDQ         $16, DX
